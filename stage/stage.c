/* stage.c - the stage runtime's life cycle (see stage.h): signals first, options, the pool,
 * key cache and key store, the daemon's init, --preload, then the loop (stage_loop.c), then
 * teardown in the reverse order. Also the failure helpers that give every FAIL its class, and
 * the per-epoch arena that work() writes into.
 * Invariants: the signal handlers only set flags; nothing before the loop blocks signals on
 * the main thread, so a SIGTERM during a long init (a --preload of a big key, a key path on a
 * stuck mount or a FIFO) stops the stage cleanly (exit 0, nothing half-announced: no HELLO
 * was sent). Threads started by the runtime (pool, work thread) and by init block the stop
 * signals: they are delivered to the main thread, whose blocking calls return EINTR.
 * Tests: tests/ipc/stage_signals.sh, tests/ipc/ (every stage runs on this). */
#include <bsd/unistd.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "proto/peer.h"
#include "stage/stage_int.h"

extern char **environ;

volatile sig_atomic_t zp_stage_sig_stop, zp_stage_sig_hup;
static void on_stop(int sig) { (void)sig; zp_stage_sig_stop = 1; }
static void on_hup(int sig) { (void)sig; zp_stage_sig_hup = 1; }

/* first thing in zp_stage_run: no SA_RESTART, so a blocked open()/read() in init returns EINTR */
static void install_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* ---------------------------------------------------------------- failures */
zp_fail_class_t zp_stage_fail_class(int code)
{
    switch (code) {
    case ZP_EFORMAT: case ZP_EMISMATCH: case ZP_ECURVE: case ZP_EVERSION: case ZP_EUNSAT: case ZP_ETOOBIG:
    case -ENOENT: case -EACCES: case -EPERM: case -EISDIR: case -ENOTDIR: case -ELOOP: case -ENAMETOOLONG:
        return ZP_FAIL_INPUT;
    default:
        return ZP_FAIL_TRANSIENT;
    }
}

void zp_stage_fail_as(zp_stage_task_t *t, int code, zp_fail_class_t cls, const char *what)
{
    const char *m = zp_err_msg();
    t->ok = false;
    t->code = code;
    t->fail_class = (uint8_t)cls;
    snprintf(t->msg, sizeof t->msg, "%s: %s%s%s", what, zp_strerror(code), *m ? ": " : "", m);
}

void zp_stage_fail(zp_stage_task_t *t, int code, const char *what)
{
    zp_stage_fail_as(t, code, zp_stage_fail_class(code), what);
}

/* ---------------------------------------------------------------- arena */
int zp_stage_arena(zp_stage_t *s, uint64_t epoch)
{
    if (s->arena && zp_shm_epoch(s->arena) == epoch) return 0;
    zp_rt_pause();   /* unpinning, mapping and pinning an arena: O(arena), at the normal policy */
    if (s->arena && s->def->arena_closing) s->def->arena_closing(s);
    zp_shm_close(&s->arena);
    int rc = zp_shm_open(&s->arena, s->arena_name, NULL, epoch);
    if (rc < 0) rc = zp_err_set(rc, "arena %s (epoch %016llx): %s", s->arena_name, (unsigned long long)epoch, zp_err_msg());
    else if (s->def->arena_opened) s->def->arena_opened(s);
    zp_rt_resume();
    return rc < 0 ? rc : 0;
}

int zp_stage_arena_wait(zp_stage_t *s)
{
    char last[256] = "";
    uint64_t t0 = zp_now_ns();
    while (!zp_stage_sig_stop) {
        int rc = zp_shm_open(&s->arena, s->arena_name, NULL, 0);
        if (rc == 0) {
            if (last[0])
                zp_log(ZP_LOG_INFO, "arena %s appeared after %.1f s", s->arena_name, (zp_now_ns() - t0) / 1e9);
            if (s->def->arena_opened) s->def->arena_opened(s);
            return 0;
        }
        if (strcmp(last, zp_err_msg())) {   /* one line per distinct reason (the broker may be creating it) */
            snprintf(last, sizeof last, "%s", zp_err_msg());
            zp_log(ZP_LOG_INFO, "waiting for the arena %s (is the broker up?): %s %s", s->arena_name, zp_strerror(rc),
                   last);
            if (!last[0]) snprintf(last, sizeof last, "?");
        }
        if (zp_stage_sig_hup) {
            zp_stage_sig_hup = 0;
            zp_log(ZP_LOG_INFO, "SIGHUP ignored (nothing to reload; SIGTERM stops)");
        }
        usleep(100000);
    }
    return 1;
}

/* ---------------------------------------------------------------- options */
enum { OPT_NCOMMON = 12, OPT_MAX_EXTRA = 16 };

static void usage(const zp_stage_def_t *d, FILE *f)
{
    int ind = (int)strlen(d->prog) + 7;
    fprintf(f, "usage: %s [--runtime-dir DIR] [--arena NAME] [--instance N] [--credits N]\n"
               "%*s [--threads N] [--heartbeat-ms MS] [--preload ZKEY]... [--no-key-store]\n"
               "%*s [--key-budget BYTES] [--key-store-budget BYTES]\n",
            d->prog, ind, "", ind, "");
    if (d->usage_args) fprintf(f, "%*s %s\n", ind, "", d->usage_args);
    fprintf(f, "  --preload ZKEY:  load this proving key before taking work (repeatable; READY = key hot);\n"
               "                   a bellman key with its circuit: --preload circuit.params:circuit.r1cs\n"
               "  --no-key-store:  keep proving keys in private memory (no shared-memory hot tier)\n"
               "  --key-budget BYTES: key memory this process holds (K/M/G/T suffixes); least recently used\n"
               "                   keys not in use are evicted beyond it (0: no limit; doc/keys.md)\n"
               "  --key-store-budget BYTES: what the shared key store may take when this process fills a key\n"
               "%s", d->usage_text ? d->usage_text : "");
}

/* a decimal number in [lo, hi] for option name, else a message and false */
static bool num_opt(const char *prog, const char *name, const char *arg, unsigned lo, unsigned hi, unsigned *out)
{
    char *e;
    errno = 0;
    unsigned long v = strtoul(arg, &e, 10);
    if (errno || e == arg || *e || arg[0] == '-' || v < lo || v > hi) {
        fprintf(stderr, "%s: --%s '%s': expected a number from %u to %u\n", prog, name, arg, lo, hi);
        return false;
    }
    *out = (unsigned)v;
    return true;
}

/* -1 to go on, else the exit status */
static int parse_options(zp_stage_t *s, int argc, char **argv)
{
    const zp_stage_def_t *d = s->def;
    struct option opts[OPT_NCOMMON + OPT_MAX_EXTRA + 1] = {
        {"runtime-dir", 1, 0, 'r'}, {"arena", 1, 0, 'a'}, {"instance", 1, 0, 'i'}, {"credits", 1, 0, 'c'},
        {"threads", 1, 0, 't'}, {"heartbeat-ms", 1, 0, 'H'}, {"preload", 1, 0, 'P'}, {"no-key-store", 0, 0, 'K'},
        {"help", 0, 0, 'h'}, {"key-budget", 1, 0, 2001}, {"key-store-budget", 1, 0, 2002}};
    unsigned n = OPT_NCOMMON - 1;
    for (const struct option *o = d->opts; o && o->name; o++) {
        if (n == OPT_NCOMMON + OPT_MAX_EXTRA - 1) break;
        opts[n++] = *o;
    }
    memset(&opts[n], 0, sizeof opts[n]);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int ex;
        switch (c) {
        case 'r': s->rundir_opt = optarg; break;
        case 'a': s->arena_opt = optarg; break;
        case 'i':
            if (!num_opt(d->prog, "instance", optarg, 0, UINT32_MAX, &s->instance)) return 2;
            s->have_instance = true;
            break;
        case 'c': if (!num_opt(d->prog, "credits", optarg, 1, ZP_MSG_MAX_CREDITS, &s->credits)) return 2; break;
        case 't': if (!num_opt(d->prog, "threads", optarg, 0, 4096, &s->threads)) return 2; break;
        case 'H': if (!num_opt(d->prog, "heartbeat-ms", optarg, 10, 600000, &s->hb_ms)) return 2; break;
        case 'K': s->no_key_store = true; break;
        case 2001: case 2002:   /* keys: doc/keys.md */
            if (zp_parse_bytes(c == 2001 ? "--key-budget" : "--key-store-budget", optarg,
                               c == 2001 ? &s->key_budget : &s->key_store_budget) < 0) {
                fprintf(stderr, "%s: %s\n", d->prog, zp_err_msg());
                return 2;
            }
            break;
        case 'P':
            if (s->n_preload == ZP_PRELOAD_MAX) {
                fprintf(stderr, "%s: more than %d --preload keys\n", d->prog, ZP_PRELOAD_MAX);
                return 2;
            }
            s->preload[s->n_preload++] = optarg;
            break;
        case 'h': usage(d, stdout); return 0;
        default:
            if (c != '?' && d->opt && (ex = d->opt(s, c, optarg)) != -1) return ex;
            if (c != '?' && d->opt) break;
            usage(d, stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", d->prog, argv[optind]);
        usage(d, stderr);
        return 2;
    }
    if (zp_runtime_dir(s->rundir, sizeof s->rundir, s->rundir_opt, false) < 0 ||
        zp_broker_endpoint(s->endpoint, sizeof s->endpoint, s->rundir) < 0 ||
        zp_shm_default_name(s->arena_name, sizeof s->arena_name, s->arena_opt) < 0) {
        fprintf(stderr, "%s: %s\n", d->prog, zp_err_msg());
        return 1;
    }
    return -1;
}

/* ---------------------------------------------------------------- life cycle */
/* --preload, one key at a time; a stop signal between keys (or one that interrupts a blocked
 * open) ends init cleanly. -1 to go on, else the exit status. */
static int preload(zp_stage_t *s)
{
    for (unsigned i = 0; i < s->n_preload; i++) {
        if (zp_stage_sig_stop) return 0;
        zp_log(ZP_LOG_INFO, "preloading proving key %s (%u of %u)", s->preload[i], i + 1, s->n_preload);
        if (zp_keycache_preload(s->kc, s->preload[i]) < 0) {
            if (zp_stage_sig_stop) return 0;
            fprintf(stderr, "%s: %s\n", s->def->prog, zp_err_msg());
            return 1;
        }
    }
    return zp_stage_sig_stop ? 0 : -1;
}

int zp_stage_run(const zp_stage_def_t *def, int argc, char **argv)
{
    install_signals();
    setproctitle_init(argc, argv, environ);
    zp_log_init(def->log_role);
    static zp_stage_t S;   /* one per process; static so that a hung work thread never outlives it */
    zp_stage_t *s = &S;
    *s = (zp_stage_t){.def = def, .ctx = def->ctx, .arena_opt = "default", .credits = def->credits ? def->credits : 1,
                      .hb_ms = 500, .caps = def->caps};
    int ex = parse_options(s, argc, argv), rc;
    if (ex >= 0) return ex;

    sigset_t old;
    block_signals(&old);   /* threads started from here to the loop inherit the blocked mask */
    s->pool = zp_pool_new(s->threads);
    s->kc = zp_keycache_new();
    if (def->stage) s->stage_pool = zp_pool_new(s->threads);
    if (!s->batch) s->batch = 1;
    if (!s->pool || !s->kc || (def->stage && !s->stage_pool)) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        fprintf(stderr, "%s: out of memory\n", def->prog);
        ex = 1;
        goto out;
    }
    if (!s->no_key_store) zp_keycache_set_store(s->kc, s->arena_name, s->pool);
    zp_keycache_set_budget(s->kc, s->key_budget, s->key_store_budget);
    snprintf(s->name, sizeof s->name, "%s %u thread(s)", def->log_role, zp_pool_size(s->pool));
    ex = def->init ? def->init(s) : -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ex >= 0) goto out;
    if ((ex = preload(s)) >= 0 || zp_stage_sig_stop) {
        if (zp_stage_sig_stop) {
            zp_log(ZP_LOG_INFO, "stop signal during initialisation: stopped before taking work");
            ex = 0;
        }
        goto out_fini;
    }
    if (def->arena_first && zp_stage_arena_wait(s) != 0) {
        zp_log(ZP_LOG_INFO, "stop signal during initialisation: stopped before taking work");
        ex = 0;
        goto out_fini;
    }
    if (def->prepare && (ex = def->prepare(s)) >= 0) goto out_fini;
    rc = zp_stage_loop(s);
    if (rc < 0) fprintf(stderr, "%s: %s %s\n", def->prog, zp_strerror(rc), zp_err_msg());
    ex = rc < 0 ? 1 : rc;
out_fini:
    if (s->arena && def->arena_closing) def->arena_closing(s);
    zp_shm_close(&s->arena);
    zp_keycache_destroy(&s->kc);   /* before fini: entries may hold the backend's registrations */
    if (def->fini) def->fini(s);
out:
    zp_keycache_destroy(&s->kc);
    zp_pool_destroy(&s->pool);
    zp_pool_destroy(&s->stage_pool);
    return ex;
}

void zp_stage_test_hold_at(const char *what, volatile int *revoked)
{
    const char *d = getenv("ZP_TEST_HOLD_DIR");
    char path[512];
    if (!d || !*d) return;
    snprintf(path, sizeof path, "%s/hold-%s", d, what);
    while (access(path, F_OK) == 0 && !(revoked && *revoked)) usleep(10000);
}

void zp_stage_test_hold(unsigned role, volatile int *revoked) { zp_stage_test_hold_at(zp_role_name(role), revoked); }
