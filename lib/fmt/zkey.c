/* zkey.c - the snarkjs Groth16 proving key (.zkey version 1..2, protocol 1).
 * Sections (found by id): 1 protocol, 2 header (q, r, nVars, nPublic, domainSize, alpha1, beta1,
 * beta2, gamma2, delta1, delta2), 3 IC, 4 coefs, 5 A, 6 B1, 7 B2, 8 C, 9 H, 10 contributions
 * (ignored). Layout: shared/snarkjs-groth16.md §4.
 * Invariants after a successful open/parse: curve known (q and r agree), domain_size a power of
 * two <= 2^(2-adicity of r), n_vars >= n_public + 1, every section size exactly what the header
 * implies, every coef entry has matrix 0/1, row < domain_size, wire < n_vars, value < r.
 * Points are NOT checked at open (that reads the whole file): zp_zkey_check_points does it.
 * The zp_zkey_t points into the map (or caller memory); nothing is copied.
 * Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <string.h>

static int zkey_header(zp_zkey_t *z, const zp_fmt_container_t *c)
{
    const char *name = zp_fmt_name(&z->f);
    const uint8_t *p;
    uint64_t sz;
    int rc = zp_fmt_section(&p, &sz, c, &z->f, 1, "header");
    if (rc) return rc;
    if (sz != 4) return zp_err_set(ZP_EFORMAT, "%s: section 1 (header) is %llu bytes, expected 4", name, (unsigned long long)sz);
    uint32_t proto = zp_fmt_u32(p);
    if (proto == 2) return zp_err_set(ZP_EVERSION, "%s: PLONK zkey (protocol 2) not supported: only Groth16", name);
    if (proto == 10) return zp_err_set(ZP_EVERSION, "%s: FFLONK zkey (protocol 10) not supported: only Groth16", name);
    if (proto != 1) return zp_err_set(ZP_EFORMAT, "%s: unknown zkey protocol %u (Groth16 is 1)", name, proto);

    rc = zp_fmt_section(&p, &sz, c, &z->f, 2, "Groth16 header");
    if (rc) return rc;
    if (sz < 4) return zp_err_set(ZP_EFORMAT, "%s: section 2 (Groth16 header) is %llu bytes, too short", name, (unsigned long long)sz);
    uint32_t n8q = zp_fmt_u32(p);
    if (n8q != 32 && n8q != 48)
        return zp_err_set(ZP_ECURVE, "%s: base field size n8q = %u bytes not supported (32 or 48)", name, n8q);
    if (sz < 8 + (uint64_t)n8q)
        return zp_err_set(ZP_EFORMAT, "%s: section 2 (Groth16 header) is %llu bytes, too short", name, (unsigned long long)sz);
    uint32_t n8r = zp_fmt_u32(p + 4 + n8q);
    if (n8r != 32)
        return zp_err_set(ZP_ECURVE, "%s: scalar field size n8r = %u bytes not supported (32)", name, n8r);
    uint64_t g1 = 2ull * n8q, g2 = 4ull * n8q;
    uint64_t want = 4 + n8q + 4 + n8r + 12 + 3 * g1 + 3 * g2;
    if (sz != want)
        return zp_err_set(ZP_EFORMAT, "%s: section 2 (Groth16 header) is %llu bytes, expected %llu for n8q %u",
                          name, (unsigned long long)sz, (unsigned long long)want, n8q);
    const uint8_t *q = p + 4, *r = p + 8 + n8q;
    zp_curve_id_t cq = zp_curve_from_q(q, n8q), cr = zp_curve_from_r(r, n8r);
    if (cq == ZP_CURVE_NONE)
        return zp_err_set(ZP_ECURVE, "%s: base field q is %s, not q of bn128 or bls12381", name, zp_fmt_prime_name(q, n8q));
    if (cr == ZP_CURVE_NONE)
        return zp_err_set(ZP_ECURVE, "%s: scalar field r is %s, not r of bn128 or bls12381", name, zp_fmt_prime_name(r, n8r));
    if (cq != cr)
        return zp_err_set(ZP_ECURVE, "%s: q is of %s but r is of %s", name, zp_curve_name(cq), zp_curve_name(cr));
    z->curve = cq;
    z->n8q = n8q;
    z->n8r = n8r;
    const uint8_t *h = r + n8r;
    z->n_vars = zp_fmt_u32(h);
    z->n_public = zp_fmt_u32(h + 4);
    z->domain_size = zp_fmt_u32(h + 8);
    h += 12;
    z->alpha1 = h; h += g1;
    z->beta1 = h; h += g1;
    z->beta2 = h; h += g2;
    z->gamma2 = h; h += g2;
    z->delta1 = h; h += g1;
    z->delta2 = h;

    if ((uint64_t)z->n_vars < (uint64_t)z->n_public + 1)
        return zp_err_set(ZP_EFORMAT, "%s: nVars %u < nPublic %u + 1", name, z->n_vars, z->n_public);
    uint32_t d = z->domain_size;
    if (d == 0 || (d & (d - 1)))
        return zp_err_set(ZP_EFORMAT, "%s: domainSize %u is not a power of two", name, d);
    z->log_n = 0;
    while ((1u << z->log_n) < d) z->log_n++;
    uint32_t two_adicity = z->curve == ZP_CURVE_BN254 ? 28 : 32;
    if (z->log_n > two_adicity)
        return zp_err_set(ZP_EFORMAT, "%s: domainSize 2^%u exceeds the 2-adicity 2^%u of %s", name, z->log_n,
                          two_adicity, zp_curve_name(z->curve));
    if ((uint64_t)d < (uint64_t)z->n_public + 1)
        return zp_err_set(ZP_EFORMAT, "%s: domainSize %u < nPublic %u + 1", name, d, z->n_public);
    return 0;
}

/* section id must be exactly count points of psize bytes */
static int zkey_points(const uint8_t **out, const zp_zkey_t *z, const zp_fmt_container_t *c, uint32_t id,
                       const char *what, uint64_t count, uint64_t psize)
{
    uint64_t sz;
    int rc = zp_fmt_section(out, &sz, c, &z->f, id, what);
    if (rc) return rc;
    if (sz != count * psize)   /* count < 2^33, psize <= 192: no overflow */
        return zp_err_set(ZP_EFORMAT, "%s: section %u (%s) is %llu bytes but header says %llu points of %llu bytes (%llu)",
                          zp_fmt_name(&z->f), id, what, (unsigned long long)sz, (unsigned long long)count,
                          (unsigned long long)psize, (unsigned long long)(count * psize));
    return 0;
}

static int zkey_coefs(zp_zkey_t *z, const zp_fmt_container_t *c, bool check)
{
    const char *name = zp_fmt_name(&z->f);
    const uint8_t *p;
    uint64_t sz;
    int rc = zp_fmt_section(&p, &sz, c, &z->f, 4, "coefs");
    if (rc) return rc;
    if (sz < 4) return zp_err_set(ZP_EFORMAT, "%s: section 4 (coefs) is %llu bytes, too short for its count", name, (unsigned long long)sz);
    uint32_t n = zp_fmt_u32(p);
    uint64_t esz = 12ull + z->n8r;
    if (sz != 4 + (uint64_t)n * esz)
        return zp_err_set(ZP_EFORMAT, "%s: section 4 (coefs) is %llu bytes but header says %u entries of %llu bytes (%llu)",
                          name, (unsigned long long)sz, n, (unsigned long long)esz,
                          (unsigned long long)(4 + (uint64_t)n * esz));
    uint32_t n8r;
    const uint8_t *r = zp_fmt_curve_r(z->curve, &n8r);
    const uint8_t *e = p + 4;
    for (uint32_t i = 0; check && i < n; i++, e += esz) {
        uint32_t m = zp_fmt_u32(e), row = zp_fmt_u32(e + 4), wire = zp_fmt_u32(e + 8);
        if (m > 1) return zp_err_set(ZP_EFORMAT, "%s: coef %u: matrix %u (must be 0 = A or 1 = B)", name, i, m);
        if (row >= z->domain_size)
            return zp_err_set(ZP_EFORMAT, "%s: coef %u: row %u >= domainSize %u", name, i, row, z->domain_size);
        if (wire >= z->n_vars)
            return zp_err_set(ZP_EFORMAT, "%s: coef %u: wire %u >= nVars %u", name, i, wire, z->n_vars);
        if (zp_fmt_cmp_le(e + 12, r, n8r) >= 0)
            return zp_err_set(ZP_EFORMAT, "%s: coef %u: value not canonical (>= r)", name, i);
    }
    z->coefs = p + 4;
    z->n_coefs = n;
    return 0;
}

static int zkey_load(zp_zkey_t *z, bool check_coefs)
{
    zp_fmt_container_t c;
    int rc = zp_fmt_container(&c, &z->f, "zkey", 1, 2);
    if (rc) return rc;
    if ((rc = zkey_header(z, &c))) return rc;
    uint64_t g1 = 2ull * z->n8q, g2 = 4ull * z->n8q, nv = z->n_vars, np1 = (uint64_t)z->n_public + 1;
    if ((rc = zkey_points(&z->ic, z, &c, 3, "IC", np1, g1))) return rc;
    if ((rc = zkey_coefs(z, &c, check_coefs))) return rc;
    if ((rc = zkey_points(&z->points_a, z, &c, 5, "points A", nv, g1))) return rc;
    if ((rc = zkey_points(&z->points_b1, z, &c, 6, "points B1", nv, g1))) return rc;
    if ((rc = zkey_points(&z->points_b2, z, &c, 7, "points B2", nv, g2))) return rc;
    if ((rc = zkey_points(&z->points_c, z, &c, 8, "points C", nv - np1, g1))) return rc;
    if ((rc = zkey_points(&z->points_h, z, &c, 9, "points H", z->domain_size, g1))) return rc;
    return 0;
}

int zp_zkey_parse(zp_zkey_t *z, const void *buf, size_t len, const char *name)
{
    memset(z, 0, sizeof *z);
    z->f.path = name;
    z->f.map = buf;
    z->f.size = len;
    z->f.mapped = 0;
    int rc = zkey_load(z, true);
    if (rc) memset(z, 0, sizeof *z);
    return rc;
}

static int zkey_open(zp_zkey_t *z, const char *path, bool check_coefs)
{
    memset(z, 0, sizeof *z);
    int rc = zp_fmt_map(&z->f, path);
    if (rc) return rc;
    rc = zkey_load(z, check_coefs);
    if (rc) {
        zp_fmt_unmap(&z->f);
        memset(z, 0, sizeof *z);
    }
    return rc;
}

int zp_zkey_open(zp_zkey_t *z, const char *path) { return zkey_open(z, path, true); }

int zp_zkey_open_unchecked(zp_zkey_t *z, const char *path) { return zkey_open(z, path, false); }

void zp_zkey_close(zp_zkey_t *z)
{
    if (!z) return;
    zp_fmt_unmap(&z->f);
    memset(z, 0, sizeof *z);
}

/* every coordinate of every point < q (Montgomery form of a canonical element) */
static int check_pts(const zp_zkey_t *z, const char *what, const uint8_t *p, uint64_t count, unsigned ncoord)
{
    uint32_t n8;
    const uint8_t *q = zp_fmt_curve_q(z->curve, &n8);
    for (uint64_t i = 0; i < count; i++)
        for (unsigned k = 0; k < ncoord; k++, p += n8)
            if (zp_fmt_cmp_le(p, q, n8) >= 0)
                return zp_err_set(ZP_EFORMAT, "%s: %s[%llu] coordinate %u not canonical (>= q)", zp_fmt_name(&z->f),
                                  what, (unsigned long long)i, k);
    return 0;
}

int zp_zkey_check_points(const zp_zkey_t *z)
{
    uint64_t nv = z->n_vars, np1 = (uint64_t)z->n_public + 1;
    int rc;
    if ((rc = check_pts(z, "alpha1", z->alpha1, 1, 2)) || (rc = check_pts(z, "beta1", z->beta1, 1, 2)) ||
        (rc = check_pts(z, "beta2", z->beta2, 1, 4)) || (rc = check_pts(z, "gamma2", z->gamma2, 1, 4)) ||
        (rc = check_pts(z, "delta1", z->delta1, 1, 2)) || (rc = check_pts(z, "delta2", z->delta2, 1, 4)) ||
        (rc = check_pts(z, "IC", z->ic, np1, 2)) || (rc = check_pts(z, "A", z->points_a, nv, 2)) ||
        (rc = check_pts(z, "B1", z->points_b1, nv, 2)) || (rc = check_pts(z, "B2", z->points_b2, nv, 4)) ||
        (rc = check_pts(z, "C", z->points_c, nv - np1, 2)) ||
        (rc = check_pts(z, "H", z->points_h, z->domain_size, 2)))
        return rc;
    return 0;
}

int zp_check_wtns_zkey(const zp_wtns_t *w, const zp_zkey_t *z)
{
    const char *wn = zp_fmt_name(&w->f), *zn = zp_fmt_name(&z->f);
    if (w->curve != z->curve)
        return zp_err_set(ZP_EMISMATCH, "%s: witness prime is r of %s but %s is a %s key", wn,
                          zp_curve_name(w->curve), zn, zp_curve_name(z->curve));
    if (w->n_witness != z->n_vars)
        return zp_err_set(ZP_EMISMATCH, "%s: %u witness values but %s has nVars %u", wn, w->n_witness, zn, z->n_vars);
    return 0;
}

int zp_zkey_align_points(zp_zkey_t *z)
{
    return zp_zkey_align_points_pool(z, NULL);
}

int zp_zkey_align_points_pool(zp_zkey_t *z, zp_pool_t *pool)
{
    if (!z->f.mapped) return 0;
    uint64_t g1 = 2ull * z->n8q, g2 = 4ull * z->n8q, nv = z->n_vars, np1 = (uint64_t)z->n_public + 1;
    const struct { const uint8_t **p; uint64_t bytes; } arr[] = {
        {&z->ic, np1 * g1}, {&z->points_a, nv * g1}, {&z->points_b1, nv * g1},
        {&z->points_b2, nv * g2}, {&z->points_c, (nv - np1) * g1}, {&z->points_h, (uint64_t)z->domain_size * g1},
    };
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        const uint8_t *was = *arr[i].p;
        int rc = zp_fmt_align_inplace_pool(&z->f, arr[i].p, (size_t)arr[i].bytes, 8, pool);
        if (rc) return rc;
        if (*arr[i].p != was) z->moved |= 1u << i;   /* the ZP_ZKEY_MOVED_* order */
    }
    return 0;
}

/* (added, issue 10 slots) the header only: for the broker's slot sizing at SUBMIT, which must
 * not read the coefficient section of a 2^27 key on its event loop */
int zp_zkey_read_header(zp_zkey_t *z, const char *path)
{
    zp_fmt_container_t c;
    memset(z, 0, sizeof *z);
    int rc = zp_fmt_map(&z->f, path);
    if (rc) return rc;
    if (!(rc = zp_fmt_container(&c, &z->f, "zkey", 1, 2))) rc = zkey_header(z, &c);
    zp_fmt_unmap(&z->f);
    zp_zkey_t keep = *z;
    memset(z, 0, sizeof *z);
    if (rc) return rc;
    z->curve = keep.curve; z->n8q = keep.n8q; z->n8r = keep.n8r;
    z->n_vars = keep.n_vars; z->n_public = keep.n_public; z->domain_size = keep.domain_size; z->log_n = keep.log_n;
    return 0;
}
