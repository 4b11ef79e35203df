/* fuzz_keystore.c - the key store's header and layout validation (shm/keystore.c:
 * zp_keystore_open_name -> open_ready, then zp_g16_key_bind over the offsets it claims): what a
 * restarted GPU worker trusts before it registers a key with the device. Input: one flag byte,
 * then the object. Flag odd: the harness first makes the checksums consistent with the rest
 * (chunk table, table_sum, hdr_sum) and sets state READY, so mutations reach the layout and
 * offset checks instead of stopping at a checksum; even: the object is taken as is.
 * Seeds: corpus/keystore (a real store object of a fixture key, made by gen_seeds). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "shm/keystore.h"
#include "shm/shm.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/shmobj.h"

static uint8_t g_buf[FUZZ_OBJ_MAX];

static void fixup(uint8_t *b, size_t size)
{
    zp_keystore_hdr_t h;
    if (size < ZP_KEYSTORE_HDR_BYTES) return;
    memcpy(&h, b, sizeof h);
    /* chunk checksums: only for a layout that lies inside the input */
    if (h.chunk_shift == 20 && h.n_chunks && h.n_chunks < 64 && h.data_off <= size && h.data_len <= size - h.data_off &&
        ZP_KEYSTORE_HDR_BYTES + h.n_chunks * 8 <= size) {
        for (uint64_t i = 0; i < h.n_chunks; i++) {
            size_t off = (size_t)i << 20;
            if (off >= h.data_len) break;
            size_t n = h.data_len - off < (1u << 20) ? h.data_len - off : (1u << 20);
            uint64_t s = zp_shm_checksum(b + h.data_off + off, n, i + 1);
            memcpy(b + ZP_KEYSTORE_HDR_BYTES + i * 8, &s, 8);
        }
        h.table_sum = zp_shm_checksum(b + ZP_KEYSTORE_HDR_BYTES, h.n_chunks * 8, ZP_KEYSTORE_MAGIC);
    }
    zp_keystore_hdr_t c = h;
    atomic_store(&c.state, 0);
    c.creator_pid = 0;
    c.hdr_sum = 0;
    h.hdr_sum = zp_shm_checksum(&c, sizeof c, ZP_KEYSTORE_MAGIC);
    atomic_store(&h.state, ZP_KEYSTORE_READY);
    memcpy(b, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size || size - 1 > sizeof g_buf) return 0;
    bool fix = data[0] & 1;
    data++, size--;
    memcpy(g_buf, data, size);
    if (fix) fixup(g_buf, size);
    uint64_t claimed = 0;
    if (size >= offsetof(zp_keystore_hdr_t, total_bytes) + 8)
        memcpy(&claimed, g_buf + offsetof(zp_keystore_hdr_t, total_bytes), 8);
    if (obj_write("ks", g_buf, size, claimed) < 0) return 0;
    zp_keystore_key_t ks;
    if (zp_keystore_open_name(&ks, g_obj, true) < 0) return 0;
    FUZZ_ASSERT(ks.data && ks.data_len && ks.key.n_vars, "opened a key store object without a key");
    zp_keystore_release(&ks);
    return 0;
}
