/* bellman_record.c - the check record of bellman keys: a later open of a file that passed the
 * subgroup checks skips them (they cost ~50 us of CPU per point; the on-curve and every other
 * check still run on every open).
 * A record is <dir>/<dev>-<inode>.check, one line naming the file's device, inode, size, mtime
 * and ctime (ns) as fstat gave them on the descriptor that was mapped and checked, the SHA-256
 * of its verifying-key block (the raw bytes: six points, IC count, IC) and the scope (params:
 * the whole file was checked; vk: its verifying-key block). It is written (0600, temporary file
 * + rename) only after a full check passed and only if fstat of that descriptor still gives the
 * same size, mtime and ctime, and only for a file whose ctime was at least 1 s old when it was
 * opened (a change within the same timestamp tick would not move the ctime). It matches when all of that is byte-identical. The dir
 * (zp_bkey_record_dir) must be owned by this euid and writable by nobody else, the record a
 * regular file owned by this euid (no symlink followed), else no record is used or written.
 * Tests: tests/test_bfmt.c (record_*), tests/bellman_prove_cli.sh (--recheck) */
#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fmt/bellman.h"
#include "lib/fmt/bellman_int.h"
#include "lib/util/util.h"

#define REC_MAX 512
#define RACY_NS 1000000000ll

int zp_bkey_record_dir(char *dir, size_t cap) { return zp_user_cache_dir(dir, cap, "ZKPIPE_KEYCHECK_DIR", "keycheck"); }

static long long ns_of(const struct timespec *t)
{
    return (long long)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static void record_line(char *out, size_t cap, const zp_bkey_rec_t *r, const char *scope)
{
    snprintf(out, cap, "zkpipe-bellman-check 1 scope=%s dev=%llu ino=%llu size=%llu mtime_ns=%lld ctime_ns=%lld "
                       "vk_sha256=%s\n", scope, (unsigned long long)r->st.st_dev, (unsigned long long)r->st.st_ino,
             (unsigned long long)r->st.st_size, ns_of(&r->st.st_mtim), ns_of(&r->st.st_ctim), r->vk_sha256);
}

void zp_bkey_rec_init(zp_bkey_rec_t *r, const char *dir, const struct stat *st, const uint8_t *map, size_t len,
                      bool params, char *note, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->st = *st;
    r->params = params;
    char d[4096];
    int rc = dir ? (snprintf(d, sizeof d, "%s", dir) >= (int)sizeof d ? zp_err_set(ZP_ETOOBIG, "record dir too long") : 0)
                 : zp_bkey_record_dir(d, sizeof d);
    if (!rc) rc = zp_private_dir_ready(d, "key check record dir");
    if (rc) {
        snprintf(note, cap, "no check record: %s", zp_err_msg());
        return;
    }
    /* a file changed in the last second may change again within the same timestamp tick (file
     * times come from a coarse clock) without its ctime moving: no record for it ("racy git") */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (ns_of(&now) - ns_of(&st->st_ctim) < RACY_NS) {
        snprintf(note, cap, "no check record: the file changed less than 1 s before it was opened");
        return;
    }
    if (len < ZP_BVK_HEAD_BYTES + 4) return;   /* the parse refuses it */
    const uint8_t *c = map + ZP_BVK_HEAD_BYTES;
    uint64_t n_ic = (uint64_t)c[0] << 24 | (uint64_t)c[1] << 16 | (uint64_t)c[2] << 8 | c[3];
    uint64_t vk_end = ZP_BVK_HEAD_BYTES + 4 + n_ic * ZP_BLS_G1_UNCOMPRESSED;
    if (vk_end > len) return;                  /* the parse refuses it */
    SHA2_CTX h;
    SHA256Init(&h);
    SHA256Update(&h, map, (size_t)vk_end);
    SHA256End(&h, r->vk_sha256);
    snprintf(r->path, sizeof r->path, "%s/%llx-%llx.check", d, (unsigned long long)st->st_dev,
             (unsigned long long)st->st_ino);
    r->usable = true;
}

bool zp_bkey_rec_match(const zp_bkey_rec_t *r, char *note, size_t cap)
{
    if (!r->usable) return false;
    int fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT) snprintf(note, cap, "check record %s: %s", r->path, strerror(errno));
        return false;
    }
    struct stat st;
    char got[REC_MAX + 1];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022))
        n = read(fd, got, REC_MAX);
    else snprintf(note, cap, "check record %s: not a private regular file of uid %u, ignored", r->path,
                  (unsigned)geteuid());
    close(fd);
    if (n < 0) return false;
    got[n] = 0;
    char want[REC_MAX];
    record_line(want, sizeof want, r, "params");
    if (!strcmp(got, want)) return true;
    if (!r->params) {
        record_line(want, sizeof want, r, "vk");
        if (!strcmp(got, want)) return true;
    }
    snprintf(note, cap, "check record %s is for another file or version of it: checked again", r->path);
    return false;
}

bool zp_bkey_rec_write(const zp_bkey_rec_t *r, int fd, char *note, size_t cap)
{
    if (!r->usable) return false;
    struct stat now;
    if (fstat(fd, &now) || now.st_size != r->st.st_size || ns_of(&now.st_mtim) != ns_of(&r->st.st_mtim) ||
        ns_of(&now.st_ctim) != ns_of(&r->st.st_ctim)) {
        snprintf(note, cap, "no check record written: the file changed while it was checked");
        return false;
    }
    char line[REC_MAX], tmp[4300];
    record_line(line, sizeof line, r, r->params ? "params" : "vk");
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", r->path);
    int t = mkstemp(tmp);
    if (t < 0) {
        snprintf(note, cap, "no check record written: %s: %s", tmp, strerror(errno));
        return false;
    }
    size_t len = strlen(line);
    bool ok = write(t, line, len) == (ssize_t)len;
    ok = close(t) == 0 && ok;
    if (ok && rename(tmp, r->path) == 0) return true;
    snprintf(note, cap, "no check record written: %s: %s", r->path, strerror(errno));
    unlink(tmp);
    return false;
}
