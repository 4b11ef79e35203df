/* notify.h - systemd's service notification protocol (what sd_notify(3) speaks; through
 * libsystemd when the build has it, else our own sender): readiness (READY=1), status text (STATUS=...), the watchdog (WATCHDOG=1 at half
 * of WATCHDOG_USEC) and STOPPING=1. Also used between `zkpipe up` and its children (up binds
 * a socket and hands it to them as NOTIFY_SOCKET, exactly as systemd does).
 *
 * The protocol: one AF_UNIX SOCK_DGRAM datagram of "KEY=VALUE\n..." lines to $NOTIFY_SOCKET,
 * an absolute path or, with a leading '@', a name in the abstract namespace. Unset: no-op.
 * WATCHDOG_USEC (decimal microseconds) enables the watchdog; WATCHDOG_PID, when set, must be
 * our pid (else the variable was meant for a parent and the watchdog stays off).
 * Thread-safe (nothing cached; each call opens and closes its own socket).
 * Tests: tests/ipc/notify.sh (a real receiver), tests/test_notify.c (unit). */
#ifndef ZP_NOTIFY_H
#define ZP_NOTIFY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Send state (one or more "KEY=VALUE" lines) to $NOTIFY_SOCKET.
 * Returns 1 when sent, 0 when NOTIFY_SOCKET is unset or empty (nothing to do), negative on
 * failure (-errno, or -EINVAL / -EAFNOSUPPORT for an unusable address, with zp_err_set). */
int zp_notify(const char *state);
int zp_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the same to an explicit address (path or "@abstract"); NULL/"" -> 0 */
int zp_notify_to(const char *addr, const char *state);

/* Fill a sockaddr_un for addr ("/path" or "@abstract"): *len gets the address length.
 * -EINVAL (relative or empty), -ENAMETOOLONG (does not fit sun_path), -EAFNOSUPPORT (vsock:). */
struct sockaddr_un;
int zp_notify_addr(struct sockaddr_un *sa, unsigned *len, const char *addr);

/* WATCHDOG_USEC for this process, 0 = off (unset, unparsable, zero, or WATCHDOG_PID names
 * another process). */
uint64_t zp_notify_watchdog_usec(void);

/* a main loop's watchdog: ping at half the interval */
typedef struct zp_watchdog {
    uint64_t interval_ns;   /* half of WATCHDOG_USEC; 0 = off */
    uint64_t next_ns;       /* CLOCK_MONOTONIC ns of the next ping */
} zp_watchdog_t;
void zp_watchdog_init(zp_watchdog_t *w);
/* send WATCHDOG=1 when due (call once per loop iteration); true when it pinged */
bool zp_watchdog_tick(zp_watchdog_t *w, uint64_t now_ns);
/* clamp a poll timeout (ms, -1 = forever) so the loop wakes for the next ping */
int zp_watchdog_poll_ms(const zp_watchdog_t *w, uint64_t now_ns, int timeout_ms);
#endif
