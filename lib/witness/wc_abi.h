/* wc_abi.h - the ABI between the calculator (run.c, in zkpipe) and the glue compiled into each
 * generated module (glue.c). Self-contained (stdint only): register.c writes this file and
 * glue.c beside the wasm2c output and compiles them together; ZP_WC_ABI and the struct size are
 * checked when a module is opened, so a cached module of another build is refused. */
#ifndef ZP_WC_ABI_H
#define ZP_WC_ABI_H
#include <stdint.h>

#define ZP_WC_ABI 0x7a770002u
#define ZP_WC_GLUE_SYMBOL "zp_wc_glue_v1"

/* failure kinds the glue reports */
enum { WC_OK = 0, WC_TRAP = 1, WC_EXC = 2, WC_NOT_FOUND = 3, WC_NOT_ENOUGH = 4, WC_TOO_MANY = 5, WC_NOT_ALL = 6,
       WC_MEM = 7, WC_OUT = 8, WC_VERSION = 9 };

typedef struct zp_wc_host {
    uint32_t abi, size;
    /* in */
    uint32_t max_pages;
    uint32_t nsig;
    const uint32_t *sig_hash;         /* msb, lsb per signal */
    const uint32_t *sig_count;        /* values per signal */
    const uint32_t *vals;             /* n32 words per value, in signal order */
    uint8_t *out;                     /* n_witness * n32 * 4 bytes */
    uint64_t out_cap;
    int log_fd;
    /* out */
    uint32_t version, n32, witness_size, input_size, pages;
    uint32_t prime[16];
    int32_t fail, exc_code;           /* WC_*, exceptionHandler's code */
    uint32_t trap, bad_sig, bad_size, done_in;
    uint32_t err_len, msg_len;
    char err[4096];                   /* printErrorMessage lines */
    char msg[4096];                   /* writeBufferMessage line being built */
    /* names for "not all inputs": candidate signals (from circuit.sym) probed for their size */
    uint32_t probe_n;
    uint32_t probe_hash[2 * 256];     /* msb, lsb */
    int32_t probe_size[256];
} zp_wc_host_t;

typedef struct {
    uint32_t abi, host_size;
    int (*meta)(zp_wc_host_t *h);     /* instantiate; version, n32, prime, sizes */
    int (*run)(zp_wc_host_t *h);      /* init, inputs, witness into h->out */
    int (*probe)(zp_wc_host_t *h);    /* getInputSignalSize of each probe_hash */
} zp_wc_glue_t;

#endif
