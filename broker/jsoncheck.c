/* jsoncheck.c - the broker's check of an inline input.json (issue 28): one JSON object, well
 * formed (RFC 8259 grammar), nested at most 64 deep, at most ZP_MSG_INPUT_MAX bytes; no
 * allocation, depth-bounded recursion, every read bounds-checked. What the signals mean is the
 * synthesizer's to check (lib/witness reads the text as snarkjs does). Used by inline.c (SUBMIT
 * key 6 with key 7) and http.c ("inputs"). Tests: tests/fuzz/fuzz_inputcheck.c (unit),
 * tests/ipc/input.sh. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

/* ---- a bounded JSON well-formedness check (no allocation; depth-limited recursion) ---- */
typedef struct { const uint8_t *p, *end, *start; const char *err; } jv_t;

static void jv_ws(jv_t *j) { while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++; }
static bool jv_fail(jv_t *j, const char *e) { if (!j->err) j->err = e; return false; }

static bool jv_string(jv_t *j)
{
    j->p++;   /* the opening quote */
    while (j->p < j->end && *j->p != '"') {
        uint8_t c = *j->p++;
        if (c < 0x20) return jv_fail(j, "control character in a string");
        if (c != '\\') continue;
        if (j->p >= j->end) break;
        c = *j->p++;
        if (c == 'u') {
            for (int k = 0; k < 4; k++, j->p++)
                if (j->p >= j->end || !((*j->p >= '0' && *j->p <= '9') || ((*j->p | 32) >= 'a' && (*j->p | 32) <= 'f')))
                    return jv_fail(j, "bad \\u escape");
        } else if (!strchr("\"\\/bfnrt", c) || !c) return jv_fail(j, "bad escape in a string");
    }
    if (j->p >= j->end) return jv_fail(j, "unterminated string");
    j->p++;
    return true;
}

static bool jv_value(jv_t *j, unsigned depth)
{
    jv_ws(j);
    if (j->p >= j->end) return jv_fail(j, "unexpected end");
    uint8_t c = *j->p;
    if (c == '{' || c == '[') {
        if (depth >= 64) return jv_fail(j, "nested more than 64 deep");
        uint8_t close = c == '{' ? '}' : ']';
        j->p++;
        jv_ws(j);
        if (j->p < j->end && *j->p == close) { j->p++; return true; }
        for (;;) {
            if (c == '{') {
                jv_ws(j);
                if (j->p >= j->end || *j->p != '"') return jv_fail(j, "expected a string key");
                if (!jv_string(j)) return false;
                jv_ws(j);
                if (j->p >= j->end || *j->p != ':') return jv_fail(j, "expected :");
                j->p++;
            }
            if (!jv_value(j, depth + 1)) return false;
            jv_ws(j);
            if (j->p < j->end && *j->p == ',') { j->p++; continue; }
            if (j->p < j->end && *j->p == close) { j->p++; return true; }
            return jv_fail(j, c == '{' ? "expected , or }" : "expected , or ]");
        }
    }
    if (c == '"') return jv_string(j);
    static const char *const lits[] = {"true", "false", "null"};
    for (unsigned i = 0; i < 3; i++) {
        size_t n = strlen(lits[i]);
        if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, lits[i], n)) { j->p += n; return true; }
    }
    /* a number: -?int(.frac)?(e[+-]?digits)? */
    const uint8_t *s = j->p;
    if (j->p < j->end && *j->p == '-') j->p++;
    const uint8_t *d = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    if (j->p == d) { j->p = s; return jv_fail(j, "expected a value"); }
    if (j->p < j->end && *j->p == '.') {
        d = ++j->p;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
        if (j->p == d) return jv_fail(j, "bad number");
    }
    if (j->p < j->end && (*j->p | 32) == 'e') {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        d = j->p;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
        if (j->p == d) return jv_fail(j, "bad number");
    }
    return true;
}

int brk_json_span(const char *p, size_t len, size_t *used, char *why, size_t why_n)
{
    jv_t j = {(const uint8_t *)p, (const uint8_t *)p + len, (const uint8_t *)p, NULL};
    jv_ws(&j);
    if (j.p >= j.end || *j.p != '{') jv_fail(&j, "an input must be a JSON object");
    else jv_value(&j, 0);
    if (j.err) {
        snprintf(why, why_n, "%s at byte %zu", j.err, (size_t)(j.p - j.start));
        return ZP_EFORMAT;
    }
    *used = (size_t)(j.p - j.start);
    return 0;
}

int brk_input_check(const uint8_t *data, size_t len, char *why, size_t why_n)
{
    if (len > ZP_MSG_INPUT_MAX) {
        snprintf(why, why_n, "%zu bytes, more than the %u allowed", len, ZP_MSG_INPUT_MAX);
        return ZP_ETOOBIG;
    }
    size_t used;
    int rc = brk_json_span((const char *)data, len, &used, why, why_n);
    if (rc < 0) return rc;
    const uint8_t *q = data + used, *e = data + len;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    if (q != e) {
        snprintf(why, why_n, "trailing bytes after the object at byte %zu", used);
        return ZP_EFORMAT;
    }
    return 0;
}

