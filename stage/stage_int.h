/* stage_int.h - private to stage/: the loop (stage_loop.c) that stage.c starts. */
#ifndef ZP_STAGE_INT_H
#define ZP_STAGE_INT_H
#include <signal.h>

#include "stage/stage.h"

/* set by the signal handlers (stage.c) */
extern volatile sig_atomic_t zp_stage_sig_stop, zp_stage_sig_hup;

/* Connect, say HELLO, serve until a stop (signal) or a device failure, hand back what is
 * queued, return: 0 clean stop, ZP_STAGE_EXIT_DEVICE after a device-class FAIL, < 0 a fatal
 * error (message set). Exits the process itself (ZP_STAGE_EXIT_LEASE) on a lease overrun. */
int zp_stage_loop(zp_stage_t *s);

/* main thread, before HELLO (def->arena_first): wait for the arena to appear and open it; 0,
 * or 1 when a stop signal came first (nothing opened) */
int zp_stage_arena_wait(zp_stage_t *s);
#endif
