/* witness_int.h - private to lib/witness: the parsed input and the ABI between the calculator
 * (run.c, in the zkpipe binary) and the glue compiled into each generated module (glue.c's text,
 * register.c). The ABI struct is written twice (here and in the glue text): ZP_WC_ABI and its
 * size are checked when a module is opened, so a cached module of another build is refused. */
#ifndef ZP_WITNESS_INT_H
#define ZP_WITNESS_INT_H
#include "lib/witness/witness.h"
#include "lib/fmt/fmt.h"

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    const char *name;                 /* into the JSON document, not NUL-terminated */
    size_t nlen;
    uint64_t hash;                    /* circom's FNV-1a 64 */
    size_t first, count;              /* flattened values [first, first + count) */
} zp_wc_sig_t;

struct zp_wc_input {
    zp_json_t *doc;
    char *name;
    zp_wc_sig_t *sig;
    size_t nsig;
    uint32_t *val;                    /* JSON node of each flattened value */
    size_t nval;
};

#include "lib/witness/wc_abi.h"

/* wait for a child up to timeout_ms (pidfd + poll); at the deadline SIGKILL it (its process
 * group when group) and return ZP_ETIMEDOUT; *status as waitpid gives it (register.c) */
int zp_wc_wait_child(int *status, pid_t pid, uint32_t timeout_ms, bool group);

/* glue.c and wc_abi.h as text (embedded at build time by embed.py) */
extern const char zp_wc_glue_c[], zp_wc_abi_h[];

#endif
