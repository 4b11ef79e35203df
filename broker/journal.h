/* journal.h - the broker's write-ahead store (SQLite, WAL mode): accepted jobs and finished
 * partition proofs are committed here before the broker acknowledges them; a restarted
 * broker reloads its job table from it (journal.c) and reconciles it with the shm arena
 * (recover.c). Private to the broker. Tests: tests/ipc/durable*.sh. */
#ifndef ZP_BROKER_JOURNAL_H
#define ZP_BROKER_JOURNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/broker_int.h"

#define BRK_JR_SCHEMA 2            /* PRAGMA user_version of the current layout (2: jobs.wasm) */

typedef struct brk_journal brk_journal_t;

/* Default state directory: $ZP_STATE_DIR, else $XDG_STATE_HOME/zkpipe, else
 * $HOME/.local/state/zkpipe. Created (0700, parents too) when create is set. */
int brk_jr_state_dir(char *buf, size_t n, const char *override, bool create);

/* Open (or create, atomically through a temporary file and rename) the journal at path.
 * An existing file must be a journal of schema BRK_JR_SCHEMA that passes quick_check:
 * anything else is ZP_EFORMAT with a message, unless reset is set, in which case the old
 * file (and its -wal/-shm) is moved aside to <path>.bad-<time> and a fresh journal made. */
int brk_jr_open(brk_journal_t **jp, const char *path, bool reset);
void brk_jr_close(brk_journal_t **jp);

/* Reload every journaled job into the job table (brk_job_insert): unfinished ones with their
 * partitions (PS_QUEUED, no slot, not queued), finished ones as a summary without partitions
 * (AWAIT reads their results with brk_jr_parts_load). Ids increase; b->next_job_id is set
 * past every id ever used (meta "next_job_id"). */
int brk_jr_load(brk_journal_t *jr, brk_t *b);
/* j's partitions (state, attempts, reasons, proofs) into parts[j->n_parts] (strings malloc'd) */
int brk_jr_parts_load(brk_journal_t *jr, brk_job_t *j, brk_part_t *parts);
/* retention: drop a finished job; then give free pages back */
int brk_jr_job_delete(brk_journal_t *jr, uint64_t id);
void brk_jr_compact(brk_journal_t *jr);

/* One transaction each; 0 once durable (synchronous=FULL), else a negative code + message. */
int brk_jr_job_add(brk_journal_t *jr, const brk_job_t *j);
int brk_jr_job_state(brk_journal_t *jr, const brk_job_t *j);    /* job state, and part states if canceled */
int brk_jr_part(brk_journal_t *jr, const brk_part_t *p);        /* state, attempts, reasons, proof */
/* small integers by name (0 when absent): "arena_epoch" ties the journal to the arena whose
 * slot descriptors may be trusted at a restart */
int brk_jr_meta_get(brk_journal_t *jr, const char *key, uint64_t *val);
int brk_jr_meta_set(brk_journal_t *jr, const char *key, uint64_t val);
#endif
