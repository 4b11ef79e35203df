/* fuzz_json.c - the JSON readers (lib/fmt/json.c): proof.json, public.json (and the check
 * that each signal is < r), verification_key.json. The first byte picks the reader (% 3),
 * the rest is the text. An accepted proof is written back by zp_proof_json_format and must
 * parse again to the same values. (A proof without "curve" is accepted, as older rapidsnark
 * wrote them; it is formatted as bn128, and may then fail bn128's coordinate check.) Seeds: corpus/json (fixture files behind a selector byte). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fmt/fmt.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *t = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0: {
        zp_proof_json_t p, q;
        if (zp_proof_json_parse(&p, t, n, "fuzz/proof.json") < 0) break;
        bool no_curve = p.curve == ZP_CURVE_NONE;
        if (no_curve) p.curve = ZP_CURVE_BN254;
        static char buf[8192];
        size_t k = zp_proof_json_format(buf, sizeof buf, &p);
        FUZZ_ASSERT(k > 0 && k < sizeof buf, "an accepted proof does not format (%zu)", k);
        int rc = zp_proof_json_parse(&q, buf, k, "fuzz/re.json");
        if (no_curve && rc < 0) break;   /* checked against bls12381's q only: may exceed bn128's */
        FUZZ_ASSERT(rc == 0, "formatted proof does not parse: %s", buf);
        bool same = p.curve == q.curve;
        for (int i = 0; i < 2; i++) {
            same = same && !strcmp(p.a[i], q.a[i]) && !strcmp(p.c[i], q.c[i]);
            for (int j = 0; j < 2; j++) same = same && !strcmp(p.b[i][j], q.b[i][j]);
        }
        FUZZ_ASSERT(same, "proof changed through format/parse: %s", buf);
        break;
    }
    case 1: {
        char(*sig)[100] = NULL;
        size_t ns = 0;
        if (zp_public_json_parse(&sig, &ns, t, n, "fuzz/public.json") < 0) break;
        zp_public_json_check(sig, ns, ZP_CURVE_BN254, "fuzz/public.json");
        zp_public_json_check(sig, ns, ZP_CURVE_BLS12_381, "fuzz/public.json");
        free(sig);
        break;
    }
    default: {
        zp_vk_json_t vk;
        if (zp_vk_json_parse(&vk, t, n, "fuzz/vk.json") < 0) break;
        zp_vk_json_free(&vk);
    }
    }
    return 0;
}
