/* brk_stubs.h - libzpbrk's two hooks into broker.c for unit tests that drive the real
 * scheduler or metrics without a socket: nothing is sent, nobody dies. Include once per test
 * executable (it defines the functions). */
#ifndef ZP_TESTS_BRK_STUBS_H
#define ZP_TESTS_BRK_STUBS_H
#include <stdlib.h>

#include "broker/broker_int.h"

int brk_send(brk_t *b, const uint8_t *id, size_t id_len, uint8_t *buf, size_t len)
{
    (void)b; (void)id; (void)id_len; (void)len;
    free(buf);
    return 0;
}
void brk_worker_dead(brk_t *b, brk_worker_t *w, const char *why, bool kill_it)
{
    (void)b; (void)w; (void)why; (void)kill_it;
}
#endif
