/* inline.c - witnesses sent inline (SUBMIT key 6, the HTTP API's wtns_base64), and inputs sent
 * inline (SUBMIT key 6 with key 7 wasm, the HTTP API's "inputs"): the broker writes each to
 * <state dir>/inline/ and queues the job with that path, so the synthesizer reads it like any
 * witness (or input.json) and the journal keeps a path that survives a broker restart.
 * An inline input is checked first (brk_input_check, jsoncheck.c): at most ZP_MSG_INPUT_MAX
 * bytes, one JSON object, well-formed, nested at most 64 deep; its signals are the synthesizer's.
 *
 * Files: <arena>-<h1><h2>-<i>.wtns, h1/h2 two 64-bit FNV-1a variants of the request id, so a
 * repeated SUBMIT (same request id) rewrites the same names. Written to a temporary name with
 * mode 0600 and renamed (a reader never sees half a file). A file is removed by the sweep
 * (brk_inline_sweep, every 2 s from the loop) once no RUNNING job refers to it; the sweep also
 * removes files left by a broker that died. Only the broker's thread calls these.
 * Tests: tests/client/lib.sh (ipc), tests/client/http.sh (wtns_base64). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

#define SWEEP_NS (2ull * 1000000000ull)

static int inline_dir(const brk_t *b, char *buf, size_t n)
{
    const char *slash = strrchr(b->jr_path, '/');
    if (!slash) return zp_err_set(-EINVAL, "journal path %s has no directory", b->jr_path);
    int k = snprintf(buf, n, "%.*s/inline", (int)(slash - b->jr_path), b->jr_path);
    if (k < 0 || (size_t)k >= n - 64) return zp_err_set(-ENAMETOOLONG, "inline witness directory path too long");
    return 0;
}

static uint64_t fnv(const char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)p[i]; h *= 0x100000001b3ull; }
    return h;
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return zp_err_set(-errno, "inline witness: open %s: %s", tmp, strerror(errno));
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            unlink(tmp);
            return zp_err_set(-e, "inline witness: write %s: %s", tmp, strerror(e));
        }
        off += (size_t)w;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return zp_err_set(-e, "inline witness: %s: %s", path, strerror(e));
    }
    return 0;
}

int brk_inline_store(brk_t *b, zp_msg_submit_t *m, char **block)
{
    *block = NULL;
    size_t n_inline = 0;
    for (size_t i = 0; i < m->n_wtns; i++) n_inline += m->wtns_data_len[i] > 0;
    if (!n_inline) return 0;
    const bool input = m->wasm.len > 0;
    for (size_t i = 0; input && i < m->n_wtns; i++) {
        char why[160];
        int rc;
        if (m->wtns_data_len[i] && (rc = brk_input_check(m->wtns_data[i], m->wtns_data_len[i], why, sizeof why)) < 0)
            return zp_err_set(rc, "input %zu: not a valid input.json: %s", i, why);
    }
    char dir[1024];
    int rc = inline_dir(b, dir, sizeof dir);
    if (rc < 0) return rc;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) return zp_err_set(-errno, "mkdir %s: %s", dir, strerror(errno));
    const size_t each = strlen(dir) + 96;
    char *paths = calloc(n_inline, each);
    if (!paths) return -ENOMEM;
    uint64_t h1 = fnv(m->request_id.p, m->request_id.len, 0xcbf29ce484222325ull);
    uint64_t h2 = fnv(m->request_id.p, m->request_id.len, 0x84222325cbf29ce4ull);
    size_t k = 0;
    for (size_t i = 0; i < m->n_wtns; i++) {
        if (!m->wtns_data_len[i]) continue;
        char *p = paths + k++ * each;
        snprintf(p, each, "%s/%s-%016llx%016llx-%zu.%s", dir, b->arena_name + 1, (unsigned long long)h1,
                 (unsigned long long)h2, i, input ? "json" : "wtns");
        if ((rc = write_file(p, m->wtns_data[i], m->wtns_data_len[i])) < 0) { free(paths); return rc; }
        m->wtns[i] = zp_str(p);
    }
    *block = paths;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void brk_inline_sweep(brk_t *b)
{
    static uint64_t next;
    uint64_t now = zp_now_ns();
    if (now < next) return;
    next = now + SWEEP_NS;
    char dir[1024];
    if (inline_dir(b, dir, sizeof dir) < 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    /* the paths still needed: witnesses of RUNNING jobs under dir */
    size_t dl = strlen(dir), n = 0, cap = 0;
    char **live = NULL;
    for (brk_job_t *j = b->live; j; j = j->next) {   /* running jobs (jobs.c) */
        if (j->state != ZP_JOB_RUNNING) continue;
        for (uint32_t p = 0; p < j->n_parts; p++) {
            const char *w = j->parts[p].wtns;
            if (!w || strncmp(w, dir, dl) || w[dl] != '/') continue;
            if (n == cap) {
                char **nl = realloc(live, (cap = cap ? cap * 2 : 64) * sizeof *live);
                if (!nl) { free(live); closedir(d); return; }   /* try again next sweep */
                live = nl;
            }
            live[n++] = (char *)w + dl + 1;
        }
    }
    qsort(live, n, sizeof *live, cmp_str);
    size_t al = strlen(b->arena_name + 1);
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        if (strncmp(name, b->arena_name + 1, al) || name[al] != '-') continue;   /* another arena's */
        if (n && bsearch(&name, live, n, sizeof *live, cmp_str)) continue;
        if (unlinkat(dirfd(d), name, 0) == 0) zp_log(ZP_LOG_DEBUG, "inline witness %s/%s removed", dir, name);
    }
    closedir(d);
    free(live);
}
