/* test_shm_sum.c - issue 10 item 1: the chunked payload checksum (shm/shm.c payload_sum,
 * zp_shm_payload_seal_pool / zp_shm_payload_verify_pool / zp_shm_payload_stamp).
 * 1. The value does not depend on the pool: sealed on 3 threads, verified on none, 1, 2 and 4.
 * 2. A flipped byte anywhere (first chunk, a chunk boundary, the last byte of a vector, a vector
 *    shorter than a chunk) is detected with and without a pool; restored, it verifies again.
 * 3. Vectors outside the mask (h) may change freely; the stamp check (O(1), broker recovery)
 *    accepts the seal generation only and refuses a bad mask or offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/shm.h"
#include "test_common.h"

#define MASK (ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) | \
              ZP_SHM_VEC_MASK(ZP_SHM_VEC_C))

static int verify_all(zp_shm_t *a, uint32_t idx, uint64_t pg, zp_pool_t *const *pools, unsigned np)
{
    int r = zp_shm_payload_verify(a, idx, pg);
    for (unsigned i = 0; i < np; i++) {
        int r2 = zp_shm_payload_verify_pool(a, idx, pg, pools[i]);
        if (r2 != r) return 1;   /* the answer must not depend on the pool */
    }
    return r;
}

int main(void)
{
    char name[64];
    snprintf(name, sizeof name, "/zkpipe-test-sum-%d", (int)getpid());
    shm_unlink(name);
    /* w: 1000 vars (one short chunk); a, b, c, h: domain 2^16 x 32 B = 2 MiB = 2 chunks each */
    const uint32_t nv = 1000, dom = 1u << 16;
    zp_shm_cfg_t cfg = {.name = name, .n_slots = 2, .slot_bytes = zp_shm_slot_bytes_for(nv, dom, 32)};
    zp_shm_t *a = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0);
    zp_pool_t *p3 = zp_pool_new(3), *pools[3] = {zp_pool_new(1), zp_pool_new(2), zp_pool_new(4)};
    uint64_t g, pg;
    CHECK(zp_shm_slot_claim_at(a, 1, &g) == 0);
    CHECK(zp_shm_slot_layout(a, 1, ZP_SLOT_SYNTH, g, nv, dom, 32) == 0);
    uint8_t *v[ZP_SHM_NVEC];
    size_t len[ZP_SHM_NVEC];
    for (unsigned i = 0; i < ZP_SHM_NVEC; i++) {
        v[i] = zp_shm_slot_vec(a, 1, i, &len[i]);
        CHECK(v[i] != NULL);
        rnd_cb(NULL, v[i], len[i]);
    }
    CHECK(len[ZP_SHM_VEC_W] < ZP_SHM_SUM_CHUNK && len[ZP_SHM_VEC_A] == 2 * ZP_SHM_SUM_CHUNK);
    CHECK(zp_shm_payload_seal_pool(a, 1, ZP_SLOT_SYNTH, g, MASK, ZP_SLOT_READY, &pg, p3) == 0 && pg == g + 1);
    CHECK(verify_all(a, 1, pg, pools, 3) == 0);
    /* the same bytes sealed without a pool give the same sum */
    uint64_t g2, pg2;
    CHECK(zp_shm_slot_reset(a, 1, pg, ZP_SLOT_SYNTH, &g2) == 0);
    CHECK(zp_shm_payload_seal(a, 1, ZP_SLOT_SYNTH, g2, MASK, ZP_SLOT_READY, &pg2) == 0);
    CHECK(zp_shm_payload_verify_pool(a, 1, pg2, p3) == 0);
    CHECK(zp_shm_payload_verify(a, 1, pg) == ZP_ESTALE);   /* resealed: the old stamp is gone */
    CHECK(zp_shm_slot_reset(a, 1, pg2, ZP_SLOT_SYNTH, &g2) == 0);
    CHECK(zp_shm_payload_seal_pool(a, 1, ZP_SLOT_SYNTH, g2, MASK, ZP_SLOT_READY, &pg2, pools[2]) == 0);
    /* flipped bytes, each found with every pool, and gone again once restored */
    const struct { unsigned vec; size_t off; } spots[] = {
        {ZP_SHM_VEC_W, 0}, {ZP_SHM_VEC_W, 999 * 32 + 31}, {ZP_SHM_VEC_A, ZP_SHM_SUM_CHUNK - 1},
        {ZP_SHM_VEC_B, ZP_SHM_SUM_CHUNK}, {ZP_SHM_VEC_C, 2 * ZP_SHM_SUM_CHUNK - 1}, {ZP_SHM_VEC_C, 12345}};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        uint8_t *p = v[spots[i].vec] + spots[i].off;
        *p ^= 0x10;
        CHECK(verify_all(a, 1, pg2, pools, 3) == ZP_EFORMAT);
        *p ^= 0x10;
        CHECK(verify_all(a, 1, pg2, pools, 3) == 0);
    }
    /* two chunks swapped (same bytes, other order) is not the same payload */
    uint8_t *tmp = malloc(ZP_SHM_SUM_CHUNK);
    CHECK(tmp != NULL);
    memcpy(tmp, v[ZP_SHM_VEC_A], ZP_SHM_SUM_CHUNK);
    memcpy(v[ZP_SHM_VEC_A], v[ZP_SHM_VEC_A] + ZP_SHM_SUM_CHUNK, ZP_SHM_SUM_CHUNK);
    memcpy(v[ZP_SHM_VEC_A] + ZP_SHM_SUM_CHUNK, tmp, ZP_SHM_SUM_CHUNK);
    CHECK(verify_all(a, 1, pg2, pools, 3) == ZP_EFORMAT);
    memcpy(v[ZP_SHM_VEC_A] + ZP_SHM_SUM_CHUNK, v[ZP_SHM_VEC_A], ZP_SHM_SUM_CHUNK);
    memcpy(v[ZP_SHM_VEC_A], tmp, ZP_SHM_SUM_CHUNK);
    CHECK(verify_all(a, 1, pg2, pools, 3) == 0);
    free(tmp);
    /* h is not sealed: the GPU stage writes it */
    v[ZP_SHM_VEC_H][7] ^= 1;
    CHECK(verify_all(a, 1, pg2, pools, 3) == 0);
    /* the O(1) stamp check */
    CHECK(zp_shm_payload_stamp(a, 1, pg2) == 0);
    CHECK(zp_shm_payload_stamp(a, 1, pg2 - 1) == ZP_ESTALE && strstr(zp_err_msg(), "sealed at gen"));
    CHECK(zp_shm_payload_stamp(a, 1, 0) == ZP_ESTALE);
    zp_shm_slot_t *d = zp_shm_slot(a, 1);
    v[ZP_SHM_VEC_W][0] ^= 1;   /* the stamp check does not read the data: that is the stages' job */
    CHECK(zp_shm_payload_stamp(a, 1, pg2) == 0);
    v[ZP_SHM_VEC_W][0] ^= 1;
    uint64_t off = d->vec_off[ZP_SHM_VEC_C];
    d->vec_off[ZP_SHM_VEC_C] = cfg.slot_bytes;   /* beyond the extent */
    CHECK(zp_shm_payload_stamp(a, 1, pg2) == ZP_EFORMAT);
    CHECK(verify_all(a, 1, pg2, pools, 3) == ZP_EFORMAT);
    d->vec_off[ZP_SHM_VEC_C] = off;
    uint32_t mask = d->payload_mask;
    d->payload_mask = 0;
    CHECK(zp_shm_payload_stamp(a, 1, pg2) == ZP_EFORMAT && strstr(zp_err_msg(), "payload mask"));
    d->payload_mask = mask;
    CHECK(verify_all(a, 1, pg2, pools, 3) == 0);
    zp_pool_destroy(&p3);
    for (int i = 0; i < 3; i++) zp_pool_destroy(&pools[i]);
    zp_shm_close(&a);
    zp_shm_unlink(name, NULL);
    printf("shm_sum: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
