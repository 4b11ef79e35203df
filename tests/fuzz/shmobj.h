/* shmobj.h - for the arena and key-store harnesses: one POSIX shm object per fuzzing process
 * (/zkpipe-fuzz-<pid>-<what>), rewritten with each input and sized to what its header claims
 * (capped), so the production open path (shm_open, fstat, pread, mmap) validates it. Removed
 * at exit. */
#ifndef ZP_FUZZ_SHMOBJ_H
#define ZP_FUZZ_SHMOBJ_H
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_OBJ_MAX (16u << 20)
static char g_obj[64];
static int g_obj_fd = -1;

static void obj_unlink(void) { if (g_obj[0]) shm_unlink(g_obj); }

/* write data as the whole object, sized max(size, claimed) when claimed <= FUZZ_OBJ_MAX */
static int obj_write(const char *what, const uint8_t *data, size_t size, uint64_t claimed)
{
    if (g_obj_fd < 0) {
        snprintf(g_obj, sizeof g_obj, "/zkpipe-fuzz-%d-%s", (int)getpid(), what);
        g_obj_fd = shm_open(g_obj, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (g_obj_fd < 0) { perror("shm_open"); abort(); }
        atexit(obj_unlink);
    }
    size_t n = claimed <= FUZZ_OBJ_MAX && claimed > size ? (size_t)claimed : size;
    if (ftruncate(g_obj_fd, 0) < 0 || ftruncate(g_obj_fd, (off_t)n) < 0) return -1;
    if (size && pwrite(g_obj_fd, data, size, 0) != (ssize_t)size) return -1;
    return 0;
}
#endif
