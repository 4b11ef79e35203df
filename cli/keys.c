/* keys.c - `zkpipe keys`: the proving keys of a deployment by tier (doc/keys.md).
 *
 *   list     the shared-memory key store (objects, bytes, last use, which processes hold each),
 *            the page-cache residency of their zkey files (warm), and the broker's view: which
 *            worker holds which key, its loads and evictions (the last section of its status)
 *   preload  ZKEY...: fill the key into the store (hot for every stage: a worker then maps it
 *            instead of parsing it); --warm: only read the file into the page cache.
 *            `import` is the same verb. A bellman .params needs --r1cs CIRCUIT (issue 29 item 4):
 *            it is checked and read into the stages' key shape with that circuit (compacted)
 *            (keystore.h zp_keystore_get_bellman); jobs then name the same two files
 *   density  CIRCUIT.r1cs OUT: the bellman density bitmaps of a circuit as a density file
 *            (assignment.h zp_g16_bdensity_write), which may stand where the r1cs goes for a
 *            key that proves pre-synthesized vectors only (no coefficients)
 *   evict    ZKEY...|--all: unlink the key's store object when no process holds it (--force:
 *            anyway; its users keep their mapping until they release it); --cold: also drop
 *            the file from the page cache
 * The design: preload and evict act on the store and the page cache, which every stage shares;
 * a worker's own cache (mapped, pinned, uploaded) follows its --key-budget and the broker's
 * routing, never a command: an evicted store object a worker still holds stays valid for it.
 * Tests: tests/ipc/keys_cli.sh. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "client/zkpipe-client.h"
#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "shm/keycache.h"
#include "shm/keystore.h"
#include "shm/shm.h"

typedef struct {
    const char *arena, *rundir;
    bool warm, cold, force, all, json, no_broker;
    const char *r1cs;           /* --r1cs: the circuit of the bellman .params given */
    uint64_t store_budget;
    unsigned threads;
} keys_opts_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe keys [list] [--arena NAME] [--runtime-dir DIR] [--no-broker]\n"
               "       zkpipe keys preload|import KEY... [--r1cs CIRCUIT.r1cs] [--arena NAME] [--warm] [--store-budget BYTES]\n"
               "                 [--threads N]   (KEY: a .zkey, or a bellman .params with --r1cs)\n"
               "       zkpipe keys density CIRCUIT.r1cs OUT.dens   (bellman density bitmaps, no coefficients)\n"
               "       zkpipe keys evict (KEY...|--all) [--r1cs CIRCUIT.r1cs] [--arena NAME] [--force] [--cold]\n");
}

/* resident / total bytes of path's pages in the page cache; -1 if it cannot be read */
static int residency(const char *path, uint64_t *res, uint64_t *total)
{
    *res = *total = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) { close(fd); return -1; }
    *total = (uint64_t)st.st_size;
    if (!st.st_size) { close(fd); return 0; }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), np = ((size_t)st.st_size + pg - 1) / pg;
    unsigned char *v = malloc(np);
    if (v && mincore(m, (size_t)st.st_size, v) == 0)
        for (size_t i = 0; i < np; i++) *res += (v[i] & 1) ? pg : 0;
    if (*res > *total) *res = *total;
    free(v);
    munmap(m, (size_t)st.st_size);
    return 0;
}

static int list_store(const char *prefix)
{
    zp_keystore_info_t *v;
    size_t n;
    if (zp_keystore_list(prefix, &v, &n) < 0) {
        fprintf(stderr, "zkpipe keys: %s\n", zp_err_msg());
        return 1;
    }
    printf("key store %s: %zu object(s) in /dev/shm (hot tier), least recently used first\n", prefix, n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const zp_keystore_info_t *x = &v[i];
        char when[32] = "?";
        time_t t = (time_t)(x->last_use_ns / 1000000000u);
        struct tm tm;
        if (localtime_r(&t, &tm)) strftime(when, sizeof when, "%H:%M:%S", &tm);
        printf("  %s  %-7s %10.1f KiB  used %s  ", x->name,
               x->valid ? "ready" : x->state == ZP_KEYSTORE_FILLING ? "filling" : "invalid", x->bytes / 1024.0, when);
        if (x->n_holders) {
            printf("held by pid");
            for (unsigned k = 0; k < x->n_holders; k++) printf("%s%d", k ? "," : " ", (int)x->holders[k]);
        } else {
            printf(x->in_use ? "in use" : "not in use");
        }
        printf("\n        %s\n", x->path[0] ? x->path : "(no path: not ready)");
        sum += x->bytes;
    }
    printf("  total %.1f KiB\n", sum / 1024.0);
    printf("page cache (warm tier) of those zkey files:\n");
    for (size_t i = 0; i < n; i++) {
        uint64_t r, t;
        if (!v[i].path[0]) continue;
        if (residency(v[i].path, &r, &t) < 0) printf("  %s: cannot read it\n", v[i].path);
        else printf("  %s: %.1f of %.1f KiB resident (%.0f%%)\n", v[i].path, r / 1024.0, t / 1024.0,
                    t ? 100.0 * (double)r / (double)t : 100.0);
    }
    free(v);
    return 0;
}

/* the broker's "keys by worker" section (the end of its text status) */
static int list_broker(const keys_opts_t *o)
{
    zp_client_t *c = zp_client_new(o->rundir);
    if (!c) return 1;
    zp_client_set_timeout(c, 5000);
    char *t = NULL;
    int rc = zp_client_status(c, false, &t);
    if (rc) {
        printf("broker: unreachable (%s%s%s): no worker view\n", zp_client_strerror(rc),
               *zp_client_errmsg(c) ? ": " : "", zp_client_errmsg(c));
        zp_client_destroy(&c);
        return 0;
    }
    const char *sec = strstr(t, "keys by worker");
    printf("%s", sec ? sec : "broker: its status has no key section (an older broker)\n");
    zp_client_free(t);
    zp_client_destroy(&c);
    return 0;
}

static int warm(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) { fprintf(stderr, "zkpipe keys preload --warm: %s: %s\n", path, strerror(errno)); return 1; }
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    static char buf[1 << 20];
    ssize_t r;
    uint64_t n = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0) n += (uint64_t)r;
    int e = errno;
    close(fd);
    if (r < 0) { fprintf(stderr, "zkpipe keys preload --warm: %s: %s\n", path, strerror(e)); return 1; }
    printf("%s: %.1f MiB read into the page cache (warm)\n", path, n / 1048576.0);
    return 0;
}

static int preload(const char *prefix, const char *path, const keys_opts_t *o, zp_pool_t *pool)
{
    if (o->warm) return warm(path);   /* any key file: the page cache does not care about its format */
    zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;
    if (zp_key_format_of_file(&kf, path) == 0 && kf == ZP_KEYFMT_BELLMAN) {
        /* issue 29 item 4: a bellman .params with its circuit, checked and laid out (compacted) in the store */
        if (!o->r1cs) {
            fprintf(stderr, "zkpipe keys preload: %s is a bellman .params: give its circuit with --r1cs circuit.r1cs "
                            "(the stages' coefficients and density bitmaps come from it)\n", path);
            return 1;
        }
        zp_keystore_key_t ks;
        zp_keystore_opt_t opt = {.pool = pool, .budget = o->store_budget};
        uint64_t t0 = zp_now_ns();
        int rc = zp_keystore_get_bellman(&ks, prefix, path, o->r1cs, &opt);
        if (rc < 0) {
            fprintf(stderr, "zkpipe keys preload: %s (with %s): %s %s\n", path, o->r1cs, zp_strerror(rc), zp_err_msg());
            return 1;
        }
        printf("%s (bellman, circuit %s): %s %s (%.1f KiB, compacted as in the file: %u wires, |A| %u, |B| %u, domain "
               "%u) in %.1f ms\n", path, o->r1cs, ks.hot ? "already hot in" : "checked and read into", ks.name,
               ks.map_len / 1024.0, ks.key.n_vars, ks.key.n_a, ks.key.n_b, ks.key.domain_size, (zp_now_ns() - t0) / 1e6);
        zp_keystore_release(&ks);
        return 0;
    }
    zp_zkey_t z;
    memset(&z, 0, sizeof z);
    if (zp_zkey_open(&z, path) < 0) {
        fprintf(stderr, "zkpipe keys preload: %s: %s\n", path, zp_err_msg());
        return 1;
    }
    zp_keystore_key_t ks;
    zp_keystore_opt_t opt = {.pool = pool, .budget = o->store_budget};
    uint64_t t0 = zp_now_ns();
    int rc = zp_keystore_get(&ks, prefix, &z, path, &opt);
    zp_zkey_close(&z);
    if (rc < 0) {
        fprintf(stderr, "zkpipe keys preload: %s: %s %s\n", path, zp_strerror(rc), zp_err_msg());
        return 1;
    }
    printf("%s: %s %s (%.1f KiB) in %.1f ms\n", path, ks.hot ? "already hot in" : "filled into", ks.name,
           ks.map_len / 1024.0, (zp_now_ns() - t0) / 1e6);
    zp_keystore_release(&ks);
    return 0;
}

static int cold(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc ? -1 : 0;
}

static int evict_one(const char *name, const char *path, const keys_opts_t *o)
{
    int rc = zp_keystore_evict(name, o->force), ret = 0;
    if (rc == -ENOENT) printf("%s: not in the key store\n", path ? path : name);
    else if (rc < 0) { fprintf(stderr, "zkpipe keys evict: %s\n", zp_err_msg()); ret = 1; }
    else printf("%s: evicted %s from the key store\n", path ? path : name, name);
    if (o->cold && path && *path) {
        if (cold(path) < 0) { fprintf(stderr, "zkpipe keys evict --cold: %s: %s\n", path, strerror(errno)); ret = 1; }
        else printf("%s: dropped from the page cache (cold)\n", path);
    }
    return ret;
}

int zp_cmd_keys(int argc, char **argv)
{
    keys_opts_t o = {.arena = "default"};
    static const struct option opts[] = {
        {"arena", 1, 0, 'a'}, {"runtime-dir", 1, 0, 'R'}, {"warm", 0, 0, 'w'}, {"cold", 0, 0, 'c'},
        {"force", 0, 0, 'f'}, {"all", 0, 0, 'A'}, {"no-broker", 0, 0, 'n'}, {"store-budget", 1, 0, 'b'},
        {"threads", 1, 0, 't'}, {"r1cs", 1, 0, 'r'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *verb = argc > 1 && argv[1][0] != '-' ? argv[1] : "list";
    if (argc > 1 && argv[1][0] != '-') { argv++; argc--; }
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': o.arena = optarg; break;
        case 'R': o.rundir = optarg; break;
        case 'w': o.warm = true; break;
        case 'c': o.cold = true; break;
        case 'f': o.force = true; break;
        case 'A': o.all = true; break;
        case 'n': o.no_broker = true; break;
        case 'r': o.r1cs = optarg; break;
        case 'b':
            if (zp_parse_bytes("--store-budget", optarg, &o.store_budget) < 0) {
                fprintf(stderr, "zkpipe keys: %s\n", zp_err_msg());
                return 2;
            }
            break;
        case 't': o.threads = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    char prefix[ZP_SHM_NAME_MAX + 1];
    if (zp_shm_default_name(prefix, sizeof prefix, o.arena) < 0) {
        fprintf(stderr, "zkpipe keys: --arena %s: %s\n", o.arena, zp_err_msg());
        return 2;
    }
    if (!strcmp(verb, "list")) {
        if (optind != argc) { usage(stderr); return 2; }
        int rc = list_store(prefix);
        if (!rc && !o.no_broker) rc = list_broker(&o);
        return rc;
    }
    if (!strcmp(verb, "preload") || !strcmp(verb, "import")) {
        if (optind == argc) { usage(stderr); return 2; }
        zp_pool_t *pool = o.warm ? NULL : zp_pool_new(o.threads);
        int ret = 0;
        for (int i = optind; i < argc; i++) ret |= preload(prefix, argv[i], &o, pool);
        zp_pool_destroy(&pool);
        return ret;
    }
    if (!strcmp(verb, "density")) {
        if (argc - optind != 2) { usage(stderr); return 2; }
        zp_r1cs_t r;
        zp_g16_bdensity_t d;
        uint64_t *dm = NULL;
        if (zp_r1cs_open(&r, argv[optind]) < 0) { fprintf(stderr, "zkpipe keys density: %s\n", zp_err_msg()); return 1; }
        int rc = zp_g16_bellman_density(&d, &dm, &r);
        if (!rc) rc = zp_g16_bdensity_write(argv[optind + 1], &d);
        zp_r1cs_close(&r);
        free(dm);
        if (rc) { fprintf(stderr, "zkpipe keys density: %s\n", zp_err_msg()); return 1; }
        printf("%s: densities of %s (%zu inputs, %zu aux, %zu constraints + inputs)\n", argv[optind + 1], argv[optind],
               d.n_inp, d.n_aux, d.abc_size);
        return 0;
    }
    if (!strcmp(verb, "evict")) {
        if ((optind == argc) == !o.all) { usage(stderr); return 2; }
        int ret = 0;
        if (o.all) {
            zp_keystore_info_t *v;
            size_t n;
            if (zp_keystore_list(prefix, &v, &n) < 0) { fprintf(stderr, "zkpipe keys: %s\n", zp_err_msg()); return 1; }
            for (size_t i = 0; i < n; i++) ret |= evict_one(v[i].name, v[i].path, &o);
            if (!n) printf("key store %s: empty\n", prefix);
            free(v);
            return ret;
        }
        for (int i = optind; i < argc; i++) {
            char name[ZP_KEYSTORE_NAME_MAX];
            zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;   /* a bellman key's object is named after its circuit too */
            bool bell = o.r1cs && zp_key_format_of_file(&kf, argv[i]) == 0 && kf == ZP_KEYFMT_BELLMAN;
            if (zp_keystore_name_r1cs(name, sizeof name, prefix, argv[i], bell ? o.r1cs : NULL) < 0) {
                fprintf(stderr, "zkpipe keys evict: %s\n", zp_err_msg());
                ret = 1;
                continue;
            }
            ret |= evict_one(name, argv[i], &o);
        }
        return ret;
    }
    fprintf(stderr, "zkpipe keys: unknown verb '%s'\n", verb);
    usage(stderr);
    return 2;
}
