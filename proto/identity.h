/* identity.h - who a worker is, established by the group and not by its HELLO, and the
 * channel between the broker and the supervisor that started the group (`zkpipe up`).
 *
 * The rule (DESIGN "Faults, leases and failure classes"): the broker never signals a pid it was
 * told about, and a HELLO's (role, instance, pid) is a claim, not an identity.
 *
 * Identity token. The supervisor draws a random ZP_ID_TOKEN_LEN-byte secret for every child it
 * starts and hands it over in the child's environment (ZP_IDENTITY=<32 hex digits>). The worker
 * reads it once (zp_identity_from_env: the value is copied and then wiped from the environment
 * block, so /proc/<pid>/environ no longer shows it) and sends it in every HELLO (key 9). The
 * supervisor registers (child, role, instance, pid, token) with the broker over the supervisor
 * channel; the broker accepts a HELLO for a registered (role, instance) only when it carries
 * that registration's token AND the kernel's peer credentials of the connection (SO_PEERCRED,
 * which libzmq exposes as the message's Peer-Address "...:uid:gid:pid") name the registered pid.
 * A worker started by hand beside `zkpipe up` (no token) may still join under an identity
 * nobody registered, on the unsupervised rules below.
 *
 * Supervisor channel. `zkpipe up` creates an AF_UNIX SOCK_SEQPACKET socketpair for each broker
 * it starts; the broker inherits one end and finds it in ZP_SUPERVISOR_FD. Nobody else can
 * reach it. One datagram = one text message (fields separated by one space, numbers decimal):
 *   up -> broker   REG <child> <role> <instance> <pid> <token hex>   child started
 *                  EXIT <child> <pid>                               child reaped (it is gone)
 *   broker -> up   FENCE <child> <pid> <reason>                     please kill that process
 * <child> is the supervisor's own number for the child (its index). up acts on FENCE only when
 * <child> is still that pid (it holds a pidfd of it and kills through that), so a late request
 * never reaches a restarted process. After starting a new broker, up sends REG for every live
 * worker again.
 *
 * Without a supervisor (systemd units, workers started by hand): no tokens; the broker takes the
 * pid from SO_PEERCRED (a HELLO naming another pid is refused), refuses a HELLO for a (role,
 * instance) held by another process that is still alive (it watches holders with pidfds), and
 * never kills: the service manager's watchdog (WatchdogSec= in scripts/systemd) restarts a hung
 * worker. Tests: tests/ipc/identity.sh, tests/ipc/fence.sh, tests/test_proto.c,
 * tests/fuzz/fuzz_frames.c (the channel's decoder). */
#ifndef ZP_IDENTITY_H
#define ZP_IDENTITY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define ZP_IDENTITY_ENV "ZP_IDENTITY"
#define ZP_SUPERVISOR_FD_ENV "ZP_SUPERVISOR_FD"
#define ZP_SUP_MSG_MAX 512          /* one datagram */

/* The worker side, one call: fill m->token / m->has_token from this process's ZP_IDENTITY (read
 * once and cached; the environment value is wiped). No variable: has_token = false. A malformed
 * value is logged once and ignored (the broker then refuses the HELLO and says why). */
void zp_identity_hello(zp_msg_hello_t *m);

/* token <-> 32 lowercase hex digits (+ NUL: out needs 2 * ZP_ID_TOKEN_LEN + 1) */
void zp_identity_hex(char *out, const uint8_t token[ZP_ID_TOKEN_LEN]);
int zp_identity_parse(uint8_t token[ZP_ID_TOKEN_LEN], const char *hex, size_t len);
/* a fresh random token (getrandom) */
int zp_identity_new(uint8_t token[ZP_ID_TOKEN_LEN]);

/* the kernel's pid of a connection from libzmq's Peer-Address property ("path:uid:gid:pid");
 * 0 when absent or not of that form (tcp) */
uint32_t zp_peer_address_pid(const char *peer_address, uint32_t *uid);

/* ---- supervisor channel messages ---- */
typedef enum { ZP_SUP_REG = 1, ZP_SUP_EXIT = 2, ZP_SUP_FENCE = 3 } zp_sup_type_t;
typedef struct {
    zp_sup_type_t type;
    uint32_t child, role, instance, pid;
    uint8_t token[ZP_ID_TOKEN_LEN];     /* REG */
    char reason[200];                   /* FENCE: free text, printable ASCII */
} zp_sup_msg_t;
/* encode into buf (n >= ZP_SUP_MSG_MAX): length or negative */
int zp_sup_encode(char *buf, size_t n, const zp_sup_msg_t *m);
/* strict: exact field count, decimal numbers in range, role < ZP_NROLES, pid >= 2, a 32-digit
 * token; ZP_EPROTO with a message otherwise */
int zp_sup_decode(zp_sup_msg_t *m, const char *buf, size_t len);
#endif
