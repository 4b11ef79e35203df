/* lazy_libs.c - libzmq and libsystemd loaded by the zkpipe command at their first use (issue 31,
 * session 18). Every `zkpipe` process used to load both at start, with what they pull in
 * (libstdc++, libsodium, libpgm, libnorm, the Kerberos and gcrypt libraries): ~5 ms of dynamic
 * linking per process here (a trivial program: 1.6 ms, linked with -lzmq -lsystemd: 7.0 ms),
 * ~1.5% of a 2^16 `zkpipe prove`, which uses neither. This file defines the libzmq functions
 * the process group calls and sd_notify(3) with their own prototypes (zmq.h and sd-daemon.h are
 * included, so the compiler checks every signature); each resolves the real library once
 * (dlopen + dlsym, under pthread_once) and calls it. Linked into the zkpipe executable only:
 * with them defined there, --as-needed (meson's default) leaves libzmq and libsystemd out of
 * its DT_NEEDED, and the stage code in the static libraries calls through here. Other
 * executables (tests, the client library) link libzmq as before.
 * A libzmq that cannot be loaded ends the process at the first ZeroMQ call with a message
 * naming it, as the dynamic loader would have at start (exit 127); a libsystemd that cannot be
 * loaded falls back to proto/notify.c's own sender (zp_notify_to). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/notify.h"

#define ZQ_FNS(X)                                                                                        \
    X(void *, zmq_ctx_new, (void), ())                                                                   \
    X(int, zmq_ctx_term, (void *c), (c))                                                                 \
    X(int, zmq_ctx_set, (void *c, int o, int v), (c, o, v))                                              \
    X(void *, zmq_socket, (void *c, int t), (c, t))                                                      \
    X(int, zmq_close, (void *s), (s))                                                                    \
    X(int, zmq_setsockopt, (void *s, int o, const void *v, size_t n), (s, o, v, n))                      \
    X(int, zmq_getsockopt, (void *s, int o, void *v, size_t *n), (s, o, v, n))                           \
    X(int, zmq_bind, (void *s, const char *a), (s, a))                                                   \
    X(int, zmq_connect, (void *s, const char *a), (s, a))                                                \
    X(int, zmq_send, (void *s, const void *b, size_t n, int f), (s, b, n, f))                            \
    X(int, zmq_recv, (void *s, void *b, size_t n, int f), (s, b, n, f))                                  \
    X(int, zmq_msg_init, (zmq_msg_t * m), (m))                                                           \
    X(int, zmq_msg_init_size, (zmq_msg_t * m, size_t n), (m, n))                                         \
    X(int, zmq_msg_init_data, (zmq_msg_t * m, void *d, size_t n, zmq_free_fn *f, void *h), (m, d, n, f, h)) \
    X(int, zmq_msg_send, (zmq_msg_t * m, void *s, int f), (m, s, f))                                     \
    X(int, zmq_msg_recv, (zmq_msg_t * m, void *s, int f), (m, s, f))                                     \
    X(int, zmq_msg_close, (zmq_msg_t * m), (m))                                                          \
    X(void *, zmq_msg_data, (zmq_msg_t * m), (m))                                                        \
    X(size_t, zmq_msg_size, (const zmq_msg_t *m), (m))                                                   \
    X(int, zmq_msg_more, (const zmq_msg_t *m), (m))                                                      \
    X(const char *, zmq_msg_gets, (const zmq_msg_t *m, const char *p), (m, p))                           \
    X(int, zmq_poll, (zmq_pollitem_t * i, int n, long t), (i, n, t))                                     \
    X(const char *, zmq_strerror, (int e), (e))

static struct {
#define ZQ_PTR(r, name, params, args) r(*name) params;
    ZQ_FNS(ZQ_PTR)
#undef ZQ_PTR
} zq;
static pthread_once_t zq_once = PTHREAD_ONCE_INIT;

static void zq_load(void)
{
    const char *lib = "libzmq.so.5";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "zkpipe: cannot load %s (ZeroMQ, which the process group talks over): %s\n", lib, dlerror());
        _exit(127);
    }
#define ZQ_SYM(r, name, params, args)                                                                  \
    if (!(*(void **)&zq.name = dlsym(h, #name))) {                                                     \
        fprintf(stderr, "zkpipe: %s has no %s (libzmq 4.x expected): %s\n", lib, #name, dlerror());    \
        _exit(127);                                                                                    \
    }
    ZQ_FNS(ZQ_SYM)
#undef ZQ_SYM
}

#define ZQ_DEF(r, name, params, args)                                                                  \
    r name params                                                                                      \
    {                                                                                                  \
        pthread_once(&zq_once, zq_load);                                                               \
        return zq.name args;                                                                           \
    }
ZQ_FNS(ZQ_DEF)
#undef ZQ_DEF

#ifdef ZP_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

static int (*sd_notify_fn)(int, const char *);
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

static void sd_load(void)
{
    void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h) *(void **)&sd_notify_fn = dlsym(h, "sd_notify");
}

int sd_notify(int unset_environment, const char *state)
{
    pthread_once(&sd_once, sd_load);
    if (sd_notify_fn) return sd_notify_fn(unset_environment, state);
    int rc = zp_notify_to(getenv("NOTIFY_SOCKET"), state);   /* no libsystemd: our own sender */
    if (unset_environment) unsetenv("NOTIFY_SOCKET");
    return rc;
}
#endif
