/* fleet_int.h - state shared by the broker thread (fleet.c) and the fleet thread
 * (fleet_box.c). Items move both ways through two lists under mu; each side wakes the other
 * with a byte on a pipe. Config fields are set before the thread starts and never change. */
#ifndef ZP_BROKER_FLEET_INT_H
#define ZP_BROKER_FLEET_INT_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/fleet_db.h"
#include "proto/proto.h"

typedef enum {
    FL_CLAIM = 1,   /* thread -> broker: a claimed partition to run */
    FL_LOST,        /* thread -> broker: the lease is gone (expired, stolen, canceled) */
    FL_ADOPT,       /* broker -> thread: a fleet partition the journal recovered, still running */
    FL_RESULT,      /* broker -> thread: proof to commit (already in the outbox file) */
    FL_FAIL,        /* broker -> thread: failure to report (in the outbox file) */
    FL_HANDBACK,    /* broker -> thread: could not queue it locally; back to the fleet */
} fl_kind_t;

typedef struct fl_item {
    struct fl_item *next;
    fl_kind_t kind;
    uint64_t part, epoch, job;
    uint32_t idx, attempt, priority;
    char *zkey, *r1cs, *wtns;           /* FL_CLAIM (wtns: a local file, maybe written from bytea) */
    char *proof_json, *public_json;     /* FL_RESULT */
    uint8_t bin[ZP_MSG_BIN_MAX];
    size_t bin_len;
    char *reason;                       /* FL_FAIL, FL_HANDBACK */
    bool final;                         /* FL_FAIL: deterministic (input class) */
    char *outbox;                       /* FL_RESULT/FL_FAIL: its file, unlinked once the DB answered */
} fl_item_t;

typedef struct brk_fleet {
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    int wake_b[2], wake_t[2];           /* pipes: [0] read end, [1] write end */
    fl_item_t *to_b, *to_t;             /* LIFO under mu; each side reverses what it takes */
    /* published by the broker under mu */
    int capacity;                       /* partitions it can start now */
    uint64_t consumed;                  /* claims it has turned into local jobs */
    int stop;
    /* config */
    char *url;
    char box[128];
    char outbox_dir[1100], wtns_dir[600];
    uint64_t incarnation;
    int lease_ms, poll_ms, n_slots;
    char *test_hold;                    /* ZP_FLEET_TEST_HOLD: while this file exists, send nothing but claims (none either if it is not empty) */
    bool test_steal;                    /* ZP_FLEET_TEST_STEAL: claim under others' live leases */
    /* counters (under mu) */
    bool connected;
    uint64_t claims, commits, refused, handbacks, lost, reconnects;
    zp_fleet_io_t io;
} brk_fleet_t;

void fl_item_free(fl_item_t *it);
void fl_push(brk_fleet_t *fl, fl_item_t **list, int wake_fd, fl_item_t *it);   /* locks mu */
fl_item_t *fl_take(brk_fleet_t *fl, fl_item_t **list);                        /* locks mu; FIFO order */
void fl_wake(int fd);
void fl_drain(int fd);

/* outbox files: <outbox_dir>/<part>-<epoch>.res, written atomically (tmp, fsync, rename) */
int fl_outbox_write(const brk_fleet_t *fl, const fl_item_t *it, char **path);
int fl_outbox_read(fl_item_t **itp, const char *path);   /* strict; ZP_EFORMAT on anything odd */

void *fl_thread_main(void *arg);        /* fleet_box.c */
#endif
