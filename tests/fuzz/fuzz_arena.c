/* fuzz_arena.c - the arena's header validation (shm/shm.c: zp_shm_open -> geom_check) and the
 * descriptor checks behind the read paths a stage or a restarted broker runs on slots it did
 * not write: slot words, vector offsets (zp_shm_slot_vec), payload verification, result areas
 * and the finished-proof record. Input: the object's first bytes (header page, slot table,
 * anything after); the object is sized to the header's total_bytes (capped).
 * Seeds: corpus/arena (real arenas' first pages, made by gen_seeds). */
#include <stdatomic.h>
#include <stddef.h>

#include "shm/shm.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/shmobj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t claimed = 0;
    if (size >= offsetof(zp_shm_hdr_t, total_bytes) + 8) memcpy(&claimed, data + offsetof(zp_shm_hdr_t, total_bytes), 8);
    if (obj_write("arena", data, size, claimed) < 0) return 0;
    zp_shm_t *a = NULL;
    if (zp_shm_open(&a, g_obj, NULL, 0) < 0) return 0;
    zp_shm_stats_t st;
    zp_shm_stats(a, &st);
    uint32_t n = zp_shm_n_slots(a);
    FUZZ_ASSERT(n >= 1 && n == st.n_slots, "opened an arena with %u slots", n);
    for (uint32_t i = 0; i < n && i < 64; i++) {
        size_t len;
        for (unsigned v = 0; v < ZP_SHM_NVEC; v++) {
            uint8_t *p = zp_shm_slot_vec(a, i, v, &len);
            if (p && len) { volatile uint8_t x = p[0] ^ p[len - 1]; (void)x; }
        }
        /* the generations a reader would be handed: the ones the descriptor claims */
        const zp_shm_slot_t *d = zp_shm_slot(a, i);
        uint64_t w = atomic_load(&d->word);
        zp_shm_slot_check(a, i, zp_shm_word_state(w), zp_shm_word_gen(w));
        zp_shm_payload_verify(a, i, d->payload_gen);
        uint8_t out[ZP_SHM_PROOF_BYTES];
        for (unsigned ar = 0; ar < ZP_SHM_NAREA; ar++)
            zp_shm_area_read(a, i, (zp_shm_area_t)ar, zp_shm_area_gen(a, i, (zp_shm_area_t)ar), out, sizeof out, &len);
        char *pj = NULL, *pub = NULL;
        uint8_t bin[ZP_SHM_PROOF_BYTES];
        if (zp_shm_final_read(&pj, &pub, bin, sizeof bin, &len, a, i, zp_shm_area_gen(a, i, ZP_SHM_AREA_PROOF)) == 0) {
            FUZZ_ASSERT(pj && pub && len <= sizeof bin, "final read");
            free(pj);
            free(pub);
        }
    }
    zp_shm_close(&a);
    return 0;
}
