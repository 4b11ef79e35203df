/* util.c - errors, logging, clocks, randomness. See util.h. Tests: tests/test_util.c */
#include "util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char err_detail[1024];
int zp_log_level = ZP_LOG_INFO;
static char log_role[32] = "zkpipe";

const char *zp_strerror(int err)
{
    switch (err) {
    case 0: return "success";
#define ZP_ERR_CASE(name, num, msg) case ZP_##name: return msg;
        ZP_ERRNO_MAP(ZP_ERR_CASE)
#undef ZP_ERR_CASE
    default: break;
    }
    if (err < 0 && err > -1000) return strerror(-err);
    return "unknown error";
}

int zp_err_set(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof err_detail, fmt, ap);
    va_end(ap);
    return err;
}

const char *zp_err_msg(void) { return err_detail; }
void zp_err_clear(void) { err_detail[0] = 0; }

bool zp_log_json;                          /* ZP_LOG_FORMAT=json (or zp_log_set_json) */
static _Thread_local uint64_t log_job;
static _Thread_local uint32_t log_part;
static _Thread_local bool log_has_part;

void zp_log_init(const char *role)
{
    if (role) snprintf(log_role, sizeof log_role, "%s", role);
    const char *f = getenv("ZP_LOG_FORMAT");
    zp_log_json = f && !strcasecmp(f, "json");
    const char *e = getenv("ZP_LOG");
    if (!e) return;
    if (!strcasecmp(e, "debug")) zp_log_level = ZP_LOG_DEBUG;
    else if (!strcasecmp(e, "info")) zp_log_level = ZP_LOG_INFO;
    else if (!strcasecmp(e, "warn")) zp_log_level = ZP_LOG_WARN;
    else if (!strcasecmp(e, "error")) zp_log_level = ZP_LOG_ERROR;
}

void zp_log_ctx(uint64_t job, int64_t part)
{
    log_job = job;
    log_has_part = part >= 0;
    log_part = part >= 0 ? (uint32_t)part : 0;
}

void zp_log_ctx_get(uint64_t *job, int64_t *part)
{
    *job = log_job;
    *part = log_has_part ? (int64_t)log_part : -1;
}

/* msg appended to line[n..] as a JSON string body (quotes added by the caller) */
static size_t json_escape(char *line, size_t n, size_t cap, const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p && n + 7 < cap; p++) {
        if (*p == '"' || *p == '\\') { line[n++] = '\\'; line[n++] = (char)*p; }
        else if (*p < 0x20) n += (size_t)snprintf(line + n, cap - n, "\\u%04x", *p);
        else line[n++] = (char)*p;
    }
    return n;
}

size_t zp_log_format(char *line, size_t cap, int level, const char *msg)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    const char *lv = names[level < 0 ? 0 : level > 3 ? 3 : level];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[96], ctx[64] = "";
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    int n;
    if (zp_log_json) {
        if (log_job) snprintf(ctx, sizeof ctx, ",\"job\":%llu", (unsigned long long)log_job);
        if (log_job && log_has_part) snprintf(ctx + strlen(ctx), sizeof ctx - strlen(ctx), ",\"part\":%u", log_part);
        n = snprintf(line, cap, "{\"time\":\"%s\",\"level\":\"%s\",\"role\":\"%s\",\"pid\":%d%s,\"msg\":\"", when, lv,
                     log_role, (int)getpid(), ctx);
        if (n < 0 || (size_t)n >= cap) return 0;
        size_t k = json_escape(line, (size_t)n, cap - 4, msg);
        memcpy(line + k, "\"}\n", 4);
        return k + 3;
    }
    /* "role[pid] level: " as before (scripts grep it); the task's job/part at the end */
    if (log_job) snprintf(ctx, sizeof ctx, " [job=%llu", (unsigned long long)log_job);
    if (log_job && log_has_part) snprintf(ctx + strlen(ctx), sizeof ctx - strlen(ctx), " part=%u", log_part);
    if (log_job) snprintf(ctx + strlen(ctx), sizeof ctx - strlen(ctx), "]");
    n = snprintf(line, cap, "%s %s[%d] %s: %s%s", when, log_role, (int)getpid(), lv, msg, ctx);
    if (n < 0) return 0;
    size_t len = (size_t)n < cap - 1 ? (size_t)n : cap - 2;
    line[len++] = '\n';
    line[len] = 0;
    return len;
}

void zp_log_write(int level, const char *fmt, ...)
{
    char msg[2048], line[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = zp_log_format(line, sizeof line, level, msg);
    (void)!write(STDERR_FILENO, line, len); /* one write per line: no interleaving between processes */
}

uint64_t zp_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct {
    _Atomic bool on;
    _Atomic size_t n;
    zp_trace_mark_t t0, m[ZP_TRACE_MAX];
} g_trace;

void zp_trace_start(void)
{
    atomic_store(&g_trace.on, false);
    atomic_store(&g_trace.n, 0);
    g_trace.t0 = (zp_trace_mark_t){.name = "start", .wall_ns = zp_now_ns(), .cpu_ns = zp_cpu_ns()};
    atomic_store(&g_trace.on, true);
}

void zp_trace_stop(void) { atomic_store(&g_trace.on, false); }

bool zp_trace_on(void) { return atomic_load_explicit(&g_trace.on, memory_order_relaxed); }

void zp_trace_mark(const char *name)
{
    if (!zp_trace_on()) return;
    uint64_t w = zp_now_ns(), c = zp_cpu_ns();
    size_t i = atomic_fetch_add(&g_trace.n, 1);
    if (i < ZP_TRACE_MAX) g_trace.m[i] = (zp_trace_mark_t){.name = name, .wall_ns = w, .cpu_ns = c};
}

size_t zp_trace_get(zp_trace_mark_t *t0, zp_trace_mark_t *marks, size_t cap, size_t *dropped)
{
    size_t n = atomic_load(&g_trace.n), kept = n < ZP_TRACE_MAX ? n : ZP_TRACE_MAX;
    if (t0) *t0 = g_trace.t0;
    if (dropped) *dropped = n - kept;
    size_t k = kept < cap ? kept : cap;
    for (size_t i = 0; i < k; i++) marks[i] = g_trace.m[i];
    return k;
}

uint64_t zp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t zp_poll_step_ns(uint64_t since, uint64_t now, unsigned div, uint64_t lo_ns, uint64_t hi_ns)
{
    uint64_t step = now > since ? (now - since) / (div ? div : 1) : 0;
    return step < lo_ns ? lo_ns : step > hi_ns ? hi_ns : step;
}

uint64_t zp_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

int zp_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t r = getrandom(p, len, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return zp_err_set(-errno, "getrandom: %s", strerror(errno));
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

int zp_proc_stat(uint32_t pid, char *state, uint64_t *start)
{
    char path[40], buf[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f) return errno == ENOENT ? -ENOENT : zp_err_set(-errno, "%s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* "pid (comm) S ppid ...": comm may hold spaces and parentheses, so fields count from the
     * last ')'; the state is field 3, the start time field 22 */
    const char *p = strrchr(buf, ')');
    char st = 0;
    unsigned long long t = 0;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &st,
                     &t) != 2)
        return zp_err_set(ZP_EFORMAT, "%s: no state and start time after the command name", path);
    *state = st;
    *start = t;
    return 0;
}

void zp_sbuf_printf(zp_sbuf_t *s, const char *fmt, ...)
{
    if (s->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? s->cap - s->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { s->oom = true; return; }
        if (s->p && s->n + (size_t)k < s->cap) { s->n += (size_t)k; return; }
        size_t nc = (s->cap ? s->cap * 2 : 4096) + (size_t)k;
        char *np = realloc(s->p, nc);
        if (!np) { s->oom = true; return; }
        s->p = np;
        s->cap = nc;
    }
}

char *zp_sbuf_take(zp_sbuf_t *s)
{
    char *p = s->p;
    bool oom = s->oom;
    *s = (zp_sbuf_t){0};
    if (oom) { free(p); return NULL; }
    return p ? p : strdup("");
}

int zp_user_cache_dir(char *dir, size_t cap, const char *env, const char *sub)
{
    const char *e = getenv(env);
    int n;
    if (e && *e) n = snprintf(dir, cap, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e == '/') n = snprintf(dir, cap, "%s/zkpipe/%s", e, sub);
    else if ((e = getenv("HOME")) && *e == '/') n = snprintf(dir, cap, "%s/.cache/zkpipe/%s", e, sub);
    else n = snprintf(dir, cap, "/tmp/zkpipe-%s-%u", sub, (unsigned)geteuid());
    if (n < 0 || (size_t)n >= cap) return zp_err_set(ZP_ETOOBIG, "%s dir: path too long", sub);
    return 0;
}

int zp_private_dir_ready(const char *dir, const char *what)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) return zp_err_set(ZP_ETOOBIG, "%s: path too long", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0700) < 0 && errno != EEXIST) return zp_err_set(-errno, "%s: mkdir: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0700) < 0 && errno != EEXIST) return zp_err_set(-errno, "%s: mkdir: %s", tmp, strerror(errno));
    struct stat st;
    if (stat(dir, &st) < 0) return zp_err_set(-errno, "%s: stat: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return zp_err_set(ZP_EFORMAT, "%s: %s is not a directory", dir, what);
    if (st.st_uid != geteuid() || (st.st_mode & 022))
        return zp_err_set(ZP_ESTATE, "%s: %s must be owned by uid %u and not writable by others (mode %o, owner %u)", dir,
                          what, (unsigned)geteuid(), (unsigned)(st.st_mode & 0777), (unsigned)st.st_uid);
    return 0;
}

void zp_advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + len) & ~(huge - 1);
    if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);   /* a hint: failure is harmless */
#else
    (void)p;
    (void)len;
#endif
}

void *zp_alloc_big(size_t len)
{
    const size_t huge = (size_t)2 << 20;
    if (len == 0) len = 64;
    if (len > SIZE_MAX - huge) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = NULL;
    size_t align = len >= huge ? huge : 64;
    int e = posix_memalign(&p, align, (len + 63) & ~(size_t)63);
    if (e) {
        errno = e;
        return NULL;
    }
    if (align == huge) zp_advise_huge(p, len);
    return p;
}
