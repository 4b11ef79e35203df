/* slots.c - who may write into a slot: holders, quarantine and leases (doc/slot-protocol.md,
 * "Holders and quarantine", "Leases").
 *
 * Invariant: at most one process may write into a slot at any time. The broker records the
 * holder of each slot when it assigns it (brk_slot_hold) and forgets it only when that process
 * has reported on the assignment (DONE/FAIL/hand-back, even one that arrives stale) or is known
 * gone: a worker with the same (role, instance) said HELLO with a new incarnation, the worker
 * with that incarnation said HELLO without listing the slot, or its pid no longer exists.
 * A slot held by a process that no longer has a live assignment there (canceled, requeued,
 * declared dead, lease expired) is quarantined: dispatch does not give it to anyone. The holder
 * is mirrored in the descriptor's owner fields (zp_shm_slot_set_owner at assignment,
 * zp_shm_slot_clear_owner at release; resets keep it), so a restarted broker keeps the
 * quarantine (recover.c).
 * Leases: every assignment gets a deadline (brk_lease_ns: base + per 2^20 domain elements, per
 * stage); past it the holder is declared dead with kill_it = true (its supervisor fences it) and
 * what it held is requeued without charging the partitions (worker class).
 * Tests: tests/test_model.c (quarantine, lease and restart scenarios, seeded model). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/broker_int.h"
#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/fmt/fmt.h"
#include "lib/util/util.h"

uint64_t brk_lease_ns(const brk_t *b, const brk_job_t *j, unsigned stage)
{
    if (stage >= ZP_NROLES) stage = ZP_ROLE_GPU;
    uint64_t dom = j && j->domain ? j->domain : b->max_domain;
    uint64_t ms = b->lease_base_ms[stage] + ((uint64_t)b->lease_per_m_ms[stage] * dom >> 20);
    /* issue 28: a synth that computes the witness may first register the wasm (wasm2c + cc,
     * minutes for a large circuit) and then runs the calculation under its own deadline
     * (zkpipe-synth --witness-timeout-ms, 120 s by default): 10 minutes more */
    if (stage == ZP_ROLE_SYNTH && j && j->wasm && *j->wasm) ms += 600000;
    return ms * 1000000u;
}

void brk_slot_hold(brk_t *b, uint32_t s, brk_worker_t *w, uint64_t gen, uint64_t lease)
{
    brk_slot_t *sl = &b->slots[s];
    uint64_t now = zp_now_ns();
    sl->held = true;
    sl->h_role = w->role; sl->h_instance = w->instance; sl->h_pid = w->pid;
    sl->h_inc = w->incarnation; sl->h_gen = gen; sl->h_since = now;
    /* the holder's start time, read once per worker: a later process with the same pid is not it */
    if (!w->pid_start) {
        char st;
        uint64_t t;
        if (zp_proc_stat(w->pid, &st, &t) == 0) w->pid_start = t;
        zp_err_clear();
    }
    sl->h_start = w->pid_start;
    sl->lease = lease ? now + lease : 0;
    static const unsigned busy[ZP_NROLES] = {ZP_SLOT_SYNTH, ZP_SLOT_PROVING, ZP_SLOT_FINALIZING};
    zp_shm_slot_set_owner(b->arena, s, busy[w->role < ZP_NROLES ? w->role : 0], gen, w->pid, w->incarnation,
                          sl->lease);
}

/* the slot's holder still has the live assignment it was given */
static bool live(const brk_t *b, uint32_t s)
{
    const brk_slot_t *sl = &b->slots[s];
    const brk_part_t *p = sl->part;
    return sl->held && p && p->state == PS_RUNNING && p->worker && p->worker->incarnation == sl->h_inc &&
           p->slot == (int32_t)s && p->word_gen == sl->h_gen;
}

static void release(brk_t *b, uint32_t s, const char *why)
{
    brk_slot_t *sl = &b->slots[s];
    if (!sl->held) return;
    if (!live(b, s)) {
        b->c.quarantine_released++;
        zp_log(ZP_LOG_INFO, "slot %u: holder pid %u (incarnation %016llx) %s: out of quarantine", s, sl->h_pid,
               (unsigned long long)sl->h_inc, why);
    }
    sl->held = false;
    sl->lease = 0;
    zp_shm_slot_clear_owner(b->arena, s);
}

void brk_slot_reported(brk_t *b, const brk_worker_t *w, uint32_t s, uint64_t gen)
{
    if (s >= b->n_slots) return;
    brk_slot_t *sl = &b->slots[s];
    /* h_gen 0: a quarantine recovered from the descriptor, generation unknown */
    if (sl->held && sl->h_inc == w->incarnation && (sl->h_gen == gen || sl->h_gen == 0)) release(b, s, "reported");
}

bool brk_slot_usable(const brk_t *b, uint32_t s)
{
    return s < b->n_slots && !b->slots[s].held;
}

/* why process pid (started at start, 0 unknown) is known to write no more, or NULL: it does not
 * exist, it has exited (a zombie its parent has not reaped yet), or its pid now belongs to a
 * later process (the holder's start time differs) */
const char *brk_pid_gone(uint32_t pid, uint64_t start)
{
    if (pid <= 1 || pid > 0x7fffffff) return NULL;
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) return "is gone";
    char st;
    uint64_t t;
    int rc = zp_proc_stat(pid, &st, &t);
    zp_err_clear();
    if (rc == -ENOENT) return "is gone";
    if (rc < 0) return NULL;   /* unreadable /proc: only the kill test above */
    if (st == 'Z' || st == 'X') return "has exited";
    if (start && t != start) return "is gone (its pid now belongs to a later process)";
    return NULL;
}

/* why the quarantined holder of s is known not to write any more, or NULL */
static const char *holder_gone(const brk_t *b, uint32_t s)
{
    const brk_slot_t *sl = &b->slots[s];
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        if (w->incarnation == sl->h_inc) {
            /* the same process, connected: it listed what it runs in its HELLO */
            for (unsigned k = 0; k < w->n_inflight; k++)
                if (w->inflight[k].slot == s && (w->inflight[k].gen == sl->h_gen || sl->h_gen == 0)) return NULL;
            return "no longer lists it";
        }
        if (w->role == sl->h_role && w->instance == sl->h_instance && sl->h_role < ZP_NROLES)
            return "was replaced by a new incarnation";
    }
    return brk_pid_gone(sl->h_pid, sl->h_start);
}

void brk_slots_tick(brk_t *b)
{
    uint64_t now = zp_now_ns();
    uint32_t nq = 0;
    for (uint32_t s = 0; s < b->n_slots; s++) {
        brk_slot_t *sl = &b->slots[s];
        if (!sl->held) continue;
        if (live(b, s)) {
            if (!sl->lease || now < sl->lease) continue;
            brk_worker_t *w = sl->part->worker;
            char why[160];
            snprintf(why, sizeof why, "lease on slot %u expired (%s, %.1f s)", s, zp_role_name(w->role),
                     (now - sl->h_since) / 1e9);
            b->c.leases_expired++;
            brk_worker_dead(b, w, why, true);
            continue;
        }
        const char *why = holder_gone(b, s);
        if (why) release(b, s, why);
        else nq++;
    }
    b->n_quarantined = nq;
}

void brk_worker_lost(brk_t *b, brk_worker_t *w, const char *why)
{
    char msg[300];
    if (!w->used) return;
    b->c.deaths[w->role < ZP_NROLES ? w->role : 0]++;
    b->c.fail_class[ZP_FAIL_WORKER]++;
    w->n_class[ZP_FAIL_WORKER]++;
    snprintf(msg, sizeof msg, "%s worker pid %u %s", zp_role_name(w->role), w->pid, why);
    unsigned n = w->n_inflight;
    brk_inflight_t fl[BRK_MAX_INFLIGHT];
    memcpy(fl, w->inflight, sizeof fl);
    w->n_inflight = 0;
    w->used = false;
    w->alive = false;
    for (unsigned i = 0; i < n; i++) {
        brk_part_t *p = fl[i].part;
        /* its slots stay held by it: quarantined until it is known gone */
        if (fl[i].slot < b->n_slots && b->slots[fl[i].slot].held && b->slots[fl[i].slot].h_inc == w->incarnation)
            b->c.quarantined++;
        if (!p || p->state != PS_RUNNING || p->worker != w) continue;
        p->worker = NULL;
        brk_part_fail_class(b, p, ZP_FAIL_WORKER, false, msg);
    }
}

/* A worker said HELLO listing the (slot, gen) pairs it holds (broker.c; the model test).
 * Slots we think it holds but it does not list: requeue (not charged). Slots it holds that we
 * do not know: keep them as orphans so its credit stays consumed until it reports them. */
void brk_worker_held(brk_t *b, brk_worker_t *w, const zp_held_t *held, size_t n)
{
    for (unsigned i = 0; i < w->n_inflight;) {
        bool listed = false;
        for (size_t k = 0; k < n; k++)
            if (held[k].slot == w->inflight[i].slot && held[k].gen == w->inflight[i].gen) listed = true;
        if (listed) { i++; continue; }
        brk_part_t *p = w->inflight[i].part;
        w->inflight[i] = w->inflight[--w->n_inflight];
        if (p && p->state == PS_RUNNING && p->worker == w) {
            p->worker = NULL;
            /* not listed: it dropped the task unstarted (a RESET drops queued work) */
            brk_part_requeue(b, p, true, false, false, "worker lost the assignment (reconnected)");
        }
    }
    for (size_t k = 0; k < n && w->n_inflight < BRK_MAX_INFLIGHT; k++) {
        bool known = false;
        for (unsigned i = 0; i < w->n_inflight; i++)
            if (w->inflight[i].slot == held[k].slot && w->inflight[i].gen == held[k].gen) known = true;
        /* after a broker restart: a recovered partition still RUNNING in that slot at that
         * generation is this worker's again; anything else stays an orphan (its credit is
         * used until the worker reports it, and that report is dropped as stale) */
        if (!known)
            w->inflight[w->n_inflight++] = (brk_inflight_t){held[k].slot, held[k].gen,
                                                            brk_recover_adopt(b, w, held[k].slot, held[k].gen)};
    }
}

/* ---------------------------------------------------------------- slot size classes
 * doc/slot-protocol.md "Slot classes", doc/memory.md. The arena is laid out in classes of
 * extents (shm.h); every partition goes to a free slot of the smallest class that holds its
 * circuit (sched.c, claim_slot), known from its zkey's header. */
struct brk_circ {
    char *path;
    uint64_t dev, ino, size, mtime_ns;
    uint32_t n_vars, domain;
    bool from_file;             /* false: noted by the caller (brk_circuit_note), no file identity */
};

static struct brk_circ *circ_find(brk_t *b, const char *path)
{
    for (uint32_t i = 0; i < b->n_circ; i++)
        if (!strcmp(b->circ[i].path, path)) return &b->circ[i];
    return NULL;
}

static struct brk_circ *circ_put(brk_t *b, const char *path)
{
    struct brk_circ *c = circ_find(b, path);
    if (c) return c;
    if (!b->circ && !(b->circ = calloc(BRK_CIRC_MAX, sizeof *b->circ))) return NULL;
    char *dup = strdup(path);
    if (!dup) return NULL;
    if (b->n_circ < BRK_CIRC_MAX) c = &b->circ[b->n_circ++];
    else { c = &b->circ[b->circ_next++ % BRK_CIRC_MAX]; free(c->path); }   /* bounded: oldest out */
    memset(c, 0, sizeof *c);
    c->path = dup;
    return c;
}

void brk_circuit_note(brk_t *b, const char *zkey, uint32_t n_vars, uint32_t domain)
{
    struct brk_circ *c = circ_put(b, zkey);
    if (!c) return;
    c->n_vars = n_vars; c->domain = domain; c->from_file = false;
}

/* a bellman .params (issue 29 item 4): the size is its circuit's, from the job's r1cs (wires;
 * constraints + inputs rounded up to the domain), cached under "params|r1cs" with both files'
 * identities */
static int circ_size_bellman(brk_t *b, const char *path, const char *r1cs, uint32_t *n_vars, uint32_t *domain)
{
    if (!r1cs || !*r1cs)
        return zp_err_set(ZP_EFORMAT, "%s: a bellman .params key needs its circuit's r1cs (submit --r1cs circuit.r1cs)",
                          path);
    struct stat st, sr;
    if (stat(path, &st) < 0 || stat(r1cs, &sr) < 0) {
        int e = -errno;
        return zp_err_set(e, "%s / %s: %s", path, r1cs, strerror(-e));
    }
    if (!S_ISREG(sr.st_mode)) return zp_err_set(ZP_EFORMAT, "r1cs %s: not a regular file", r1cs);
    char key[2100];
    if ((size_t)snprintf(key, sizeof key, "%s|%s", path, r1cs) >= sizeof key) return zp_err_set(ZP_ETOOBIG, "paths too long");
    uint64_t ino = (uint64_t)st.st_ino ^ ((uint64_t)sr.st_ino << 1), size = (uint64_t)st.st_size + (uint64_t)sr.st_size;
    uint64_t mt = ((uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec) ^
                  ((uint64_t)sr.st_mtim.tv_sec * 1000000000u + (uint64_t)sr.st_mtim.tv_nsec);
    struct brk_circ *c = circ_find(b, key);
    if (c && c->from_file && c->dev == (uint64_t)st.st_dev && c->ino == ino && c->size == size && c->mtime_ns == mt) {
        *n_vars = c->n_vars; *domain = c->domain;
        return 0;
    }
    uint64_t m, dom = 1;
    uint32_t nv;
    int rc;
    if (zp_g16_bdensity_sniff(r1cs)) {   /* a density file in place of the r1cs (vector jobs) */
        zp_g16_bdensity_t d;
        uint64_t *dm;
        if ((rc = zp_g16_bdensity_read(&d, &dm, r1cs)) < 0) return rc;
        free(dm);
        m = d.abc_size;
        nv = (uint32_t)(d.n_inp + d.n_aux);
    } else {
        zp_r1cs_t r;
        if ((rc = zp_r1cs_open(&r, r1cs)) < 0) return rc;
        m = (uint64_t)r.n_constraints + r.n_pub_out + r.n_pub_in + 1;
        nv = r.n_wires;
        zp_r1cs_close(&r);
    }
    while (dom < m) dom <<= 1;
    if (dom > ((uint64_t)1 << 31)) return zp_err_set(ZP_ETOOBIG, "%s: a domain of %llu", r1cs, (unsigned long long)dom);
    if (!(c = circ_put(b, key))) return zp_err_set(-ENOMEM, "out of memory");
    c->dev = (uint64_t)st.st_dev; c->ino = ino; c->size = size; c->mtime_ns = mt;
    c->n_vars = nv; c->domain = (uint32_t)dom; c->from_file = true;
    *n_vars = nv; *domain = (uint32_t)dom;
    return 0;
}

/* the circuit size of a zkey: from the cache while the file is the same one, else its header */
static int circ_size(brk_t *b, const char *path, const char *r1cs, uint32_t *n_vars, uint32_t *domain)
{
    struct stat st;
    zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;   /* issue 29: a bellman key is sized from its r1cs */
    /* never open what is not a regular file: a FIFO's open would block the broker's loop */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return zp_err_set(ZP_EFORMAT, "zkey %s: not a regular file", path);
    if (zp_key_format_of_file(&kf, path) == 0 && kf == ZP_KEYFMT_BELLMAN)
        return circ_size_bellman(b, path, r1cs, n_vars, domain);
    zp_err_clear();
    struct brk_circ *c = circ_find(b, path);
    if (stat(path, &st) < 0) {
        int e = -errno;
        if (c && !c->from_file) { *n_vars = c->n_vars; *domain = c->domain; return 0; }
        return zp_err_set(e, "zkey %s: %s", path, strerror(-e));
    }
    uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    if (c && (!c->from_file || (c->dev == (uint64_t)st.st_dev && c->ino == (uint64_t)st.st_ino &&
                                c->size == (uint64_t)st.st_size && c->mtime_ns == mt))) {
        *n_vars = c->n_vars; *domain = c->domain;
        return 0;
    }
    zp_zkey_t z;
    int rc = zp_zkey_read_header(&z, path);
    if (rc < 0) return rc;
    if (!(c = circ_put(b, path))) return zp_err_set(-ENOMEM, "out of memory");
    c->dev = (uint64_t)st.st_dev; c->ino = (uint64_t)st.st_ino; c->size = (uint64_t)st.st_size; c->mtime_ns = mt;
    c->n_vars = z.n_vars; c->domain = z.domain_size; c->from_file = true;
    *n_vars = z.n_vars; *domain = z.domain_size;
    return 0;
}

void brk_slots_close(brk_t *b)
{
    for (uint32_t i = 0; i < b->n_circ; i++) free(b->circ[i].path);
    free(b->circ);
    b->circ = NULL;
    b->n_circ = b->circ_next = 0;
}

/* "2^K" or a decimal number in [lo, hi] */
static int parse_size(const char *s, const char *end, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char buf[32], *e;
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    unsigned long long v;
    errno = 0;
    if (!strncmp(buf, "2^", 2)) {
        unsigned long long k = strtoull(buf + 2, &e, 10);
        if (errno || e == buf + 2 || *e || k > 31) return -1;
        v = 1ull << k;
    } else {
        v = strtoull(buf, &e, 10);
        if (errno || e == buf || *e) return -1;
    }
    if (v < lo || v > hi) return -1;
    *out = (uint32_t)v;
    return 0;
}

typedef struct { uint32_t n, domain, vars; uint64_t bytes; } cls_spec_t;

int brk_classes_parse(brk_t *b, const char *spec)
{
    cls_spec_t c[ZP_SHM_MAX_CLASSES];
    uint32_t nc = 0, total = 0;
    const char *p = spec;
    if (!spec || !*spec) return zp_err_set(-EINVAL, "empty slot class list");
    while (*p) {
        const char *item = p, *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *x = memchr(p, 'x', (size_t)(end - p));
        uint32_t n, dom, vars;
        if (!x || parse_size(p, x, 1, 4096, &n) < 0)
            return zp_err_set(-EINVAL, "slot class '%.*s': want COUNTxDOMAIN[/VARS] or COUNTx@ZKEY (e.g. 4x2^16)",
                              (int)(end - item), item);
        const char *sz = x + 1;
        if (*sz == '@') {
            char path[1024];
            size_t pl = (size_t)(end - sz - 1);
            if (pl == 0 || pl >= sizeof path) return zp_err_set(-EINVAL, "slot class '%.*s': no zkey path", (int)(end - item), item);
            memcpy(path, sz + 1, pl);
            path[pl] = 0;
            if (circ_size(b, path, NULL, &vars, &dom) < 0) {
                char why[600];
                snprintf(why, sizeof why, "%s", zp_err_msg());
                return zp_err_set(-EINVAL, "slot class '%.*s': %s", (int)(end - item), item, why);
            }
        } else {
            const char *sl = memchr(sz, '/', (size_t)(end - sz));
            if (parse_size(sz, sl ? sl : end, 2, 1u << 28, &dom) < 0 || (dom & (dom - 1)) ||
                (sl && parse_size(sl + 1, end, 1, 1u << 31, &vars) < 0))
                return zp_err_set(-EINVAL, "slot class '%.*s': the domain must be a power of two in 2..2^28 "
                                  "(VARS a number), e.g. 4x2^16 or 2x2^20/1500000", (int)(end - item), item);
            if (!sl) vars = dom;
        }
        uint64_t bytes = zp_shm_slot_bytes_for(vars, dom, 32);
        if (!bytes) return zp_err_set(-EINVAL, "slot class '%.*s': size overflows", (int)(end - item), item);
        total += n;
        if (total > 4096) return zp_err_set(-EINVAL, "slot classes: more than 4096 slots in all");
        /* same extent as one given before: one class */
        uint32_t k;
        for (k = 0; k < nc && c[k].bytes != bytes; k++) {}
        if (k < nc) {
            c[k].n += n;
            if (dom > c[k].domain) c[k].domain = dom;
            if (vars > c[k].vars) c[k].vars = vars;
        } else {
            if (nc == ZP_SHM_MAX_CLASSES) return zp_err_set(-EINVAL, "slot classes: more than %u sizes", ZP_SHM_MAX_CLASSES);
            c[nc++] = (cls_spec_t){n, dom, vars, bytes};
        }
        p = *end ? end + 1 : end;
    }
    /* smallest first */
    for (uint32_t i = 1; i < nc; i++)
        for (uint32_t k = i; k > 0 && c[k].bytes < c[k - 1].bytes; k--) {
            cls_spec_t t = c[k]; c[k] = c[k - 1]; c[k - 1] = t;
        }
    b->n_classes = nc;
    for (uint32_t k = 0; k < nc; k++) {
        b->classes[k].n = c[k].n; b->classes[k].bytes = c[k].bytes;
        b->classes[k].domain = c[k].domain; b->classes[k].vars = c[k].vars;
        b->classes[k].first = k ? b->classes[k - 1].first + b->classes[k - 1].n : 0;
    }
    b->classes_set = true;
    return 0;
}

int brk_classes_config(brk_t *b, zp_shm_class_t out[ZP_SHM_MAX_CLASSES], uint32_t *n)
{
    if (!b->classes_set) {
        uint64_t sb = zp_shm_slot_bytes_for(b->max_vars, b->max_domain, 32);
        if (!sb) return zp_err_set(-EINVAL, "slot size overflows");
        b->n_classes = 1;
        b->classes[0].n = b->n_slots; b->classes[0].first = 0; b->classes[0].bytes = sb;
        b->classes[0].domain = b->max_domain; b->classes[0].vars = b->max_vars;
    }
    b->n_slots = 0;
    b->max_domain = b->max_vars = 0;
    for (uint32_t k = 0; k < b->n_classes; k++) {
        out[k] = (zp_shm_class_t){.n_slots = b->classes[k].n, .slot_bytes = b->classes[k].bytes};
        b->n_slots += b->classes[k].n;
        if (b->classes[k].domain > b->max_domain) b->max_domain = b->classes[k].domain;
        if (b->classes[k].vars > b->max_vars) b->max_vars = b->classes[k].vars;
    }
    *n = b->n_classes;
    return 0;
}

bool brk_classes_match(const zp_shm_t *a, const zp_shm_class_t *c, uint32_t n)
{
    if (zp_shm_n_classes(a) != n) return false;
    for (uint32_t k = 0; k < n; k++) {
        zp_shm_class_t h;
        if (!zp_shm_class_get(a, k, &h, NULL) || h.n_slots != c[k].n_slots || h.slot_bytes != c[k].slot_bytes) return false;
    }
    return true;
}

void brk_classes_load(brk_t *b)
{
    uint32_t n = zp_shm_n_classes(b->arena);
    for (uint32_t k = 0; k < n; k++) {
        zp_shm_class_t c;
        uint32_t first;
        zp_shm_class_get(b->arena, k, &c, &first);
        if (!b->classes_set || b->classes[k].bytes != c.slot_bytes) b->classes[k].domain = b->classes[k].vars = 0;
        b->classes[k].n = c.n_slots; b->classes[k].first = first; b->classes[k].bytes = c.slot_bytes;
    }
    b->n_classes = n;
}

int brk_job_size(brk_t *b, brk_job_t *j)
{
    uint32_t nv = 0, dom = 0;
    if (j->sized && j->cls < b->n_classes) return 0;
    if (j->sized)
        return zp_err_set(ZP_EMISMATCH, "zkey %s: its circuit needs a slot of %llu MiB, more than every slot class holds",
                          j->zkey, (unsigned long long)(j->need_bytes >> 20));
    if (!b->n_classes) brk_classes_load(b);
    j->sized = true;
    j->cls = b->n_classes - 1;
    j->need_bytes = 0;
    if (circ_size(b, j->zkey, j->r1cs, &nv, &dom) < 0) {
        /* not readable here (the synth will say why, as an input failure): the largest slots */
        zp_log(ZP_LOG_INFO, "job %llu: size of %s unknown (%s): it gets the largest slots", (unsigned long long)j->id,
               j->zkey, zp_err_msg());
        zp_err_clear();
        return 0;
    }
    j->need_bytes = zp_shm_slot_bytes_for(nv, dom, 32);
    for (uint32_t k = 0; k < b->n_classes; k++)
        if (j->need_bytes && b->classes[k].bytes >= j->need_bytes) { j->cls = k; return 0; }
    j->cls = b->n_classes;   /* none */
    b->n_submit_too_big++;
    return zp_err_set(ZP_EMISMATCH, "zkey %s: %u variables and a domain of %u need a slot of %llu MiB; the largest slots of "
                      "this arena have %llu MiB (configure a larger class: --slot-classes, or --max-domain/--max-vars)",
                      j->zkey, nv, dom, (unsigned long long)(j->need_bytes >> 20),
                      (unsigned long long)(b->classes[b->n_classes - 1].bytes >> 20));
}

void brk_revoke(brk_t *b, brk_part_t *p)
{
    brk_worker_t *w = p->worker;
    if (!w || p->revoking) return;
    for (unsigned k = 0; k < w->n_inflight; k++)
        if (w->inflight[k].part == p) {
            zp_msg_revoke_t rv = {.slot = w->inflight[k].slot, .gen = w->inflight[k].gen};
            uint8_t *buf; size_t len;
            if (zp_msg_revoke_encode(&buf, &len, &rv) == 0 && brk_send(b, w->id, w->id_len, buf, len) == 0) {
                p->revoking = true;
                if (p->stage == ZP_ROLE_GPU) b->n_revoked_gpu++;
                else b->n_taken_revoke++;
            }
            return;
        }
}

/* STATUS (report.c): the classes, every bound slot, the priority settings and counters */
void brk_slots_status(brk_t *b, zp_sbuf_t *s, bool json)
{
    if (!b->n_classes && b->arena) brk_classes_load(b);
    uint32_t free_in[ZP_SHM_MAX_CLASSES] = {0};
    for (uint32_t k = 0; k < b->n_classes; k++)
        for (uint32_t i = b->classes[k].first; i < b->classes[k].first + b->classes[k].n && i < b->n_slots; i++)
            free_in[k] += !b->slots[i].part && !b->slots[i].held &&
                          zp_shm_word_state(zp_shm_slot_word_load(b->arena, i)) == ZP_SLOT_FREE;
    if (!json) {
        zp_sbuf_printf(s, "slot classes:");
        for (uint32_t k = 0; k < b->n_classes; k++)
            zp_sbuf_printf(s, "%s %u x %llu MiB (%u free)", k ? "," : "", b->classes[k].n,
                           (unsigned long long)(b->classes[k].bytes >> 20), free_in[k]);
        zp_sbuf_printf(s, "; reserve %u/%u/%u; preempt %s; taken back %llu READY, %llu revoked (+%llu GPU tasks); "
                       "spilled %llu; refused too big %llu\n", b->reserve[0], b->reserve[1], b->reserve[2],
                       b->preempt < ZP_NPRIO ? zp_prio_name(b->preempt) : "none", (unsigned long long)b->n_taken_ready,
                       (unsigned long long)b->n_taken_revoke, (unsigned long long)b->n_revoked_gpu,
                       (unsigned long long)b->n_spilled,
                       (unsigned long long)b->n_submit_too_big);
        return;
    }
    zp_sbuf_printf(s, ", \"slot_classes\": [");
    for (uint32_t k = 0; k < b->n_classes; k++)
        zp_sbuf_printf(s, "%s{\"bytes\": %llu, \"slots\": %u, \"first\": %u, \"free\": %u, \"domain\": %u, \"vars\": %u}",
                       k ? ", " : "", (unsigned long long)b->classes[k].bytes, b->classes[k].n, b->classes[k].first,
                       free_in[k], b->classes[k].domain, b->classes[k].vars);
    zp_sbuf_printf(s, "], \"slot_table\": [");
    bool first = true;
    for (uint32_t i = 0; i < b->n_slots; i++) {
        const brk_part_t *p = b->slots[i].part;
        if (!p) continue;
        zp_sbuf_printf(s, "%s{\"slot\": %u, \"class\": %u, \"state\": \"%s\", \"job\": %llu, \"part\": %u, \"priority\": \"%s\", "
                       "\"stage\": \"%s\", \"running\": %s}", first ? "" : ", ", i, zp_shm_slot_class(b->arena, i),
                       zp_shm_state_name(zp_shm_word_state(zp_shm_slot_word_load(b->arena, i))),
                       (unsigned long long)p->job->id, p->idx, zp_prio_name(p->job->priority % ZP_NPRIO),
                       zp_role_name(p->stage), p->state == PS_RUNNING ? "true" : "false");
        first = false;
    }
    zp_sbuf_printf(s, "], \"priority\": {\"reserve\": [%u, %u, %u], \"preempt\": \"%s\", \"taken_back_ready\": %llu, "
                   "\"taken_back_revoke\": %llu, \"revoked_gpu\": %llu, \"spilled\": %llu, \"submit_too_big\": %llu}",
                   b->reserve[0], b->reserve[1], b->reserve[2], b->preempt < ZP_NPRIO ? zp_prio_name(b->preempt) : "none",
                   (unsigned long long)b->n_taken_ready, (unsigned long long)b->n_taken_revoke,
                   (unsigned long long)b->n_revoked_gpu, (unsigned long long)b->n_spilled,
                   (unsigned long long)b->n_submit_too_big);
}
