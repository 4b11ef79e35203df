/* fuzz_bellman.c - the bellman readers (lib/fmt/bellman.c): input byte 0 picks the mode, the rest
 * is the file. 0: a .params (on-curve checks, subgroup skipped: fast enough for thousands of
 * inputs), 1: a .vk (ZP_BKEY_VK_ONLY, subgroup checked), 2: a .params with every check,
 * 3: the 192-byte Proof::read. Properties: an accepted file's sections lie inside it, in order,
 * and every converted point encodes back to the file's exact bytes (the decoding is canonical);
 * an accepted proof writes back to the same 192 bytes. Seeds: tests/fuzz/corpus/bellman. */
#include <stdlib.h>
#include <string.h>

#include "lib/fmt/bellman.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned mode = data[0] % 4;
    const uint8_t *file = data + 1;
    size_t len = size - 1;
    if (mode == 3) {
        if (len != ZP_BPROOF_SIZE) return 0;
        zp_bproof_t p;
        if (zp_bproof_read(&p, file)) return 0;
        uint8_t back[ZP_BPROOF_SIZE];
        zp_bproof_write(back, &p);
        FUZZ_ASSERT(!memcmp(back, file, ZP_BPROOF_SIZE), "accepted proof does not write back the same bytes");
        return 0;
    }
    uint8_t *buf = aligned_alloc(8, (len + 8) & ~(size_t)7);
    if (!buf) return 0;
    memcpy(buf, file, len);
    unsigned flags = mode == 0 ? ZP_BKEY_NO_SUBGROUP : mode == 1 ? ZP_BKEY_VK_ONLY : 0;
    zp_bkey_t k;
    if (zp_bkey_parse(&k, buf, len, "fuzz.params", flags) == 0) {
        FUZZ_ASSERT(k.end <= len, "end %llu past the file (%zu)", (unsigned long long)k.end, len);
        int last = mode == 1 ? ZP_BSEC_IC : ZP_BSEC_B_G2;
        uint64_t off = ZP_BVK_HEAD_BYTES;
        for (int s = 0; s <= last; s++) {
            size_t sz = s == ZP_BSEC_B_G2 ? ZP_BLS_G2_UNCOMPRESSED : ZP_BLS_G1_UNCOMPRESSED;
            FUZZ_ASSERT(k.sec[s].count_off == off && k.sec[s].file_off == off + 4, "section %d misplaced", s);
            off = k.sec[s].file_off + (uint64_t)k.sec[s].n * sz;
            FUZZ_ASSERT(off <= len, "section %d past the end", s);
            FUZZ_ASSERT(k.sec[s].n == 0 || ((uintptr_t)k.sec[s].pts & 7) == 0, "section %d not aligned", s);
            uint8_t enc[ZP_BLS_G2_UNCOMPRESSED];
            for (uint32_t i = 0; i < k.sec[s].n; i++) {
                const uint8_t *pt = (const uint8_t *)k.sec[s].pts + (size_t)i * sz;
                if (s == ZP_BSEC_B_G2) zp_bls_g2_to_uncompressed(enc, (const zp_g2a_bls12_381_t *)pt);
                else zp_bls_g1_to_uncompressed(enc, (const zp_g1a_bls12_381_t *)pt);
                FUZZ_ASSERT(!memcmp(enc, file + k.sec[s].file_off + (size_t)i * sz, sz), "%s[%u] does not encode back",
                            zp_bsec_name(s), i);
                FUZZ_ASSERT(enc[0] != 0x40, "%s[%u] is the identity", zp_bsec_name(s), i);
            }
        }
        FUZZ_ASSERT(off == k.end, "end %llu, sections end at %llu", (unsigned long long)k.end, (unsigned long long)off);
        uint8_t enc[ZP_BLS_G2_UNCOMPRESSED];
        zp_bls_g1_to_uncompressed(enc, &k.alpha_g1);
        FUZZ_ASSERT(!memcmp(enc, file, 96), "alpha_g1 does not encode back");
        zp_bls_g2_to_uncompressed(enc, &k.delta_g2);
        FUZZ_ASSERT(!memcmp(enc, file + 672, 192), "delta_g2 does not encode back");
        zp_bkey_close(&k);
    }
    free(buf);
    return 0;
}
