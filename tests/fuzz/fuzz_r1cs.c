/* fuzz_r1cs.c - the .r1cs reader (lib/fmt/r1cs.c): section 2 is fully validated at open
 * (wire ids < n_wires, coefficients < r). Seeds: corpus/r1cs. */
#include "lib/fmt/fmt.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zp_r1cs_t r;
    if (zp_r1cs_parse(&r, data, size, "fuzz.r1cs") < 0) return 0;
    FUZZ_ASSERT(r.constraints_len <= size, "constraints of %zu bytes in %zu", r.constraints_len, size);
    zp_r1cs_close(&r);
    return 0;
}
