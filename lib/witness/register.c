/* register.c - a circuit's circom .wasm translated to a native module, once, cached by content.
 * Key: SHA-256 of the wasm bytes and of a tag naming the generator (ZP_WC_ABI, wasm2c, flags).
 * Miss: in a private temporary folder of the cache dir, `wasm2c -n zpwc` writes wc.c / wc.h;
 * the header's imports and exports are checked against circom's (a module that imports
 * anything else or lacks an export is refused before any compiler runs); glue.c and wc_abi.h
 * are written beside them; `cc -O2 -fPIC -shared -fvisibility=hidden` builds <sha>.so, which is
 * renamed into place (atomic: a concurrent registration of the same wasm just wins or loses the
 * rename). wasm2c and cc run as children in their own process group, killed at the deadline.
 * The cache dir must be ours and not writable by others (a module there is code we run).
 * Tests: tests/test_witness.c (hostile modules), tests/oracle/test_witness.sh */
#include "lib/witness/witness_int.h"
#include "lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GEN_TAG "zkpipe-wc abi=7a770002 wasm2c -n zpwc; cc -O2 -fPIC -shared -fvisibility=hidden"
#define WASM_MAX_FILE (1ull << 30)

int zp_wc_default_cache(char *dir, size_t cap) { return zp_user_cache_dir(dir, cap, "ZKPIPE_WASM_CACHE", "wasm"); }

static int read_file(uint8_t **buf, size_t *len, const char *path, uint64_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return zp_err_set(-errno, "%s: open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0) { rc = zp_err_set(-errno, "%s: fstat: %s", path, strerror(errno)); goto out; }
    if (!S_ISREG(st.st_mode)) { rc = zp_err_set(ZP_EFORMAT, "%s: not a regular file", path); goto out; }
    if ((uint64_t)st.st_size > max) { rc = zp_err_set(ZP_ETOOBIG, "%s: %lld bytes, over the limit", path, (long long)st.st_size); goto out; }
    *len = (size_t)st.st_size;
    *buf = malloc(*len + 1);
    if (!*buf) { rc = zp_err_set(-ENOMEM, "%s: out of memory", path); goto out; }
    size_t got = 0;
    while (got < *len) {
        ssize_t k = read(fd, *buf + got, *len - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            rc = k < 0 ? zp_err_set(-errno, "%s: read: %s", path, strerror(errno)) : zp_err_set(ZP_EFORMAT, "%s: shrank while read", path);
            free(*buf);
            *buf = NULL;
            goto out;
        }
        got += (size_t)k;
    }
    (*buf)[*len] = 0;
out:
    close(fd);
    return rc;
}

static int write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return zp_err_set(-errno, "%s: open: %s", path, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t k = write(fd, text + off, len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            close(fd);
            return zp_err_set(-e, "%s: write: %s", path, strerror(e));
        }
        off += (size_t)k;
    }
    if (close(fd) < 0) return zp_err_set(-errno, "%s: close: %s", path, strerror(errno));
    return 0;
}

/* wait for pid up to timeout_ms (pidfd + poll); kills its process group at the deadline */
int zp_wc_wait_child(int *status, pid_t pid, uint32_t timeout_ms, bool group)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int rc = 0;
    if (pfd >= 0) {
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        uint64_t end = zp_now_ns() + (uint64_t)timeout_ms * 1000000ull;
        for (;;) {
            uint64_t now = zp_now_ns();
            int left = now >= end ? 0 : (int)((end - now) / 1000000ull) + 1;
            int k = poll(&p, 1, left);
            if (k > 0) break;
            if (k < 0 && errno == EINTR) continue;
            if (k == 0 && zp_now_ns() >= end) { rc = ZP_ETIMEDOUT; break; }
        }
        close(pfd);
    } else {   /* no pidfd: poll waitpid */
        uint64_t end = zp_now_ns() + (uint64_t)timeout_ms * 1000000ull;
        for (;;) {
            pid_t w = waitpid(pid, status, WNOHANG);
            if (w == pid) return 0;
            if (zp_now_ns() >= end) { rc = ZP_ETIMEDOUT; break; }
            usleep(2000);
        }
    }
    if (rc == ZP_ETIMEDOUT) kill(group ? -pid : pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    return rc;
}

/* run argv with stdout+stderr into log_path; 0 when it exits 0 */
static int run_tool(char *const argv[], const char *log_path, uint32_t timeout_ms)
{
    pid_t pid = fork();
    if (pid < 0) return zp_err_set(-errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        execvp(argv[0], argv);
        dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    int st = 0;
    int rc = zp_wc_wait_child(&st, pid, timeout_ms, true);
    if (rc == ZP_ETIMEDOUT) return zp_err_set(ZP_ETIMEDOUT, "%s ran past %u ms and was killed", argv[0], timeout_ms);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    char tail[600] = "";
    int fd = open(log_path, O_RDONLY);
    if (fd >= 0) {
        off_t end = lseek(fd, 0, SEEK_END);
        lseek(fd, end > 512 ? end - 512 : 0, SEEK_SET);
        ssize_t k = read(fd, tail, 512);
        tail[k > 0 ? k : 0] = 0;
        close(fd);
        for (char *p = tail; *p; p++) if (*p == '\n') *p = ' ';
    }
    if (WIFEXITED(st))
        return zp_err_set(ZP_EFORMAT, "%s exited with status %d: %s", argv[0], WEXITSTATUS(st), tail);
    return zp_err_set(ZP_EFORMAT, "%s killed by signal %d: %s", argv[0], WTERMSIG(st), tail);
}

/* circom's imports and exports, as wasm2c 1.0.x declares them for module "zpwc" */
static const char *const want_imports[] = {
    "void Z_runtimeZ_exceptionHandler(struct Z_runtime_instance_t*, u32);",
    "void Z_runtimeZ_printErrorMessage(struct Z_runtime_instance_t*);",
    "void Z_runtimeZ_showSharedRWMemory(struct Z_runtime_instance_t*);",
    "void Z_runtimeZ_writeBufferMessage(struct Z_runtime_instance_t*);",
};
static const char *const want_exports[] = {
    "wasm_rt_memory_t* Z_zpwcZ_memory(Z_zpwc_instance_t* instance);",
    "u32 Z_zpwcZ_getVersion(Z_zpwc_instance_t*);",
    "u32 Z_zpwcZ_readSharedRWMemory(Z_zpwc_instance_t*, u32);",
    "void Z_zpwcZ_writeSharedRWMemory(Z_zpwc_instance_t*, u32, u32);",
    "void Z_zpwcZ_init(Z_zpwc_instance_t*, u32);",
    "void Z_zpwcZ_setInputSignal(Z_zpwc_instance_t*, u32, u32, u32);",
    "u32 Z_zpwcZ_getInputSignalSize(Z_zpwc_instance_t*, u32, u32);",
    "void Z_zpwcZ_getRawPrime(Z_zpwc_instance_t*);",
    "u32 Z_zpwcZ_getFieldNumLen32(Z_zpwc_instance_t*);",
    "u32 Z_zpwcZ_getWitnessSize(Z_zpwc_instance_t*);",
    "u32 Z_zpwcZ_getInputSize(Z_zpwc_instance_t*);",
    "void Z_zpwcZ_getWitness(Z_zpwc_instance_t*, u32);",
    "u32 Z_zpwcZ_getMessageChar(Z_zpwc_instance_t*);",
};

static int check_header(const char *hdr_path, const char *wasm_path)
{
    uint8_t *h;
    size_t len;
    int rc = read_file(&h, &len, hdr_path, 64u << 20);
    if (rc) return rc;
    const char *t = (const char *)h;
    for (size_t i = 0; i < sizeof want_exports / sizeof *want_exports; i++)
        if (!strstr(t, want_exports[i])) {
            char name[64] = "";
            sscanf(strstr(want_exports[i], "Z_zpwcZ_") + 8, "%63[A-Za-z]", name);
            rc = zp_err_set(ZP_EFORMAT, "%s: not a circom 2 witness generator: export \"%s\" missing or of another type",
                            wasm_path, name);
            goto out;
        }
    /* every import must be one of circom's four, with its type */
    for (const char *p = strstr(t, "/* import: "); p; p = strstr(p + 1, "/* import: ")) {
        const char *nl = strchr(p, '\n');
        const char *decl = nl ? nl + 1 : "";
        const char *end = strchr(decl, '\n');
        size_t dl = end ? (size_t)(end - decl) : strlen(decl);
        bool ok = false;
        for (size_t i = 0; i < sizeof want_imports / sizeof *want_imports; i++)
            ok |= strlen(want_imports[i]) == dl && !memcmp(decl, want_imports[i], dl);
        if (!ok) {
            int l = nl ? (int)(nl - p) : 40;
            rc = zp_err_set(ZP_EFORMAT, "%s: not a circom witness generator: unexpected %.*s", wasm_path, l > 120 ? 120 : l, p + 3);
            goto out;
        }
    }
out:
    free(h);
    return rc;
}

static const char *rt_dir(void)
{
    const char *e = getenv("ZKPIPE_WASM_RT_DIR");
    if (e && *e) return e;
    static const char *const dirs[] = {"/usr/share/wabt/wasm2c", "/usr/src/wasm2c", "/usr/local/share/wabt/wasm2c"};
    for (size_t i = 0; i < 3; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/wasm-rt-impl.c", dirs[i]);
        if (access(p, R_OK) == 0) return dirs[i];
    }
    return NULL;
}

static void rm_tree_flat(const char *dir)
{
    static const char *const names[] = {"wc.c", "wc.h", "glue.c", "wc_abi.h", "m.so", "wasm2c.log", "cc.log"};
    char p[4200];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static int compile_module(const char *so_path, const char *hex, const char *cache_dir, const char *wasm_path, uint32_t tmo,
                          uint64_t t0);

int zp_wc_register(char *so_path, size_t cap, bool *cached, double *ms, const char *cache_dir, const char *wasm_path,
                   const zp_wc_limits_t *lim)
{
    uint64_t t0 = zp_now_ns();
    uint32_t tmo = lim && lim->compile_timeout_ms ? lim->compile_timeout_ms : 1800000u;
    if (cached) *cached = false;
    if (ms) *ms = 0;
    uint8_t *wasm;
    size_t wlen;
    int rc = read_file(&wasm, &wlen, wasm_path, WASM_MAX_FILE);
    if (rc) return rc;
    if (wlen < 8 || memcmp(wasm, "\0asm", 4))
        rc = zp_err_set(ZP_EFORMAT, "%s: not a WebAssembly module (no \\0asm magic)", wasm_path);
    char hex[SHA256_DIGEST_STRING_LENGTH];
    if (!rc) {
        SHA2_CTX c;
        SHA256Init(&c);
        SHA256Update(&c, (const uint8_t *)GEN_TAG, sizeof GEN_TAG);
        SHA256Update(&c, (const uint8_t *)zp_wc_glue_c, strlen(zp_wc_glue_c) + 1);   /* a new glue, a new module */
        SHA256Update(&c, (const uint8_t *)zp_wc_abi_h, strlen(zp_wc_abi_h) + 1);
        SHA256Update(&c, wasm, wlen);
        SHA256End(&c, hex);
    }
    free(wasm);
    if (rc || (rc = zp_private_dir_ready(cache_dir, "wasm cache"))) return rc;
    int n = snprintf(so_path, cap, "%s/%s.so", cache_dir, hex);
    if (n < 0 || (size_t)n >= cap) return zp_err_set(ZP_ETOOBIG, "%s: path too long", cache_dir);
    struct stat st;
    if (stat(so_path, &st) == 0 && S_ISREG(st.st_mode)) {
        if (cached) *cached = true;
        if (ms) *ms = (double)(zp_now_ns() - t0) / 1e6;
        return 0;
    }
    /* one compiler per wasm: a concurrent registration of the same content (another synth)
     * waits here for the first one (bounded by its compile deadline), then finds the module */
    char lockp[4200];
    snprintf(lockp, sizeof lockp, "%s/%s.lock", cache_dir, hex);
    int lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lfd < 0) return zp_err_set(-errno, "%s: open: %s", lockp, strerror(errno));
    while (flock(lfd, LOCK_EX) < 0 && errno == EINTR) {}
    if (stat(so_path, &st) == 0 && S_ISREG(st.st_mode)) {
        if (cached) *cached = true;
        if (ms) *ms = (double)(zp_now_ns() - t0) / 1e6;
        close(lfd);
        return 0;
    }
    rc = compile_module(so_path, hex, cache_dir, wasm_path, tmo, t0);
    if (!rc && ms) *ms = (double)(zp_now_ns() - t0) / 1e6;
    close(lfd);   /* releases the lock; the small .lock file stays (unlinking it would let a late
                   * registrant lock a new inode while a waiter holds the old one) */
    return rc;
}

static int compile_module(const char *so_path, const char *hex, const char *cache_dir, const char *wasm_path, uint32_t tmo,
                          uint64_t t0)
{
    int rc;
    const char *rtd = rt_dir();
    if (!rtd) return zp_err_set(-ENOENT, "wabt's wasm-rt-impl.c not found (install Debian's wabt, or set ZKPIPE_WASM_RT_DIR)");
    char tmp[4096], p_c[4200], p_h[4200], p_glue[4200], p_abi[4200], p_so[4200], p_log[4200], p_cclog[4200], p_rt[4200], inc_t[4200], inc_r[4200];
    snprintf(tmp, sizeof tmp, "%s/tmp.%.16s.XXXXXX", cache_dir, hex);
    if (!mkdtemp(tmp)) return zp_err_set(-errno, "%s: mkdtemp: %s", tmp, strerror(errno));
    snprintf(p_c, sizeof p_c, "%s/wc.c", tmp);
    snprintf(p_h, sizeof p_h, "%s/wc.h", tmp);
    snprintf(p_glue, sizeof p_glue, "%s/glue.c", tmp);
    snprintf(p_abi, sizeof p_abi, "%s/wc_abi.h", tmp);
    snprintf(p_so, sizeof p_so, "%s/m.so", tmp);
    snprintf(p_log, sizeof p_log, "%s/wasm2c.log", tmp);
    snprintf(p_cclog, sizeof p_cclog, "%s/cc.log", tmp);
    snprintf(p_rt, sizeof p_rt, "%s/wasm-rt-impl.c", rtd);
    snprintf(inc_t, sizeof inc_t, "-I%s", tmp);
    snprintf(inc_r, sizeof inc_r, "-I%s", rtd);
    const char *w2c = getenv("ZKPIPE_WASM2C");
    char *const argv_w[] = {(char *)(w2c && *w2c ? w2c : "wasm2c"), (char *)wasm_path, "-n", "zpwc", "-o", p_c, NULL};
    if ((rc = run_tool(argv_w, p_log, tmo))) {
        rc = zp_err_set(rc == ZP_ETIMEDOUT ? rc : ZP_EFORMAT, "%s: wasm2c refused the module: %s", wasm_path, zp_err_msg());
        goto out;
    }
    if ((rc = check_header(p_h, wasm_path))) goto out;
    if ((rc = write_file(p_glue, zp_wc_glue_c, strlen(zp_wc_glue_c))) || (rc = write_file(p_abi, zp_wc_abi_h, strlen(zp_wc_abi_h))))
        goto out;
    const char *ccenv = getenv("CC");
    char *const argv_c[] = {(char *)(ccenv && *ccenv && !strchr(ccenv, ' ') ? ccenv : "cc"), "-O2", "-fPIC", "-shared",
                            "-fvisibility=hidden", "-fno-strict-aliasing", "-w", inc_t, inc_r, "-o", p_so, p_glue, p_c,
                            p_rt, "-lm", NULL};
    uint64_t left_ns = zp_now_ns() - t0;
    uint32_t cc_tmo = left_ns / 1000000ull >= tmo ? 1 : tmo - (uint32_t)(left_ns / 1000000ull);
    if ((rc = run_tool(argv_c, p_cclog, cc_tmo))) {
        rc = zp_err_set(rc == ZP_ETIMEDOUT ? rc : ZP_EFORMAT, "%s: compiling the generated C failed: %s", wasm_path, zp_err_msg());
        goto out;
    }
    if (rename(p_so, so_path) < 0) {
        rc = zp_err_set(-errno, "%s: rename to %s: %s", p_so, so_path, strerror(errno));
        goto out;
    }
out:
    rm_tree_flat(tmp);
    return rc;
}
