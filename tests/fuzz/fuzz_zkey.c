/* fuzz_zkey.c - the .zkey reader (lib/fmt/zkey.c) and what runs after it on a key: the point
 * checks (every coordinate < q) and key loading (coefficients decoded and validated, points
 * copied and checked, lib/groth16/key.c). Seeds: tests/fuzz/corpus/zkey. */
#include "lib/fmt/fmt.h"
#include "lib/groth16/groth16.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zp_zkey_t z;
    if (zp_zkey_parse(&z, data, size, "fuzz.zkey") < 0) return 0;
    FUZZ_ASSERT(z.n_vars > 0 && z.domain_size >= 1, "accepted zkey with %u vars, domain %u", z.n_vars, z.domain_size);
    if (zp_zkey_check_points(&z) == 0) {
        zp_g16_key_t k;
        if (zp_g16_key_load(&k, &z) == 0) zp_g16_key_close(&k);
    }
    zp_zkey_close(&z);
    return 0;
}
