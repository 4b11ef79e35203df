/* wtns.c - circom/snarkjs witness files (.wtns version 2; version 1, same layout, also read).
 * Section 1: u32 n8, prime[n8] (= r, the scalar field), u32 nWitness. Section 2: nWitness
 * values of n8 bytes, little-endian, standard form.
 * Invariants after a successful open/parse: curve known from the prime, section sizes exact,
 * n_witness >= 1, every value canonical (< r), w[0] == 1 (circom's constant wire); with
 * zp_wtns_open_unchecked every value but w[0] is unchecked until zp_wtns_check_values (on a
 * pool: one pass over 4 GiB at 2^27 wires is seconds on one thread) or the caller's own check.
 * Values point into the map (or the caller's memory, e.g. a shm slot): unaligned bytes.
 * Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <string.h>

/* ---------------------------------------------------------------- every value < r, in parallel */
static bool not_canonical(const void *arg, size_t i)
{
    const zp_wtns_t *w = arg;
    const uint8_t *v = w->values + i * w->n8;
    /* the top word decides but for values that share r's (n8 is a multiple of 8): one
     * compare a value instead of a byte loop (2^16 values: 2.4 -> ~0.4 ms, session 18) */
    uint64_t vt, rt;
    memcpy(&vt, v + w->n8 - 8, 8);
    memcpy(&rt, w->prime + w->n8 - 8, 8);
    if (vt != rt) return vt > rt;
    return zp_fmt_cmp_le(v, w->prime, w->n8) >= 0;
}

int zp_wtns_check_values(const zp_wtns_t *w, zp_pool_t *pool)
{
    size_t bad = zp_pool_first(pool, w->n_witness, not_canonical, w);
    if (bad < w->n_witness)
        return zp_err_set(ZP_EFORMAT, "%s: value %zu is not canonical (>= r)", zp_fmt_name(&w->f), bad);
    return 0;
}

static int wtns_load(zp_wtns_t *w, bool check_values)
{
    const char *name = zp_fmt_name(&w->f);
    zp_fmt_container_t c;
    int rc = zp_fmt_container(&c, &w->f, "wtns", 1, 2);   /* snarkjs and rapidsnark take v1: same layout */
    if (rc) return rc;
    const uint8_t *p;
    uint64_t sz;
    if ((rc = zp_fmt_section(&p, &sz, &c, &w->f, 1, "header"))) return rc;
    if (sz < 4) return zp_err_set(ZP_EFORMAT, "%s: section 1 (header) is %llu bytes, too short", name, (unsigned long long)sz);
    uint32_t n8 = zp_fmt_u32(p);
    if (n8 == 0 || n8 > 64 || n8 % 8)
        return zp_err_set(ZP_EFORMAT, "%s: field size n8 = %u bytes is not a multiple of 8 in 8..64", name, n8);
    if (sz != 8 + (uint64_t)n8)
        return zp_err_set(ZP_EFORMAT, "%s: section 1 (header) is %llu bytes, expected %llu for n8 %u", name,
                          (unsigned long long)sz, (unsigned long long)(8 + (uint64_t)n8), n8);
    const uint8_t *prime = p + 4;
    w->curve = zp_curve_from_r(prime, n8);
    if (w->curve == ZP_CURVE_NONE)
        return zp_err_set(ZP_ECURVE, "%s: prime is %s, not r of bn128 or bls12381", name, zp_fmt_prime_name(prime, n8));
    w->n8 = n8;
    w->n_witness = zp_fmt_u32(p + 4 + n8);
    if (w->n_witness == 0) return zp_err_set(ZP_EFORMAT, "%s: header says 0 witness values", name);
    if ((rc = zp_fmt_section(&p, &sz, &c, &w->f, 2, "values"))) return rc;
    uint64_t want = (uint64_t)w->n_witness * n8;
    if (sz != want)
        return zp_err_set(ZP_EFORMAT, "%s: section 2 is %llu bytes but header says %u values of %u bytes (%llu)", name,
                          (unsigned long long)sz, w->n_witness, n8, (unsigned long long)want);
    w->values = p;
    w->prime = prime;
    if (check_values && (rc = zp_wtns_check_values(w, NULL))) return rc;
    static const uint8_t one[64] = {1};
    if (memcmp(p, one, n8))
        return zp_err_set(ZP_EFORMAT, "%s: value 0 (the constant wire) is not 1", name);
    return 0;
}

int zp_wtns_parse(zp_wtns_t *w, const void *buf, size_t len, const char *name)
{
    memset(w, 0, sizeof *w);
    w->f.path = name;
    w->f.map = buf;
    w->f.size = len;
    int rc = wtns_load(w, true);
    if (rc) memset(w, 0, sizeof *w);
    return rc;
}

static int wtns_open(zp_wtns_t *w, const char *path, bool check_values)
{
    memset(w, 0, sizeof *w);
    int rc = zp_fmt_map(&w->f, path);
    if (rc) return rc;
    rc = wtns_load(w, check_values);
    if (rc) {
        zp_fmt_unmap(&w->f);
        memset(w, 0, sizeof *w);
    }
    return rc;
}

int zp_wtns_open(zp_wtns_t *w, const char *path) { return wtns_open(w, path, true); }
int zp_wtns_open_unchecked(zp_wtns_t *w, const char *path) { return wtns_open(w, path, false); }

void zp_wtns_close(zp_wtns_t *w)
{
    if (!w) return;
    zp_fmt_unmap(&w->f);
    memset(w, 0, sizeof *w);
}

int zp_wtns_align_values(zp_wtns_t *w)
{
    if (!w->f.mapped) return 0;
    return zp_fmt_align_inplace(&w->f, &w->values, (size_t)w->n_witness * w->n8, 8);
}
