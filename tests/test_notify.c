/* test_notify.c - unit tests of proto/notify.c (sd_notify's protocol without libsystemd):
 * address parsing (path, @abstract, errors), the no-op when NOTIFY_SOCKET is unset, real
 * datagrams received on a path socket and an abstract one, send errors, WATCHDOG_USEC /
 * WATCHDOG_PID parsing, and the watchdog pacing (ping at half the interval, poll clamp).
 * The end-to-end test with real daemons is tests/ipc/notify.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "proto/notify.h"

static int fails;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); fails++; } } while (0)

static int bind_dgram(const char *addr)
{
    struct sockaddr_un sa;
    unsigned len;
    if (zp_notify_addr(&sa, &len, addr) < 0) return -1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&sa, len) < 0) { close(fd); return -1; }
    return fd;
}

/* next datagram as a string ("" when none queued) */
static const char *recv_one(int fd)
{
    static char buf[2048];
    ssize_t k = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    buf[k > 0 ? k : 0] = 0;
    return buf;
}

static void t_addr(void)
{
    struct sockaddr_un sa;
    unsigned len = 0;
    CHECK(zp_notify_addr(&sa, &len, "/run/systemd/notify") == 0);
    CHECK(!strcmp(sa.sun_path, "/run/systemd/notify") && len == offsetof(struct sockaddr_un, sun_path) + 20);
    CHECK(zp_notify_addr(&sa, &len, "@abc") == 0);
    CHECK(sa.sun_path[0] == 0 && !memcmp(sa.sun_path + 1, "abc", 3) && len == offsetof(struct sockaddr_un, sun_path) + 4);
    CHECK(zp_notify_addr(&sa, &len, "relative/path") == -EINVAL);
    CHECK(zp_notify_addr(&sa, &len, "") == -EINVAL);
    CHECK(zp_notify_addr(&sa, &len, "vsock:2:1234") == -EAFNOSUPPORT);
    char lng[200];
    memset(lng, 'x', sizeof lng);
    lng[0] = '/';
    lng[sizeof lng - 1] = 0;
    CHECK(zp_notify_addr(&sa, &len, lng) == -ENAMETOOLONG);
    lng[0] = '@';
    CHECK(zp_notify_addr(&sa, &len, lng) == -ENAMETOOLONG);
    /* the longest that fits: 107 chars of path + NUL; 107 chars of abstract name after '@' */
    lng[sizeof sa.sun_path - 1] = 0;
    lng[0] = '/';
    CHECK(zp_notify_addr(&sa, &len, lng) == 0);
    lng[0] = '@';
    lng[sizeof sa.sun_path - 1] = 'x';
    lng[sizeof sa.sun_path] = 0;
    CHECK(strlen(lng) == sizeof sa.sun_path && zp_notify_addr(&sa, &len, lng) == 0);
    CHECK(len == sizeof sa);
}

static void t_send(void)
{
    char path[64], abs[64];
    snprintf(path, sizeof path, "/tmp/zp-test-notify-%d.sock", (int)getpid());
    snprintf(abs, sizeof abs, "@zp-test-notify-%d", (int)getpid());
    unlink(path);
    int fp = bind_dgram(path), fa = bind_dgram(abs);
    CHECK(fp >= 0 && fa >= 0);

    unsetenv("NOTIFY_SOCKET");
    CHECK(zp_notify("READY=1") == 0);               /* unset: nothing to do */
    setenv("NOTIFY_SOCKET", "", 1);
    CHECK(zp_notifyf("STATUS=%d", 1) == 0);          /* empty: same */

    setenv("NOTIFY_SOCKET", path, 1);
    CHECK(zp_notify("READY=1") == 1);
    CHECK(!strcmp(recv_one(fp), "READY=1"));
    CHECK(zp_notifyf("READY=1\nSTATUS=job %d of %s", 7, "x") == 1);
    CHECK(!strcmp(recv_one(fp), "READY=1\nSTATUS=job 7 of x"));
    CHECK(!strcmp(recv_one(fp), ""));

    setenv("NOTIFY_SOCKET", abs, 1);
    CHECK(zp_notify("STOPPING=1") == 1);
    CHECK(!strcmp(recv_one(fa), "STOPPING=1"));
    CHECK(zp_notify_to(path, "WATCHDOG=1") == 1);    /* explicit address */
    CHECK(!strcmp(recv_one(fp), "WATCHDOG=1"));

    /* nobody listening / bad addresses: a clear negative error, never a crash */
    char gone[80];
    snprintf(gone, sizeof gone, "/tmp/zp-test-notify-%d-none.sock", (int)getpid());
    CHECK(zp_notify_to(gone, "READY=1") == -ENOENT);
    CHECK(zp_notify_to("@zp-test-notify-nobody-here", "READY=1") == -ECONNREFUSED);
    setenv("NOTIFY_SOCKET", "not/absolute", 1);
    CHECK(zp_notify("READY=1") == -EINVAL);
    CHECK(zp_notify_to(path, "") == -EINVAL);
    unsetenv("NOTIFY_SOCKET");
    close(fp);
    close(fa);
    unlink(path);
}

static void t_watchdog_env(void)
{
    char me[32];
    snprintf(me, sizeof me, "%d", (int)getpid());
    unsetenv("WATCHDOG_PID");
    unsetenv("WATCHDOG_USEC");
    CHECK(zp_notify_watchdog_usec() == 0);
    setenv("WATCHDOG_USEC", "30000000", 1);
    CHECK(zp_notify_watchdog_usec() == 30000000);
    setenv("WATCHDOG_PID", me, 1);
    CHECK(zp_notify_watchdog_usec() == 30000000);
    setenv("WATCHDOG_PID", "1", 1);                   /* meant for another process */
    CHECK(zp_notify_watchdog_usec() == 0);
    setenv("WATCHDOG_PID", "12x", 1);
    CHECK(zp_notify_watchdog_usec() == 0);
    unsetenv("WATCHDOG_PID");
    const char *bad[] = {"0", "-5", "", "1e6", " 100", "100 ", "18446744073709551616", "18446744073709551615"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("WATCHDOG_USEC", bad[i], 1);
        CHECK(zp_notify_watchdog_usec() == 0);
    }
    unsetenv("WATCHDOG_USEC");
}

static void t_watchdog_pacing(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/zp-test-notify-wd-%d.sock", (int)getpid());
    unlink(path);
    int fd = bind_dgram(path);
    CHECK(fd >= 0);
    zp_watchdog_t w;

    setenv("WATCHDOG_USEC", "200000", 1);            /* NOTIFY_SOCKET unset: off */
    zp_watchdog_init(&w);
    CHECK(w.interval_ns == 0);
    CHECK(!zp_watchdog_tick(&w, zp_now_ns()));
    CHECK(zp_watchdog_poll_ms(&w, zp_now_ns(), 500) == 500 && zp_watchdog_poll_ms(&w, zp_now_ns(), -1) == -1);

    setenv("NOTIFY_SOCKET", path, 1);
    zp_watchdog_init(&w);
    CHECK(w.interval_ns == 100000000u);              /* half of 200 ms */
    uint64_t t0 = w.next_ns;
    CHECK(zp_watchdog_poll_ms(&w, t0, 500) == 0);    /* due now */
    CHECK(zp_watchdog_tick(&w, t0));
    CHECK(!strcmp(recv_one(fd), "WATCHDOG=1"));
    CHECK(!zp_watchdog_tick(&w, t0 + 1000000));      /* 1 ms later: not yet */
    CHECK(!strcmp(recv_one(fd), ""));
    CHECK(zp_watchdog_poll_ms(&w, t0 + 1000000, 500) == 99);
    CHECK(zp_watchdog_poll_ms(&w, t0 + 1000000, -1) == 99);
    CHECK(zp_watchdog_poll_ms(&w, t0 + 1000000, 20) == 20);
    CHECK(zp_watchdog_tick(&w, t0 + 100000000));
    CHECK(!strcmp(recv_one(fd), "WATCHDOG=1"));
    CHECK(w.next_ns == t0 + 200000000);

    setenv("WATCHDOG_PID", "1", 1);                   /* not ours: off */
    zp_watchdog_init(&w);
    CHECK(w.interval_ns == 0);
    unsetenv("WATCHDOG_PID");
    unsetenv("WATCHDOG_USEC");
    unsetenv("NOTIFY_SOCKET");
    close(fd);
    unlink(path);
}

int main(void)
{
    t_addr();
    t_send();
    t_watchdog_env();
    t_watchdog_pacing();
    if (fails) { fprintf(stderr, "test_notify: %d check(s) failed\n", fails); return 1; }
    printf("test_notify: OK\n");
    return 0;
}
