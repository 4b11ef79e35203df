/* up.c - `zkpipe up`: run a whole local process group in the foreground.
 *
 * NOTES
 * Starts zkpipe-broker, then N synth, M gpu-worker, K finalizer daemons (fork + exec of the
 * sibling binaries: next to this zkpipe binary, in the build tree's module folders, or in
 * $ZP_LIBEXEC_DIR), restarts a child that dies (backoff 0.2 s doubling to 5 s, reset after
 * 30 s of good running), and on SIGINT/SIGTERM stops the workers, then the broker (SIGTERM,
 * SIGKILL after 10 s). Signal handlers only set flags; the loop reaps with waitpid.
 * Config: --config FILE with `key = value` lines (# comments); keys are the long options
 * below without the dashes; command-line options win. Defaults work on a laptop.
 * Tests: tests/ipc/. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/util/util.h"
#include "proto/peer.h"

static volatile sig_atomic_t g_stop, g_chld;
static void on_stop(int s) { (void)s; g_stop = 1; }
static void on_chld(int s) { (void)s; g_chld = 1; }

enum { K_RUNDIR, K_ARENA, K_SYNTH, K_GPU, K_FINAL, K_SLOTS, K_MAXDOM, K_MAXVARS, K_THREADS, K_HB, K_LIVE, K_ATTEMPTS,
       K_BACKEND, K_DEVICES, K_GPU_CREDITS, K_SYNTH_CREDITS, K_FINAL_THREADS, K_SYNTH_THREADS, K_NKEYS };
static const char *keys[K_NKEYS] = {"runtime-dir", "arena", "synth", "gpu", "final", "slots", "max-domain",
                                    "max-vars", "threads", "heartbeat-ms", "liveness", "max-attempts", "backend",
                                    "devices", "gpu-credits", "synth-credits", "final-threads", "synth-threads"};

typedef struct {
    const char *bin;
    char *argv[32];
    int argc;
    pid_t pid;
    uint64_t started, backoff_ms, restart_at;
    unsigned restarts;
    char label[48];
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
    if (!v || c->argc >= 30) return;
    c->argv[c->argc++] = dupv(opt);
    c->argv[c->argc++] = dupv(v);
}

static int spawn(child_t *c)
{
    pid_t pid = fork();
    if (pid < 0) { fprintf(stderr, "zkpipe up: fork: %s\n", strerror(errno)); return -1; }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        execv(c->bin, c->argv);
        fprintf(stderr, "zkpipe up: exec %s: %s\n", c->bin, strerror(errno));
        _exit(127);
    }
    c->pid = pid;
    c->started = zp_now_ns();
    zp_log(ZP_LOG_INFO, "started %s: pid %d", c->label, (int)pid);
    return 0;
}

static bool file_exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

int zp_cmd_up(int argc, char **argv)
{
    char *val[K_NKEYS] = {0};
    const char *config = NULL;
    static struct option opts[K_NKEYS + 3];
    for (int i = 0; i < K_NKEYS; i++) opts[i] = (struct option){keys[i], 1, 0, 1000 + i};
    opts[K_NKEYS] = (struct option){"config", 1, 0, 'c'};
    opts[K_NKEYS + 1] = (struct option){"help", 0, 0, 'h'};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c >= 1000 && c < 1000 + K_NKEYS) { free(val[c - 1000]); val[c - 1000] = strdup(optarg); }
        else if (c == 'c') config = optarg;
        else {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: zkpipe up [--config FILE] [--runtime-dir DIR] [--arena NAME] [--synth N] [--gpu N]\n"
                    "                 [--final N] [--slots N] [--max-domain N] [--max-vars N] [--threads N]\n"
                    "                 [--heartbeat-ms MS] [--liveness N] [--max-attempts K] [--backend auto|cuda|cpu]\n"
                    "                 [--devices 0,1,...] [--gpu-credits N] [--synth-credits N]\n"
                    "                 [--synth-threads N] [--final-threads N]\n"
                    "Config file: `key = value` lines with the same keys. Ctrl-C stops the group.\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (optind != argc) { fprintf(stderr, "zkpipe up: unexpected argument '%s'\n", argv[optind]); return 2; }
    if (config && load_config(config, val) < 0) return 2;
    int nsynth = val[K_SYNTH] ? atoi(val[K_SYNTH]) : 1, ngpu = val[K_GPU] ? atoi(val[K_GPU]) : 1,
        nfinal = val[K_FINAL] ? atoi(val[K_FINAL]) : 1;
    if (nsynth < 1 || ngpu < 1 || nfinal < 1 || nsynth + ngpu + nfinal > 60) {
        fprintf(stderr, "zkpipe up: need at least one synth, gpu and final worker (at most 60 in all)\n");
        return 2;
    }
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

    int n = 1 + nsynth + ngpu + nfinal;
    child_t *ch = calloc((size_t)n, sizeof *ch);
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
    snprintf(ch[0].label, sizeof ch[0].label, "broker");
    const char *devs = val[K_DEVICES] ? val[K_DEVICES] : "0";
    for (int i = 1; i < n; i++) {
        child_t *x = &ch[i];
        int role = i <= nsynth ? 0 : i <= nsynth + ngpu ? 1 : 2;
        int inst = role == 0 ? i - 1 : role == 1 ? i - 1 - nsynth : i - 1 - nsynth - ngpu;
        char num[16];
        x->bin = bins[1 + role];
        x->argv[x->argc++] = dupv(x->bin);
        add(x, "--runtime-dir", rundir);
        add(x, "--arena", val[K_ARENA]);
        snprintf(num, sizeof num, "%d", inst);
        add(x, "--instance", num);
        add(x, "--heartbeat-ms", val[K_HB]);
        if (role == 0) {
            add(x, "--credits", val[K_SYNTH_CREDITS]);
            add(x, "--threads", val[K_SYNTH_THREADS] ? val[K_SYNTH_THREADS] : val[K_THREADS]);
        } else if (role == 1) {
            /* device: the inst-th entry of the comma-separated list (cycled) */
            int nd = 1;
            for (const char *p = devs; *p; p++) nd += *p == ',';
            const char *p = devs;
            for (int k = inst % nd; k > 0; k--) p = strchr(p, ',') + 1;
            snprintf(num, sizeof num, "%d", atoi(p));
            add(x, "--device", num);
            add(x, "--credits", val[K_GPU_CREDITS]);
            add(x, "--backend", val[K_BACKEND]);
            add(x, "--threads", val[K_THREADS]);
        } else {
            add(x, "--threads", val[K_FINAL_THREADS] ? val[K_FINAL_THREADS] : val[K_THREADS]);
        }
        snprintf(x->label, sizeof x->label, "%s #%d", zp_role_name((unsigned)role), inst);
    }
    for (int i = 0; i < n; i++) ch[i].argv[ch[i].argc] = NULL;

    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction sc = {.sa_handler = on_chld, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGCHLD, &sc, NULL);

    char sock[600];
    snprintf(sock, sizeof sock, "%s/broker.sock", rundir);
    if (spawn(&ch[0]) < 0) return 1;
    /* wait for the broker's socket (or its early death: e.g. another broker holds the pidfile) */
    for (int t = 0; t < 200 && !file_exists(sock); t++) {
        int st;
        if (waitpid(ch[0].pid, &st, WNOHANG) == ch[0].pid) {
            fprintf(stderr, "zkpipe up: the broker exited at start (status %d); see its message above\n",
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            return 1;
        }
        usleep(25000);
    }
    for (int i = 1; i < n; i++) spawn(&ch[i]);
    printf("zkpipe up: broker at ipc://%s (%d synth, %d gpu, %d final); Ctrl-C to stop\n", sock, nsynth, ngpu, nfinal);
    fflush(stdout);

    while (!g_stop) {
        usleep(50000);
        int st;
        pid_t pid;
        g_chld = 0;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++) {
                if (ch[i].pid != pid) continue;
                uint64_t ran = zp_now_ns() - ch[i].started;
                ch[i].pid = 0;
                if (g_stop) break;
                if (ran > 30000000000ull) ch[i].backoff_ms = 0;
                ch[i].backoff_ms = ch[i].backoff_ms ? ch[i].backoff_ms * 2 : 200;
                if (ch[i].backoff_ms > 5000) ch[i].backoff_ms = 5000;
                ch[i].restart_at = zp_now_ns() + ch[i].backoff_ms * 1000000u;
                zp_log(ZP_LOG_WARN, "%s (pid %d) %s %d after %.1f s; restarting in %llu ms", ch[i].label, (int)pid,
                       WIFSIGNALED(st) ? "killed by signal" : "exited with status",
                       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), ran / 1e9,
                       (unsigned long long)ch[i].backoff_ms);
            }
        }
        uint64_t now = zp_now_ns();
        for (int i = 0; i < n && !g_stop; i++)
            if (!ch[i].pid && now >= ch[i].restart_at) {
                ch[i].restarts++;
                spawn(&ch[i]);
            }
    }
    zp_log(ZP_LOG_INFO, "stopping the group");
    /* workers first (they finish or hand back), then the broker */
    for (int phase = 1; phase >= 0; phase--) {
        int lo = phase ? 1 : 0, hi = phase ? n : 1;
        for (int i = lo; i < hi; i++) if (ch[i].pid > 0) kill(ch[i].pid, SIGTERM);
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
                    if (ch[i].pid > 0) { zp_log(ZP_LOG_WARN, "%s did not stop: SIGKILL", ch[i].label); kill(ch[i].pid, SIGKILL); waitpid(ch[i].pid, NULL, 0); ch[i].pid = 0; }
                break;
            }
            usleep(20000);
        }
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ch[i].argc; k++) free(ch[i].argv[k]);
    free(ch);
    for (int i = 0; i < K_NKEYS; i++) free(val[i]);
    zp_log(ZP_LOG_INFO, "stopped");
    return 0;
}
