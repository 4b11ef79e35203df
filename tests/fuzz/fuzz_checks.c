/* fuzz_checks.c - the checks run after opening a job's files: witness against zkey and r1cs
 * against zkey (lib/fmt: zp_check_wtns_zkey, zp_check_r1cs_zkey), on three fuzzed files.
 * Input: u32 LE zkey length, u32 LE r1cs length, zkey bytes, r1cs bytes, wtns bytes (the
 * rest). Seeds: corpus/checks (the fixture triples, made by gen_seeds). */
#include <string.h>

#include "lib/fmt/fmt.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8) return 0;
    uint32_t lz, lr;
    memcpy(&lz, data, 4);
    memcpy(&lr, data + 4, 4);
    size_t rest = size - 8;
    if (lz > rest || lr > rest - lz) return 0;
    const uint8_t *pz = data + 8, *pr = pz + lz, *pw = pr + lr;
    size_t lw = rest - lz - lr;
    zp_zkey_t z;
    zp_r1cs_t r;
    zp_wtns_t w;
    if (zp_zkey_parse(&z, pz, lz, "fuzz.zkey") < 0) return 0;
    if (zp_r1cs_parse(&r, pr, lr, "fuzz.r1cs") == 0) {
        zp_check_r1cs_zkey(&r, &z);
        zp_r1cs_close(&r);
    }
    if (zp_wtns_parse(&w, pw, lw, "fuzz.wtns") == 0) {
        if (zp_check_wtns_zkey(&w, &z) == 0)
            FUZZ_ASSERT(w.n_witness == z.n_vars && w.curve == z.curve, "witness of %u accepted for %u vars",
                        w.n_witness, z.n_vars);
        zp_wtns_close(&w);
    }
    zp_zkey_close(&z);
    return 0;
}
