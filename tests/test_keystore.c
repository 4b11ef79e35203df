/* test_keystore.c - proving keys in shared memory (shm/keystore.c): the view equals
 * zp_g16_key_load byte for byte on every fixture zkey (created, then hot); corrupt header
 * fields, a corrupt data chunk and a short object are refused (no SIGBUS) and rebuilt by get;
 * zp_g16_key_bind refuses out-of-range offsets and coefficient indices; a creator that died
 * mid-fill is detected and the object rebuilt; a live creator makes others wait (and time
 * out); two forked processes racing on one key: exactly one fills, both see the same key;
 * zp_keystore_unlink_all removes only this prefix's objects. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/keystore.h"
#include "shm/shm.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, \
                                          zp_err_msg()); exit(1); } } while (0)

static char g_prefix[64];
static void cleanup(void) { if (g_prefix[0]) zp_keystore_unlink_all(g_prefix); }

static bool key_equal(const zp_g16_key_t *a, const zp_g16_key_t *b)
{
    size_t g1 = zp_g1a_size(a->curve), g2 = zp_g2a_size(a->curve);
    if (a->curve != b->curve || a->n_vars != b->n_vars || a->n_public != b->n_public || a->domain_size != b->domain_size ||
        a->log_n != b->log_n || a->n_coefs != b->n_coefs || a->coefs_sorted != b->coefs_sorted)
        return false;
    if (memcmp(&a->alpha1, &b->alpha1, g1) || memcmp(&a->beta1, &b->beta1, g1) || memcmp(&a->delta1, &b->delta1, g1) ||
        memcmp(&a->beta2, &b->beta2, g2) || memcmp(&a->gamma2, &b->gamma2, g2) || memcmp(&a->delta2, &b->delta2, g2))
        return false;
    size_t nc = (size_t)a->n_vars - a->n_public - 1;
    return !memcmp(a->ic, b->ic, (a->n_public + 1) * g1) && !memcmp(a->a, b->a, a->n_vars * g1) &&
           !memcmp(a->b1, b->b1, a->n_vars * g1) && !memcmp(a->c, b->c, nc * g1) &&
           !memcmp(a->h, b->h, (size_t)a->domain_size * g1) && !memcmp(a->b2, b->b2, a->n_vars * g2) &&
           !memcmp(a->coefs, b->coefs, a->n_coefs * sizeof *a->coefs);
}

static int count_objects(void)
{
    char want[80];
    int wl = snprintf(want, sizeof want, "%s-key-", g_prefix + 1), n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d))) n += !strncmp(e->d_name, want, (size_t)wl);
    if (d) closedir(d);
    return n;
}

/* rewrite a header field in the object (optionally fixing the header checksum) */
static void poke_hdr(const char *name, size_t off, const void *v, size_t n, bool fix_sum)
{
    int fd = shm_open(name, O_RDWR, 0);
    CHECK(fd >= 0);
    zp_keystore_hdr_t h;
    CHECK(pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    memcpy((uint8_t *)&h + off, v, n);
    if (fix_sum) {
        zp_keystore_hdr_t c = h;
        atomic_store(&c.state, 0);
        c.creator_pid = 0;
        c.hdr_sum = 0;
        h.hdr_sum = zp_shm_checksum(&c, sizeof c, ZP_KEYSTORE_MAGIC);
    }
    CHECK(pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    close(fd);
}

static void expect_rebuild(const char *path, const zp_zkey_t *z, const zp_g16_key_t *ref, const char *what)
{
    zp_keystore_key_t ks;
    zp_keystore_opt_t o = {.wait_ms = 10000};
    int rc = zp_keystore_get(&ks, g_prefix, z, path, &o);
    if (rc || ks.hot || !key_equal(&ks.key, ref)) {
        fprintf(stderr, "after %s: get rc %d hot %d (%s)\n", what, rc, ks.hot, zp_err_msg());
        exit(1);
    }
    zp_keystore_release(&ks);
}

/* a fake creator: creates the name, locks it, writes FILLING + its pid; holds for hold_ms, then exits */
static pid_t fake_creator(const char *name, int hold_ms, int ready_fd)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid) return pid;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) < 0 || ftruncate(fd, 8192) < 0) _exit(3);
    zp_keystore_hdr_t h;
    memset(&h, 0, sizeof h);
    h.magic = ZP_KEYSTORE_MAGIC;
    h.version = ZP_KEYSTORE_VERSION;
    h.creator_pid = getpid();
    atomic_store(&h.state, ZP_KEYSTORE_FILLING);
    if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) _exit(4);
    if (write(ready_fd, "x", 1) != 1) _exit(5);
    usleep((useconds_t)hold_ms * 1000);
    _exit(0);
}

static void test_fixture(const char *path, bool deep)
{
    zp_zkey_t z;
    zp_g16_key_t ref;
    CHECK(zp_zkey_open(&z, path) == 0);
    CHECK(zp_g16_key_load(&ref, &z) == 0);
    zp_keystore_key_t ks, ks2;
    char name[ZP_KEYSTORE_NAME_MAX];
    CHECK(zp_keystore_name(name, sizeof name, g_prefix, path) == 0);
    shm_unlink(name);   /* deep pass: start from no object */
    CHECK(zp_keystore_get(&ks, g_prefix, &z, path, NULL) == 0);
    CHECK(!ks.hot && key_equal(&ks.key, &ref) && ks.key.mem_owned == 0);
    CHECK(zp_keystore_get(&ks2, g_prefix, &z, path, NULL) == 0);
    CHECK(ks2.hot && key_equal(&ks2.key, &ref) && ks2.map != ks.map);
    zp_keystore_release(&ks2);
    CHECK(!strcmp(name, ks.name));
    CHECK(zp_keystore_open_name(&ks2, name, true) == 0 && key_equal(&ks2.key, &ref));
    zp_keystore_release(&ks2);
    zp_keystore_release(&ks);
    if (deep) {
        /* corrupt header fields: without and with a recomputed header checksum */
        uint32_t v32 = ref.n_vars + 1;
        poke_hdr(name, offsetof(zp_keystore_hdr_t, n_vars), &v32, 4, false);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "header checksum"));
        expect_rebuild(path, &z, &ref, "n_vars changed");
        uint64_t big = (uint64_t)1 << 40;
        poke_hdr(name, offsetof(zp_keystore_hdr_t, offs) + offsetof(zp_g16_key_offs_t, h), &big, 8, true);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "pointsH"));
        expect_rebuild(path, &z, &ref, "offset out of range");
        poke_hdr(name, offsetof(zp_keystore_hdr_t, total_bytes), &big, 8, true);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT);
        poke_hdr(name, offsetof(zp_keystore_hdr_t, data_len), &big, 8, true);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT);
        expect_rebuild(path, &z, &ref, "sizes");
        v32 = 99;
        poke_hdr(name, offsetof(zp_keystore_hdr_t, curve), &v32, 4, true);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT);
        uint64_t magic = 1;
        poke_hdr(name, 0, &magic, 8, true);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT);
        expect_rebuild(path, &z, &ref, "magic/curve");
        /* a flipped data byte (last byte of the last chunk: always in the sample) */
        int fd = shm_open(name, O_RDWR, 0);
        struct stat st;
        CHECK(fd >= 0 && fstat(fd, &st) == 0);
        uint8_t b;
        CHECK(pread(fd, &b, 1, st.st_size - 1) == 1);
        b ^= 0x40;
        CHECK(pwrite(fd, &b, 1, st.st_size - 1) == 1);
        CHECK(zp_keystore_open_name(&ks2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "chunk"));
        /* short objects: below the header (not ready), and cut inside the data (no SIGBUS) */
        CHECK(ftruncate(fd, st.st_size - 4096) == 0);
        CHECK(zp_keystore_open_name(&ks2, name, true) == ZP_EFORMAT);
        CHECK(ftruncate(fd, 100) == 0);
        CHECK(zp_keystore_open_name(&ks2, name, true) == -EAGAIN);
        close(fd);
        /* an uninitialised object is taken for a creator in its first instant for 2 s, then rebuilt */
        expect_rebuild(path, &z, &ref, "short object");
        /* dead creator: FILLING, lock released */
        CHECK(shm_unlink(name) == 0);
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t c = fake_creator(name, 0, p[1]);
        int st2;
        CHECK(read(p[0], &b, 1) == 1);
        CHECK(waitpid(c, &st2, 0) == c && WIFEXITED(st2) && WEXITSTATUS(st2) == 0);
        expect_rebuild(path, &z, &ref, "dead creator");
        /* a live creator: others wait; it dies after 300 ms: they rebuild */
        CHECK(shm_unlink(name) == 0);
        c = fake_creator(name, 300, p[1]);
        CHECK(read(p[0], &b, 1) == 1);
        uint64_t t0 = zp_now_ns();
        expect_rebuild(path, &z, &ref, "creator died while we waited");
        CHECK(zp_now_ns() - t0 > 200000000u);
        CHECK(waitpid(c, &st2, 0) == c && WIFEXITED(st2) && WEXITSTATUS(st2) == 0);
        /* a live creator that never finishes: bounded wait */
        CHECK(shm_unlink(name) == 0);
        c = fake_creator(name, 5000, p[1]);
        CHECK(read(p[0], &b, 1) == 1);
        zp_keystore_opt_t o = {.wait_ms = 200};
        CHECK(zp_keystore_get(&ks2, g_prefix, &z, path, &o) == ZP_ETIMEDOUT);
        kill(c, SIGKILL);
        CHECK(waitpid(c, &st2, 0) == c);
        expect_rebuild(path, &z, &ref, "creator killed");
        close(p[0]);
        close(p[1]);

        /* a real creator killed -9 in the middle of its fill (held there by the test hook) */
        CHECK(shm_unlink(name) == 0);
        c = fork();
        CHECK(c >= 0);
        if (!c) {
            setenv("ZP_TEST_KEYSTORE_FILL_MS", "5000", 1);
            zp_keystore_key_t k;
            _exit(zp_keystore_get(&k, g_prefix, &z, path, NULL) == 0 ? 0 : 3);
        }
        bool seen = false;
        for (int i = 0; i < 2000 && !seen; i++) {   /* until the child's object says FILLING */
            int fd2 = shm_open(name, O_RDONLY, 0);
            zp_keystore_hdr_t hh;
            bool filling = fd2 >= 0 && pread(fd2, &hh, sizeof hh, 0) == (ssize_t)sizeof hh &&
                           atomic_load(&hh.state) == ZP_KEYSTORE_FILLING;
            if (fd2 >= 0) close(fd2);
            seen = filling;
            if (!seen) usleep(1000);
        }
        CHECK(seen);
        kill(c, SIGKILL);
        CHECK(waitpid(c, &st2, 0) == c && WIFSIGNALED(st2));
        expect_rebuild(path, &z, &ref, "creator killed mid-fill");

        /* two processes race on a fresh object: exactly one fills (slowly, 300 ms), the other
         * waits for READY and maps the same key */
        CHECK(shm_unlink(name) == 0);
        setenv("ZP_TEST_KEYSTORE_FILL_MS", "300", 1);
        int go[2], res[2];
        CHECK(pipe(go) == 0 && pipe(res) == 0);
        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
            kids[i] = fork();
            CHECK(kids[i] >= 0);
            if (!kids[i]) {
                char x;
                if (read(go[0], &x, 1) != 1) _exit(2);
                zp_keystore_key_t k;
                if (zp_keystore_get(&k, g_prefix, &z, path, NULL) != 0) _exit(3);
                if (!key_equal(&k.key, &ref)) _exit(4);
                char r = k.hot ? (k.load_ns > 100000000u ? 'W' : 'H') : 'F';
                if (write(res[1], &r, 1) != 1) _exit(5);
                _exit(0);
            }
        }
        CHECK(write(go[1], "xx", 2) == 2);
        char r[2];
        for (int i = 0; i < 2; i++) {
            CHECK(waitpid(kids[i], &st2, 0) == kids[i] && WIFEXITED(st2) && WEXITSTATUS(st2) == 0);
            CHECK(read(res[0], &r[i], 1) == 1);
        }
        unsetenv("ZP_TEST_KEYSTORE_FILL_MS");
        /* one filled; the other waited (W: hot after > 100 ms; H: it came after READY, possible
         * only if it started 300 ms late, so it must not happen with both released together) */
        if (!((r[0] == 'F' && r[1] == 'W') || (r[0] == 'W' && r[1] == 'F'))) {
            fprintf(stderr, "race: got %c %c, want F and W\n", r[0], r[1]);
            exit(1);
        }
        close(go[0]); close(go[1]); close(res[0]); close(res[1]);
    }
    zp_g16_key_close(&ref);
    zp_zkey_close(&z);
}

static void test_bind(const char *path)
{
    zp_zkey_t z;
    CHECK(zp_zkey_open(&z, path) == 0);
    size_t len = zp_g16_key_bytes(&z);
    void *mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
    zp_g16_key_t k, v;
    CHECK(mem && zp_g16_key_load_into(&k, &z, mem, len) == 0);
    zp_g16_key_offs_t o;
    zp_g16_key_offsets(&o, &k, mem);
    v = k;
    v.ic = v.a = NULL;
    CHECK(zp_g16_key_bind(&v, &o, mem, len) == 0 && key_equal(&v, &k) && v.a == k.a);
    zp_g16_key_offs_t bad = o;
    bad.b2 += 8;   /* misaligned */
    CHECK(zp_g16_key_bind(&v, &bad, mem, len) == ZP_EFORMAT);
    bad = o;
    bad.coefs = len - 8;
    v = k;
    CHECK(zp_g16_key_bind(&v, &bad, mem, len) == ZP_EFORMAT);
    v = k;
    v.log_n += 1;
    CHECK(zp_g16_key_bind(&v, &o, mem, len) == ZP_EFORMAT);
    k.coefs[k.n_coefs / 2].row = k.domain_size;
    v = k;
    CHECK(zp_g16_key_bind(&v, &o, mem, len) == ZP_EFORMAT && strstr(zp_err_msg(), "coefficient"));
    k.coefs[k.n_coefs / 2].row = 0;
    k.coefs[k.n_coefs - 1].wire = k.n_vars;
    v = k;
    CHECK(zp_g16_key_bind(&v, &o, mem, len) == ZP_EFORMAT);
    free(mem);
    zp_zkey_close(&z);
}

int main(void)
{
    const char *root = getenv("ZP_FIXTURES") ? getenv("ZP_FIXTURES") : ZP_FIXTURES_DIR;
    snprintf(g_prefix, sizeof g_prefix, "/zkpipe-kstest-%d", (int)getpid());
    atexit(cleanup);
    DIR *d = opendir(root);
    if (!d) { printf("keystore: no fixtures in %s: skipped\n", root); return 77; }
    struct dirent *e;
    int n = 0;
    char deep[1024] = "";
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/circuit.zkey", root, e->d_name);
        if (access(path, R_OK)) continue;
        test_fixture(path, false);
        if (strstr(e->d_name, "bn128_poseidon")) snprintf(deep, sizeof deep, "%s", path);
        n++;
    }
    closedir(d);
    CHECK(n > 0);
    CHECK(count_objects() == n);
    if (deep[0]) {
        test_bind(deep);
        test_fixture(deep, true);
    }
    CHECK(zp_keystore_unlink_all(g_prefix) == n);
    CHECK(count_objects() == 0);
    printf("keystore: %d fixture keys ok (view == key_load, hot reopen, corruption, short, dead/live creator, race)\n", n);
    return 0;
}
