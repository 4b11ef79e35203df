/* run.c - a witness computed by a registered module, in a forked child process.
 * Why a child: the module is compiled from a wasm someone uploaded. wasm2c keeps its memory
 * accesses inside its linear memory (guard pages), but it can still loop forever, ask for
 * memory, overflow its stack or trap; and wasm-rt installs a process-wide SIGSEGV handler. So
 * the parent dlopens the module (no module code runs at load) and the child runs it: the child
 * reduces the inputs mod the module's prime, drives the glue, and writes the witness straight
 * into the caller's MAP_SHARED buffer (a shared-memory slot); the verdict and circom's messages
 * come back in a shared page. The parent waits on a pidfd up to the deadline, then SIGKILLs.
 * Linear memory is capped by lowering the memory's max_pages (memory.grow past it fails and
 * circom reports "Not enough memory"); RLIMIT_CPU backs the deadline; no core dumps.
 * fork() of a threaded process: the child only computes, allocates with malloc (glibc resets
 * its locks at fork) and leaves with _exit.
 * Tests: tests/test_witness.c, tests/oracle/test_witness.sh */
#include "lib/witness/witness_int.h"
#include "lib/util/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct zp_wc {
    void *dl;
    const zp_wc_glue_t *glue;
    char *path;
    char (*cand)[128];                /* main's top-level signal names from circuit.sym */
    uint64_t *cand_hash;
    size_t ncand;
};

char *zp_wc_find_sym(const char *wasm_path)
{
    size_t n = strlen(wasm_path);
    if (n < 5 || strcmp(wasm_path + n - 5, ".wasm")) return NULL;
    char *p = malloc(n + 16);
    if (!p) return NULL;
    /* circom -o D: D/NAME_js/NAME.wasm and D/NAME.sym */
    const char *slash = strrchr(wasm_path, '/');
    const char *base = slash ? slash + 1 : wasm_path;
    size_t dirlen = slash ? (size_t)(slash - wasm_path) : 0;
    size_t blen = strlen(base) - 5;
    if (dirlen >= blen + 3 && !strncmp(wasm_path + dirlen - 3, "_js", 3)) {
        const char *pslash = NULL;
        for (const char *q = wasm_path; q < wasm_path + dirlen - 3; q++) if (*q == '/') pslash = q;
        size_t pre = pslash ? (size_t)(pslash - wasm_path) + 1 : 0;
        snprintf(p, n + 16, "%.*s%.*s.sym", (int)pre, wasm_path, (int)blen, base);
        if (access(p, R_OK) == 0) return p;
    }
    snprintf(p, n + 16, "%.*s.sym", (int)(n - 5), wasm_path);
    if (access(p, R_OK) == 0) return p;
    free(p);
    return NULL;
}

int zp_wc_set_sym(zp_wc_t *wc, const char *sym_path)
{
    FILE *f = fopen(sym_path, "re");
    if (!f) return zp_err_set(-errno, "%s: open: %s", sym_path, strerror(errno));
    char line[512];
    while (fgets(line, sizeof line, f) && wc->ncand < 256) {
        char *m = strstr(line, ",main.");
        if (!m) continue;
        m += 6;
        size_t l = strcspn(m, ".[\r\n");
        if (m[l] == '.' || l == 0 || l >= 128) continue;      /* a component's signal */
        bool dup = false;
        for (size_t k = 0; k < wc->ncand && !dup; k++) dup = strlen(wc->cand[k]) == l && !memcmp(wc->cand[k], m, l);
        if (dup) continue;
        void *a = realloc(wc->cand, (wc->ncand + 1) * sizeof *wc->cand);
        void *b = a ? realloc(wc->cand_hash, (wc->ncand + 1) * sizeof *wc->cand_hash) : NULL;
        if (a) wc->cand = a;
        if (!a || !b) break;
        wc->cand_hash = b;
        memcpy(wc->cand[wc->ncand], m, l);
        wc->cand[wc->ncand][l] = 0;
        wc->cand_hash[wc->ncand++] = zp_wc_fnv1a64(m, l);
    }
    fclose(f);
    return 0;
}

int zp_wc_open(zp_wc_t **out, const char *so_path)
{
    *out = NULL;
    struct stat st;
    if (stat(so_path, &st) < 0) return zp_err_set(-errno, "%s: stat: %s", so_path, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return zp_err_set(ZP_ESTATE, "%s: a witness module must be a regular file owned by uid %u, not writable by others",
                          so_path, (unsigned)geteuid());
    zp_wc_t *wc = calloc(1, sizeof *wc);
    if (!wc || !(wc->path = strdup(so_path))) {
        free(wc);
        return zp_err_set(-ENOMEM, "out of memory");
    }
    wc->dl = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (!wc->dl) {
        int rc = zp_err_set(ZP_EFORMAT, "%s: dlopen: %s", so_path, dlerror());
        zp_wc_close(&wc);
        return rc;
    }
    wc->glue = dlsym(wc->dl, ZP_WC_GLUE_SYMBOL);
    if (!wc->glue || wc->glue->abi != ZP_WC_ABI || wc->glue->host_size != sizeof(zp_wc_host_t)) {
        int rc = zp_err_set(ZP_EVERSION, "%s: not a witness module of this zkpipe build (register the wasm again)", so_path);
        zp_wc_close(&wc);
        return rc;
    }
    *out = wc;
    return 0;
}

void zp_wc_close(zp_wc_t **wcp)
{
    if (!wcp || !*wcp) return;
    zp_wc_t *wc = *wcp;
    if (wc->dl) dlclose(wc->dl);
    free(wc->cand);
    free(wc->cand_hash);
    free(wc->path);
    free(wc);
    *wcp = NULL;
}

void *zp_wc_shared_alloc(size_t cap)
{
    void *p = mmap(NULL, cap ? cap : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void zp_wc_shared_free(void *p, size_t cap)
{
    if (p) munmap(p, cap ? cap : 1);
}

/* the child: never returns */
static void child(zp_wc_host_t *h, zp_wc_t *wc, const zp_wc_input_t *inp, const zp_wc_limits_t *lim, int *in_rc)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);   /* the parent's blocked set must not hide SIGSEGV */
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    uint32_t tmo = lim && lim->timeout_ms ? lim->timeout_ms : 600000u;
    struct rlimit cpu = {tmo / 1000 + 2, tmo / 1000 + 3};
    setrlimit(RLIMIT_CPU, &cpu);
    if (wc->glue->meta(h)) _exit(1);
    size_t nv = inp->nval;
    uint32_t *vals = malloc((nv ? nv : 1) * h->n32 * 4);
    uint32_t *sh = malloc((inp->nsig ? inp->nsig : 1) * 8), *sc = malloc((inp->nsig ? inp->nsig : 1) * 4);
    if (!vals || !sh || !sc) {
        *in_rc = -ENOMEM;
        snprintf(h->err, sizeof h->err, "out of memory for %zu input values", nv);
        _exit(2);
    }
    for (size_t i = 0; i < nv; i++) {
        int rc = zp_wc_input_value(vals + i * h->n32, inp, i, h->prime, h->n32);
        if (rc) {
            *in_rc = rc;
            snprintf(h->err, sizeof h->err, "%s", zp_err_msg());
            _exit(2);
        }
    }
    for (size_t s = 0; s < inp->nsig; s++) {
        sh[2 * s] = (uint32_t)(inp->sig[s].hash >> 32);
        sh[2 * s + 1] = (uint32_t)inp->sig[s].hash;
        sc[s] = (uint32_t)inp->sig[s].count;
    }
    h->nsig = (uint32_t)inp->nsig;
    h->sig_hash = sh;
    h->sig_count = sc;
    h->vals = vals;
    if (!wc->glue->run(h)) _exit(0);
    if (h->fail == WC_NOT_ALL && wc->ncand) {   /* which of circuit.sym's main signals are missing inputs */
        for (size_t k = 0; k < wc->ncand && h->probe_n < 256; k++) {
            bool given = false;
            for (size_t s = 0; s < inp->nsig && !given; s++) given = inp->sig[s].hash == wc->cand_hash[k];
            if (given) continue;
            h->probe_hash[2 * h->probe_n] = (uint32_t)(wc->cand_hash[k] >> 32);
            h->probe_hash[2 * h->probe_n + 1] = (uint32_t)wc->cand_hash[k];
            h->probe_size[h->probe_n] = -1;
            h->probe_n++;
        }
        wc->glue->probe(h);
    }
    _exit(1);
}

static const char *exc_text(int32_t code)
{
    switch (code) {   /* circom_runtime's exceptionHandler */
    case 1: return "Signal not found";
    case 2: return "Too many signals set";
    case 3: return "Signal already set";
    case 4: return "Assert Failed";
    case 5: return "Not enough memory";
    case 6: return "Input signal array access exceeds the size";
    default: return "Unknown error";
    }
}

static int verdict(const zp_wc_host_t *h, const zp_wc_input_t *inp, const zp_wc_t *wc, const zp_wc_limits_t *lim)
{
    const char *mod = wc->path;
    const char *in = inp->name;
    const zp_wc_sig_t *s = h->bad_sig < inp->nsig ? &inp->sig[h->bad_sig] : NULL;
    int sl = s ? (int)s->nlen : 0;
    const char *sn = s ? s->name : "";
    /* circom's printErrorMessage lines, without the trailing newline */
    int el = (int)h->err_len;
    while (el > 0 && h->err[el - 1] == '\n') el--;
    switch (h->fail) {
    case WC_NOT_FOUND: return zp_err_set(ZP_EUNSAT, "%s: signal \"%.*s\" is not an input of the circuit", in, sl, sn);
    case WC_NOT_ENOUGH:
        return zp_err_set(ZP_EUNSAT, "%s: signal \"%.*s\" has %zu values, the circuit takes %u", in, sl, sn, s ? s->count : 0, h->bad_size);
    case WC_TOO_MANY:
        return zp_err_set(ZP_EUNSAT, "%s: signal \"%.*s\" has %zu values, the circuit takes %u", in, sl, sn, s ? s->count : 0, h->bad_size);
    case WC_NOT_ALL: {
        char names[600] = "";
        size_t nl = 0, k2 = 0;
        for (size_t k = 0, j = 0; k < wc->ncand && j < h->probe_n; k++) {
            bool given = false;
            for (size_t s2 = 0; s2 < inp->nsig && !given; s2++) given = inp->sig[s2].hash == wc->cand_hash[k];
            if (given) continue;
            if (h->probe_size[j++] > 0 && nl + strlen(wc->cand[k]) + 8 < sizeof names) {
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s\"%s\"", k2++ ? ", " : "", wc->cand[k]);
            }
        }
        if (k2)
            return zp_err_set(ZP_EUNSAT, "%s: input signal%s %s missing (%u of the circuit's %u input values given)", in,
                              k2 > 1 ? "s" : "", names, h->done_in, h->input_size);
    }
        return zp_err_set(ZP_EUNSAT, "%s: not all inputs are given: %u of the circuit's %u input values (a signal is missing)", in,
                          h->done_in, h->input_size);
    case WC_MEM: {
        uint64_t cap = lim && lim->mem_bytes ? lim->mem_bytes : (4ull << 30);
        return zp_err_set(ZP_ETOOBIG, "%s: the module asks for %u wasm pages (%llu MiB) at start, over the %llu MiB limit", mod,
                          h->pages, (unsigned long long)h->pages / 16, (unsigned long long)(cap >> 20));
    }
    case WC_OUT: return zp_err_set(ZP_ETOOBIG, "%s: %u witness values of %u bytes do not fit the output (%llu bytes)", mod,
                                   h->witness_size, h->n32 * 4, (unsigned long long)h->out_cap);
    case WC_VERSION:
        return zp_err_set(ZP_EVERSION, "%s: not a circom 2 witness generator (version %u, %u-word field)", mod, h->version, h->n32);
    case WC_EXC:
        if (h->exc_code == 5)
            return zp_err_set(ZP_ETOOBIG, "%s: circom: Not enough memory (wasm memory capped at %u pages)%s%.*s", in, h->max_pages,
                              el ? ": " : "", el, h->err);
        return zp_err_set(ZP_EUNSAT, "%s: circom: %s%s%.*s", in, exc_text(h->exc_code), el ? ": " : "", el, h->err);
    case WC_TRAP: return zp_err_set(ZP_EUNSAT, "%s: the witness generator trapped (wasm trap %u)%s%.*s", mod, h->trap,
                                    el ? ": " : "", el, h->err);
    default: return zp_err_set(ZP_EFORMAT, "%s: the witness generator failed", mod);
    }
}

int zp_wc_calculate(zp_wc_result_t *res, void *out, size_t cap, zp_wc_t *wc, const zp_wc_input_t *inp,
                    const zp_wc_limits_t *lim, int log_fd)
{
    memset(res, 0, sizeof *res);
    uint64_t t0 = zp_now_ns();
    size_t shsz = (sizeof(zp_wc_host_t) + sizeof(int) + 4095) & ~(size_t)4095;
    zp_wc_host_t *h = zp_wc_shared_alloc(shsz);
    if (!h) return zp_err_set(-errno, "mmap of the calculator's result page: %s", strerror(errno));
    int *in_rc = (int *)(h + 1);
    memset(h, 0, sizeof *h);
    h->abi = ZP_WC_ABI;
    h->size = sizeof *h;
    uint64_t mem = lim && lim->mem_bytes ? lim->mem_bytes : (4ull << 30);
    h->max_pages = mem >= (4ull << 30) ? 65536u : (uint32_t)(mem >> 16);
    h->out = out;
    h->out_cap = cap;
    h->log_fd = log_fd;
    uint32_t tmo = lim && lim->timeout_ms ? lim->timeout_ms : 600000u;
    int rc = 0;
    pid_t pid = fork();
    if (pid < 0) {
        rc = zp_err_set(-errno, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) child(h, wc, inp, lim, in_rc);
    int st = 0;
    rc = zp_wc_wait_child(&st, pid, tmo, false);
    res->ms = (double)(zp_now_ns() - t0) / 1e6;
    if (rc == ZP_ETIMEDOUT) {
        rc = zp_err_set(ZP_ETIMEDOUT, "%s: witness not done in %u ms: the generator was killed", inp->name, tmo);
        goto out;
    }
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        rc = zp_err_set(sig == SIGXCPU ? ZP_ETIMEDOUT : ZP_EFORMAT, "%s: the witness generator died of signal %d (%s)", wc->path, sig,
                        strsignal(sig));
        goto out;
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (code == 2) {
        rc = zp_err_set(*in_rc ? *in_rc : ZP_EFORMAT, "%s", h->err);
        goto out;
    }
    if (code != 0) {
        rc = verdict(h, inp, wc, lim);
        goto out;
    }
    res->version = h->version;
    res->n8 = h->n32 * 4;
    res->n_witness = h->witness_size;
    memcpy(res->prime, h->prime, res->n8);
out:
    zp_wc_shared_free(h, shsz);
    return rc;
}

size_t zp_wc_wtns_header(uint8_t out[ZP_WC_WTNS_HDR_MAX], const zp_wc_result_t *res)
{
    size_t n = 0;
    uint64_t s1 = 8 + (uint64_t)res->n8, s2 = (uint64_t)res->n8 * res->n_witness;
#define PUT(v, k) do { uint64_t _v = (v); for (int _i = 0; _i < (k); _i++) out[n++] = (uint8_t)(_v >> (8 * _i)); } while (0)
    memcpy(out, "wtns", 4);
    n = 4;
    PUT(2, 4);          /* version */
    PUT(2, 4);          /* sections */
    PUT(1, 4);
    PUT(s1, 8);
    PUT(res->n8, 4);
    memcpy(out + n, res->prime, res->n8);
    n += res->n8;
    PUT(res->n_witness, 4);
    PUT(2, 4);
    PUT(s2, 8);
#undef PUT
    return n;
}

int zp_wc_write_wtns(const char *path, const zp_wc_result_t *res, const void *values)
{
    uint8_t hdr[ZP_WC_WTNS_HDR_MAX];
    size_t n = zp_wc_wtns_header(hdr, res);
    uint64_t s2 = (uint64_t)res->n8 * res->n_witness;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return zp_err_set(-errno, "%s: open: %s", tmp, strerror(errno));
    const uint8_t *parts[2] = {hdr, values};
    uint64_t lens[2] = {n, s2};
    for (int k = 0; k < 2; k++) {
        uint64_t off = 0;
        while (off < lens[k]) {
            ssize_t w = write(fd, parts[k] + off, lens[k] - off > (1u << 30) ? (1u << 30) : lens[k] - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                int e = errno;
                close(fd);
                unlink(tmp);
                return zp_err_set(-e, "%s: write: %s", path, strerror(e));
            }
            off += (uint64_t)w;
        }
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return zp_err_set(-e, "%s: %s", path, strerror(e));
    }
    return 0;
}
