/* ident.c - the broker's side of worker identity and fencing (proto/identity.h has the rules
 * and the supervisor channel's messages).
 *
 * NOTES
 * Supervised (ZP_SUPERVISOR_FD names our end of `zkpipe up`'s socketpair): the registry holds
 * what the supervisor told us, one entry per child it started (child, role, instance, pid,
 * token). A HELLO for a registered (role, instance) is accepted only with that entry's token,
 * from a connection whose kernel pid (SO_PEERCRED via libzmq's Peer-Address) is the registered
 * pid; a HELLO with an unknown token is refused. A token-less HELLO for an identity nobody
 * registered (a worker started by hand beside `zkpipe up`) is treated as unsupervised.
 * EXIT (or a new REG for the same child) marks the entry gone; the worker bound to it is
 * declared dead two heartbeat intervals later (brk_ident_tick), so that what the process sent
 * before it exited (a hand-back FAIL on SIGTERM, a DONE) is read first: the process is gone,
 * but its last frames may still be in the transport.
 * A new REG for a (role, instance) replaces the previous one (the supervisor starts the next
 * process only after the last one was reaped). Fencing = a FENCE request to the supervisor; it kills through its
 * pidfd of its own child.
 * Unsupervised (systemd units): the pid is the kernel's, a HELLO naming another is refused; a
 * (role, instance) held by a live process (watched with a pidfd) is refused to anyone else;
 * fencing is logged only (the unit's watchdog restarts a hung worker).
 * The broker itself never calls kill(). State is one-thread, like the rest of brk_t.
 * Tests: tests/ipc/identity.sh, tests/ipc/fence.sh. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"
#include "proto/identity.h"

typedef struct {
    bool used;
    uint64_t gone_at;                   /* 0: live; else when the supervisor said it is gone */
    uint32_t child, role, instance, pid;
    uint8_t token[ZP_ID_TOKEN_LEN];
} brk_reg_t;

struct brk_ident {
    int sup_fd;                         /* -1: no supervisor (or it went away) */
    bool supervised;                    /* started with a supervisor channel */
    brk_reg_t reg[BRK_MAX_WORKERS];
    int pidfd[BRK_MAX_WORKERS];         /* by worker index; unsupervised liveness; -1 none */
    int32_t wreg[BRK_MAX_WORKERS];      /* by worker index: its registry entry, -1 none */
};

static unsigned widx(const brk_t *b, const brk_worker_t *w) { return (unsigned)(w - b->workers); }

int brk_ident_init(brk_t *b)
{
    struct brk_ident *id = calloc(1, sizeof *id);
    if (!id) return zp_err_set(-ENOMEM, "identity registry");
    id->sup_fd = -1;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) { id->pidfd[i] = -1; id->wreg[i] = -1; }
    b->ident = id;
    const char *v = getenv(ZP_SUPERVISOR_FD_ENV);
    if (!v || !*v) {
        zp_log(ZP_LOG_INFO, "no supervisor channel: worker pids come from the connection's peer credentials; "
               "the broker does not kill hung workers (their service manager's watchdog does)");
        return 0;
    }
    char *e;
    long fd = strtol(v, &e, 10);
    int type = 0;
    socklen_t tl = sizeof type;
    struct stat st;
    if (*e || fd < 3 || fd > 1 << 20 || fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
        getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
        return zp_err_set(-EINVAL, "%s=%s is not an inherited SOCK_SEQPACKET socket", ZP_SUPERVISOR_FD_ENV, v);
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    fcntl((int)fd, F_SETFL, fcntl((int)fd, F_GETFL) | O_NONBLOCK);
    unsetenv(ZP_SUPERVISOR_FD_ENV);
    id->sup_fd = (int)fd;
    id->supervised = true;
    zp_log(ZP_LOG_INFO, "supervised: workers are identified by the tokens their supervisor registers; "
           "fencing is requested from it");
    return 0;
}

void brk_ident_close(brk_t *b)
{
    struct brk_ident *id = b->ident;
    if (!id) return;
    if (id->sup_fd >= 0) close(id->sup_fd);
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++)
        if (id->pidfd[i] >= 0) close(id->pidfd[i]);
    free(id);
    b->ident = NULL;
}

int brk_ident_pollfd(const brk_t *b) { return b->ident ? b->ident->sup_fd : -1; }

/* the worker bound to registry entry r, if any */
static brk_worker_t *worker_of_reg(brk_t *b, int r)
{
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++)
        if (b->workers[i].used && b->ident->wreg[i] == r) return &b->workers[i];
    return NULL;
}

static void on_sup_msg(brk_t *b, const zp_sup_msg_t *m)
{
    struct brk_ident *id = b->ident;
    if (m->type == ZP_SUP_REG) {
        int slot = -1;
        for (int i = 0; i < BRK_MAX_WORKERS; i++) {
            brk_reg_t *r = &id->reg[i];
            if (!r->used) { if (slot < 0) slot = i; continue; }
            if (r->gone_at) continue;
            if (r->pid == m->pid && r->child == m->child && !memcmp(r->token, m->token, ZP_ID_TOKEN_LEN)) return;
            /* the supervisor starts a child's next process only after reaping the last */
            if (r->child == m->child || (r->role == m->role && r->instance == m->instance)) r->gone_at = zp_now_ns();
        }
        if (slot < 0) { zp_log(ZP_LOG_ERROR, "supervisor registered more than %d children", BRK_MAX_WORKERS); return; }
        id->reg[slot] = (brk_reg_t){true, 0, m->child, m->role, m->instance, m->pid, {0}};
        memcpy(id->reg[slot].token, m->token, ZP_ID_TOKEN_LEN);
        zp_log(ZP_LOG_DEBUG, "supervisor: child %u is %s #%u, pid %u", m->child, zp_role_name(m->role), m->instance,
               m->pid);
    } else if (m->type == ZP_SUP_EXIT) {
        for (int i = 0; i < BRK_MAX_WORKERS; i++) {
            brk_reg_t *r = &id->reg[i];
            if (!r->used || r->gone_at || r->child != m->child || r->pid != m->pid) continue;
            r->gone_at = zp_now_ns();
        }
    } else {
        zp_log(ZP_LOG_WARN, "supervisor channel: unexpected message type %d ignored", (int)m->type);
    }
}

void brk_ident_service(brk_t *b)
{
    struct brk_ident *id = b->ident;
    while (id && id->sup_fd >= 0) {
        char buf[ZP_SUP_MSG_MAX];
        ssize_t r = recv(id->sup_fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (r <= 0) {
            zp_log(ZP_LOG_ERROR, "supervisor channel closed (%s): keeping the workers it registered; no fencing",
                   r < 0 ? strerror(errno) : "the supervisor is gone");
            close(id->sup_fd);
            id->sup_fd = -1;
            return;
        }
        zp_sup_msg_t m;
        if ((size_t)r >= sizeof buf || zp_sup_decode(&m, buf, (size_t)r) < 0) {
            b->c.malformed++;
            zp_log(ZP_LOG_WARN, "supervisor channel: bad message (%zd bytes) dropped: %s", r,
                   (size_t)r >= sizeof buf ? "too long" : zp_err_msg());
            continue;
        }
        on_sup_msg(b, &m);
    }
}

void brk_ident_tick(brk_t *b)
{
    struct brk_ident *id = b->ident;
    uint64_t now = zp_now_ns(), grace = 2 * (uint64_t)b->heartbeat_ms * 1000000u;
    for (int i = 0; id && i < BRK_MAX_WORKERS; i++) {
        brk_reg_t *r = &id->reg[i];
        if (!r->used || !r->gone_at || now - r->gone_at < grace) continue;
        brk_worker_t *w = worker_of_reg(b, i);
        if (w) brk_worker_dead(b, w, "exited (its supervisor reaped it)", false);
        r->used = false;
    }
}

static int find_reg(struct brk_ident *id, const uint8_t *tok)
{
    for (int i = 0; i < BRK_MAX_WORKERS; i++)
        if (id->reg[i].used && !id->reg[i].gone_at && !memcmp(id->reg[i].token, tok, ZP_ID_TOKEN_LEN)) return i;
    return -1;
}

/* is the process behind worker w still running (unsupervised: its pidfd) */
static bool holder_alive(brk_t *b, const brk_worker_t *w)
{
    int fd = b->ident->pidfd[widx(b, w)];
    if (fd < 0) return w->alive;        /* no handle: trust liveness (heartbeats) */
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;         /* a pidfd is readable once the process exited */
}

int brk_ident_check(brk_t *b, const zp_msg_hello_t *m, uint32_t peer_pid, uint32_t *pid, int *reg,
                    char *why, size_t n)
{
    struct brk_ident *id = b->ident;
    *reg = -1;
    *pid = peer_pid ? peer_pid : m->pid;
    if (peer_pid && m->pid != peer_pid) {
        snprintf(why, n, "HELLO names pid %u but the connection is from pid %u", m->pid, peer_pid);
        return -1;
    }
    if (id->supervised && !m->has_token) {
        /* not started by the supervisor (a worker started by hand beside `zkpipe up`): it may
         * join on its kernel pid, as under systemd, but never as an identity the supervisor
         * handed out */
        for (int i = 0; i < BRK_MAX_WORKERS; i++)
            if (id->reg[i].used && !id->reg[i].gone_at && id->reg[i].role == m->role && id->reg[i].instance == m->instance) {
                snprintf(why, n, "%s #%u belongs to a process the supervisor started (pid %u); a HELLO for it "
                         "must carry that process's identity token", zp_role_name(m->role), m->instance,
                         id->reg[i].pid);
                return -1;
            }
    } else if (id->supervised) {
        int r = find_reg(id, m->token);
        if (r < 0) { brk_ident_service(b); r = find_reg(id, m->token); }   /* a REG still in flight */
        if (r < 0) { snprintf(why, n, "identity token not registered by the supervisor"); return -1; }
        const brk_reg_t *g = &id->reg[r];
        if (g->role != m->role || g->instance != m->instance) {
            snprintf(why, n, "token registered for %s #%u, HELLO says %s #%u", zp_role_name(g->role), g->instance,
                     zp_role_name(m->role), m->instance);
            return -1;
        }
        if (peer_pid && g->pid != peer_pid) {
            snprintf(why, n, "token registered for pid %u, connection from pid %u", g->pid, peer_pid);
            return -1;
        }
        *pid = g->pid;
        *reg = r;
        return 0;
    }
    /* no supervisor's word: one live process per (role, instance) */
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *o = &b->workers[i];
        if (!o->used || o->role != m->role || o->instance != m->instance || o->pid == *pid) continue;
        if (holder_alive(b, o)) {
            snprintf(why, n, "%s #%u is held by pid %u, which is still running", zp_role_name(m->role), m->instance,
                     o->pid);
            return -1;
        }
    }
    return 0;
}

void brk_ident_bind(brk_t *b, brk_worker_t *w, uint32_t peer_pid, int reg)
{
    struct brk_ident *id = b->ident;
    unsigned i = widx(b, w);
    id->wreg[i] = reg;
    if (!id->supervised && peer_pid && id->pidfd[i] < 0) {
        int fd = pidfd_open((pid_t)peer_pid, 0);
        if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
        id->pidfd[i] = fd;              /* -1 (old kernel): liveness by heartbeats only */
    }
}

void brk_ident_forget(brk_t *b, brk_worker_t *w)
{
    struct brk_ident *id = b->ident;
    if (!id) return;
    unsigned i = widx(b, w);
    if (id->pidfd[i] >= 0) close(id->pidfd[i]);
    id->pidfd[i] = -1;
    id->wreg[i] = -1;
}

void brk_ident_fence(brk_t *b, brk_worker_t *w, const char *why)
{
    struct brk_ident *id = b->ident;
    int r = id ? id->wreg[widx(b, w)] : -1;
    if (r < 0 || id->sup_fd < 0) {
        b->c.fence_unsupervised++;
        zp_log(ZP_LOG_WARN, "%s worker #%u pid %u must be fenced (%s) but no supervisor holds it: the broker never "
               "signals a process; its service manager's watchdog restarts it", zp_role_name(w->role), w->instance,
               w->pid, why);
        return;
    }
    zp_sup_msg_t m = {.type = ZP_SUP_FENCE, .child = id->reg[r].child, .pid = id->reg[r].pid};
    snprintf(m.reason, sizeof m.reason, "%s", why);
    char buf[ZP_SUP_MSG_MAX];
    int k = zp_sup_encode(buf, sizeof buf, &m);
    if (k < 0 || send(id->sup_fd, buf, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL) != k) {
        zp_log(ZP_LOG_ERROR, "cannot ask the supervisor to fence pid %u: %s", m.pid, k < 0 ? zp_err_msg() : strerror(errno));
        return;
    }
    b->c.fence_requests++;
    zp_log(ZP_LOG_WARN, "asked the supervisor to fence %s worker #%u pid %u: %s", zp_role_name(w->role), w->instance,
           m.pid, why);
}
