/* fuzz_sup.c - the supervisor channel's message decoder (proto/identity.c, zp_sup_decode) and
 * the Peer-Address parser: an accepted message encodes again, and that decodes to the same
 * message. Seeds: corpus/sup. */
#include <string.h>

#include "proto/identity.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char z[600];
    size_t n = size < sizeof z - 1 ? size : sizeof z - 1;
    memcpy(z, data, n);
    z[n] = 0;
    uint32_t uid;
    zp_peer_address_pid(z, &uid);
    zp_sup_msg_t m, m2;
    if (zp_sup_decode(&m, (const char *)data, size) < 0) return 0;
    char buf[ZP_SUP_MSG_MAX];
    int k = zp_sup_encode(buf, sizeof buf, &m);
    FUZZ_ASSERT(k > 0, "accepted message does not encode");
    FUZZ_ASSERT(zp_sup_decode(&m2, buf, (size_t)k) == 0, "re-encoded message refused: %.*s", k, buf);
    FUZZ_ASSERT(!memcmp(&m, &m2, sizeof m), "message changed through encode/decode: %.*s", k, buf);
    return 0;
}
