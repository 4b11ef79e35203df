/* keystore_bellman.c - a bellman .params + its circuit's r1cs as a key store object (or a
 * private key) in the stages' key shape (issue 29 item 4; see keystore.h and
 * lib/groth16/assignment.h zp_g16_key_from_bellman).
 * What the object must hold is known from the r1cs header alone (wires, inputs, domain), so a
 * process that finds the object READY never parses the .params; only the creator does (every
 * bellman check, subgroup included: lib/fmt/bellman.c), computes the densities from the r1cs
 * and lays the key out in the object, COMPACTED as in the file (A, B_g1, B_g2 as bellman's a,
 * b_g1, b_g2 plus wire-level density bitmaps and prefix counts; the stages gather their
 * scalars). In place of the r1cs a density file (assignment.h zp_g16_bdensity_read) gives the
 * bitmaps: the key then has no coefficients (pre-synthesized vector jobs only; the synth
 * refuses witnesses for it). One copy: the .params is scanned (counts), the object laid out,
 * then every point is converted from a read-only mapping of the file straight into the
 * object (lib/fmt/bellman.h opts.into): no converted or expanded copy besides it.
 * Tests: tests/test_bellman_key.c, tests/ipc/bellman_submit.sh */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "shm/keystore.h"

typedef struct {
    const char *params;
    zp_r1cs_t r1cs;
    bool r1cs_open, bk_open;
    bool dfile;                 /* the circuit file is a density file (no r1cs, no coefficients) */
    zp_bkey_t bk;
    zp_g16_bkey_t gk;
    uint64_t *dmem;
    zp_g16_bdensity_t d;
} bsrc_t;

static void bsrc_close(bsrc_t *b)
{
    if (b->bk_open) zp_bkey_close(&b->bk);
    if (b->r1cs_open) zp_r1cs_close(&b->r1cs);
    free(b->dmem);
    memset(b, 0, sizeof *b);
}

/* the r1cs and what it says of the key's shape */
static int bsrc_open(bsrc_t *b, zp_keystore_src_t *src, const char *params, const char *r1cs)
{
    memset(b, 0, sizeof *b);
    b->params = params;
    if (!r1cs || !*r1cs)
        return zp_err_set(ZP_EFORMAT, "%s: a bellman .params key needs its circuit (--r1cs circuit.r1cs): the stages' "
                          "coefficients and the density bitmaps come from it", params);
    int rc;
    if (zp_g16_bdensity_sniff(r1cs)) {   /* a density file: the bitmaps, no coefficients */
        if ((rc = zp_g16_bdensity_read(&b->d, &b->dmem, r1cs))) return rc;
        b->dfile = true;
        unsigned log_n = 0;
        while (((size_t)1 << log_n) < b->d.abc_size) log_n++;
        *src = (zp_keystore_src_t){.path = params, .r1cs = r1cs, .conv = ZP_G16_CONV_BELLMAN,
                                   .curve = ZP_CURVE_BLS12_381, .n_vars = (uint32_t)(b->d.n_inp + b->d.n_aux),
                                   .n_public = (uint32_t)(b->d.n_inp - 1), .domain_size = (uint32_t)1 << log_n,
                                   .n_coefs = 0, .ctx = b};
        return 0;
    }
    if ((rc = zp_r1cs_open(&b->r1cs, r1cs))) return rc;
    b->r1cs_open = true;
    if (b->r1cs.curve != ZP_CURVE_BLS12_381) {
        rc = zp_err_set(ZP_ECURVE, "%s: a bellman key (%s) is on BLS12-381; this r1cs is over %s", r1cs, params,
                        zp_curve_name(b->r1cs.curve));
        bsrc_close(b);
        return rc;
    }
    uint64_t n_inp = (uint64_t)b->r1cs.n_pub_out + b->r1cs.n_pub_in + 1, m = n_inp + b->r1cs.n_constraints;
    if (n_inp > b->r1cs.n_wires || m > ((uint64_t)1 << 31)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: %llu inputs, %u wires, %u constraints out of range", r1cs,
                        (unsigned long long)n_inp, b->r1cs.n_wires, b->r1cs.n_constraints);
        bsrc_close(b);
        return rc;
    }
    unsigned log_n = 0;
    while (((uint64_t)1 << log_n) < m) log_n++;
    *src = (zp_keystore_src_t){.path = params, .r1cs = r1cs, .conv = ZP_G16_CONV_BELLMAN, .curve = ZP_CURVE_BLS12_381,
                               .n_vars = b->r1cs.n_wires, .n_public = (uint32_t)(n_inp - 1),
                               .domain_size = (uint32_t)1 << log_n, .n_coefs = UINT32_MAX, .ctx = b};
    return 0;
}

/* the .params scanned (header points and counts, nothing converted) and the densities: the
 * key's size */
static int bsrc_prepare(void *ctx, size_t *bytes)
{
    bsrc_t *b = ctx;
    int rc;
    if (!b->bk_open) {
        zp_bkey_opts_t o = {.flags = ZP_BKEY_SCAN};
        if ((rc = zp_bkey_open_opts(&b->bk, b->params, &o))) return rc;
        b->bk_open = true;
        if (!b->bk.has_params) return zp_err_set(ZP_EFORMAT, "%s: a verifying key (.vk), not proving parameters", b->params);
        zp_g16_bkey_from_fmt(&b->gk, &b->bk);   /* counts and header points (no arrays: a scan) */
    }
    if (!b->dmem && (rc = zp_g16_bellman_density(&b->d, &b->dmem, &b->r1cs))) return rc;
    return zp_g16_key_bellman_bytes(bytes, &b->gk, &b->d, b->dfile ? NULL : &b->r1cs, b->params);
}

/* the key laid out in mem (bitmaps, prefixes, coefficients), then every section converted
 * from the file straight into its place (every bellman check; subgroups once per file, the
 * check record): the store holds the only copy, compacted as in the file */
static int bsrc_fill(void *ctx, zp_g16_key_t *k, void *mem, size_t len, zp_pool_t *pool)
{
    bsrc_t *b = ctx;
    void *into[6];
    uint64_t cap[6];
    int rc = zp_g16_key_bellman_place(k, &b->gk, &b->d, b->dfile ? NULL : &b->r1cs, mem, len, b->params, into, cap);
    if (rc) return rc;
    zp_bkey_t bk;
    zp_bkey_opts_t o = {.flags = ZP_BKEY_USE_RECORD, .pool = pool, .into = into, .into_cap = cap};
    if ((rc = zp_bkey_open_opts(&bk, b->params, &o))) {
        memset(k, 0, sizeof *k);
        return rc;
    }
    zp_g16_bkey_t gk;
    zp_g16_bkey_from_fmt(&gk, &bk);
    rc = zp_g16_key_bellman_finish(k, &gk, b->params);
    zp_bkey_close(&bk);
    if (rc) memset(k, 0, sizeof *k);
    return rc;
}

int zp_keystore_get_bellman(zp_keystore_key_t *ks, const char *prefix, const char *params, const char *r1cs,
                            const zp_keystore_opt_t *opt)
{
    bsrc_t b;
    zp_keystore_src_t src;
    memset(ks, 0, sizeof *ks);
    int rc = bsrc_open(&b, &src, params, r1cs);
    if (rc) return rc;
    src.prepare = bsrc_prepare;
    src.fill = bsrc_fill;
    rc = zp_keystore_get_src(ks, prefix, &src, opt);
    bsrc_close(&b);
    return rc;
}

int zp_key_load_bellman_private(zp_g16_key_t *k, const char *params, const char *r1cs, zp_pool_t *pool)
{
    bsrc_t b;
    zp_keystore_src_t src;
    memset(k, 0, sizeof *k);
    int rc = bsrc_open(&b, &src, params, r1cs);
    size_t bytes = 0;
    void *mem = NULL;
    if (!rc) rc = bsrc_prepare(&b, &bytes);
    if (!rc && !(mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63)))
        rc = zp_err_set(-ENOMEM, "%s: the key: cannot allocate %zu bytes", params, bytes);
    if (!rc) rc = bsrc_fill(&b, k, mem, bytes, pool);
    if (!rc) k->mem_owned = 1;
    else free(mem);
    bsrc_close(&b);
    return rc;
}
