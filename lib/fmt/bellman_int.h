/* bellman_int.h - inside lib/fmt: the check record of bellman keys (bellman_record.c), used by
 * zp_bkey_open_opts (bellman.c). What a record is and what it trusts: bellman.h, doc/filecoin.md. */
#ifndef ZP_FMT_BELLMAN_INT_H
#define ZP_FMT_BELLMAN_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct {
    bool usable;              /* the dir is ours and private, the vk block hashed: match / write may run */
    bool params;              /* the open reads the whole .params (a record of a vk-only open does not cover it) */
    struct stat st;           /* the file at open (fstat of the mapped descriptor) */
    char vk_sha256[65];
    char path[4200];          /* <dir>/<dev>-<ino>.check */
} zp_bkey_rec_t;

/* st: fstat of the open descriptor; map/len: the file's bytes, not converted yet. On a problem
 * (dir unusable, vk block out of the file) usable is false and note says why. */
void zp_bkey_rec_init(zp_bkey_rec_t *r, const char *dir, const struct stat *st, const uint8_t *map, size_t len,
                      bool params, char *note, size_t cap);
/* true: a record for exactly this file (dev, inode, size, mtime, ctime, vk hash, scope) exists */
bool zp_bkey_rec_match(const zp_bkey_rec_t *r, char *note, size_t cap);
/* after a full check: writes the record if fd's file is unchanged since init (else note why) */
bool zp_bkey_rec_write(const zp_bkey_rec_t *r, int fd, char *note, size_t cap);
#endif
