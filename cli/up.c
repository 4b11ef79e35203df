/* up.c - `zkpipe up`: run a whole local process group in the foreground.
 *
 * NOTES
 * Starts zkpipe-broker, then N synth, M gpu-worker, K finalizer daemons (fork + exec of the
 * sibling binaries: next to this zkpipe binary, in the build tree's module folders, or in
 * $ZP_LIBEXEC_DIR), restarts a child that dies, and on SIGINT/SIGTERM stops the workers, then
 * the broker (SIGTERM, SIGKILL after 10 s). Signal handlers only set flags; the loop reaps with
 * waitpid. Restarts: a child that had started cleanly (sent READY=1; without a notify socket:
 * ran 5 s) comes back at once; one that dies before it is ready is in a crash loop and backs
 * off (0.2 s doubling to 5 s) until it starts cleanly again.
 *
 * The group (issue 9): up is the only one that signals its children, through pidfds it holds
 * (the broker asks over the supervisor channel, proto/identity.h: FENCE); each worker gets a
 * fresh identity token per start (ZP_IDENTITY) that up registers with the broker (REG, EXIT).
 * Children die with up: PR_SET_PDEATHSIG (workers SIGKILL, the broker SIGTERM so it removes its
 * socket, pidfile and arena) with the getppid() race check, and they share one process group.
 * <rundir>/up.lock (flock) records "pid pgid" of the up that runs the group: a second up on the
 * same directory is refused; a group left by a dead up is found and stopped (up_group.c).
 * Config: --config FILE with `key = value` lines (# comments); keys are the long options
 * below without the dashes; command-line options win. Defaults work on a laptop.
 *
 * GPU workers: --gpu-workers-per-card K (default 1) on each CUDA device this host shows
 * (CUDA_VISIBLE_DEVICES respected): --devices LIST, else the driver's count (libcuda's
 * cuDeviceGetCount, asked in a short-lived child so the supervisor never holds CUDA state),
 * else `nvidia-smi -L`, else /proc/driver/nvidia/gpus. No device (or a worker built without
 * CUDA): one worker on the CPU backend, and a log line that says why. --gpu N (older option)
 * sets the total instead. Test hook: ZP_TEST_FAKE_GPUS=N pretends N devices.
 *
 * Service manager: up binds its own notify socket (<rundir>/up-<pid>.notify) and hands it to
 * every child as NOTIFY_SOCKET with WATCHDOG_USEC (--watchdog-sec, default 30; 0 = off) and
 * WATCHDOG_PID, as systemd would. A child is up when it sends READY=1 (the broker: READY=1 or
 * its socket file); when all are, up sends READY=1 to its own $NOTIFY_SOCKET (so
 * `systemd-run -p Type=notify zkpipe up` works), STATUS= as children come and go, WATCHDOG=1
 * from its loop when it has a watchdog, STOPPING=1 on stop. A child that once sent WATCHDOG=1
 * and then misses its interval is sent SIGABRT (SIGKILL 5 s later) and restarted.
 * Tests: tests/ipc/ (up_gpus.sh, notify.sh). */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/pidfd.h>
#include <sys/prctl.h>

#include "cli/cli.h"
#include "client/zkpipe-client.h"
#include "cli/up.h"
#include "lib/util/util.h"
#include "proto/identity.h"
#include "proto/notify.h"
#include "proto/peer.h"
#include "shm/keycache.h"

static volatile sig_atomic_t g_stop, g_chld;
static void on_stop(int s) { (void)s; g_stop = 1; }
static void on_chld(int s) { (void)s; g_chld = 1; }

enum { K_RUNDIR, K_ARENA, K_SYNTH, K_GPU, K_FINAL, K_SLOTS, K_MAXDOM, K_MAXVARS, K_THREADS, K_HB, K_LIVE, K_ATTEMPTS,
       K_BACKEND, K_DEVICES, K_GPU_CREDITS, K_SYNTH_CREDITS, K_FINAL_THREADS, K_SYNTH_THREADS, K_SYNTHS, K_FINALS,
       K_PER_CARD, K_WATCHDOG, K_STATEDIR, K_METRICS, K_PRELOAD, K_HTTP, K_HTTP_TOKENS, K_HTTP_BODY, K_HTTP_KEYS,
       K_FLEET, K_BOXNAME, K_STAGE_MS, K_DEV_SPEEDUP, K_CORES, K_KEY_BUDGET, K_KEY_STORE_BUDGET, K_KEY_AFFINITY,
       K_SLOT_CLASSES, K_SLOT_RESERVE, K_PREEMPT, K_RESIZE, K_HOST_NICE, K_GPU_RT, K_GPU_RT_SLICE,
       K_WTIMEOUT, K_WMEM, K_NKEYS };
static const char *keys[K_NKEYS] = {"runtime-dir", "arena", "synth", "gpu", "final", "slots", "max-domain",
                                    "max-vars", "threads", "heartbeat-ms", "liveness", "max-attempts", "backend",
                                    "devices", "gpu-credits", "synth-credits", "final-threads", "synth-threads",
                                    "synths", "finalizers", "gpu-workers-per-card", "watchdog-sec",
                                    "state-dir", "metrics-listen", "preload",
                                    "http-listen", "http-token-file", "http-max-body", "http-key-dir",   /* client: HTTP API */
                                    "fleet", "box-name",
                                    "stage-ms", "device-speedup", "cores",   /* stages: finalizer sizing (up_size.c) */
                                    "key-budget", "key-store-budget", "key-affinity",   /* keys: doc/keys.md */
                                    "slot-classes", "slot-reserve", "preempt",   /* slots: doc/slot-protocol.md */
                                    "resize-every", "host-nice",   /* the running group's finalizer resize (up_size.c) */
                                    "gpu-rt-priority", "gpu-rt-slice",   /* the GPU workers' control threads (lib/util/rt.c) */
                                    "witness-timeout-ms", "witness-max-memory-mib"};   /* synths: issue 28 */   /* the GPU workers' control threads (lib/util/rt.c) */

typedef struct {
    const char *bin;
    char *argv[64];
    int argc;
    pid_t pid;
    uint64_t started, backoff_ms, restart_at;
    unsigned restarts;
    char label[48];
    /* notifications (reset at each start) */
    bool ready, armed, slow_logged;
    uint64_t last_ping, abort_at;
    /* identity: the supervisor's handle and the token of this start */
    int pidfd;                      /* -1: not running (or no pidfd: then kill() of our own unreaped child) */
    int role, inst;                 /* -1 for the broker */
    uint8_t token[ZP_ID_TOKEN_LEN];
    bool reg_pending;               /* its REG did not fit the supervisor channel yet */
} child_t;

static char *dupv(const char *s) { return strdup(s ? s : ""); }

static int load_config(const char *path, char *val[K_NKEYS])
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "zkpipe up: %s: %s\n", path, strerror(errno)); return -1; }
    char line[1024];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = line, *e;
        if ((e = strchr(s, '#'))) *e = 0;
        while (*s == ' ' || *s == '\t') s++;
        for (e = s + strlen(s); e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t');) *--e = 0;
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) { fprintf(stderr, "zkpipe up: %s:%d: expected key = value\n", path, ln); fclose(f); return -1; }
        char *k = s, *v = eq + 1;
        for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t');) *--e = 0;
        *eq = 0;
        while (*v == ' ' || *v == '\t') v++;
        int i;
        for (i = 0; i < K_NKEYS && strcmp(keys[i], k); i++) {}
        if (i == K_NKEYS) { fprintf(stderr, "zkpipe up: %s:%d: unknown key '%s'\n", path, ln, k); fclose(f); return -1; }
        if (!val[i]) val[i] = strdup(v);
    }
    fclose(f);
    return 0;
}

/* find a sibling binary: $ZP_LIBEXEC_DIR, next to us, ../<module>/ (build tree), ../libexec/zkpipe */
static int find_bin(char *out, size_t n, const char *name, const char *module)
{
    char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) return -1;
    self[k] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    const char *env = getenv("ZP_LIBEXEC_DIR");
    static char cand[4][2 * PATH_MAX + 64];
    int nc = 0;
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%.*s/%s", PATH_MAX, env, name);
    snprintf(cand[nc++], sizeof cand[0], "%s/%s", self, name);
    snprintf(cand[nc++], sizeof cand[0], "%s/../%s/%s", self, module, name);
    snprintf(cand[nc++], sizeof cand[0], "%s/../libexec/zkpipe/%s", self, name);
    for (int i = 0; i < nc; i++)
        if (access(cand[i], X_OK) == 0) {
            char real[PATH_MAX];
            if (!realpath(cand[i], real) || strlen(real) >= n) continue;
            memcpy(out, real, strlen(real) + 1);
            return 0;
        }
    fprintf(stderr, "zkpipe up: cannot find %s (looked next to the zkpipe binary, in ../%s/, and in $ZP_LIBEXEC_DIR)\n",
            name, module);
    return -1;
}

static void add(child_t *c, const char *opt, const char *v)
{
    if (!v) return;
    if (c->argc >= 62) { fprintf(stderr, "zkpipe up: too many options for %s: '%s %s' dropped\n", c->bin, opt, v); return; }
    c->argv[c->argc++] = dupv(opt);
    c->argv[c->argc++] = dupv(v);
}

/* ---------------------------------------------------------------- notifications */
static char g_notify_addr[120];     /* our socket, handed to children as NOTIFY_SOCKET */
static uint64_t g_wd_usec;          /* children's WATCHDOG_USEC, 0 = off */
static int g_host_nice = 5;         /* synthesizers and finalizers run this much nicer than the GPU workers */
static zp_watchdog_t g_wd;          /* our own watchdog (from our service manager) */

/* ---------------------------------------------------------------- the group */
static int g_sup = -1;              /* our end of the current broker's supervisor channel */
static pid_t g_pgid;                /* the children's process group (0: none yet) */
static bool g_no_pdeathsig;         /* test hook ZP_TEST_NO_PDEATHSIG=1: children outlive up (an old up) */

/* signal our own child through its pidfd (never a pid from a message) */
static void child_signal(child_t *c, int sig)
{
    if (c->pid <= 0) return;
    if (c->pidfd >= 0) { if (pidfd_send_signal(c->pidfd, sig, NULL, 0) == 0 || errno == ESRCH) return; }
    kill(c->pid, sig);              /* no pidfd: still our unreaped child, so the pid is its */
}

/* 0 sent (or no broker to tell), -EAGAIN: the channel is full (a broker still starting up
 * with many workers): try again later */
static int sup_send(const zp_sup_msg_t *m)
{
    char buf[ZP_SUP_MSG_MAX];
    int k = zp_sup_encode(buf, sizeof buf, m);
    if (g_sup < 0 || k < 0) return 0;
    if (send(g_sup, buf, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL) == k) return 0;
    if (errno == EAGAIN || errno == ENOBUFS) return -EAGAIN;
    zp_log(ZP_LOG_WARN, "supervisor channel: cannot tell the broker about pid %u: %s", m->pid, strerror(errno));
    return 0;
}

/* REG for child i; kept pending (retried by sup_retry) while the channel is full */
static void sup_register(child_t *ch, int i)
{
    ch[i].reg_pending = false;
    if (i == 0 || ch[i].pid <= 0) return;
    zp_sup_msg_t m = {.type = ZP_SUP_REG, .child = (uint32_t)i, .role = (uint32_t)ch[i].role,
                      .instance = (uint32_t)ch[i].inst, .pid = (uint32_t)ch[i].pid};
    memcpy(m.token, ch[i].token, sizeof m.token);
    ch[i].reg_pending = sup_send(&m) == -EAGAIN;
}

static void sup_retry(child_t *ch, int n)
{
    for (int i = 1; i < n; i++)
        if (ch[i].reg_pending) {
            sup_register(ch, i);
            if (ch[i].reg_pending) return;   /* still full */
        }
}

/* FENCE requests from the broker: kill that child if it is still that process */
static void sup_drain(child_t *ch, int n)
{
    for (int k = 0; k < 64 && g_sup >= 0; k++) {
        char buf[ZP_SUP_MSG_MAX];
        ssize_t r = recv(g_sup, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (r < 0) return;
        if (r == 0) { close(g_sup); g_sup = -1; return; }   /* the broker is gone; reaped below */
        zp_sup_msg_t m;
        if ((size_t)r >= sizeof buf || zp_sup_decode(&m, buf, (size_t)r) < 0 || m.type != ZP_SUP_FENCE) {
            zp_log(ZP_LOG_WARN, "supervisor channel: bad request from the broker dropped: %s",
                   (size_t)r >= sizeof buf ? "too long" : zp_err_msg());
            continue;
        }
        child_t *c = m.child > 0 && (int)m.child < n ? &ch[m.child] : NULL;
        if (!c || c->pid <= 0 || (uint32_t)c->pid != m.pid) {
            zp_log(ZP_LOG_INFO, "fence request for child %u pid %u ignored: not running as that pid now", m.child, m.pid);
            continue;
        }
        zp_log(ZP_LOG_WARN, "%s (pid %d): fenced at the broker's request (%s): SIGKILL", c->label, (int)c->pid, m.reason);
        child_signal(c, SIGKILL);
    }
}

static int spawn(child_t *c)
{
    pid_t parent = getpid();
    int sp[2] = {-1, -1};
    bool broker = c->role < 0;
    if (broker && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
        zp_log(ZP_LOG_WARN, "supervisor channel: socketpair: %s (the broker cannot ask for fencing)", strerror(errno));
        sp[0] = sp[1] = -1;
    }
    if (!broker && zp_identity_new(c->token) < 0) { fprintf(stderr, "zkpipe up: no random bytes for a token\n"); return -1; }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "zkpipe up: fork: %s\n", strerror(errno));
        if (sp[0] >= 0) { close(sp[0]); close(sp[1]); }
        return -1;
    }
    if (pid == 0) {
        /* die with the supervisor; the getppid check closes the race with its death before prctl */
        if (!g_no_pdeathsig && prctl(PR_SET_PDEATHSIG, broker ? SIGTERM : SIGKILL) < 0) _exit(126);
        if (getppid() != parent) _exit(126);
        if (setpgid(0, g_pgid) < 0) setpgid(0, 0);
        unsetenv(ZP_SUPERVISOR_FD_ENV);
        unsetenv(ZP_IDENTITY_ENV);
        if (broker && sp[1] >= 0) {
            int fd = fcntl(sp[1], F_DUPFD, 3);   /* without FD_CLOEXEC: the broker inherits it */
            char v[16];
            snprintf(v, sizeof v, "%d", fd);
            if (fd >= 0) setenv(ZP_SUPERVISOR_FD_ENV, v, 1);
        } else if (!broker) {
            char hex[2 * ZP_ID_TOKEN_LEN + 1];
            zp_identity_hex(hex, c->token);
            setenv(ZP_IDENTITY_ENV, hex, 1);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        /* the host stages yield a core to the GPU workers: a GPU worker's launch, commit and
         * staging between two computes must not wait behind a finalizer's G2 MSM threads */
        if ((c->role == 0 || c->role == 2) && g_host_nice > 0) {
            errno = 0;
            if (nice(g_host_nice) == -1 && errno) { /* best effort: the child still runs */ }
        }
        /* we are the child's service manager: our socket, its own watchdog (up is single
         * threaded, so setenv between fork and exec is safe) */
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        bool fleet = false;   /* fleet: the connection string goes to the broker only */
        for (int k = 0; k < c->argc; k++) fleet = fleet || !strcmp(c->argv[k], "--fleet-env");
        if (!fleet) unsetenv("ZP_FLEET");
        if (g_notify_addr[0]) {
            setenv("NOTIFY_SOCKET", g_notify_addr, 1);
            if (g_wd_usec) {
                char v[32];
                snprintf(v, sizeof v, "%llu", (unsigned long long)g_wd_usec);
                setenv("WATCHDOG_USEC", v, 1);
                snprintf(v, sizeof v, "%d", (int)getpid());
                setenv("WATCHDOG_PID", v, 1);
            }
        } else {
            unsetenv("NOTIFY_SOCKET");
        }
        execv(c->bin, c->argv);
        fprintf(stderr, "zkpipe up: exec %s: %s\n", c->bin, strerror(errno));
        _exit(127);
    }
    /* the same group assignment as in the child (whichever runs first wins; both agree) */
    if (setpgid(pid, g_pgid) < 0 && g_pgid) setpgid(pid, pid);
    pid_t pg = getpgid(pid);
    if (pg > 0 && pg != g_pgid) { g_pgid = pg; up_group_record(g_pgid); }
    c->pidfd = pidfd_open(pid, 0);   /* race-free: nobody but us can reap it */
    if (c->pidfd >= 0) fcntl(c->pidfd, F_SETFD, FD_CLOEXEC);
    if (broker) {
        if (g_sup >= 0) close(g_sup);
        g_sup = sp[0];
        if (sp[1] >= 0) close(sp[1]);
        if (g_sup >= 0) fcntl(g_sup, F_SETFL, fcntl(g_sup, F_GETFL) | O_NONBLOCK);
    }
    c->pid = pid;
    c->started = zp_now_ns();
    c->ready = c->armed = c->slow_logged = false;
    c->last_ping = c->started;
    c->abort_at = 0;
    zp_log(ZP_LOG_INFO, "started %s: pid %d", c->label, (int)pid);
    return 0;
}

/* bind <rundir>/up-<pid>.notify (else an abstract name when the path is too long) */
static int notify_open(const char *rundir)
{
    struct sockaddr_un sa;
    unsigned len;
    char path[600];
    int k = snprintf(path, sizeof path, "%s/up-%d.notify", rundir, (int)getpid());
    if (k > 0 && (size_t)k < sizeof g_notify_addr && zp_notify_addr(&sa, &len, path) == 0) {
        memcpy(g_notify_addr, path, (size_t)k + 1);
    } else {
        uint64_t r = zp_incarnation_new();
        snprintf(g_notify_addr, sizeof g_notify_addr, "@zkpipe-up-%d-%016llx", (int)getpid(), (unsigned long long)r);
        if (zp_notify_addr(&sa, &len, g_notify_addr) < 0) goto fail;
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) goto fail;
    int one = 1;
    if (g_notify_addr[0] == '/') unlink(g_notify_addr);
    if (bind(fd, (struct sockaddr *)&sa, len) < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        goto fail;
    }
    if (g_notify_addr[0] == '/') chmod(g_notify_addr, 0600);
    return fd;
fail:
    zp_log(ZP_LOG_WARN, "notify socket %s: %s; children's READY/WATCHDOG are not tracked", g_notify_addr,
           strerror(errno));
    g_notify_addr[0] = 0;
    return -1;
}

static child_t *child_by_pid(child_t *ch, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (ch[i].pid == pid) return &ch[i];
    return NULL;
}

/* read every queued notification; the sender is named by SCM_CREDENTIALS, never by content */
static void notify_drain(int fd, child_t *ch, int n)
{
    for (int k = 0; k < 256; k++) {
        char buf[4096];
        union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(16 * sizeof(int))]; } cm;
        struct iovec iov = {buf, sizeof buf - 1};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof cm};
        ssize_t r = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (r < 0) return;
        const struct ucred *cr = NULL;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
            if (h->cmsg_level != SOL_SOCKET) continue;
            if (h->cmsg_type == SCM_CREDENTIALS && h->cmsg_len >= CMSG_LEN(sizeof *cr)) cr = (const void *)CMSG_DATA(h);
            else if (h->cmsg_type == SCM_RIGHTS) {   /* we keep no file descriptors */
                size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nfd; i++) {
                    int x;
                    memcpy(&x, CMSG_DATA(h) + i * sizeof(int), sizeof x);
                    close(x);
                }
            }
        }
        buf[r] = 0;
        child_t *c = cr ? child_by_pid(ch, n, cr->pid) : NULL;
        if (!c) { zp_log(ZP_LOG_DEBUG, "notification from pid %d (not a child) ignored", cr ? (int)cr->pid : -1); continue; }
        char *save = NULL;
        for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (!strcmp(l, "READY=1")) {
                if (!c->ready) zp_log(ZP_LOG_INFO, "%s (pid %d) ready", c->label, (int)c->pid);
                c->ready = true;
            } else if (!strcmp(l, "WATCHDOG=1")) {
                c->armed = true;
                c->last_ping = zp_now_ns();
            } else if (!strcmp(l, "WATCHDOG=trigger")) {
                c->armed = true;
                c->last_ping = 0;
            }
            /* STATUS=, STOPPING=1 and the rest: nothing to do */
        }
    }
}

/* SIGABRT to a child that missed its watchdog, SIGKILL 5 s later */
static void watchdog_children(child_t *ch, int n, uint64_t now)
{
    if (!g_wd_usec) return;
    for (int i = 0; i < n; i++) {
        child_t *c = &ch[i];
        if (c->pid <= 0 || !c->armed) continue;
        if (!c->abort_at && now > c->last_ping && now - c->last_ping > g_wd_usec * 1000u) {
            zp_log(ZP_LOG_WARN, "%s (pid %d): watchdog timeout (no WATCHDOG=1 for %.1f s, limit %.1f s): SIGABRT",
                   c->label, (int)c->pid, c->last_ping ? (now - c->last_ping) / 1e9 : 0.0, g_wd_usec / 1e6);
            child_signal(c, SIGABRT);
            c->abort_at = now;
        } else if (c->abort_at && c->abort_at != UINT64_MAX && now > c->abort_at && now - c->abort_at > 5000000000ull) {
            zp_log(ZP_LOG_WARN, "%s (pid %d) did not die on SIGABRT: SIGKILL", c->label, (int)c->pid);
            child_signal(c, SIGKILL);
            c->abort_at = UINT64_MAX;
        }
    }
}

/* ---------------------------------------------------------------- devices */
/* run argv (PATH search), capture up to n-1 bytes of stdout; exit status or -1 */
static int run_capture(char *const argv[], char *out, size_t n, int timeout_ms)
{
    int fds[2];
    out[0] = 0;
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(fds[0]); close(fds[1]); return -1; }
    if (pid == 0) {
        dup2(fds[1], 1);
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) dup2(dn, 2);
        unsetenv("NOTIFY_SOCKET");
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    uint64_t until = zp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint64_t now = zp_now_ns();
        if (now >= until) break;
        struct pollfd pf = {fds[0], POLLIN, 0};
        if (poll(&pf, 1, (int)((until - now) / 1000000u) + 1) <= 0) { if (errno == EINTR) continue; break; }
        ssize_t r = read(fds[0], out + got, n - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
        if (got == n - 1) break;
    }
    out[got] = 0;
    close(fds[0]);
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == 0) { kill(pid, SIGKILL); waitpid(pid, &st, 0); return -1; }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);

/* the CUDA driver's device count (CUDA_VISIBLE_DEVICES applied by the driver), asked in a
 * child so this long-running supervisor holds no CUDA state. -1: no usable driver library. */
static int count_cuda_driver(char *why, size_t n)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) { snprintf(why, n, "pipe: %s", strerror(errno)); return -1; }
    pid_t pid = fork();
    if (pid < 0) { close(fds[0]); close(fds[1]); snprintf(why, n, "fork: %s", strerror(errno)); return -1; }
    if (pid == 0) {
        char o[300];
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            snprintf(o, sizeof o, "-1 no CUDA driver library (%s)", e ? e : "libcuda.so.1 not found");
        } else {
            cu_init_fn init;
            cu_count_fn cnt;
            void *a = dlsym(h, "cuInit"), *b = dlsym(h, "cuDeviceGetCount");
            memcpy(&init, &a, sizeof init);
            memcpy(&cnt, &b, sizeof cnt);
            int c = 0, r;
            if (!a || !b) snprintf(o, sizeof o, "-1 libcuda.so.1 lacks cuInit/cuDeviceGetCount");
            else if ((r = init(0)) == 100) snprintf(o, sizeof o, "0 the CUDA driver sees no device (CUDA_ERROR_NO_DEVICE)");
            else if (r) snprintf(o, sizeof o, "0 cuInit failed with CUDA error %d", r);
            else if ((r = cnt(&c)) != 0) snprintf(o, sizeof o, "0 cuDeviceGetCount failed with CUDA error %d", r);
            else snprintf(o, sizeof o, "%d the CUDA driver", c);
        }
        ssize_t w = write(fds[1], o, strlen(o));
        _exit(w < 0);
    }
    close(fds[1]);
    char buf[300];
    size_t got = 0;
    struct pollfd pf = {fds[0], POLLIN, 0};
    for (int t = 0; t < 60 && got < sizeof buf - 1; t++) {   /* cuInit can take seconds on big hosts */
        if (poll(&pf, 1, 500) == 0) continue;
        ssize_t r = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    buf[got] = 0;
    close(fds[0]);
    if (waitpid(pid, NULL, WNOHANG) == 0) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); }
    char *e;
    long v = strtol(buf, &e, 10);
    if (e == buf || *e != ' ' || v < -1 || v > 4096) { snprintf(why, n, "the CUDA driver probe gave no answer"); return -1; }
    snprintf(why, n, "%s", e + 1);
    return (int)v;
}

/* devices left after CUDA_VISIBLE_DEVICES (for the counts that do not go through the driver):
 * entries are indices or GPU-/MIG- UUIDs; the list ends at the first invalid entry */
static int apply_visible(int physical)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v) return physical;
    int count = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        char *e;
        long d = strtol(t, &e, 10);
        bool ok = (e != t && !*e && d >= 0 && d < physical) || !strncmp(t, "GPU-", 4) || !strncmp(t, "MIG-", 4);
        if (!ok) break;
        count++;
    }
    return count < physical ? count : physical;
}

static int count_devices(char *why, size_t n)
{
    int c = count_cuda_driver(why, n);
    if (c >= 0) return c;
    char drv_why[200], out[8192];
    snprintf(drv_why, sizeof drv_why, "%s", why);
    char *const smi[] = {"nvidia-smi", "-L", NULL};
    if (run_capture(smi, out, sizeof out, 20000) == 0) {
        int phys = 0;
        for (char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
            if (!strncmp(l, "GPU ", 4)) phys++;
        c = apply_visible(phys);
        snprintf(why, n, "%s; `nvidia-smi -L` lists %d GPU(s), %d visible", drv_why, phys, c);
        return c;
    }
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (d) {
        int phys = 0;
        for (struct dirent *e; (e = readdir(d));) if (e->d_name[0] != '.') phys++;
        closedir(d);
        c = apply_visible(phys);
        snprintf(why, n, "%s; /proc/driver/nvidia/gpus has %d GPU(s), %d visible", drv_why, phys, c);
        return c;
    }
    snprintf(why, n, "%s; no nvidia-smi, no /proc/driver/nvidia", drv_why);
    return 0;
}

/* the gpu-worker binary says which backends it was built with */
static bool worker_has_cuda(const char *bin)
{
    char out[256];
    char *const argv[] = {(char *)bin, "--backends", NULL};
    if (run_capture(argv, out, sizeof out, 10000) != 0) return false;
    return strstr(out, "cuda") != NULL;
}

/* gpu workers: devarg[i] = "N-K" (device N, k-th on it), or "" for the CPU backend. Returns
 * the count, or -1 with a message. */
static int plan_gpus(char (*devarg)[16], int max, const char *backend, const char *devices, const char *total,
                     int per_card, const char *gpu_bin)
{
    int cards[64], ncards = 0, ntotal = total ? atoi(total) : 0;
    char why[600] = "";
    if (total && (ntotal < 1 || ntotal > max)) { fprintf(stderr, "zkpipe up: --gpu must be 1..%d\n", max); return -1; }
    if (!strcmp(backend, "cpu")) {
        int k = ntotal ? ntotal : 1;
        for (int i = 0; i < k; i++) devarg[i][0] = 0;
        zp_log(ZP_LOG_INFO, "--backend cpu: %d gpu worker(s) on the CPU backend", k);
        return k;
    }
    const char *fake = getenv("ZP_TEST_FAKE_GPUS");
    bool has_cuda = true;
    if (devices) {
        for (const char *p = devices; *p;) {
            char *e;
            long d = strtol(p, &e, 10);
            if (e == p || d < 0 || d > 4095 || (*e && *e != ',') || ncards == 64) {
                fprintf(stderr, "zkpipe up: --devices '%s': expected a list like 0,1,2 (at most 64)\n", devices);
                return -1;
            }
            cards[ncards++] = (int)d;
            p = *e ? e + 1 : e;
        }
        snprintf(why, sizeof why, "--devices %s", devices);
    } else if (fake && *fake) {
        int f = atoi(fake);
        ncards = f < 0 ? 0 : f > 64 ? 64 : f;
        for (int i = 0; i < ncards; i++) cards[i] = i;
        snprintf(why, sizeof why, "ZP_TEST_FAKE_GPUS=%s (test hook)", fake);
    } else {
        int c = count_devices(why, sizeof why);
        ncards = c > 64 ? 64 : c;
        for (int i = 0; i < ncards; i++) cards[i] = i;
    }
    if (ncards > 0 && !(fake && *fake) && !(has_cuda = worker_has_cuda(gpu_bin)))
        snprintf(why + strlen(why), sizeof why - strlen(why), "; but %.300s was built without CUDA", gpu_bin);
    if (ncards == 0 || !has_cuda) {
        if (!strcmp(backend, "cuda")) {
            fprintf(stderr, "zkpipe up: --backend cuda but no usable CUDA device: %s\n", why);
            return -1;
        }
        int k = ntotal ? ntotal : 1;
        for (int i = 0; i < k; i++) devarg[i][0] = 0;
        zp_log(ZP_LOG_WARN, "no CUDA device to use (%s): starting %d gpu worker(s) on the CPU backend", why, k);
        return k;
    }
    int k = 0;
    if (ntotal) {   /* --gpu N: N workers over the devices in turn */
        for (; k < ntotal; k++) snprintf(devarg[k], sizeof devarg[k], "%d-%d", cards[k % ncards], k / ncards);
    } else {
        if (ncards * per_card > max) {
            fprintf(stderr, "zkpipe up: %d device(s) x %d worker(s) is more than %d gpu workers\n", ncards, per_card, max);
            return -1;
        }
        for (int c = 0; c < ncards; c++)
            for (int j = 0; j < per_card; j++) snprintf(devarg[k++], sizeof devarg[0], "%d-%d", cards[c], j);
    }
    zp_log(ZP_LOG_INFO, "%d CUDA device(s) (%s): starting %d gpu worker(s)%s", ncards, why, k,
           ntotal ? " (--gpu)" : per_card > 1 ? ", several per device" : ", one per device");
    return k;
}


/* the broker's socket file, created after wall-clock time t0 (not one left by a dead broker) */
static bool socket_fresh(const char *p, time_t t0)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ctim.tv_sec >= t0 - 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: zkpipe up [--config FILE] [--runtime-dir DIR] [--arena NAME] [--synths N] [--finalizers N]\n"
            "                 [--gpu-workers-per-card K] [--devices 0,1,...] [--gpu N] [--backend auto|cuda|cpu]\n"
            "                 [--slots N] [--max-domain N] [--max-vars N] [--threads N] [--heartbeat-ms MS]\n"
            "                 [--liveness N] [--max-attempts K] [--gpu-credits N] [--synth-credits N]\n"
            "                 [--synth-threads N] [--final-threads N] [--watchdog-sec S]\n"
            "                 [--witness-timeout-ms N] [--witness-max-memory-mib N]\n"
            "                 [--state-dir DIR] [--metrics-listen IP:PORT] [--preload ZKEY[,ZKEY...]]\n"
            "                 [--http-listen [IP:]PORT] [--http-token-file FILE] [--http-max-body BYTES]\n"
            "                 [--http-key-dir DIR] [--stage-ms gpu=MS,final=MS[@T]] [--device-speedup D]\n"
            "                 [--cores N] [--key-budget BYTES] [--key-store-budget BYTES]\n"
            "                 [--key-affinity on|off|N] [--slot-classes SPEC] [--slot-reserve C[,H[,N]]]\n"
            "                 [--preempt critical|high|normal|none] [--resize-every S] [--host-nice N]\n"
            "                 [--gpu-rt-priority P] [--gpu-rt-slice US] [--dry-run]\n"
            "GPU workers: K per CUDA device found (CUDA_VISIBLE_DEVICES respected), or one on the CPU\n"
            "backend when there is none; --gpu N sets the total instead. --synth/--final: old names of\n"
            "--synths/--finalizers. --watchdog-sec: children's watchdog (default 30, 0 = off).\n"
            "--preload: every stage loads these proving keys before taking work (no first-partition stall);\n"
            "a bellman key with its circuit: circuit.params:circuit.r1cs.\n"
            "--key-budget: key memory per stage process (LRU eviction of keys not in use); --key-store-budget:\n"
            "the shared-memory key store's size; --key-affinity: the broker's key routing (doc/keys.md).\n"
            "--slot-classes/--slot-reserve/--preempt: the arena in slot size classes, slots held back\n"
            "for urgent work, take-back of unstarted worse work (zkpipe-broker --help; doc/slot-protocol.md).\n"
            "--state-dir: the broker's job journal (default $ZP_STATE_DIR, $XDG_STATE_HOME/zkpipe).\n"
            "--fleet URL|-: also take work from that PostgreSQL fleet queue (- : the URL is in $ZP_FLEET,\n"
            "which keeps it out of ps); --box-name NAME: this box in the fleet (default: host name).\n"
            "--finalizers auto (the default) sizes the finalizers (count and --final-threads) so they keep\n"
            "up with the GPU workers: from --stage-ms (task times `zkpipe status` prints for a running\n"
            "group), else a model (CPU backend: measured ratio; CUDA: --device-speedup, a guess); --cores:\n"
            "the host cores the rule may use (default: this process's CPUs). The running group then re-sizes\n"
            "from the broker's measured stage rates every --resize-every S seconds (default 20, 0 = off):\n"
            "while the finalizer stage limits, finalizers are added (same threads, within --cores; never\n"
            "removed). --host-nice N: synthesizers and finalizers run N nicer than the GPU workers\n"
            "(default 5, 0 = equal), so a GPU worker's work between two computes never waits for a core.\n"
            "--gpu-rt-priority P (1-99; default 0 = off): the GPU workers' control threads (socket loop,\n"
            "staging, work thread, message I/O) and the broker's loop run SCHED_FIFO at P, except during\n"
            "O(n) host work (key loads, the payload checksum, arena pinning, HTTP bodies; on the CPU\n"
            "backend the work thread's share of each compute keeps it): their wake-up between two\n"
            "computes never waits behind host stages (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= P;\n"
            "refused: a log line, then --gpu-rt-slice).\n"
            "--gpu-rt-slice US (100-100000; default 100, 0 = off): without FIFO the same threads run at the\n"
            "normal policy with a US-microsecond scheduling slice: on Linux >= 6.12 their wake-ups preempt\n"
            "the host stages' longer slices (no privilege needed; older kernels ignore it).\n"
            "--dry-run: print the plan, exit.\n"
            "Config file: `key = value` lines with the same keys. Ctrl-C stops the group.\n");
}

static int parse_count(const char *v, int dflt, int lo, int hi, const char *what)
{
    if (!v) return dflt;
    char *e;
    long x = strtol(v, &e, 10);
    if (e == v || *e || x < lo || x > hi) {
        fprintf(stderr, "zkpipe up: --%s '%s': expected %d..%d\n", what, v, lo, hi);
        return -1;
    }
    return (int)x;
}

#define UP_MAX_GPU 128

/* the finalizers: --finalizers N as given, or the sizing rule (up_size.c); logs the decision
 * (dry_run: prints the plan) */
static int size_plan(int *nfinal, char *threads, size_t tn, bool fin_auto, int ngpu, bool device, char *val[K_NKEYS],
                     bool dry_run, unsigned *cores_out)
{
    up_size_in_t in = {.n_gpu = (unsigned)ngpu, .device = device};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) cpus = CPU_COUNT(&set);
    int cores = parse_count(val[K_CORES], cpus > 0 ? (int)cpus : 1, 1, 65536, "cores");
    int gth = parse_count(val[K_THREADS], 0, 0, 4096, "threads");
    int fth = parse_count(val[K_FINAL_THREADS] ? val[K_FINAL_THREADS] : val[K_THREADS], 0, 0, 4096, "final-threads");
    if (cores < 0 || gth < 0 || fth < 0) return -1;
    in.cores = (unsigned)cores;
    *cores_out = (unsigned)cores;
    in.gpu_threads = (unsigned)gth;
    in.final_threads = (unsigned)fth;
    in.n_final = fin_auto ? 0 : (unsigned)*nfinal;
    if (val[K_STAGE_MS]) {
        if (up_parse_stage_ms(&in.rates, val[K_STAGE_MS]) < 0) {
            fprintf(stderr, "zkpipe up: --stage-ms '%s': expected gpu=MS,final=MS[@THREADS] (task times in ms, "
                    "as `zkpipe status` prints them)\n", val[K_STAGE_MS]);
            return -1;
        }
        in.measured = true;
    }
    if (val[K_DEV_SPEEDUP]) {
        char *e;
        in.device_speedup = strtod(val[K_DEV_SPEEDUP], &e);
        if (e == val[K_DEV_SPEEDUP] || *e || !(in.device_speedup > 0) || in.device_speedup > 1e6) {
            fprintf(stderr, "zkpipe up: --device-speedup '%s': expected a positive number\n", val[K_DEV_SPEEDUP]);
            return -1;
        }
    }
    up_size_t o;
    up_size_finalizers(&o, &in);
    *nfinal = (int)o.n_final;
    snprintf(threads, tn, "%u", o.final_threads);
    char line[700];
    snprintf(line, sizeof line, "finalizers: %u x %u thread(s)%s (%s)", o.n_final, o.final_threads,
             fin_auto ? "" : " (--finalizers)", o.why);
    zp_log(ZP_LOG_INFO, "%s", line);
    if (o.short_of_cores || o.final_rate < o.gpu_rate)
        zp_log(ZP_LOG_WARN, "the finalizer stage will limit throughput: %.1f thread(s) needed, %u finalizer thread(s) on "
               "%u core(s) keep up with %.0f%% of what the GPU workers produce", o.need_threads,
               o.n_final * o.final_threads, in.cores, 100 * o.final_rate / o.gpu_rate);
    if (dry_run)
        printf("plan: %d gpu worker(s) (%s), %u finalizer(s) x %u thread(s); need %.2f finalizer thread(s); "
               "finalizer capacity / gpu rate %.2f%s\n%s\n", ngpu, device ? "devices" : "cpu backend", o.n_final,
               o.final_threads, o.need_threads, o.final_rate / o.gpu_rate,
               o.short_of_cores ? "; SHORT OF CORES: the finalizer stage will limit" : "", line);
    return 0;
}

/* one value of the broker's Prometheus text: a line `name{stage="role"} v`; -1 when absent */
static double stage_metric(const char *text, const char *name, const char *role)
{
    char pat[128];
    int k = snprintf(pat, sizeof pat, "%s{stage=\"%s\"} ", name, role);
    for (const char *p = strstr(text, pat); p; p = strstr(p + 1, pat)) {
        if (p != text && p[-1] != '\n') continue;   /* a line's start only */
        char *e;
        double v = strtod(p + k, &e);
        return e == p + k || !(v >= 0) ? -1 : v;
    }
    return -1;
}

/* The resize's poll: the finalizers the measured rates call for (up_resize_want), after the
 * same answer twice in a row (*strikes: one poll's rates can be a burst or a key load); the
 * broker unreachable or its rates unmeasured: the count stays. Logs what it decides. */
static unsigned resize_poll(zp_client_t **cl, const char *rundir, unsigned nfinal, const char *threads_v,
                            unsigned cores, unsigned *strikes)
{
    if (!*cl && (*cl = zp_client_new(rundir))) zp_client_set_timeout(*cl, 1000);   /* the loop must keep turning */
    char *text = NULL;
    if (!*cl || zp_client_metrics(*cl, &text) != 0 || !text) { *strikes = 0; return nfinal; }
    double rg = stage_metric(text, "zkpipe_stage_partitions_per_second", "gpu");
    double rf = stage_metric(text, "zkpipe_stage_partitions_per_second", "final");
    bool lim = stage_metric(text, "zkpipe_stage_limiting", "final") == 1;
    zp_client_free(text);
    unsigned th = threads_v && atoi(threads_v) > 0 ? (unsigned)atoi(threads_v) : cores;
    bool capped;
    unsigned want = up_resize_want(nfinal, th, cores, rg, rf, lim, &capped);
    if (want <= nfinal) {
        if (lim && capped && *strikes != UINT_MAX)
            zp_log(ZP_LOG_WARN, "the finalizer stage limits throughput (%.3g partitions/s against the GPU stage's %.3g) "
                   "and %u finalizer(s) x %u thread(s) already fill %u core(s)", rf, rg, nfinal, th, cores);
        *strikes = lim && capped ? UINT_MAX : 0;   /* said once */
        return nfinal;
    }
    if (*strikes == UINT_MAX) *strikes = 0;
    if (++*strikes < 2) return nfinal;
    *strikes = 0;
    zp_log(ZP_LOG_INFO, "finalizers: %u -> %u (measured: the finalizer stage limits, %.3g partitions/s against the GPU "
           "stage's %.3g; x %.2f headroom%s)", nfinal, want, rf, rg, UP_HEADROOM, capped ? "; capped by the cores" : "");
    return want;
}

/* a synth (role 0), GPU worker (1) or finalizer (2) child: its binary, argv and label */
static void child_setup(child_t *x, int role, int inst, const char *rundir, char bins[4][PATH_MAX], char *val[K_NKEYS],
                        char (*devarg)[16], const char *fin_threads_v)
{
    char num[16];
    x->pidfd = -1;
    x->bin = bins[1 + role];
    x->role = role;
    x->inst = inst;
    x->argv[x->argc++] = dupv(x->bin);
    add(x, "--runtime-dir", rundir);
    add(x, "--arena", val[K_ARENA]);
    snprintf(num, sizeof num, "%d", inst);
    add(x, "--instance", num);
    add(x, "--heartbeat-ms", val[K_HB]);
    if (role == 0) {
        add(x, "--credits", val[K_SYNTH_CREDITS]);
        add(x, "--threads", val[K_SYNTH_THREADS] ? val[K_SYNTH_THREADS] : val[K_THREADS]);
        add(x, "--witness-timeout-ms", val[K_WTIMEOUT]);   /* issue 28: witnesses from inputs */
        add(x, "--witness-max-memory-mib", val[K_WMEM]);
        if (val[K_STATEDIR]) {   /* registered witness generators live beside the broker's journal */
            char wc[PATH_MAX];
            snprintf(wc, sizeof wc, "%s/wasm", val[K_STATEDIR]);
            add(x, "--wasm-cache", wc);
        }
    } else if (role == 1) {
        if (devarg[inst][0]) {
            add(x, "--device", devarg[inst]);
            add(x, "--backend", val[K_BACKEND]);
        } else {
            add(x, "--backend", "cpu");
        }
        add(x, "--credits", val[K_GPU_CREDITS]);
        add(x, "--threads", val[K_THREADS]);
        add(x, "--rt-priority", val[K_GPU_RT]);
        add(x, "--rt-slice", val[K_GPU_RT_SLICE]);
    } else {
        add(x, "--threads", fin_threads_v);
    }
    add(x, "--key-budget", val[K_KEY_BUDGET]);          /* keys: every stage caches keys */
    add(x, "--key-store-budget", val[K_KEY_STORE_BUDGET]);
    if (val[K_PRELOAD]) { /* comma-separated list, each passed as its own --preload */
        char *list = strdup(val[K_PRELOAD]), *save = NULL;
        for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
            if (*tok) add(x, "--preload", tok);
        free(list);
    }
    if (role == 1)
        snprintf(x->label, sizeof x->label, "gpu #%d (%s%s)", inst, devarg[inst][0] ? "device " : "cpu backend",
                 devarg[inst]);
    else snprintf(x->label, sizeof x->label, "%s #%d", zp_role_name((unsigned)role), inst);
    x->argv[x->argc] = NULL;
}

static int up_cmd(int argc, char **argv, char *val[K_NKEYS])
{
    const char *config = NULL;
    static struct option opts[K_NKEYS + 4];
    for (int i = 0; i < K_NKEYS; i++) opts[i] = (struct option){keys[i], 1, 0, 1000 + i};
    opts[K_NKEYS] = (struct option){"config", 1, 0, 'c'};
    opts[K_NKEYS + 1] = (struct option){"help", 0, 0, 'h'};
    opts[K_NKEYS + 2] = (struct option){"dry-run", 0, 0, 'n'};
    int c, ret = 1;
    bool dry_run = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c >= 1000 && c < 1000 + K_NKEYS) { free(val[c - 1000]); val[c - 1000] = strdup(optarg); }
        else if (c == 'c') config = optarg;
        else if (c == 'n') dry_run = true;
        else { usage(c == 'h' ? stdout : stderr); return c == 'h' ? 0 : 2; }
    }
    if (optind != argc) { fprintf(stderr, "zkpipe up: unexpected argument '%s'\n", argv[optind]); return 2; }
    if (config && load_config(config, val) < 0) return 2;
    int nsynth = parse_count(val[K_SYNTHS] ? val[K_SYNTHS] : val[K_SYNTH], 1, 1, 64, "synths");
    const char *fin_v = val[K_FINALS] ? val[K_FINALS] : val[K_FINAL];
    bool fin_auto = !fin_v || !strcmp(fin_v, "auto");
    int nfinal = fin_auto ? 0 : parse_count(fin_v, 1, 1, UP_FINAL_MAX, "finalizers");
    int per_card = parse_count(val[K_PER_CARD], 1, 1, 16, "gpu-workers-per-card");
    int wd_sec = parse_count(val[K_WATCHDOG], 30, 0, 3600, "watchdog-sec");
    const char *backend = val[K_BACKEND] ? val[K_BACKEND] : "auto";
    if (nsynth < 0 || nfinal < 0 || per_card < 0 || wd_sec < 0) return 2;
    /* keys: refuse bad sizes here, not in a restart loop of every stage */
    uint64_t kb;
    for (int k = K_KEY_BUDGET; k <= K_KEY_STORE_BUDGET; k++)
        if (val[k] && zp_parse_bytes(k == K_KEY_BUDGET ? "--key-budget" : "--key-store-budget", val[k], &kb) < 0) {
            fprintf(stderr, "zkpipe up: %s\n", zp_err_msg());
            return 2;
        }
    const char *ka = val[K_KEY_AFFINITY];
    if (ka && strcmp(ka, "on") && strcmp(ka, "off") && (!*ka || strspn(ka, "0123456789") != strlen(ka))) {
        fprintf(stderr, "zkpipe up: --key-affinity '%s': expected on, off or a number\n", ka);
        return 2;
    }
    if (strcmp(backend, "auto") && strcmp(backend, "cuda") && strcmp(backend, "cpu")) {
        fprintf(stderr, "zkpipe up: --backend must be auto, cuda or cpu\n");
        return 2;
    }
    g_wd_usec = (uint64_t)wd_sec * 1000000u;
    char rundir[512];
    if (zp_runtime_dir(rundir, sizeof rundir, val[K_RUNDIR], true) < 0) {
        fprintf(stderr, "zkpipe up: %s\n", zp_err_msg());
        return 1;
    }
    char bins[4][PATH_MAX];
    if (find_bin(bins[0], PATH_MAX, "zkpipe-broker", "broker") < 0 || find_bin(bins[1], PATH_MAX, "zkpipe-synth", "synth") < 0 ||
        find_bin(bins[2], PATH_MAX, "zkpipe-gpu-worker", "gpu-worker") < 0 ||
        find_bin(bins[3], PATH_MAX, "zkpipe-finalizer", "finalizer") < 0)
        return 1;
    /* the plain option values first: a bad one is refused before any plan is printed */
    int resize_s = parse_count(val[K_RESIZE], 20, 0, 86400, "resize-every");
    if (resize_s < 0) return 2;
    g_host_nice = parse_count(val[K_HOST_NICE], 5, 0, 19, "host-nice");
    if (g_host_nice < 0) return 2;
    if (parse_count(val[K_GPU_RT], 0, 0, 99, "gpu-rt-priority") < 0) return 2;   /* the workers take it as given */
    int slice = parse_count(val[K_GPU_RT_SLICE], ZP_RT_SLICE_MIN_US, 0, ZP_RT_SLICE_MAX_US, "gpu-rt-slice");
    if (slice < 0) return 2;
    if (!zp_rt_slice_ok(slice)) {   /* below the kernel's minimum: the workers refuse it too */
        fprintf(stderr, "zkpipe up: --gpu-rt-slice '%s': expected 0 (off) or %d..%d\n", val[K_GPU_RT_SLICE],
                ZP_RT_SLICE_MIN_US, ZP_RT_SLICE_MAX_US);
        return 2;
    }
    static char devarg[UP_MAX_GPU][16];
    int ngpu = plan_gpus(devarg, UP_MAX_GPU, backend, val[K_DEVICES], val[K_GPU], per_card, bins[2]);
    if (ngpu < 0) return 1;
    char fin_threads[16];
    const char *fin_threads_v = val[K_FINAL_THREADS] ? val[K_FINAL_THREADS] : val[K_THREADS];
    unsigned cores = 1;
    if (size_plan(&nfinal, fin_threads, sizeof fin_threads, fin_auto, ngpu, devarg[0][0] != 0, val, dry_run, &cores) < 0)
        return 2;
    if (fin_auto) fin_threads_v = fin_threads;
    if (dry_run) return 0;

    if (val[K_FLEET] && ((strcmp(val[K_FLEET], "-") && setenv("ZP_FLEET", val[K_FLEET], 1) < 0) ||
                         !getenv("ZP_FLEET") || !*getenv("ZP_FLEET"))) {
        fprintf(stderr, "zkpipe up: --fleet: no connection string (--fleet - takes it from $ZP_FLEET)\n");
        return 2;
    }
    int n = 1 + nsynth + ngpu + nfinal;
    int cap = n + (fin_auto && resize_s ? UP_FINAL_MAX : 0);   /* room for the finalizers a resize adds */
    child_t *ch = calloc((size_t)cap, sizeof *ch);
    if (!ch) return 1;
    /* broker */
    ch[0].bin = bins[0];
    ch[0].argv[ch[0].argc++] = dupv(bins[0]);
    add(&ch[0], "--runtime-dir", rundir);
    add(&ch[0], "--arena", val[K_ARENA]);
    add(&ch[0], "--slots", val[K_SLOTS]);
    add(&ch[0], "--max-domain", val[K_MAXDOM]);
    add(&ch[0], "--max-vars", val[K_MAXVARS]);
    add(&ch[0], "--heartbeat-ms", val[K_HB]);
    add(&ch[0], "--liveness", val[K_LIVE]);
    add(&ch[0], "--max-attempts", val[K_ATTEMPTS]);
    add(&ch[0], "--state-dir", val[K_STATEDIR]);          /* the broker's journal */
    add(&ch[0], "--metrics-listen", val[K_METRICS]);      /* Prometheus /metrics */
    add(&ch[0], "--http-listen", val[K_HTTP]);            /* client: the HTTP JSON API */
    add(&ch[0], "--http-token-file", val[K_HTTP_TOKENS]);
    add(&ch[0], "--http-max-body", val[K_HTTP_BODY]);
    add(&ch[0], "--http-key-dir", val[K_HTTP_KEYS]);
    add(&ch[0], "--key-affinity", val[K_KEY_AFFINITY]);  /* keys */
    add(&ch[0], "--slot-classes", val[K_SLOT_CLASSES]);  /* slots: the broker validates them */
    add(&ch[0], "--slot-reserve", val[K_SLOT_RESERVE]);
    add(&ch[0], "--preempt", val[K_PREEMPT]);
    add(&ch[0], "--rt-priority", val[K_GPU_RT]);         /* READY -> ASSIGN: on the GPU's path too */
    add(&ch[0], "--rt-slice", val[K_GPU_RT_SLICE]);
    if (val[K_FLEET]) {   /* fleet: the URL travels in the environment, never in the broker's argv */
        add(&ch[0], "--fleet-env", "ZP_FLEET");
        add(&ch[0], "--box-name", val[K_BOXNAME]);
    }
    snprintf(ch[0].label, sizeof ch[0].label, "broker");
    ch[0].role = ch[0].inst = -1;
    for (int i = 0; i < n; i++) ch[i].pidfd = -1;
    for (int i = 1; i < n; i++) {
        int role = i <= nsynth ? 0 : i <= nsynth + ngpu ? 1 : 2;
        int inst = role == 0 ? i - 1 : role == 1 ? i - 1 - nsynth : i - 1 - nsynth - ngpu;
        child_setup(&ch[i], role, inst, rundir, bins, val, devarg, fin_threads_v);
    }
    for (int i = 0; i < n; i++) ch[i].argv[ch[i].argc] = NULL;

    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction sc = {.sa_handler = on_chld, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGCHLD, &sc, NULL);

    /* one group per runtime directory: refuse a second up, stop a group left by a dead one */
    const char *nopd = getenv("ZP_TEST_NO_PDEATHSIG");
    g_no_pdeathsig = nopd && !strcmp(nopd, "1");
    int nfd = -1;
    const char *binv[4] = {bins[0], bins[1], bins[2], bins[3]};
    if (up_group_lock(rundir, binv, 4) < 0) goto out;
    zp_watchdog_init(&g_wd);
    nfd = notify_open(rundir);
    char sock[600];
    snprintf(sock, sizeof sock, "%s/broker.sock", rundir);
    zp_notify("STATUS=starting the broker");
    time_t broker_t0 = time(NULL);
    if (spawn(&ch[0]) < 0) goto out;
    /* wait for the broker's own socket (not one left by a dead broker), or its early death:
     * e.g. another broker holds the pidfile */
    for (int t = 0; t < 200 && !socket_fresh(sock, broker_t0); t++) {
        int st;
        if (waitpid(ch[0].pid, &st, WNOHANG) == ch[0].pid) {
            fprintf(stderr, "zkpipe up: the broker exited at start (status %d); see its message above\n",
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            ch[0].pid = 0;
            goto out;
        }
        zp_watchdog_tick(&g_wd, zp_now_ns());
        usleep(25000);
    }
    for (int i = 1; i < n; i++)
        if (spawn(&ch[i]) == 0) sup_register(ch, i);
    printf("zkpipe up: broker at ipc://%s (%d synth, %d gpu, %d final); Ctrl-C to stop\n", sock, nsynth, ngpu, nfinal);
    fflush(stdout);

    bool group_ready = false;
    int last_ready = -1;
    zp_client_t *cl = NULL;   /* the resize's view of the broker: its metrics */
    unsigned strikes = 0;
    uint64_t next_resize = zp_now_ns() + (uint64_t)resize_s * 1000000000ull;
    unsigned restarts = 0;
    while (!g_stop) {
        uint64_t now = zp_now_ns();
        struct pollfd pf[2] = {{nfd, POLLIN, 0}, {g_sup, POLLIN, 0}};
        poll(pf, 2, zp_watchdog_poll_ms(&g_wd, now, 50));   /* negative fds are skipped */
        if (nfd >= 0) notify_drain(nfd, ch, n);
        sup_drain(ch, n);
        sup_retry(ch, n);
        int st;
        pid_t pid;
        g_chld = 0;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++) {
                if (ch[i].pid != pid) continue;
                uint64_t ran = zp_now_ns() - ch[i].started;
                /* started cleanly: it said READY=1 (no notify socket: it ran 5 s) */
                bool clean = nfd >= 0 ? ch[i].ready : ran > 5000000000ull;
                ch[i].pid = 0;
                ch[i].ready = false;
                if (ch[i].pidfd >= 0) { close(ch[i].pidfd); ch[i].pidfd = -1; }
                if (i == 0) { if (g_sup >= 0) close(g_sup); g_sup = -1; }
                else if (!ch[i].reg_pending)   /* (an EXIT that does not fit: the next REG replaces it) */
                    sup_send(&(zp_sup_msg_t){.type = ZP_SUP_EXIT, .child = (uint32_t)i, .pid = (uint32_t)pid});
                ch[i].reg_pending = false;
                if (g_stop) break;
                ch[i].backoff_ms = up_backoff_next(ch[i].backoff_ms, clean);
                ch[i].restart_at = zp_now_ns() + ch[i].backoff_ms * 1000000u;
                zp_log(ZP_LOG_WARN, "%s (pid %d) %s %d after %.1f s%s; restarting in %llu ms", ch[i].label, (int)pid,
                       WIFSIGNALED(st) ? "killed by signal" : "exited with status",
                       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), ran / 1e9,
                       clean ? "" : " before it was ready (crash loop: backing off)",
                       (unsigned long long)ch[i].backoff_ms);
            }
        }
        now = zp_now_ns();
        for (int i = 0; i < n && !g_stop; i++)
            if (!ch[i].pid && now >= ch[i].restart_at) {
                ch[i].restarts++;
                restarts++;
                if (i == 0) broker_t0 = time(NULL);
                if (spawn(&ch[i]) < 0) { ch[i].restart_at = now + 1000000000ull; continue; }
                if (i == 0)   /* a new broker: tell it who the live workers are */
                    for (int j = 1; j < n; j++) sup_register(ch, j);
                else sup_register(ch, i);
            }
        now = zp_now_ns();   /* after the spawns: started <= now */
        watchdog_children(ch, n, now);
        /* readiness: READY=1 (the broker: or its fresh socket file); no notify socket: running */
        if (ch[0].pid > 0 && !ch[0].ready && socket_fresh(sock, broker_t0)) ch[0].ready = true;
        int nready = 0;
        for (int i = 0; i < n; i++) {
            if (ch[i].pid > 0 && nfd < 0) ch[i].ready = true;
            nready += ch[i].pid > 0 && ch[i].ready;
            if (ch[i].pid > 0 && !ch[i].ready && !ch[i].slow_logged && now - ch[i].started > 30000000000ull) {
                zp_log(ZP_LOG_WARN, "%s (pid %d) not ready after 30 s (no READY=1 yet; is the broker up?)", ch[i].label,
                       (int)ch[i].pid);
                ch[i].slow_logged = true;
            }
        }
        if (nready != last_ready) {
            last_ready = nready;
            if (nready == n && !group_ready) {
                group_ready = true;
                zp_notifyf("READY=1\nSTATUS=%d/%d processes ready (%d synth, %d gpu, %d final)", nready, n, nsynth,
                           ngpu, nfinal);
                zp_log(ZP_LOG_INFO, "all %d processes ready", n);
                printf("zkpipe up: all %d processes ready\n", n);
                fflush(stdout);
            } else {
                zp_notifyf("STATUS=%d/%d processes ready, %u restart(s)", nready, n, restarts);
            }
        }
        if (fin_auto && resize_s && group_ready && ch[0].pid > 0 && ch[0].ready && now >= next_resize && n < cap) {
            next_resize = now + (uint64_t)resize_s * 1000000000ull;
            unsigned want = resize_poll(&cl, rundir, (unsigned)nfinal, fin_threads_v, cores, &strikes);
            while ((unsigned)nfinal < want && n < cap) {
                child_setup(&ch[n], 2, nfinal, rundir, bins, val, devarg, fin_threads_v);
                if (spawn(&ch[n]) < 0) { for (int k = 0; k < ch[n].argc; k++) free(ch[n].argv[k]); memset(&ch[n], 0, sizeof ch[n]); break; }
                sup_register(ch, n);
                n++;
                nfinal++;
            }
        }
        zp_watchdog_tick(&g_wd, zp_now_ns());
    }
    ret = 0;
out:
    zp_log(ZP_LOG_INFO, "stopping the group");
    zp_notify("STOPPING=1\nSTATUS=stopping the group");
    /* workers first (they finish or hand back), then the broker */
    for (int phase = 1; phase >= 0; phase--) {
        int lo = phase ? 1 : 0, hi = phase ? n : 1;
        for (int i = lo; i < hi; i++) child_signal(&ch[i], SIGTERM);
        uint64_t until = zp_now_ns() + 10000000000ull;
        for (;;) {
            int alive = 0;
            for (int i = lo; i < hi; i++) {
                if (ch[i].pid <= 0) continue;
                int st;
                if (waitpid(ch[i].pid, &st, WNOHANG) == ch[i].pid) ch[i].pid = 0;
                else alive++;
            }
            if (!alive) break;
            if (zp_now_ns() > until) {
                for (int i = lo; i < hi; i++)
                    if (ch[i].pid > 0) { zp_log(ZP_LOG_WARN, "%s did not stop: SIGKILL", ch[i].label); child_signal(&ch[i], SIGKILL); waitpid(ch[i].pid, NULL, 0); ch[i].pid = 0; }
                break;
            }
            zp_watchdog_tick(&g_wd, zp_now_ns());
            usleep(20000);
        }
    }
    zp_client_destroy(&cl);
    if (nfd >= 0) {
        close(nfd);
        if (g_notify_addr[0] == '/') unlink(g_notify_addr);
    }
    for (int i = 0; i < n; i++) if (ch[i].pidfd >= 0) close(ch[i].pidfd);
    if (g_sup >= 0) { close(g_sup); g_sup = -1; }
    up_group_unlock();
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ch[i].argc; k++) free(ch[i].argv[k]);
    free(ch);
    zp_log(ZP_LOG_INFO, "stopped");
    return ret;
}

int zp_cmd_up(int argc, char **argv)
{
    char *val[K_NKEYS] = {0};   /* option and config values, strdup'ed; freed on every path */
    int rc = up_cmd(argc, argv, val);
    for (int i = 0; i < K_NKEYS; i++) free(val[i]);
    return rc;
}
