/* fleet.h - the broker's hooks for fleet mode (a box taking partitions from a PostgreSQL
 * queue). Everything that talks to the database runs on one thread of its own (fleet_box.c);
 * the broker's loop only exchanges small items with it under a mutex and polls one pipe fd.
 * Without libpq at build time these are stubs and brk_fleet_start refuses with a message.
 * Tests: tests/fleet/. */
#ifndef ZP_BROKER_FLEET_H
#define ZP_BROKER_FLEET_H
#include <stdbool.h>

#include <zmq.h>

#include "broker/broker_int.h"

/* join the fleet whose connection string is in environment variable url_env (never argv,
 * where ps shows it). box_name NULL: the host name. state_dir: where the outbox of finished
 * results lives until the database takes them. */
int brk_fleet_start(brk_t *b, const char *url_env, const char *box_name, const char *state_dir);
void brk_fleet_stop(brk_t *b);
/* 0 or 1 poll items (the thread's wake-up pipe) at *it */
int brk_fleet_pollitem(brk_t *b, zmq_pollitem_t *it);
/* once per loop turn: claimed partitions become local jobs, lost leases cancel them, the
 * free capacity is published to the thread */
void brk_fleet_service(brk_t *b);
/* a local job finished (brk_job_check_finished): a fleet partition's proof or failure goes to
 * the outbox and the thread */
void brk_fleet_job_finished(brk_t *b, brk_job_t *j);
#endif
