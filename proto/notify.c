/* notify.c - sd_notify's datagram protocol, written from the protocol description (see
 * notify.h). Built with libsystemd (meson option libsystemd, auto), zp_notify() for
 * $NOTIFY_SOCKET goes through sd_notify(3); this sender stays for builds without it and for
 * explicit addresses (zp_notify_to). Each send opens a SOCK_DGRAM|SOCK_CLOEXEC socket, sends one
 * datagram with sendmsg(MSG_NOSIGNAL) under a 2 s send timeout (a wedged receiver cannot hang
 * a main loop forever), and closes it. Nothing is cached, so the functions are thread-safe
 * and follow changes of the environment (tests set NOTIFY_SOCKET per process).
 * Tests: tests/test_notify.c (unit: addresses, env parsing, a real receive), tests/ipc/notify.sh. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "proto/notify.h"
#ifdef ZP_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

int zp_notify_addr(struct sockaddr_un *sa, unsigned *len, const char *addr)
{
    size_t n = addr ? strlen(addr) : 0;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (n == 0) return zp_err_set(-EINVAL, "empty notify socket address");
    if (!strncmp(addr, "vsock:", 6))
        return zp_err_set(-EAFNOSUPPORT, "notify socket %s: vsock addresses are not supported", addr);
    if (addr[0] == '@') {
        /* abstract namespace: sun_path[0] = 0, the name follows, the length counts it exactly */
        if (n - 1 > sizeof sa->sun_path - 1) return zp_err_set(-ENAMETOOLONG, "notify socket name %s too long", addr);
        memcpy(sa->sun_path + 1, addr + 1, n - 1);
        *len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + n);
        return 0;
    }
    if (addr[0] != '/') return zp_err_set(-EINVAL, "notify socket %s: not an absolute path or @name", addr);
    if (n >= sizeof sa->sun_path) return zp_err_set(-ENAMETOOLONG, "notify socket path %s too long", addr);
    memcpy(sa->sun_path, addr, n + 1);
    *len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    return 0;
}

int zp_notify_to(const char *addr, const char *state)
{
    struct sockaddr_un sa;
    unsigned salen = 0;
    int rc;
    if (!addr || !*addr) return 0;
    if (!state || !*state) return zp_err_set(-EINVAL, "empty notify state");
    if ((rc = zp_notify_addr(&sa, &salen, addr)) < 0) return rc;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return zp_err_set(-errno, "socket(AF_UNIX, SOCK_DGRAM): %s", strerror(errno));
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct iovec iov = {.iov_base = (void *)state, .iov_len = strlen(state)};
    struct msghdr mh = {.msg_name = &sa, .msg_namelen = salen, .msg_iov = &iov, .msg_iovlen = 1};
    ssize_t k;
    do k = sendmsg(fd, &mh, MSG_NOSIGNAL); while (k < 0 && errno == EINTR);
    rc = k < 0 ? zp_err_set(-errno, "sendmsg to notify socket %s: %s", addr, strerror(errno)) : 1;
    close(fd);
    return rc;
}

/* $NOTIFY_SOCKET: through libsystemd's sd_notify(3) when the build found it (it knows every
 * address form systemd hands out, vsock included), else our own sender above. Explicit
 * addresses (zp_notify_to: `zkpipe up` to its children's socket) always use ours. */
int zp_notify(const char *state)
{
#ifdef ZP_HAVE_LIBSYSTEMD
    const char *addr = getenv("NOTIFY_SOCKET");
    if (!addr || !*addr) return 0;
    int rc = sd_notify(0, state);
    if (rc < 0) return zp_err_set(rc, "sd_notify to %s: %s", addr, strerror(-rc));
    return rc > 0 ? 1 : 0;
#else
    return zp_notify_to(getenv("NOTIFY_SOCKET"), state);
#endif
}

int zp_notifyf(const char *fmt, ...)
{
    const char *addr = getenv("NOTIFY_SOCKET");
    char buf[1024];
    va_list ap;
    if (!addr || !*addr) return 0;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k < 0) return zp_err_set(-EINVAL, "notify: bad format");
    /* a long STATUS is cut at the buffer: a status line, not data */
    return zp_notify(buf);
}

/* strict unsigned decimal: digits only, no sign, no overflow */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s) return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

uint64_t zp_notify_watchdog_usec(void)
{
    uint64_t usec, pid;
    const char *p = getenv("WATCHDOG_PID");
    if (p && *p && (!parse_u64(p, &pid) || pid != (uint64_t)getpid())) return 0;
    if (!parse_u64(getenv("WATCHDOG_USEC"), &usec)) return 0;
    /* more than ~584 years in ns would overflow below: treat as off */
    if (usec == 0 || usec > UINT64_MAX / 1000u) return 0;
    return usec;
}

void zp_watchdog_init(zp_watchdog_t *w)
{
    uint64_t usec = zp_notify_watchdog_usec();
    const char *addr = getenv("NOTIFY_SOCKET");
    w->interval_ns = usec && addr && *addr ? usec * 1000u / 2 : 0;
    w->next_ns = zp_now_ns();
    if (w->interval_ns)
        zp_log(ZP_LOG_DEBUG, "watchdog: %llu ms, pinging every %llu ms", (unsigned long long)(usec / 1000),
               (unsigned long long)(w->interval_ns / 1000000u));
}

bool zp_watchdog_tick(zp_watchdog_t *w, uint64_t now_ns)
{
    if (!w->interval_ns || now_ns < w->next_ns) return false;
    int rc = zp_notify("WATCHDOG=1");
    if (rc < 0) zp_log(ZP_LOG_WARN, "watchdog ping: %s", zp_err_msg());
    w->next_ns = now_ns + w->interval_ns;
    return rc > 0;
}

int zp_watchdog_poll_ms(const zp_watchdog_t *w, uint64_t now_ns, int timeout_ms)
{
    if (!w->interval_ns) return timeout_ms;
    uint64_t left = w->next_ns > now_ns ? (w->next_ns - now_ns + 999999u) / 1000000u : 0;
    if (left > (uint64_t)INT32_MAX) left = INT32_MAX;
    if (timeout_ms < 0 || (uint64_t)timeout_ms > left) return (int)left;
    return timeout_ms;
}
