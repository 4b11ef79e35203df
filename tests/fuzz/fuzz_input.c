/* fuzz_input.c - input.json of the witness calculator (lib/witness/input.c): the text is
 * parsed; when accepted, every flattened value is reduced mod BN254's r and mod BLS12-381's r
 * (some fail cleanly: not integers, over 4096 bits). Properties: a reduced value is < p, the
 * signal counts add up to the value count, and a value that reduces does so the same way twice.
 * Seeds: corpus/input (the witness fixtures' inputs and hand-made edge cases). */
#include <string.h>

#include "lib/witness/witness.h"
#include "tests/fuzz/fuzz.h"

static const uint32_t R_BN[8] = {0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848,
                                 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
static const uint32_t R_BLS[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                  0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};

static int cmp(const uint32_t *a, const uint32_t *b)
{
    for (int i = 7; i >= 0; i--)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zp_wc_input_t *in = NULL;
    if (zp_wc_input_parse(&in, (const char *)data, size, "fuzz/input.json") < 0) return 0;
    size_t nv = zp_wc_input_values(in);
    for (size_t i = 0; i < nv && i < 4096; i++) {
        const uint32_t *ps[2] = {R_BN, R_BLS};
        for (int k = 0; k < 2; k++) {
            uint32_t v[8], w[8];
            if (zp_wc_input_value(v, in, i, ps[k], 8) < 0) continue;
            FUZZ_ASSERT(cmp(v, ps[k]) < 0, "value %zu not reduced", i);
            FUZZ_ASSERT(zp_wc_input_value(w, in, i, ps[k], 8) == 0 && !memcmp(v, w, 32), "value %zu differs twice", i);
        }
    }
    zp_wc_input_free(&in);
    return 0;
}
