/* r1cs.c - circom constraint systems (.r1cs version 1) and their consistency with a zkey.
 * Section 1: u32 n8, prime[n8] (= r), u32 nWires, nPubOut, nPubIn, nPrvIn, u64 nLabels,
 * u32 nConstraints. Section 2: nConstraints x {LC A, LC B, LC C}, LC = u32 nTerms, nTerms x
 * {u32 wire, coef[n8] LE standard form}. Section 3 (optional here): nWires x u64 label ids.
 * Invariants after a successful open/parse: every constraint was walked: wire ids < nWires,
 * coefs < r, section 2 ends exactly after the last constraint; 1 + nPubOut + nPubIn <= nWires.
 * nPrvIn is NOT bounded by nWires: circom counts every declared private input there, also the
 * ones its optimizer removed from the wires (an unused input), and snarkjs never checks it.
 * Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <string.h>

static const char *const lc_name[3] = {"A", "B", "C"};

/* walks one linear combination at *pos (offset into sec of size end); checks and advances */
static int walk_lc(const zp_r1cs_t *r, const uint8_t *sec, uint64_t end, uint64_t *pos, uint32_t ci,
                   int which, const uint8_t *prime)
{
    const char *name = zp_fmt_name(&r->f);
    if (end - *pos < 4)
        return zp_err_set(ZP_EFORMAT, "%s: constraint %u: LC %s term count runs past section 2 (%llu bytes)", name, ci,
                          lc_name[which], (unsigned long long)end);
    uint32_t nt = zp_fmt_u32(sec + *pos);
    *pos += 4;
    uint64_t tsz = 4ull + r->n8;
    if ((uint64_t)nt * tsz > end - *pos)
        return zp_err_set(ZP_EFORMAT, "%s: constraint %u: LC %s has %u terms of %llu bytes but only %llu bytes are left in section 2",
                          name, ci, lc_name[which], nt, (unsigned long long)tsz, (unsigned long long)(end - *pos));
    for (uint32_t t = 0; t < nt; t++, *pos += tsz) {
        uint32_t wire = zp_fmt_u32(sec + *pos);
        if (wire >= r->n_wires)
            return zp_err_set(ZP_EFORMAT, "%s: constraint %u: LC %s term %u: wire %u >= nWires %u", name, ci,
                              lc_name[which], t, wire, r->n_wires);
        if (zp_fmt_cmp_le(sec + *pos + 4, prime, r->n8) >= 0)
            return zp_err_set(ZP_EFORMAT, "%s: constraint %u: LC %s term %u: coefficient not canonical (>= r)", name, ci,
                              lc_name[which], t);
    }
    return 0;
}

static int r1cs_load(zp_r1cs_t *r)
{
    const char *name = zp_fmt_name(&r->f);
    zp_fmt_container_t c;
    int rc = zp_fmt_container(&c, &r->f, "r1cs", 1, 1);
    if (rc) return rc;
    const uint8_t *p;
    uint64_t sz;
    if ((rc = zp_fmt_section(&p, &sz, &c, &r->f, 1, "header"))) return rc;
    if (sz < 4) return zp_err_set(ZP_EFORMAT, "%s: section 1 (header) is %llu bytes, too short", name, (unsigned long long)sz);
    uint32_t n8 = zp_fmt_u32(p);
    if (n8 == 0 || n8 > 64 || n8 % 8)
        return zp_err_set(ZP_EFORMAT, "%s: field size n8 = %u bytes is not a multiple of 8 in 8..64", name, n8);
    if (sz != 32 + (uint64_t)n8)
        return zp_err_set(ZP_EFORMAT, "%s: section 1 (header) is %llu bytes, expected %llu for n8 %u", name,
                          (unsigned long long)sz, (unsigned long long)(32 + (uint64_t)n8), n8);
    const uint8_t *prime = p + 4;
    r->curve = zp_curve_from_r(prime, n8);
    if (r->curve == ZP_CURVE_NONE)
        return zp_err_set(ZP_ECURVE, "%s: prime is %s, not r of bn128 or bls12381", name, zp_fmt_prime_name(prime, n8));
    r->n8 = n8;
    const uint8_t *h = p + 4 + n8;
    r->n_wires = zp_fmt_u32(h);
    r->n_pub_out = zp_fmt_u32(h + 4);
    r->n_pub_in = zp_fmt_u32(h + 8);
    r->n_prv_in = zp_fmt_u32(h + 12);
    r->n_labels = zp_fmt_u64(h + 16);
    r->n_constraints = zp_fmt_u32(h + 24);
    /* public signals are wires 1..nPubOut+nPubIn; private inputs may have been optimized away */
    uint64_t need = 1ull + r->n_pub_out + r->n_pub_in;
    if (need > r->n_wires)
        return zp_err_set(ZP_EFORMAT, "%s: nWires %u < 1 + nPubOut %u + nPubIn %u", name, r->n_wires,
                          r->n_pub_out, r->n_pub_in);

    if ((rc = zp_fmt_section(&p, &sz, &c, &r->f, 2, "constraints"))) return rc;
    uint64_t pos = 0;
    for (uint32_t ci = 0; ci < r->n_constraints; ci++)
        for (int k = 0; k < 3; k++)
            if ((rc = walk_lc(r, p, sz, &pos, ci, k, prime))) return rc;
    if (pos != sz)
        return zp_err_set(ZP_EFORMAT, "%s: section 2 has %llu bytes after the last of %u constraints", name,
                          (unsigned long long)(sz - pos), r->n_constraints);
    r->constraints = p;
    r->constraints_len = (size_t)sz;

    if (c.sec[3].present && c.sec[3].size != 8ull * r->n_wires)
        return zp_err_set(ZP_EFORMAT, "%s: section 3 (wire labels) is %llu bytes but header says %u wires of 8 bytes (%llu)",
                          name, (unsigned long long)c.sec[3].size, r->n_wires, (unsigned long long)(8ull * r->n_wires));
    return 0;
}

int zp_r1cs_parse(zp_r1cs_t *r, const void *buf, size_t len, const char *name)
{
    memset(r, 0, sizeof *r);
    r->f.path = name;
    r->f.map = buf;
    r->f.size = len;
    int rc = r1cs_load(r);
    if (rc) memset(r, 0, sizeof *r);
    return rc;
}

int zp_r1cs_open(zp_r1cs_t *r, const char *path)
{
    memset(r, 0, sizeof *r);
    int rc = zp_fmt_map(&r->f, path);
    if (rc) return rc;
    rc = r1cs_load(r);
    if (rc) {
        zp_fmt_unmap(&r->f);
        memset(r, 0, sizeof *r);
    }
    return rc;
}

void zp_r1cs_close(zp_r1cs_t *r)
{
    if (!r) return;
    zp_fmt_unmap(&r->f);
    memset(r, 0, sizeof *r);
}

/* coef entry k of z must be (m, row, wire); entries are already bounds-checked */
static int expect_coef(const zp_r1cs_t *r, const zp_zkey_t *z, uint64_t k, uint32_t m, uint32_t row, uint32_t wire)
{
    if (k >= z->n_coefs)
        return zp_err_set(ZP_EMISMATCH, "%s: more A/B terms than the %u coefs of %s", zp_fmt_name(&r->f), z->n_coefs,
                          zp_fmt_name(&z->f));
    const uint8_t *e = z->coefs + k * (12ull + z->n8r);
    uint32_t em = zp_fmt_u32(e), er = zp_fmt_u32(e + 4), ew = zp_fmt_u32(e + 8);
    if (em != m || er != row || ew != wire)
        return zp_err_set(ZP_EMISMATCH, "%s: coef %llu of %s is (matrix %u, row %u, wire %u) but the r1cs term is (%u, %u, %u)",
                          zp_fmt_name(&r->f), (unsigned long long)k, zp_fmt_name(&z->f), em, er, ew, m, row, wire);
    return 0;
}

int zp_check_r1cs_zkey(const zp_r1cs_t *r, const zp_zkey_t *z)
{
    const char *rn = zp_fmt_name(&r->f), *zn = zp_fmt_name(&z->f);
    if (r->curve != z->curve)
        return zp_err_set(ZP_EMISMATCH, "%s: prime is r of %s but %s is a %s key", rn, zp_curve_name(r->curve), zn,
                          zp_curve_name(z->curve));
    if (r->n_wires != z->n_vars)
        return zp_err_set(ZP_EMISMATCH, "%s: nWires %u but %s has nVars %u", rn, r->n_wires, zn, z->n_vars);
    uint64_t npub = (uint64_t)r->n_pub_out + r->n_pub_in;
    if (npub != z->n_public)
        return zp_err_set(ZP_EMISMATCH, "%s: nPubOut %u + nPubIn %u but %s has nPublic %u", rn, r->n_pub_out, r->n_pub_in,
                          zn, z->n_public);
    /* snarkjs: domainSize = 2^(floor(log2(rows - 1)) + 1), i.e. the next power of two >= rows
     * but at least 2 (one row, no constraint and no public signal, still gets a domain of 2) */
    uint64_t rows = (uint64_t)r->n_constraints + npub + 1, want = 2;
    while (want < rows) want <<= 1;
    if (want != z->domain_size)
        return zp_err_set(ZP_EMISMATCH, "%s: nConstraints %u + nPublic %llu + 1 = %llu rows need a domain of %llu, %s has %u",
                          rn, r->n_constraints, (unsigned long long)npub, (unsigned long long)rows,
                          (unsigned long long)want, zn, z->domain_size);
    /* the zkey coefs are, in order, the A then B terms of each constraint, then the public rows */
    uint64_t k = 0, pos = 0, tsz = 4ull + r->n8;
    int rc;
    for (uint32_t ci = 0; ci < r->n_constraints; ci++) {
        for (uint32_t m = 0; m < 3; m++) {
            uint32_t nt = zp_fmt_u32(r->constraints + pos);   /* validated at open */
            pos += 4;
            for (uint32_t t = 0; t < nt; t++, pos += tsz)
                if (m < 2 && (rc = expect_coef(r, z, k++, m, ci, zp_fmt_u32(r->constraints + pos)))) return rc;
        }
    }
    for (uint32_t s = 0; s <= z->n_public; s++)
        if ((rc = expect_coef(r, z, k++, 0, r->n_constraints + s, s))) return rc;
    if (k != z->n_coefs)
        return zp_err_set(ZP_EMISMATCH, "%s: %s has %u coefs but the r1cs gives %llu", rn, zn, z->n_coefs,
                          (unsigned long long)k);
    return 0;
}
