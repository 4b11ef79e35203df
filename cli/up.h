/* up.h - pieces of `zkpipe up` (up.c) that live in up_group.c: the runtime directory's group
 * lock, finding and stopping a group left by a dead `zkpipe up`, and the restart backoff.
 * Tests: tests/ipc/orphan.sh, tests/ipc/backoff.sh. */
#ifndef ZP_CLI_UP_H
#define ZP_CLI_UP_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Take <rundir>/up.lock (flock, held until exit). Another live up holds it: a clear message,
 * -1. A record of a dead up is there: stop the processes of its group that are still running
 * (only processes of ours: same uid, in the recorded process group, running one of bins) and
 * say so. A broker that no up of this directory started holds broker.pid: a clear message, -1. */
int up_group_lock(const char *rundir, const char *const *bins, int nbins);
/* record our pid and the children's process group in the lock file */
void up_group_record(pid_t pgid);
/* clean stop: the record goes (the lock goes with the process) */
void up_group_unlock(void);

/* next restart delay in ms: a child that started cleanly comes back at once (0); one that died
 * before it was ready backs off 200 ms doubling to 5 s (prev: the last delay) */
uint64_t up_backoff_next(uint64_t prev_ms, bool started_cleanly);
#endif
