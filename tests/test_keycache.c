/* test_keycache.c - shm/keycache.c: the stages' proving-key and r1cs cache.
 * 1. Issue 9 item 1 (use after free): the cache used to keep the caller's path pointer in the
 *    opened zkey; the path is freed (and its memory reused) after the first task, and a later
 *    mismatch on the cached key (a witness of the other curve against the same zkey) printed
 *    that freed memory (under ASan the synthesizer aborted). The error must name the zkey.
 * 2. The same for the r1cs entry, and cache hits return the same entry.
 * 3. A changed file is reloaded.
 * 4. A missing file is an error naming it.
 * 5. Issue 10 item 4 (keys by tier under a budget): with a budget of one key, loading a second
 *    evicts the least recently used unreferenced one; a referenced entry is never evicted (the
 *    cache goes over budget instead) and is evicted on its release; LRU order with room for
 *    two; tiers: an entry from the shared store is SHM, evicted it stays in the store (not in
 *    use) and comes back hot; the store budget unlinks unheld objects before a fill; a file
 *    changed while its entry is referenced gets a fresh entry, the old one stays valid until
 *    released; two threads looking up and releasing keys under a one-key budget (ASan/TSan
 *    build: no use after free); zp_parse_bytes. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/keycache.h"
#include "shm/keystore.h"
#include "test_common.h"

/* a heap copy of s, as the stage harness makes of an ASSIGN's paths */
static char *heap_path(const char *s) { char *p = strdup(s); if (!p) abort(); return p; }
/* free p after scribbling over it, so a dangling reader sees garbage in any build */
static void drop_path(char *p) { memset(p, 'X', strlen(p)); free(p); }

/* copy src to a fresh temp file; returns its path (static buffer of the caller) */
static void copy_file(const char *src, char *tmp)
{
    int fd = mkstemp(tmp);
    if (fd < 0) abort();
    FILE *in = fopen(src, "rb");
    char buf[65536];
    size_t k;
    while (in && (k = fread(buf, 1, sizeof buf, in)) > 0)
        if (write(fd, buf, k) != (ssize_t)k) abort();
    if (in) fclose(in);
    close(fd);
}

static bool listed(zp_keycache_t *kc, const char *path, uint32_t *tier)
{
    zp_keycache_info_t *v;
    size_t n;
    bool f = false;
    if (zp_keycache_list(kc, &v, &n) < 0) return false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].path, path)) { f = true; if (tier) *tier = v[i].tier; }
    zp_keycache_list_free(v, n);
    return f;
}

static uint64_t key_bytes(const char *path)
{
    zp_keycache_t *kc = zp_keycache_new();
    zp_keyent_t *e;
    uint64_t b = 0;
    if (zp_keycache_key(kc, path, true, &e) == 0) { b = e->bytes; zp_keycache_release(kc, e); }
    zp_keycache_destroy(&kc);
    return b;
}

typedef struct { zp_keycache_t *kc; const char *p[2]; int bad; } race_t;
static void *racer(void *arg)
{
    race_t *r = arg;
    for (int i = 0; i < 150; i++) {
        zp_keyent_t *e;
        const char *p = r->p[(i + (int)(uintptr_t)pthread_self()) & 1];
        if (zp_keycache_key(r->kc, p, true, &e) < 0) { __atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED); continue; }
        /* in use: the key memory must stay there until we release it */
        if (!e->key.mem || !e->key.n_vars || strcmp(e->path, p)) __atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
        volatile uint8_t x = ((const uint8_t *)e->key.mem)[e->key.mem_len ? e->key.mem_len - 1 : 0];
        (void)x;
        zp_keycache_release(r->kc, e);
    }
    return NULL;
}

/* a stage's tier function: DEVICE for the entry it names, PINNED for every entry, and a bit
 * the cache must not let through (SHM: only the cache says where the memory is) */
static const zp_keyent_t *tier_dev;
static uint32_t test_tiers(void *ctx, const zp_keyent_t *e)
{
    (*(unsigned *)ctx)++;
    return ZP_KEYTIER_PINNED | ZP_KEYTIER_SHM | (e == tier_dev ? ZP_KEYTIER_DEVICE : 0);
}

static int tiers_and_budget(void)
{
    int fails = 0;
    const char *A = ZP_FIXTURES_DIR "/bn128_chain/circuit.zkey", *B = ZP_FIXTURES_DIR "/bn128_poseidon2/circuit.zkey",
               *C = ZP_FIXTURES_DIR "/bn128_mix/circuit.zkey";
    uint64_t ba = key_bytes(A), bb = key_bytes(B), bc = key_bytes(C), big = ba > bb ? ba : bb;
    big = big > bc ? big : bc;
    CHECK(ba && bb && bc);

    /* 5a: one key's room; private memory */
    zp_keycache_t *kc = zp_keycache_new();
    zp_keycache_set_budget(kc, big, 0);
    zp_keyent_t *ea, *eb, *ea2;
    zp_keycache_stats_t st;
    CHECK(zp_keycache_key(kc, A, true, &ea) == 0 && ea->refs == 1);
    uint32_t tier = 0;
    CHECK(listed(kc, A, &tier) && tier == ZP_KEYTIER_PRIVATE);
    /* the stage's tiers (the GPU worker's backend: pinned, on the device) come from its function,
     * asked at every listing (a key the device evicted is no longer listed there) */
    unsigned calls = 0;
    zp_keycache_set_tier_fn(kc, test_tiers, &calls);
    tier_dev = ea;
    CHECK(listed(kc, A, &tier) && tier == (ZP_KEYTIER_PRIVATE | ZP_KEYTIER_PINNED | ZP_KEYTIER_DEVICE) && calls == 1);
    tier_dev = NULL;
    CHECK(listed(kc, A, &tier) && tier == (ZP_KEYTIER_PRIVATE | ZP_KEYTIER_PINNED) && calls == 2);
    zp_keycache_set_tier_fn(kc, NULL, NULL);
    CHECK(listed(kc, A, &tier) && tier == ZP_KEYTIER_PRIVATE && calls == 2);
    CHECK(zp_keycache_key(kc, B, true, &eb) == 0);
    CHECK(listed(kc, A, NULL) && listed(kc, B, NULL));        /* A in use: kept, over budget */
    CHECK(ea->key.mem != NULL && ea->key.n_vars > 0);
    zp_keycache_stats(kc, &st);
    CHECK(st.evictions == 0 && st.bytes == ba + bb && st.loads == 2);
    zp_keycache_release(kc, ea);                               /* now it goes */
    CHECK(!listed(kc, A, NULL) && listed(kc, B, NULL));
    zp_keycache_stats(kc, &st);
    CHECK(st.evictions == 1 && st.bytes == bb);
    zp_keycache_release(kc, eb);
    CHECK(listed(kc, B, NULL));                                /* fits: stays */
    CHECK(zp_keycache_key(kc, A, true, &ea2) == 0);            /* A again: B (unreferenced) evicted */
    CHECK(listed(kc, A, NULL) && !listed(kc, B, NULL));
    zp_keycache_stats(kc, &st);
    CHECK(st.loads == 3 && st.evictions == 2);
    zp_keycache_release(kc, ea2);
    zp_keycache_release(kc, ea2);                              /* a double release is refused, logged */
    CHECK(ea2->refs == 0 && listed(kc, A, NULL));
    zp_keycache_destroy(&kc);

    /* 5b: LRU with room for two: A, B, A again, then C evicts B */
    kc = zp_keycache_new();
    zp_keycache_set_budget(kc, ba + bb + (bc > ba ? bc - ba : 0), 0);
    zp_keyent_t *e;
    CHECK(zp_keycache_key(kc, A, true, &e) == 0); zp_keycache_release(kc, e);
    CHECK(zp_keycache_key(kc, B, true, &e) == 0); zp_keycache_release(kc, e);
    CHECK(zp_keycache_key(kc, A, true, &e) == 0); zp_keycache_release(kc, e);
    CHECK(zp_keycache_key(kc, C, true, &e) == 0); zp_keycache_release(kc, e);
    CHECK(listed(kc, A, NULL) && !listed(kc, B, NULL) && listed(kc, C, NULL));
    zp_keycache_destroy(&kc);

    /* 5c: the shared store: SHM tier; evicted from the process it stays in the store, unheld, and
     * comes back hot; the store budget unlinks unheld objects before a fill */
    char prefix[64];
    snprintf(prefix, sizeof prefix, "/zp-test-kc-%d", (int)getpid());
    kc = zp_keycache_new();
    CHECK(zp_keycache_set_store(kc, prefix, NULL) == 0);
    zp_keycache_set_budget(kc, big, 0);
    CHECK(zp_keycache_key(kc, A, true, &e) == 0 && e->ks && !e->hot);
    CHECK(listed(kc, A, &tier) && tier == ZP_KEYTIER_SHM);
    zp_keystore_info_t *v;
    size_t n;
    CHECK(zp_keystore_list(prefix, &v, &n) == 0 && n == 1 && v[0].in_use && v[0].valid);
    CHECK(n == 1 && v[0].n_holders >= 1 && v[0].holders[0] == (int32_t)getpid());
    CHECK(n == 1 && strstr(v[0].path, "bn128_chain/circuit.zkey") != NULL);
    CHECK(n == 1 && zp_keystore_evict(v[0].name, false) == -EBUSY);   /* held: refused */
    free(v);
    zp_keycache_release(kc, e);
    CHECK(zp_keycache_key(kc, B, true, &e) == 0);              /* A evicted from the process... */
    zp_keycache_release(kc, e);
    CHECK(!listed(kc, A, NULL));
    CHECK(zp_keystore_list(prefix, &v, &n) == 0 && n == 2);    /* ...but still in the store */
    for (size_t i = 0; i < n; i++)
        if (strstr(v[i].path, "bn128_chain")) CHECK(!v[i].in_use);
    free(v);
    CHECK(zp_keycache_key(kc, A, true, &e) == 0 && e->hot);    /* mapped back, not parsed */
    zp_keycache_release(kc, e);
    zp_keycache_destroy(&kc);
    /* store budget of one key: filling C unlinks the least recently used unheld objects */
    kc = zp_keycache_new();
    CHECK(zp_keycache_set_store(kc, prefix, NULL) == 0);
    zp_keycache_set_budget(kc, 0, 1);   /* nothing else fits: every unheld object goes */
    CHECK(zp_keycache_key(kc, C, true, &e) == 0);
    CHECK(zp_keystore_list(prefix, &v, &n) == 0 && n == 1 && strstr(v[0].path, "bn128_mix"));
    free(v);
    zp_keycache_release(kc, e);
    zp_keycache_destroy(&kc);
    zp_keystore_unlink_all(prefix);

    /* 5d: a file changed while referenced: a fresh entry; the old stays valid until released */
    char tmp[] = "/tmp/zp-test-keycache-b-XXXXXX";
    copy_file(A, tmp);
    kc = zp_keycache_new();
    zp_keyent_t *o, *f;
    CHECK(zp_keycache_key(kc, tmp, true, &o) == 0);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, tmp, ts, 0) == 0);
    CHECK(zp_keycache_key(kc, tmp, true, &f) == 0 && f != o);
    CHECK(o->detached && o->key.mem && o->key.n_vars == f->key.n_vars);
    zp_keycache_release(kc, o);                                /* freed now (ASan: no leak, no UAF) */
    zp_keycache_release(kc, f);
    zp_keycache_stats(kc, &st);
    CHECK(st.n_keys == 1 && st.loads == 2);
    zp_keycache_destroy(&kc);
    unlink(tmp);

    /* 5e: two threads, one key's budget, keys alternating */
    kc = zp_keycache_new();
    zp_keycache_set_budget(kc, big, 0);
    race_t r = {.kc = kc, .p = {A, B}};
    pthread_t t1, t2;
    CHECK(pthread_create(&t1, NULL, racer, &r) == 0 && pthread_create(&t2, NULL, racer, &r) == 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(r.bad == 0);
    zp_keycache_stats(kc, &st);
    CHECK(st.loads >= 2 && st.n_keys >= 1);
    fprintf(stderr, "two threads: %llu loads, %llu evictions\n", (unsigned long long)st.loads,
            (unsigned long long)st.evictions);
    zp_keycache_destroy(&kc);

    /* 5f: byte sizes */
    uint64_t x;
    CHECK(zp_parse_bytes("t", "123", &x) == 0 && x == 123);
    CHECK(zp_parse_bytes("t", "64M", &x) == 0 && x == 64ull << 20);
    CHECK(zp_parse_bytes("t", "1.5G", &x) == 0 && x == 3ull << 29);
    CHECK(zp_parse_bytes("t", "2TiB", &x) == 0 && x == 2ull << 40);
    CHECK(zp_parse_bytes("--key-budget", "12Q", &x) < 0 && strstr(zp_err_msg(), "--key-budget '12Q'"));
    CHECK(zp_parse_bytes("t", "-1", &x) < 0 && zp_parse_bytes("t", "", &x) < 0);
    return fails;
}

int main(void)
{
    const char *bn = ZP_FIXTURES_DIR "/bn128_chain", *bls = ZP_FIXTURES_DIR "/bls12381_chain";
    char zkey[512], wtns_ok[512], wtns_other[512], r1cs[512];
    snprintf(zkey, sizeof zkey, "%s/circuit.zkey", bn);
    snprintf(wtns_ok, sizeof wtns_ok, "%s/witness-0.wtns", bn);
    snprintf(wtns_other, sizeof wtns_other, "%s/witness-0.wtns", bls);
    snprintf(r1cs, sizeof r1cs, "%s/circuit.r1cs", bn);
    zp_log_init("test");
    zp_keycache_t *kc = zp_keycache_new();
    CHECK(kc != NULL);

    /* 1: first task: matching job */
    zp_keyent_t *e1 = NULL, *e2 = NULL;
    char *p = heap_path(zkey);
    CHECK(zp_keycache_key(kc, p, false, &e1) == 0);
    zp_wtns_t w;
    CHECK(zp_wtns_open(&w, wtns_ok) == 0);
    CHECK(zp_check_wtns_zkey(&w, &e1->zkey) == 0);
    zp_wtns_close(&w);
    drop_path(p);                        /* the task ended */
    /* the allocator hands the same memory to the next task's strings */
    char *reuse = heap_path("/elsewhere/not-the-zkey-at-all.zkey.............................................");
    /* second task: a witness of the other curve against the same (cached) zkey */
    p = heap_path(zkey);
    CHECK(zp_keycache_key(kc, p, false, &e2) == 0);
    CHECK(e2 == e1);
    drop_path(p);
    CHECK(zp_wtns_open(&w, wtns_other) == 0);
    zp_err_clear();
    int rc = zp_check_wtns_zkey(&w, &e2->zkey);
    zp_wtns_close(&w);
    CHECK(rc < 0);
    fprintf(stderr, "mismatch: %s: %s\n", zp_strerror(rc), zp_err_msg());
    CHECK(strstr(zp_err_msg(), zkey) != NULL);   /* names the zkey, not freed memory */
    CHECK(strstr(zp_err_msg(), "XXXX") == NULL && strstr(zp_err_msg(), "elsewhere") == NULL);
    CHECK(strcmp(e2->path, zkey) == 0 && strcmp(e2->zkey.f.path ? e2->zkey.f.path : "", zkey) == 0);
    free(reuse);

    /* 2: r1cs entry owns its path too */
    const zp_r1cs_t *r1 = NULL, *r2 = NULL;
    p = heap_path(r1cs);
    CHECK(zp_keycache_r1cs(kc, p, &r1) == 0);
    drop_path(p);
    p = heap_path(r1cs);
    CHECK(zp_keycache_r1cs(kc, p, &r2) == 0);
    drop_path(p);
    CHECK(r1 == r2 && r1 && r1->f.path && strcmp(r1->f.path, r1cs) == 0);

    /* 3: a changed file (new mtime) is loaded again; unchanged, it is the same entry */
    char tmp[] = "/tmp/zp-test-keycache-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    FILE *in = fopen(zkey, "rb");
    char buf[65536];
    size_t k;
    while (in && (k = fread(buf, 1, sizeof buf, in)) > 0) CHECK(write(fd, buf, k) == (ssize_t)k);
    if (in) fclose(in);
    close(fd);
    zp_keyent_t *c1 = NULL, *c2 = NULL;
    CHECK(zp_keycache_key(kc, tmp, false, &c1) == 0);
    uint64_t id1[4];
    memcpy(id1, c1->file_id, sizeof id1);
    CHECK(zp_keycache_key(kc, tmp, false, &c2) == 0 && c2 == c1);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, tmp, ts, 0) == 0);
    CHECK(zp_keycache_key(kc, tmp, false, &c2) == 0 && memcmp(c2->file_id, id1, sizeof id1) != 0);
    CHECK(strcmp(c2->zkey.f.path, tmp) == 0);
    unlink(tmp);

    /* 4: a missing file is an error naming it; preload names the path */
    zp_keyent_t *e3;
    CHECK(zp_keycache_key(kc, "/nonexistent/zp-test.zkey", false, &e3) < 0);
    CHECK(zp_keycache_preload(kc, "/nonexistent/zp-test.zkey") < 0);
    CHECK(strstr(zp_err_msg(), "--preload /nonexistent/zp-test.zkey") != NULL);

    zp_keycache_destroy(&kc);
    CHECK(kc == NULL);
    zp_keycache_destroy(&kc);   /* NULL is fine */
    fails += tiers_and_budget();
    if (fails) { fprintf(stderr, "test_keycache: %d failure(s)\n", fails); return 1; }
    printf("test_keycache: OK\n");
    return 0;
}
