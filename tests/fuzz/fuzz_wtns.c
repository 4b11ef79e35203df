/* fuzz_wtns.c - the .wtns reader (lib/fmt/wtns.c): an accepted witness has every value < r
 * and wire 0 = 1 (checked at open); here: nothing read out of bounds. Seeds: corpus/wtns. */
#include "lib/fmt/fmt.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zp_wtns_t w;
    if (zp_wtns_parse(&w, data, size, "fuzz.wtns") < 0) return 0;
    FUZZ_ASSERT(w.n_witness >= 1 && (size_t)w.n_witness * w.n8 <= size, "witness of %u x %u bytes in %zu",
                w.n_witness, w.n8, size);
    volatile uint8_t x = 0;
    for (size_t i = 0; i < (size_t)w.n_witness * w.n8; i++) x ^= w.values[i];   /* every value is readable */
    (void)x;
    zp_wtns_close(&w);
    return 0;
}
