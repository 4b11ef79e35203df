/* test_shm_final.c - issue 8 defect 3: the finalizer's result region in a slot (shm/shm.c,
 * zp_shm_final_commit / zp_shm_final_read).
 * 1. A zero-length (cleared) h vector must not be taken as the text region: it would place
 *    proof.json at offset 0 of the extent, over the witness (the next job's, once the slot is
 *    reused). Commit and read refuse it and the witness bytes stay intact.
 * 2. The slot word is re-checked after the text is copied out: a slot freed (or freed and
 *    claimed again) after the caller looked at it yields ZP_ESTALE, not a proof whose checksum
 *    happens to still match. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/shm.h"
#include "test_common.h"

static const char pj[] = "{\"pi_a\": [1, 2]}", pu[] = "[\"7\"]";
static const uint8_t bin[3] = {9, 8, 7};

/* claim slot idx, lay it out, walk it to FINALIZING; returns the FINALIZING gen */
static uint64_t to_finalizing(zp_shm_t *a, uint32_t idx)
{
    uint64_t g;
    CHECK(zp_shm_slot_claim_at(a, idx, &g) == 0);
    CHECK(zp_shm_slot_layout(a, idx, ZP_SLOT_SYNTH, g, 8, 16, 32) == 0);
    for (unsigned st = ZP_SLOT_SYNTH; st < ZP_SLOT_FINALIZING; st++)
        CHECK(zp_shm_slot_transition(a, idx, st, g, st + 1, &g) == 0);
    return g;
}

int main(void)
{
    char name[64];
    snprintf(name, sizeof name, "/zkpipe-test-final-%d", (int)getpid());
    shm_unlink(name);
    zp_shm_cfg_t cfg = {.name = name, .n_slots = 2, .slot_bytes = 1};
    zp_shm_t *a = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0);
    if (!a) return 1;
    zp_shm_slot_t *s = zp_shm_slot(a, 0);
    char *rp = NULL, *ru = NULL;
    uint8_t rb[ZP_SHM_FINAL_BIN_MAX];
    size_t rbl, wl;
    uint64_t g, gfin, gx;

    /* 1. zero-length h */
    g = to_finalizing(a, 0);
    uint8_t *w = zp_shm_slot_vec(a, 0, ZP_SHM_VEC_W, &wl);
    CHECK(w && wl >= 64);
    memset(w, 0x5a, 64);                                 /* "the witness" */
    uint64_t hoff = s->vec_off[ZP_SHM_VEC_H], hlen = s->vec_len[ZP_SHM_VEC_H];
    s->vec_off[ZP_SHM_VEC_H] = 0;                        /* a cleared descriptor */
    s->vec_len[ZP_SHM_VEC_H] = 0;
    CHECK(zp_shm_final_commit(a, 0, g, pj, strlen(pj), pu, strlen(pu), bin, 3, &gfin) == ZP_EFORMAT);
    CHECK(zp_shm_slot_check(a, 0, ZP_SLOT_FINALIZING, g) == 0);   /* nothing committed */
    uint8_t want[64];
    memset(want, 0x5a, sizeof want);
    CHECK(memcmp(w, want, sizeof want) == 0);            /* the witness is intact */
    s->vec_off[ZP_SHM_VEC_H] = hoff;
    s->vec_len[ZP_SHM_VEC_H] = hlen;
    CHECK(zp_shm_final_commit(a, 0, g, pj, strlen(pj), pu, strlen(pu), bin, 3, &gfin) == 0);
    s->vec_len[ZP_SHM_VEC_H] = 0;                        /* cleared after the commit */
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 0, gfin) == ZP_EFORMAT && !rp && !ru);
    s->vec_len[ZP_SHM_VEC_H] = hlen;
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 0, gfin) == 0);
    CHECK(rp && ru && !strcmp(rp, pj) && !strcmp(ru, pu) && rbl == 3);
    free(rp); free(ru); rp = ru = NULL;

    /* 2. the slot moved: freed by the broker (the record and text still there, stamps intact) */
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_FINISHED, gfin, ZP_SLOT_FREE, &gx) == 0);
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 0, gfin) == ZP_ESTALE && !rp && !ru);
    /* and claimed again by the next job */
    g = to_finalizing(a, 0);
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 0, gfin) == ZP_ESTALE && !rp && !ru);
    CHECK(zp_shm_slot_reset(a, 0, g, ZP_SLOT_FREE, NULL) == 0);

    zp_shm_close(&a);
    zp_shm_unlink(name, NULL);
    if (fails) { fprintf(stderr, "test_shm_final: %d failure(s)\n", fails); return 1; }
    printf("test_shm_final: OK\n");
    return 0;
}
