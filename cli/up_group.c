/* up_group.c - one process group per runtime directory for `zkpipe up` (up.h).
 *
 * NOTES
 * <rundir>/up.lock is flock'ed by the up that runs the group and holds "pid pgid": its pid and
 * the process group of its children. The kernel drops the lock when that up dies, even by
 * SIGKILL, so a lock we can take with a record in it means the recorded up is gone. Its children
 * normally died with it (PR_SET_PDEATHSIG, up.c); any that did not (an up without that, a signal
 * lost in a race) are found by scanning /proc and stopped, but only a process that is ours in
 * every way we can check: our uid, in the recorded process group, running one of our binaries,
 * and orphaned (no live `zkpipe up` is its parent). A pid is pinned with a pidfd before it is
 * checked and signalled, so a reused pid is never hit. A broker that holds broker.pid and is not
 * one of those (systemd's, or one started by hand) is not ours to stop: up refuses with a message.
 * Tests: tests/ipc/orphan.sh. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/up.h"
#include "lib/util/util.h"

static int g_lockfd = -1;

uint64_t up_backoff_next(uint64_t prev_ms, bool started_cleanly)
{
    if (started_cleanly) return 0;
    uint64_t n = prev_ms ? prev_ms * 2 : 200;
    return n > 5000 ? 5000 : n;
}

static void write_record(pid_t pgid)
{
    char rec[64];
    int k = snprintf(rec, sizeof rec, "%ld %ld\n", (long)getpid(), (long)pgid);
    if (g_lockfd < 0 || ftruncate(g_lockfd, 0) < 0 || pwrite(g_lockfd, rec, (size_t)k, 0) != k)
        zp_log(ZP_LOG_WARN, "up.lock: cannot record the group: %s", strerror(errno));
}

void up_group_record(pid_t pgid) { write_record(pgid); }

void up_group_unlock(void)
{
    if (g_lockfd < 0) return;
    if (ftruncate(g_lockfd, 0) < 0) { /* the record of a clean stop is an empty file; best effort */ }
    close(g_lockfd);
    g_lockfd = -1;
}

/* /proc/<pid>/exe without a " (deleted)" suffix (the binary was rebuilt since it started) */
static bool proc_exe(long pid, char *exe, size_t n)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/exe", pid);
    ssize_t k = readlink(p, exe, n - 1);
    if (k <= 0) return false;
    exe[k] = 0;
    char *del = strstr(exe, " (deleted)");
    if (del && !del[10]) *del = 0;
    return true;
}

/* /proc/<pid>/stat fields 4 and 5 (ppid, process group); false if unreadable */
static bool proc_ids(long pid, long *ppid, long *pgid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) return false;
    buf[r] = 0;
    char *e = strrchr(buf, ')');
    char st;
    return e && sscanf(e + 1, " %c %ld %ld", &st, ppid, pgid) == 3;
}

/* Is pid a left-over of the group pgid: our uid, one of our binaries, and orphaned (its parent
 * is not a running zkpipe, i.e. not a live `zkpipe up`). The process names are no help
 * (setproctitle rewrites them). The group number cannot have been reused while the group
 * still has members; the orphan test covers the case where it emptied and the number came
 * back as another live up's group: that group's members have a live zkpipe parent. */
static bool proc_is_stale(long pid, long pgid, const char *const *bins, int nbins, bool *is_broker)
{
    char p[64], exe[PATH_MAX + 16], self[PATH_MAX + 16], pexe[PATH_MAX + 16];
    struct stat st;
    long ppid, pg;
    snprintf(p, sizeof p, "/proc/%ld", pid);
    if (stat(p, &st) < 0 || st.st_uid != getuid() || !proc_ids(pid, &ppid, &pg) || pg != pgid) return false;
    if (!proc_exe(pid, exe, sizeof exe)) return false;
    int which = -1;
    for (int i = 0; i < nbins && which < 0; i++)
        if (!strcmp(exe, bins[i])) which = i;
    if (which < 0) return false;
    if (ppid > 1 && proc_exe(ppid, pexe, sizeof pexe) && proc_exe(getpid(), self, sizeof self) && !strcmp(pexe, self))
        return false;   /* a live up is its parent */
    *is_broker = which == 0;
    return true;
}

#define STALE_MAX 256

/* stop what is left of the group pgid of the dead up old_pid; 0, or -1 when some would not die */
static int stop_stale(const char *rundir, long old_pid, long pgid, const char *const *bins, int nbins)
{
    int fds[STALE_MAX], nf = 0, nb = 0;
    long pids[STALE_MAX];
    bool brk[STALE_MAX];
    DIR *d = opendir("/proc");
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) && nf < STALE_MAX;) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        long pid = strtol(e->d_name, NULL, 10), pp, pg;
        if (pid <= 1 || pid == getpid() || !proc_ids(pid, &pp, &pg) || pg != pgid) continue;
        int fd = pidfd_open((pid_t)pid, 0);   /* pin it, then check: a reused pid fails the checks */
        bool b = false;
        if (fd < 0) continue;
        if (!proc_is_stale(pid, pgid, bins, nbins, &b)) { close(fd); continue; }
        fds[nf] = fd; pids[nf] = pid; brk[nf] = b; nb += b; nf++;
    }
    closedir(d);
    if (!nf) return 0;
    char list[600] = "";
    for (int i = 0; i < nf && strlen(list) < sizeof list - 24; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%ld%s", i ? " " : "", pids[i], brk[i] ? " (broker)" : "");
    fprintf(stderr, "zkpipe up: %s holds a group left by an earlier `zkpipe up` (pid %ld, no longer running): "
            "%d process(es) of it still run (%s); stopping them\n", rundir, old_pid, nf, list);
    /* workers: SIGKILL (their work is requeued from the journal); the broker: SIGTERM, so it
     * removes its socket, pidfile and arena */
    for (int i = 0; i < nf; i++) pidfd_send_signal(fds[i], brk[i] ? SIGTERM : SIGKILL, NULL, 0);
    int left = nf;
    for (int round = 0; round < 2 && left; round++) {
        uint64_t until = zp_now_ns() + (round ? 3000000000ull : 10000000000ull);
        while (left && zp_now_ns() < until) {
            struct pollfd pf[STALE_MAX];
            for (int i = 0; i < nf; i++) pf[i] = (struct pollfd){fds[i], POLLIN, 0};
            poll(pf, (nfds_t)nf, 100);
            left = 0;
            for (int i = 0; i < nf; i++) left += !(pf[i].revents & POLLIN);
        }
        if (left && !round) {
            fprintf(stderr, "zkpipe up: %d stale process(es) did not stop within 10 s: SIGKILL\n", left);
            for (int i = 0; i < nf; i++) pidfd_send_signal(fds[i], SIGKILL, NULL, 0);
        }
    }
    for (int i = 0; i < nf; i++) close(fds[i]);
    if (left) { fprintf(stderr, "zkpipe up: %d stale process(es) would not die; not starting\n", left); return -1; }
    fprintf(stderr, "zkpipe up: the stale group is stopped (%d process(es)%s)\n", nf,
            nb ? "; its broker cleaned up its socket and arena" : "");
    return 0;
}

/* the pid that holds <rundir>/broker.pid locked, 0 when none */
static long broker_holder(const char *rundir)
{
    char p[600], buf[32];
    snprintf(p, sizeof p, "%s/broker.pid", rundir);
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) flock(fd, LOCK_UN);
    else if (errno == EWOULDBLOCK) {
        ssize_t r = pread(fd, buf, sizeof buf - 1, 0);
        buf[r > 0 ? r : 0] = 0;
        pid = strtol(buf, NULL, 10);
        if (pid <= 0) pid = -1;   /* locked, pid not written yet */
    }
    close(fd);
    return pid;
}

int up_group_lock(const char *rundir, const char *const *bins, int nbins)
{
    char path[600];
    snprintf(path, sizeof path, "%s/up.lock", rundir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) { fprintf(stderr, "zkpipe up: %s: %s\n", path, strerror(errno)); return -1; }
    char rec[64] = "";
    ssize_t r = pread(fd, rec, sizeof rec - 1, 0);
    rec[r > 0 ? r : 0] = 0;
    long old_pid = 0, old_pgid = 0;
    sscanf(rec, "%ld %ld", &old_pid, &old_pgid);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            fprintf(stderr, "zkpipe up: another `zkpipe up` (pid %ld) runs the group in %s; stop it first (Ctrl-C, or "
                    "kill -TERM %ld), or give this one another --runtime-dir\n", old_pid, rundir, old_pid);
        else fprintf(stderr, "zkpipe up: flock %s: %s\n", path, strerror(e));
        return -1;
    }
    r = pread(fd, rec, sizeof rec - 1, 0);   /* re-read under the lock */
    rec[r > 0 ? r : 0] = 0;
    old_pid = old_pgid = 0;
    sscanf(rec, "%ld %ld", &old_pid, &old_pgid);
    g_lockfd = fd;
    if (old_pgid > 1 && stop_stale(rundir, old_pid, old_pgid, bins, nbins) < 0) goto refuse;
    if (old_pid > 0) {   /* the dead up's notify socket (up.c: <rundir>/up-<pid>.notify) */
        snprintf(path, sizeof path, "%s/up-%ld.notify", rundir, old_pid);
        unlink(path);
    }
    long bp = broker_holder(rundir);
    if (bp) {
        fprintf(stderr, "zkpipe up: a broker (pid %ld) that no `zkpipe up` of %s started already serves it (it holds "
                "%s/broker.pid); stop it, or give zkpipe up another --runtime-dir\n", bp, rundir, rundir);
        goto refuse;
    }
    write_record(0);
    return 0;
refuse:   /* keep the record: the next up finds the same group */
    close(g_lockfd);
    g_lockfd = -1;
    return -1;
}
