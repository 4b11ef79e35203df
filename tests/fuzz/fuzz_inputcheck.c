/* fuzz_inputcheck.c - the broker's check of an inline input.json (broker/jsoncheck.c, issue 28),
 * against the synthesizer's reader (lib/witness zp_wc_input_parse): the broker must never refuse
 * a text the synthesizer would read (the reverse is fine: signal values are the synthesizer's
 * to refuse), must not read past the text, and brk_json_span of an accepted object is the
 * object's length (the text minus trailing whitespace). Seeds: corpus/inputcheck (the chain
 * fixtures' inputs and hand-made edge cases). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"
#include "lib/witness/witness.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    /* an exact-size copy: a read past the end is a sanitizer finding */
    uint8_t *t = calloc(1, size ? size : 1);
    if (!t) return 0;
    if (size) memcpy(t, data, size);
    char why[160];
    int rc = brk_input_check(t, size, why, sizeof why);
    zp_wc_input_t *inp = NULL;
    int lrc = zp_wc_input_parse(&inp, (const char *)t, size, "fuzz/input.json");
    zp_wc_input_free(&inp);
    zp_err_clear();
    FUZZ_ASSERT(lrc != 0 || rc == 0, "the broker refuses (%s) a text the synthesizer reads: %.*s", why,
                (int)(size < 200 ? size : 200), (const char *)t);
    if (rc == 0) {
        size_t used = 0, end = size;
        while (end && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\n' || t[end - 1] == '\r')) end--;
        size_t lead = 0;
        while (lead < size && (t[lead] == ' ' || t[lead] == '\t' || t[lead] == '\n' || t[lead] == '\r')) lead++;
        FUZZ_ASSERT(brk_json_span((const char *)t, size, &used, why, sizeof why) == 0 && used == end &&
                        used > lead, "span %zu of an accepted text of %zu bytes (%zu without trailing blanks)", used,
                    size, end);
    }
    free(t);
    return 0;
}
