/* test_shm.c - the shared-memory arena: create/open checks (bad magic, version, short and
 * inconsistent objects: errors, no SIGBUS), the slot state machine, stale generations,
 * validated vector access, payload seal, fenced result writes, a SIGKILLed owner and its late
 * write, concurrent CAS between processes, checksum known answers; slot size classes (layout,
 * per-slot extents, a tampered class table). */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/shm.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, \
                                          zp_err_msg()); exit(1); } } while (0)

static char g_names[16][64];
static int g_nnames;
static char g_tmpdir[64];

static void cleanup(void)
{
    for (int i = 0; i < g_nnames; i++)
        shm_unlink(g_names[i]);
    if (g_tmpdir[0]) {
        char p[128];
        snprintf(p, sizeof p, "%s/arena", g_tmpdir);
        unlink(p);
        rmdir(g_tmpdir);
    }
}

static const char *new_name(const char *tag)
{
    CHECK(g_nnames < 16);
    char *n = g_names[g_nnames++];
    snprintf(n, 64, "/zkpipe-test-%d-%s", (int)getpid(), tag);
    shm_unlink(n);
    return n;
}

/* a raw object of `size` bytes whose first bytes are `hdr` (may be NULL) */
static void make_raw(const char *name, size_t size, const void *hdr, size_t hlen)
{
    shm_unlink(name);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)size) == 0);
    if (hdr)
        CHECK(pwrite(fd, hdr, hlen, 0) == (ssize_t)hlen);
    close(fd);
}

static void test_checksum(void)
{
    uint8_t buf[300];
    for (int i = 0; i < 300; i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    /* known answers (pinned: the function is part of the shared layout, it must not change) */
    CHECK(zp_shm_checksum("", 0, 0) == UINT64_C(0x6e3930becbaa0760));
    CHECK(zp_shm_checksum("abc", 3, 0) == UINT64_C(0x4c8f967ede84d5be));
    CHECK(zp_shm_checksum(buf, 300, 0) == UINT64_C(0x71a74954e85ecdf5));
    CHECK(zp_shm_checksum(buf, 300, 12345) == UINT64_C(0x8f2d6ae3d8331521));
    CHECK(zp_shm_checksum(buf, 31, 0) == UINT64_C(0x07454aa667596b88));
    CHECK(zp_shm_checksum(buf, 32, 0) == UINT64_C(0x6466d5716a9e119f));
    /* alignment independence */
    uint8_t *shifted = malloc(310);
    for (int off = 1; off < 9; off++) {
        memcpy(shifted + off, buf, 300);
        CHECK(zp_shm_checksum(shifted + off, 300, 7) == zp_shm_checksum(buf, 300, 7));
    }
    free(shifted);
    /* every length and every single-bit flip gives a different value (not a proof, a smoke test) */
    uint64_t seen[301];
    for (int n = 0; n <= 300; n++) {
        seen[n] = zp_shm_checksum(buf, (size_t)n, 1);
        for (int k = 0; k < n; k++)
            CHECK(seen[k] != seen[n]);
    }
    uint64_t ref = zp_shm_checksum(buf, 300, 1);
    for (int bit = 0; bit < 300 * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(zp_shm_checksum(buf, 300, 1) != ref);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK(zp_shm_checksum(buf, 300, 2) != ref);
}

static void test_create_open(void)
{
    const char *name = new_name("a");
    zp_shm_cfg_t cfg = { .name = name, .n_slots = 3, .slot_bytes = 5 << 20, .aux_bytes = 1 };
    zp_shm_t *a = NULL, *b = NULL, *c = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0 && a);
    const zp_shm_hdr_t *h = zp_shm_header(a);
    CHECK(h->magic == ZP_SHM_MAGIC && h->version == ZP_SHM_VERSION && h->n_slots == 3);
    CHECK(zp_shm_slot_bytes(a) == (6u << 20));        /* rounded to 2 MiB */
    CHECK(h->data_off == ZP_SHM_ALIGN);
    CHECK(h->aux_bytes == ZP_SHM_ALIGN && h->aux_off == ZP_SHM_ALIGN + 3 * (6u << 20));
    CHECK(h->total_bytes == h->aux_off + ZP_SHM_ALIGN);
    CHECK(zp_shm_epoch(a) != 0);
    size_t len;
    CHECK(zp_shm_aux(a, &len) && len == ZP_SHM_ALIGN);
    CHECK(zp_shm_data(a, &len) && len == 3 * (6u << 20));
    CHECK(((uintptr_t)zp_shm_slot_extent(a, 1) - (uintptr_t)zp_shm_base(a, NULL)) == h->data_off + (6u << 20));
    CHECK(zp_shm_slot(a, 3) == NULL && zp_shm_slot_extent(a, 3) == NULL);
    for (uint32_t i = 0; i < 3; i++)
        CHECK(zp_shm_slot_word_load(a, i) == zp_shm_word(ZP_SLOT_FREE, 1));
    /* exclusive creation */
    CHECK(zp_shm_create(&b, &cfg) == -EEXIST && b == NULL);
    /* open: same epoch, same geometry; a wrong epoch is refused */
    CHECK(zp_shm_open(&b, name, NULL, zp_shm_epoch(a)) == 0);
    CHECK(zp_shm_n_slots(b) == 3 && zp_shm_slot_bytes(b) == zp_shm_slot_bytes(a));
    CHECK(zp_shm_open(&c, name, NULL, zp_shm_epoch(a) ^ 1) == ZP_EMISMATCH && c == NULL);
    /* both mappings see the same word */
    uint64_t gen;
    CHECK(zp_shm_slot_claim_at(b, 2, &gen) == 0 && gen == 2);
    CHECK(zp_shm_slot_word_load(a, 2) == zp_shm_word(ZP_SLOT_SYNTH, 2));
    zp_shm_close(&b);
    CHECK(b == NULL);
    zp_shm_close(&b);                                  /* NULL-safe */
    zp_shm_close(&a);
    CHECK(zp_shm_unlink(name, NULL) == 0);
    CHECK(zp_shm_open(&a, name, NULL, 0) == -ENOENT);
    CHECK(zp_shm_unlink(name, NULL) == -ENOENT);

    /* bad names and configurations */
    zp_shm_cfg_t bad = cfg;
    bad.name = "no-slash";
    CHECK(zp_shm_create(&a, &bad) == -EINVAL);
    bad.name = "/a/b";
    CHECK(zp_shm_create(&a, &bad) == -EINVAL);
    bad = cfg;
    bad.n_slots = 0;
    CHECK(zp_shm_create(&a, &bad) == -EINVAL);
    bad.n_slots = ZP_SHM_MAX_SLOTS;
    bad.slot_bytes = UINT64_MAX - 5;
    CHECK(zp_shm_create(&a, &bad) == ZP_ETOOBIG);
    char dn[64];
    CHECK(zp_shm_default_name(dn, sizeof dn, "prod") == 0);
    char want[64];
    snprintf(want, sizeof want, "/zkpipe-%u-prod", (unsigned)getuid());
    CHECK(strcmp(dn, want) == 0);
    CHECK(zp_shm_default_name(dn, sizeof dn, "a/b") == -EINVAL);
    CHECK(zp_shm_default_name(dn, 8, "prod") == -ENAMETOOLONG);
}

static void test_bad_objects(void)
{
    const char *name = new_name("bad");
    const char *good = new_name("good");
    zp_shm_t *a = NULL, *g = NULL;
    zp_shm_cfg_t cfg = { .name = good, .n_slots = 2, .slot_bytes = 1 };
    CHECK(zp_shm_create(&g, &cfg) == 0);
    zp_shm_hdr_t hdr;
    memcpy(&hdr, zp_shm_header(g), sizeof hdr);
    uint64_t total = hdr.total_bytes;

    make_raw(name, 0, NULL, 0);                        /* empty: short, not SIGBUS */
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "shorter"));
    make_raw(name, 100, NULL, 0);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    make_raw(name, total, NULL, 0);                    /* zeros: bad magic */
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "magic"));

    zp_shm_hdr_t h = hdr;
    h.version = ZP_SHM_VERSION + 1;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EVERSION);
    h.version = 1;                                     /* the layout before slot classes */
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EVERSION);

    make_raw(name, total - 4096, &hdr, sizeof hdr);    /* header promises more than the object has */
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "object has"));
    make_raw(name, 4096, &hdr, sizeof hdr);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);

    h = hdr;                                           /* slot table larger than the data offset */
    h.n_slots = 5000;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    h = hdr;                                           /* consistent total but wrong data offset */
    h.data_off = 4096;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "inconsistent"));
    h = hdr;
    h.slot_bytes = (1u << 20) * 3;                     /* not 2 MiB multiple */
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    h = hdr;
    h.n_slots = 0x7fffffff;                            /* absurd counts */
    h.slot_bytes = UINT64_C(1) << 62;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    h = hdr;
    h.epoch = 0;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    h = hdr;
    h.desc_bytes = 1024;
    make_raw(name, total, &h, sizeof h);
    CHECK(zp_shm_open(&a, name, NULL, 0) == ZP_EFORMAT);
    CHECK(a == NULL);
    /* the intact copy opens */
    make_raw(name, total, &hdr, sizeof hdr);
    CHECK(zp_shm_open(&a, name, NULL, hdr.epoch) == 0);
    zp_shm_close(&a);
    shm_unlink(name);
    zp_shm_close(&g);
    shm_unlink(good);
}

/* slot size classes: extents class by class, each slot checked against its own extent, the
 * class table of the (untrusted) header validated at open */
static void test_classes(void)
{
    const char *name = new_name("classes");
    const zp_shm_class_t cl[3] = {{2, 1u << 20}, {1, 5u << 20}, {3, 9u << 20}};   /* -> 2, 6, 10 MiB */
    zp_shm_cfg_t cfg = {.name = name, .n_classes = 3, .classes = cl, .aux_bytes = 1};
    zp_shm_t *a = NULL, *b = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0);
    CHECK(zp_shm_n_slots(a) == 6 && zp_shm_n_classes(a) == 3 && zp_shm_slot_bytes(a) == (10u << 20));
    static const uint64_t want[6] = {2u << 20, 2u << 20, 6u << 20, 10u << 20, 10u << 20, 10u << 20};
    static const uint32_t wcls[6] = {0, 0, 1, 2, 2, 2};
    size_t dlen, total;
    uint8_t *data = zp_shm_data(a, &dlen), *base = zp_shm_base(a, &total);
    CHECK(dlen == (2 * 2 + 6 + 3 * 10) * (size_t)(1u << 20));
    uint8_t *end = data;
    for (uint32_t i = 0; i < 6; i++) {
        CHECK(zp_shm_slot_class(a, i) == wcls[i] && zp_shm_slot_extent_bytes(a, i) == want[i]);
        uint8_t *e = zp_shm_slot_extent(a, i);
        CHECK(e == end);                                   /* contiguous, no overlap */
        end = e + want[i];
        memset(e, (int)i + 1, 64);
        e[want[i] - 1] = (uint8_t)(i + 1);
    }
    CHECK(end == data + dlen && (uint8_t *)zp_shm_aux(a, NULL) == end && end + (2u << 20) == base + total);
    CHECK(zp_shm_slot_class(a, 6) == 3 && zp_shm_slot_extent_bytes(a, 6) == 0 && !zp_shm_slot_extent(a, 6));
    zp_shm_class_t c;
    uint32_t first;
    CHECK(zp_shm_class_get(a, 1, &c, &first) && c.n_slots == 1 && c.slot_bytes == (6u << 20) && first == 2);
    CHECK(!zp_shm_class_get(a, 3, &c, &first));
    /* a circuit of domain 2^16 needs 10 MiB: not in a 2 or 6 MiB slot, fine in a 10 MiB one */
    uint32_t big = 1u << 16;
    CHECK(zp_shm_slot_bytes_for(big, big, 32) == (10u << 20));
    uint64_t g;
    CHECK(zp_shm_slot_claim_at(a, 0, &g) == 0);
    CHECK(zp_shm_slot_layout(a, 0, ZP_SLOT_SYNTH, g, big, big, 32) == ZP_ETOOBIG && strstr(zp_err_msg(), "the slot has"));
    CHECK(zp_shm_slot_layout(a, 0, ZP_SLOT_SYNTH, g, 1024, 1024, 32) == 0);
    /* a hostile offset inside the largest extent but outside this slot's own */
    zp_shm_slot_t *s = zp_shm_slot(a, 0);
    s->vec_off[ZP_SHM_VEC_H] = (4u << 20);
    CHECK(zp_shm_slot_vec(a, 0, ZP_SHM_VEC_H, NULL) == NULL && strstr(zp_err_msg(), "2097152-byte extent"));
    CHECK(zp_shm_slot_claim_at(a, 4, &g) == 0);
    CHECK(zp_shm_slot_layout(a, 4, ZP_SLOT_SYNTH, g, big, big, 32) == 0);
    size_t hl;
    uint8_t *h = zp_shm_slot_vec(a, 4, ZP_SHM_VEC_H, &hl);
    CHECK(h && h + hl <= (uint8_t *)zp_shm_slot_extent(a, 4) + want[4] && hl == (size_t)big * 32);
    /* another process's view: the same classes, from the header */
    CHECK(zp_shm_open(&b, name, NULL, zp_shm_epoch(a)) == 0);
    CHECK(zp_shm_n_classes(b) == 3 && zp_shm_slot_extent_bytes(b, 2) == (6u << 20));
    for (uint32_t i = 0; i < 6; i++) {
        uint8_t *e = zp_shm_slot_extent(b, i);
        CHECK(e[0] == i + 1 && e[want[i] - 1] == i + 1);
    }
    zp_shm_close(&b);
    /* a tampered class table is refused (no SIGBUS) */
    const char *raw = new_name("classraw");
    zp_shm_hdr_t hdr, t;
    memcpy(&hdr, zp_shm_header(a), sizeof hdr);
    struct { const char *what; int k; } bad[] = {{"n_classes 0", 0}, {"n_classes 17", 1}, {"class slots", 2},
                                                  {"not ascending", 3}, {"not 2 MiB", 4}, {"bigger extents", 5}};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = hdr;
        switch (bad[i].k) {
        case 0: t.n_classes = 0; break;
        case 1: t.n_classes = 17; break;
        case 2: t.classes[0].n_slots = 3; break;                 /* 7 slots, header says 6 */
        case 3: t.classes[1].slot_bytes = 2u << 20; break;       /* equal to class 0 */
        case 4: t.classes[1].slot_bytes = 7u << 20; break;
        case 5: t.classes[0].slot_bytes = 4u << 20; t.classes[1].slot_bytes = 8u << 20; break;  /* past the object */
        }
        make_raw(raw, total, &t, sizeof t);
        if (zp_shm_open(&b, raw, NULL, 0) != ZP_EFORMAT) { fprintf(stderr, "tampered class table (%s) opened\n", bad[i].what); exit(1); }
        CHECK(b == NULL);
    }
    make_raw(raw, total, &hdr, sizeof hdr);                  /* the intact header copy opens */
    CHECK(zp_shm_open(&b, raw, NULL, 0) == 0);
    zp_shm_close(&b);
    shm_unlink(raw);
    zp_shm_close(&a);
    CHECK(zp_shm_unlink(name, NULL) == 0);
    /* bad configurations */
    const zp_shm_class_t desc[2] = {{1, 6u << 20}, {1, 2u << 20}}, same[2] = {{1, 3u << 20}, {1, 4u << 20}},
                         empty[2] = {{0, 2u << 20}, {1, 4u << 20}};
    cfg.n_classes = 2;
    cfg.classes = desc;
    CHECK(zp_shm_create(&a, &cfg) == -EINVAL && strstr(zp_err_msg(), "ascending"));
    cfg.classes = same;                                       /* both round to 4 MiB */
    CHECK(zp_shm_create(&a, &cfg) == -EINVAL);
    cfg.classes = empty;
    CHECK(zp_shm_create(&a, &cfg) == -EINVAL && strstr(zp_err_msg(), "no slots"));
    cfg.n_classes = ZP_SHM_MAX_CLASSES + 1;
    CHECK(zp_shm_create(&a, &cfg) == -EINVAL);
    CHECK(a == NULL);
}

static void test_hugetlb_dir(void)
{
    /* the hugetlbfs code path on an ordinary directory: a file, 2 MiB multiples */
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/zp-shm-test-%d", (int)getpid());
    CHECK(mkdir(g_tmpdir, 0700) == 0);
    zp_shm_cfg_t cfg = { .name = "arena", .hugetlb_dir = g_tmpdir, .n_slots = 2, .slot_bytes = 1 };
    zp_shm_t *a = NULL, *b = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0);
    CHECK(zp_shm_header(a)->flags & ZP_SHM_F_HUGETLB);
    CHECK(zp_shm_header(a)->total_bytes % ZP_SHM_ALIGN == 0);
    CHECK(zp_shm_open(&b, "/arena", g_tmpdir, zp_shm_epoch(a)) == 0);
    struct stat st;
    char p[128];
    snprintf(p, sizeof p, "%s/arena", g_tmpdir);
    CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
    zp_shm_close(&b);
    zp_shm_close(&a);
    CHECK(zp_shm_unlink("arena", g_tmpdir) == 0);
    CHECK(stat(p, &st) < 0);
}

static void test_state_machine(zp_shm_t *a)
{
    uint64_t g, g2;
    uint32_t idx;
    CHECK(zp_shm_slot_claim_at(a, 0, &g) == 0 && g == 2);
    CHECK(zp_shm_slot_claim_at(a, 0, &g2) == ZP_ESTALE);             /* not FREE */
    CHECK(zp_shm_slot_check(a, 0, ZP_SLOT_SYNTH, g) == 0);
    CHECK(zp_shm_slot_check(a, 0, ZP_SLOT_SYNTH, g - 1) == ZP_ESTALE);
    CHECK(zp_shm_slot_check(a, 99, ZP_SLOT_SYNTH, g) == -EINVAL);
    /* stale generation and wrong state are refused, nothing changes */
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_SYNTH, g + 1, ZP_SLOT_READY, &g2) == ZP_ESTALE);
    CHECK(strstr(zp_err_msg(), "expected SYNTH gen 3, found SYNTH gen 2"));
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_READY, g, ZP_SLOT_PROVING, &g2) == ZP_ESTALE);
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_SYNTH, g, ZP_SLOT_PROVED, &g2) == ZP_ESTATE);
    CHECK(zp_shm_slot_word_load(a, 0) == zp_shm_word(ZP_SLOT_SYNTH, g));
    /* the full cycle, one generation per step */
    static const unsigned cyc[] = { ZP_SLOT_SYNTH, ZP_SLOT_READY, ZP_SLOT_PROVING, ZP_SLOT_PROVED,
                                    ZP_SLOT_FINALIZING, ZP_SLOT_FREE };
    for (int i = 0; i + 1 < 6; i++) {
        CHECK(zp_shm_slot_transition(a, 0, cyc[i], g, cyc[i + 1], &g2) == 0 && g2 == g + 1);
        g = g2;
    }
    CHECK(zp_shm_slot_word_load(a, 0) == zp_shm_word(ZP_SLOT_FREE, 7));
    /* edges */
    CHECK(zp_shm_transition_valid(ZP_SLOT_PROVING, ZP_SLOT_FAILED));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_FREE, ZP_SLOT_FAILED));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_FREE, ZP_SLOT_READY));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_FAILED, ZP_SLOT_SYNTH));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_NSTATES, ZP_SLOT_FREE));
    CHECK(zp_shm_transition_valid(ZP_SLOT_FINALIZING, ZP_SLOT_FINISHED));
    CHECK(zp_shm_transition_valid(ZP_SLOT_FINISHED, ZP_SLOT_FREE));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_FINISHED, ZP_SLOT_FAILED));
    CHECK(!zp_shm_transition_valid(ZP_SLOT_PROVED, ZP_SLOT_FINISHED));
    CHECK(strcmp(zp_shm_state_name(ZP_SLOT_FINALIZING), "FINALIZING") == 0 && strcmp(zp_shm_state_name(9), "?") == 0);
    /* reset: any state, only at the expected generation */
    CHECK(zp_shm_slot_claim_at(a, 0, &g) == 0);
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_SYNTH, g, ZP_SLOT_READY, &g) == 0);
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_READY, g, ZP_SLOT_PROVING, &g) == 0);
    CHECK(zp_shm_slot_set_owner(a, 0, ZP_SLOT_PROVING, g, 4242, 77, 123) == 0);
    CHECK(zp_shm_slot_set_owner(a, 0, ZP_SLOT_PROVING, g - 1, 1, 1, 1) == ZP_ESTALE);
    CHECK(zp_shm_slot(a, 0)->owner_pid == 4242 && zp_shm_slot(a, 0)->owner_inc == 77);
    CHECK(zp_shm_slot_reset(a, 0, g - 1, ZP_SLOT_READY, &g2) == ZP_ESTALE);
    CHECK(zp_shm_slot_reset(a, 0, g, ZP_SLOT_READY, &g2) == 0 && g2 == g + 1);
    /* a reset keeps the owner (it may still write: quarantine) and drops the lease */
    CHECK(zp_shm_slot(a, 0)->owner_pid == 4242 && zp_shm_slot(a, 0)->lease_ns == 0);
    zp_shm_slot_clear_owner(a, 0);
    CHECK(zp_shm_slot(a, 0)->owner_pid == 0 && zp_shm_slot(a, 0)->owner_inc == 0);
    CHECK(zp_shm_slot_reset(a, 0, g2, 9, NULL) == -EINVAL);
    /* fail with a message */
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_READY, g2, ZP_SLOT_PROVING, &g) == 0);
    char longmsg[600];
    memset(longmsg, 'x', sizeof longmsg - 1);
    longmsg[sizeof longmsg - 1] = 0;
    CHECK(zp_shm_slot_fail(a, 0, ZP_SLOT_PROVING, g, longmsg, &g2) == 0);
    char err[ZP_SHM_ERR_BYTES];
    size_t el;
    CHECK(zp_shm_area_read(a, 0, ZP_SHM_AREA_ERR, g2, err, sizeof err, &el) == 0 && el == 255 && err[255] == 0);
    CHECK(zp_shm_slot_fail(a, 0, ZP_SLOT_FAILED, g2, "again", NULL) == ZP_ESTATE);
    CHECK(zp_shm_slot_transition(a, 0, ZP_SLOT_FAILED, g2, ZP_SLOT_FREE, &g) == 0);
    /* claim any: every slot once, then none */
    uint32_t n = zp_shm_n_slots(a), got = 0;
    while (zp_shm_slot_claim(a, &idx, &g) == 0) {
        CHECK(zp_shm_slot_word_load(a, idx) == zp_shm_word(ZP_SLOT_SYNTH, g));
        got |= 1u << idx;
    }
    CHECK(got == (1u << n) - 1);
    CHECK(zp_shm_slot_claim(a, &idx, &g) == -EAGAIN);
    zp_shm_stats_t st;
    zp_shm_stats(a, &st);
    CHECK(st.n_slots == n && st.by_state[ZP_SLOT_SYNTH] == n && st.invalid == 0);
    /* corrupt word: counted as invalid */
    uint64_t w0 = zp_shm_slot_word_load(a, 1);
    atomic_store(&zp_shm_slot(a, 1)->word, zp_shm_word(200, 5));
    zp_shm_stats(a, &st);
    CHECK(st.invalid == 1 && st.by_state[ZP_SLOT_SYNTH] == n - 1);
    atomic_store(&zp_shm_slot(a, 1)->word, w0);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t w = zp_shm_slot_word_load(a, i);
        CHECK(zp_shm_slot_reset(a, i, zp_shm_word_gen(w), ZP_SLOT_FREE, NULL) == 0);
    }
    zp_shm_stats(a, &st);
    CHECK(st.by_state[ZP_SLOT_FREE] == n);
}

static void test_vectors(zp_shm_t *a)
{
    uint64_t g, g2;
    CHECK(zp_shm_slot_claim_at(a, 1, &g) == 0);
    uint64_t sb = zp_shm_slot_bytes(a);
    /* 1000 vars, domain 1024, 32-byte scalars */
    CHECK(zp_shm_slot_bytes_for(1000, 1024, 32) == ZP_SHM_ALIGN);
    CHECK(zp_shm_slot_bytes_for(1u << 20, 1u << 20, 32) == UINT64_C(160) << 20);
    CHECK(zp_shm_slot_layout(a, 1, ZP_SLOT_SYNTH, g - 1, 1000, 1024, 32) == ZP_ESTALE);
    CHECK(zp_shm_slot_layout(a, 1, ZP_SLOT_SYNTH, g, 1u << 20, 1u << 20, 32) == ZP_ETOOBIG);
    CHECK(zp_shm_slot_layout(a, 1, ZP_SLOT_SYNTH, g, 1000, 1024, 32) == 0);
    size_t len;
    uint8_t *w = zp_shm_slot_vec(a, 1, ZP_SHM_VEC_W, &len);
    uint8_t *h = zp_shm_slot_vec(a, 1, ZP_SHM_VEC_H, NULL);
    uint8_t *ext = zp_shm_slot_extent(a, 1);
    CHECK(w == ext && len == 32000);
    CHECK(h && (size_t)(h - ext) % ZP_SHM_VEC_ALIGN == 0 && (size_t)(h - ext) + 32768 <= sb);
    uint8_t *av = zp_shm_slot_vec(a, 1, ZP_SHM_VEC_A, &len);
    CHECK(av == ext + 32768 && len == 32768);
    for (size_t i = 0; i < 32000; i++)
        w[i] = (uint8_t)(i * 31);
    memset(av, 5, 32768);
    /* hostile descriptors: every bad offset/length gives NULL, no pointer outside the extent */
    zp_shm_slot_t *s = zp_shm_slot(a, 1);
    uint64_t keep_off = s->vec_off[ZP_SHM_VEC_B], keep_len = s->vec_len[ZP_SHM_VEC_B];
    static const uint64_t bad[][2] = { { 0, UINT64_MAX }, { UINT64_MAX - 63, 64 }, { 64, 0 }, { 1, 8 } };
    for (int i = 0; i < 4; i++) {
        s->vec_off[ZP_SHM_VEC_B] = bad[i][0];
        s->vec_len[ZP_SHM_VEC_B] = bad[i][1];
        void *p = zp_shm_slot_vec(a, 1, ZP_SHM_VEC_B, &len);
        if (i == 2)
            CHECK(p == ext + 64 && len == 0);                     /* empty is fine */
        else
            CHECK(p == NULL && strstr(zp_err_msg(), "outside"));
    }
    s->vec_off[ZP_SHM_VEC_B] = sb - 64;
    s->vec_len[ZP_SHM_VEC_B] = 65;
    CHECK(zp_shm_slot_vec(a, 1, ZP_SHM_VEC_B, &len) == NULL);
    s->vec_len[ZP_SHM_VEC_B] = 64;
    CHECK(zp_shm_slot_vec(a, 1, ZP_SHM_VEC_B, &len) == ext + sb - 64);
    s->vec_off[ZP_SHM_VEC_B] = keep_off;
    s->vec_len[ZP_SHM_VEC_B] = keep_len;
    CHECK(zp_shm_slot_vec(a, 1, ZP_SHM_NVEC, &len) == NULL);
    CHECK(zp_shm_slot_vec(a, 77, ZP_SHM_VEC_W, &len) == NULL);

    /* seal: checksum over w and a; verify; corruption and wrong generations are detected */
    /* with the caller's r, s (issue 30): the rs area is covered by the seal (ZP_SHM_PAYLOAD_RS) */
    uint8_t r32[32], s32[32];
    for (int i = 0; i < 32; i++)
        r32[i] = (uint8_t)(i + 1), s32[i] = (uint8_t)(0x80 | i);
    CHECK(zp_shm_slot_set_rs(a, 1, ZP_SLOT_SYNTH, g - 1, r32, s32) == ZP_ESTALE);
    CHECK(zp_shm_slot_set_rs(a, 1, ZP_SLOT_SYNTH, g, r32, s32) == 0);
    uint32_t mask = ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) | ZP_SHM_PAYLOAD_RS;
    CHECK(zp_shm_payload_seal(a, 1, ZP_SLOT_SYNTH, g, ZP_SHM_PAYLOAD_RS, ZP_SLOT_READY, &g2) == -EINVAL);
    CHECK(zp_shm_payload_seal(a, 1, ZP_SLOT_SYNTH, g - 1, mask, ZP_SLOT_READY, &g2) == ZP_ESTALE);
    CHECK(zp_shm_payload_seal(a, 1, ZP_SLOT_SYNTH, g, mask, ZP_SLOT_PROVED, &g2) == ZP_ESTATE);
    CHECK(zp_shm_payload_seal(a, 1, ZP_SLOT_SYNTH, g, mask, ZP_SLOT_READY, &g2) == 0 && g2 == g + 1);
    CHECK(zp_shm_payload_verify(a, 1, g2) == 0);
    CHECK(zp_shm_payload_verify(a, 1, g) == ZP_ESTALE);
    w[12345] ^= 1;
    CHECK(zp_shm_payload_verify(a, 1, g2) == ZP_EFORMAT);
    w[12345] ^= 1;
    av[32767] ^= 0x80;
    CHECK(zp_shm_payload_verify(a, 1, g2) == ZP_EFORMAT);
    av[32767] ^= 0x80;
    CHECK(zp_shm_payload_verify(a, 1, g2) == 0);
    zp_shm_rs_t rs;
    bool has = false;
    CHECK(zp_shm_payload_verify_rs(a, 1, g2, NULL, &rs, &has) == 0 && has);
    CHECK(!memcmp(rs.r, r32, 32) && !memcmp(rs.s, s32, 32));
    s->rs.s[31] ^= 1;                                    /* the rs area changed after the seal */
    CHECK(zp_shm_payload_verify_rs(a, 1, g2, NULL, &rs, &has) == ZP_EFORMAT && !has);
    s->rs.s[31] ^= 1;
    s->rs.pad[0] = 1;
    CHECK(zp_shm_payload_verify(a, 1, g2) == ZP_EFORMAT);
    s->rs.pad[0] = 0;
    s->payload_mask = mask & ~ZP_SHM_PAYLOAD_RS;         /* the bit dropped: the checksum differs */
    CHECK(zp_shm_payload_verify_rs(a, 1, g2, NULL, &rs, &has) == ZP_EFORMAT && !has);
    s->payload_mask = mask;
    CHECK(zp_shm_payload_verify_rs(a, 1, g2, NULL, NULL, &has) == 0 && has);
    s->payload_mask = 1u << 9;
    CHECK(zp_shm_payload_verify(a, 1, g2) == ZP_EFORMAT);
    s->payload_mask = mask;
    s->vec_len[ZP_SHM_VEC_A] = UINT64_MAX;               /* hostile length after the seal */
    CHECK(zp_shm_payload_verify(a, 1, g2) == ZP_EFORMAT);
    s->vec_len[ZP_SHM_VEC_A] = 32768;

    /* fenced result: commit, read with the commit generation only */
    uint8_t res[ZP_SHM_RESULT_BYTES], out[ZP_SHM_RESULT_BYTES];
    for (size_t i = 0; i < sizeof res; i++)
        res[i] = (uint8_t)(i ^ 0x5a);
    uint64_t gp, gd;
    CHECK(zp_shm_slot_transition(a, 1, ZP_SLOT_READY, g2, ZP_SLOT_PROVING, &gp) == 0);
    CHECK(zp_shm_commit(a, 1, ZP_SLOT_PROVING, gp, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, res, sizeof res + 1, &gd)
          == ZP_ETOOBIG);
    CHECK(zp_shm_commit(a, 1, ZP_SLOT_PROVING, gp, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, res, sizeof res, &gd) == 0);
    CHECK(gd == gp + 1 && zp_shm_area_gen(a, 1, ZP_SHM_AREA_RESULT) == gd);
    size_t rl;
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == 0);
    CHECK(rl == sizeof res && memcmp(out, res, rl) == 0);
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gp, out, sizeof out, &rl) == ZP_ESTALE);
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_PROOF, gd, out, sizeof out, &rl) == ZP_ESTALE);  /* never written */
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gd, out, 10, &rl) == ZP_ETOOBIG);
    s->result[100] ^= 4;                                   /* a torn write */
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == ZP_EFORMAT);
    s->result[100] ^= 4;
    s->area_len[ZP_SHM_AREA_RESULT] = 100000;              /* hostile length */
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == ZP_EFORMAT);
    s->area_len[ZP_SHM_AREA_RESULT] = sizeof res;
    /* the finalizer: PROVED -> FINALIZING, writes the proof, -> FREE */
    uint64_t gf, gfree;
    CHECK(zp_shm_slot_transition(a, 1, ZP_SLOT_PROVED, gd, ZP_SLOT_FINALIZING, &gf) == 0);
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == 0);
    CHECK(zp_shm_commit(a, 1, ZP_SLOT_FINALIZING, gf, ZP_SLOT_FREE, ZP_SHM_AREA_PROOF, "proof", 5, &gfree) == 0);
    CHECK(zp_shm_area_read(a, 1, ZP_SHM_AREA_PROOF, gfree, out, sizeof out, &rl) == 0 && rl == 5);
    /* claiming clears the descriptor */
    CHECK(zp_shm_slot_claim_at(a, 1, &g) == 0);
    CHECK(s->vec_len[ZP_SHM_VEC_W] == 0 && s->area_gen[ZP_SHM_AREA_RESULT] == 0 && s->payload_gen == 0);
    /* the finished proof: kept in the slot (FINISHED) until the broker journals it */
    static const char pj[] = "{\"pi_a\": [1, 2]}", pu[] = "[\"7\"]";
    static const uint8_t bin[3] = {9, 8, 7};
    char *rp, *ru;
    uint8_t rb[ZP_SHM_FINAL_BIN_MAX];
    size_t rbl, hl;
    CHECK(zp_shm_slot_layout(a, 1, ZP_SLOT_SYNTH, g, 8, 16, 32) == 0);
    /* not FINALIZING yet */
    CHECK(zp_shm_final_commit(a, 1, g, pj, strlen(pj), pu, strlen(pu), bin, 3, NULL) == ZP_ESTALE);
    for (unsigned st = ZP_SLOT_SYNTH; st < ZP_SLOT_FINALIZING; st++)
        CHECK(zp_shm_slot_transition(a, 1, st, g, st + 1, &g) == 0);
    CHECK(zp_shm_final_commit(a, 1, g, pj, ZP_SHM_FINAL_TEXT_MAX + 1, pu, 1, bin, 3, NULL) == ZP_ETOOBIG);
    CHECK(zp_shm_final_commit(a, 1, g - 1, pj, strlen(pj), pu, strlen(pu), bin, 3, NULL) == ZP_ESTALE);
    CHECK(zp_shm_final_commit(a, 1, g, pj, strlen(pj), pu, strlen(pu), bin, 3, &gfree) == 0 && gfree == g + 1);
    CHECK(zp_shm_slot_check(a, 1, ZP_SLOT_FINISHED, gfree) == 0);
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 1, gfree) == 0);
    CHECK(rp && ru && !strcmp(rp, pj) && !strcmp(ru, pu) && rbl == 3 && !memcmp(rb, bin, 3));
    free(rp); free(ru);
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 1, g) == ZP_ESTALE && !rp && !ru);  /* wrong stamp */
    CHECK(zp_shm_final_read(&rp, &ru, rb, 2, &rbl, a, 1, gfree) == ZP_EFORMAT);                   /* bin too big */
    uint8_t *hv = zp_shm_slot_vec(a, 1, ZP_SHM_VEC_H, &hl);
    CHECK(hv && hv[2] == (uint8_t)pj[2]);
    hv[2] ^= 1;                                             /* the text changed after the commit */
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 1, gfree) == ZP_EFORMAT && !rp);
    hv[2] ^= 1;
    s->vec_off[ZP_SHM_VEC_H] = zp_shm_slot_bytes(a) + 4096; /* hostile offset */
    CHECK(zp_shm_final_read(&rp, &ru, rb, sizeof rb, &rbl, a, 1, gfree) == ZP_EFORMAT && !rp);
    CHECK(zp_shm_slot_transition(a, 1, ZP_SLOT_FINISHED, gfree, ZP_SLOT_FREE, &g) == 0);
    CHECK(zp_shm_slot_claim_at(a, 1, &g) == 0);
    CHECK(zp_shm_slot_reset(a, 1, g, ZP_SLOT_FREE, NULL) == 0);
}

/* a child claims a slot as "synth", records itself as owner, and is SIGKILLed; the parent
 * recovers the slot; a second child (the dead one's late write) uses the old generation */
static void test_kill_recovery(const char *name, uint64_t epoch)
{
    zp_shm_t *a = NULL;
    CHECK(zp_shm_open(&a, name, NULL, epoch) == 0);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        zp_shm_t *c = NULL;
        uint64_t g;
        if (zp_shm_open(&c, name, NULL, epoch) < 0 || zp_shm_slot_claim_at(c, 2, &g) < 0 ||
            zp_shm_slot_set_owner(c, 2, ZP_SLOT_SYNTH, g, (uint64_t)getpid(), 99, zp_now_ns() + 1000000000ull) < 0 ||
            zp_shm_slot_layout(c, 2, ZP_SLOT_SYNTH, g, 10, 16, 32) < 0)
            _exit(2);
        memset(zp_shm_slot_vec(c, 2, ZP_SHM_VEC_W, NULL), 0xab, 320);
        if (write(pfd[1], &g, sizeof g) != sizeof g)
            _exit(3);
        for (;;)
            pause();
    }
    close(pfd[1]);
    uint64_t g_child;
    CHECK(read(pfd[0], &g_child, sizeof g_child) == sizeof g_child);
    close(pfd[0]);
    zp_shm_slot_t *s = zp_shm_slot(a, 2);
    CHECK(zp_shm_slot_word_load(a, 2) == zp_shm_word(ZP_SLOT_SYNTH, g_child));
    CHECK(atomic_load(&s->owner_pid) == (uint64_t)pid && atomic_load(&s->owner_inc) == 99);
    CHECK(kill(pid, SIGKILL) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* the broker notices the dead owner and recovers the slot with a new generation */
    CHECK(kill((pid_t)atomic_load(&s->owner_pid), 0) < 0 && errno == ESRCH);
    uint64_t g_rec, g_new;
    CHECK(zp_shm_slot_reset(a, 2, g_child, ZP_SLOT_FREE, &g_rec) == 0 && g_rec == g_child + 1);
    /* the reset keeps the owner (quarantine: it may still write); known dead, the broker clears it */
    CHECK(atomic_load(&s->owner_pid) == (uint64_t)pid);
    zp_shm_slot_clear_owner(a, 2);
    CHECK(atomic_load(&s->owner_pid) == 0);
    /* ... and hands it to a new job */
    CHECK(zp_shm_slot_claim_at(a, 2, &g_new) == 0 && g_new == g_rec + 1);
    CHECK(zp_shm_slot_layout(a, 2, ZP_SLOT_SYNTH, g_new, 10, 16, 32) == 0);
    memset(zp_shm_slot_vec(a, 2, ZP_SHM_VEC_W, NULL), 0x11, 320);

    /* the late writer: a process that still believes it holds (SYNTH, g_child) */
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        zp_shm_t *c = NULL;
        uint64_t ng = 0;
        if (zp_shm_open(&c, name, NULL, epoch) < 0)
            _exit(2);
        int r1 = zp_shm_commit(c, 2, ZP_SLOT_SYNTH, g_child, ZP_SLOT_READY, ZP_SHM_AREA_RESULT, "late", 4, &ng);
        int r2 = zp_shm_payload_seal(c, 2, ZP_SLOT_SYNTH, g_child, 1, ZP_SLOT_READY, &ng);
        int r3 = zp_shm_slot_transition(c, 2, ZP_SLOT_SYNTH, g_child, ZP_SLOT_READY, &ng);
        int r4 = zp_shm_slot_fail(c, 2, ZP_SLOT_SYNTH, g_child, "late failure", &ng);
        _exit(r1 == ZP_ESTALE && r2 == ZP_ESTALE && r3 == ZP_ESTALE && r4 == ZP_ESTALE ? 0 : 1);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(zp_shm_slot_word_load(a, 2) == zp_shm_word(ZP_SLOT_SYNTH, g_new));   /* untouched */
    CHECK(zp_shm_area_gen(a, 2, ZP_SHM_AREA_RESULT) == 0);
    CHECK(zp_shm_area_gen(a, 2, ZP_SHM_AREA_ERR) == 0);
    uint8_t out[16];
    size_t rl;
    CHECK(zp_shm_area_read(a, 2, ZP_SHM_AREA_RESULT, g_child + 1, out, sizeof out, &rl) == ZP_ESTALE);

    /* a late writer that passed its first check before the reset (simulated: it writes the
     * area with its stamp and dies before the CAS): the current holder's commit and reader
     * are not fooled */
    uint64_t g_ready;
    CHECK(zp_shm_payload_seal(a, 2, ZP_SLOT_SYNTH, g_new, 1, ZP_SLOT_READY, &g_ready) == 0);
    CHECK(zp_shm_payload_verify(a, 2, g_ready) == 0);
    s->area_gen[ZP_SHM_AREA_RESULT] = g_child + 1;           /* the stale stamp */
    memcpy(s->result, "late", 4);
    s->area_len[ZP_SHM_AREA_RESULT] = 4;
    s->area_sum[ZP_SHM_AREA_RESULT] = zp_shm_checksum("late", 4, 1);
    uint64_t gp, gd;
    CHECK(zp_shm_slot_transition(a, 2, ZP_SLOT_READY, g_ready, ZP_SLOT_PROVING, &gp) == 0);
    CHECK(zp_shm_commit(a, 2, ZP_SLOT_PROVING, gp, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, "good", 4, &gd) == 0);
    memcpy(s->result, "late", 4);                             /* ... its bytes land after ours */
    CHECK(zp_shm_area_read(a, 2, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == ZP_EFORMAT);
    memcpy(s->result, "good", 4);
    CHECK(zp_shm_area_read(a, 2, ZP_SHM_AREA_RESULT, gd, out, sizeof out, &rl) == 0 && memcmp(out, "good", 4) == 0);
    CHECK(zp_shm_slot_reset(a, 2, gd, ZP_SLOT_FREE, NULL) == 0);
    zp_shm_close(&a);
}

/* two processes race on the same slot word */
typedef struct {
    _Atomic uint32_t arrive[2];
    _Atomic uint32_t go;
    _Atomic uint32_t wins[2];
    _Atomic uint32_t done[2];
    _Atomic uint32_t progress[2], tries[2];
} race_t;

enum { ROUNDS = 300, CYCLE_ITERS = 200000 };

static void racer(const char *name, uint64_t epoch, int me)
{
    zp_shm_t *c = NULL;
    if (zp_shm_open(&c, name, NULL, epoch) < 0)
        _exit(2);
    race_t *r = zp_shm_aux(c, NULL);
    /* part 1: ROUNDS rounds of "both claim slot 3 at once" */
    for (uint32_t round = 1; round <= ROUNDS; round++) {
        while (atomic_load(&r->go) != round)
            sched_yield();
        uint64_t g;
        if (zp_shm_slot_claim_at(c, 3, &g) == 0)
            atomic_fetch_add(&r->wins[me], 1);
        atomic_fetch_add(&r->arrive[me], 1);
    }
    /* part 2: both drive slot 3 around the whole cycle by CAS, counting their successes */
    static const unsigned next[ZP_SLOT_NSTATES] = {
        ZP_SLOT_SYNTH, ZP_SLOT_READY, ZP_SLOT_PROVING, ZP_SLOT_PROVED, ZP_SLOT_FINALIZING, ZP_SLOT_FREE, ZP_SLOT_FREE,
    };
    uint32_t mine = 0;
    while (atomic_load(&r->go) != ROUNDS + 1)
        sched_yield();
    /* each keeps going until both have made CYCLE_ITERS attempts: their runs overlap */
    for (uint32_t i = 1;; i++) {
        uint64_t w = zp_shm_slot_word_load(c, 3);
        unsigned st = zp_shm_word_state(w);
        if (zp_shm_slot_transition(c, 3, st, zp_shm_word_gen(w), next[st], NULL) == 0)
            mine++;
        if (i % 256 == 0) {
            atomic_store(&r->progress[me], i);
            if (i >= CYCLE_ITERS && atomic_load(&r->progress[!me]) >= CYCLE_ITERS)
                break;
        }
    }
    atomic_store(&r->tries[me], atomic_load(&r->progress[me]));
    atomic_store(&r->done[me], mine + 1);
    zp_shm_close(&c);
    _exit(0);
}

static void test_race(const char *name, uint64_t epoch)
{
    zp_shm_t *a = NULL;
    CHECK(zp_shm_open(&a, name, NULL, epoch) == 0);
    race_t *r = zp_shm_aux(a, NULL);
    memset(r, 0, sizeof *r);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        CHECK(kids[k] >= 0);
        if (kids[k] == 0)
            racer(name, epoch, k);
    }
    for (uint32_t round = 1; round <= ROUNDS; round++) {
        uint32_t before = atomic_load(&r->wins[0]) + atomic_load(&r->wins[1]);
        atomic_store(&r->go, round);
        while (atomic_load(&r->arrive[0]) < round || atomic_load(&r->arrive[1]) < round)
            sched_yield();
        CHECK(atomic_load(&r->wins[0]) + atomic_load(&r->wins[1]) == before + 1);   /* exactly one */
        uint64_t w = zp_shm_slot_word_load(a, 3);
        CHECK(zp_shm_word_state(w) == ZP_SLOT_SYNTH);
        CHECK(zp_shm_slot_reset(a, 3, zp_shm_word_gen(w), ZP_SLOT_FREE, NULL) == 0);
    }
    uint64_t g0 = zp_shm_word_gen(zp_shm_slot_word_load(a, 3));
    atomic_store(&r->go, ROUNDS + 1);
    for (int k = 0; k < 2; k++) {
        int status;
        CHECK(waitpid(kids[k], &status, 0) == kids[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    uint64_t g1 = zp_shm_word_gen(zp_shm_slot_word_load(a, 3));
    uint32_t s0 = atomic_load(&r->done[0]) - 1, s1 = atomic_load(&r->done[1]) - 1;
    /* every successful CAS is exactly one generation: none lost, none doubled */
    CHECK(g1 - g0 == (uint64_t)s0 + s1);
    uint32_t tries = atomic_load(&r->tries[0]) + atomic_load(&r->tries[1]);
    CHECK(s0 + s1 <= tries && tries >= 2 * CYCLE_ITERS);
    printf("shm race: claim rounds %u (wins %u/%u); cycle: %u CAS attempts, wins %u + %u = %llu generations, "
           "%u lost races\n", ROUNDS, atomic_load(&r->wins[0]), atomic_load(&r->wins[1]), tries, s0, s1,
           (unsigned long long)(g1 - g0), tries - s0 - s1);
    uint64_t w = zp_shm_slot_word_load(a, 3);
    CHECK(zp_shm_slot_reset(a, 3, zp_shm_word_gen(w), ZP_SLOT_FREE, NULL) == 0);
    zp_shm_close(&a);
}

static void bench_checksum(void)
{
    size_t n = 64u << 20;
    uint8_t *p = malloc(n);
    CHECK(p);
    memset(p, 0x3c, n);
    uint64_t t0 = zp_now_ns();
    volatile uint64_t h = zp_shm_checksum(p, n, 0);
    uint64_t t1 = zp_now_ns();
    (void)h;
    printf("shm checksum: %.2f GB/s over 64 MiB\n", (double)n / (double)(t1 - t0));
    free(p);
}

int main(void)
{
    atexit(cleanup);
    test_checksum();
    test_create_open();
    test_bad_objects();
    test_classes();
    test_hugetlb_dir();
    const char *name = new_name("main");
    zp_shm_cfg_t cfg = { .name = name, .n_slots = 4, .slot_bytes = 1, .aux_bytes = 4096 };
    zp_shm_t *a = NULL;
    CHECK(zp_shm_create(&a, &cfg) == 0);
    test_state_machine(a);
    test_vectors(a);
    test_kill_recovery(name, zp_shm_epoch(a));
    test_race(name, zp_shm_epoch(a));
    zp_shm_close(&a);
    CHECK(zp_shm_unlink(name, NULL) == 0);
    bench_checksum();
    printf("shm: all tests passed\n");
    return 0;
}
