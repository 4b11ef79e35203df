/* witness.h - circom witness generation: a circuit's `circom --wasm` generator translated to C
 * once (wasm2c), compiled with the system compiler and cached by content hash; witnesses
 * computed from input.json as snarkjs's `wtns calculate` computes them, byte for byte.
 *
 * Three steps, each usable alone:
 *   1. zp_wc_register(): circuit.wasm -> <cache>/<sha256>.so (wasm2c + cc -O2, run as child
 *      processes under a time limit; atomic rename, so concurrent registrations are safe and a
 *      cached entry is reused without recompiling).
 *   2. zp_wc_open(): dlopen the cached module (its code is only run later, in a child).
 *   3. zp_wc_calculate(): the witness of one input, computed in a forked child process (the
 *      generated code is bounds-checked by wasm2c's guard pages, and the child is killed at the
 *      deadline, its wasm memory capped, its crash a clean error), written straight into a
 *      caller buffer that must be MAP_SHARED (a shared-memory slot, or zp_wc_shared_alloc()).
 *      Output: witness values as .wtns section 2 holds them (n8 bytes each, little-endian,
 *      standard form), and the prime.
 * Inputs (zp_wc_input_*) are read as snarkjs reads them (JSON.parse, unstringifyBigInts, then
 * circom_runtime's flatArray / normalize): nested arrays flattened row-major, numbers (JSON
 * numbers rounded to doubles as JSON.parse does), decimal / 0x-hex / 0b / 0o strings,
 * negatives and values >= p reduced mod p, true/false as 1/0.
 * Errors: ZP_EFORMAT for input.json syntax or a value that is no integer, ZP_EUNSAT for an input
 * the circuit refuses (unknown signal, wrong number of values, a failed circom assertion: the
 * message carries circom's "Error in template ... line: N"), ZP_ETIMEDOUT, ZP_ETOOBIG (wasm
 * memory over the limit, output buffer too small), ZP_EVERSION (not a circom 2 generator),
 * ZP_EDEVICE never. zp_err_msg() names the file, signal and value.
 * Tests: tests/test_witness.c (unit), tests/oracle/test_witness.sh (byte-equal to snarkjs). */
#ifndef ZP_WITNESS_H
#define ZP_WITNESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct zp_wc_limits {
    uint64_t mem_bytes;        /* wasm linear memory cap; 0 = 4 GiB (wasm32's own limit) */
    uint32_t timeout_ms;       /* per witness; 0 = 600 000 */
    uint32_t compile_timeout_ms; /* wasm2c + cc at registration; 0 = 1 800 000 */
} zp_wc_limits_t;

/* ---- registration: wasm -> native module, cached ---- */
/* Translate and compile `wasm_path` into `cache_dir` (created 0700 if missing) unless a module
 * of the same content is there. so_path (cap bytes) receives the module's path; *cached tells
 * whether it was already there (NULL allowed); *ms the time spent (NULL allowed). */
int zp_wc_register(char *so_path, size_t cap, bool *cached, double *ms, const char *cache_dir,
                   const char *wasm_path, const zp_wc_limits_t *lim);
/* the default cache: $ZKPIPE_WASM_CACHE, else $XDG_CACHE_HOME/zkpipe/wasm, else ~/.cache/zkpipe/wasm */
int zp_wc_default_cache(char *dir, size_t cap);

/* ---- a loaded module ---- */
typedef struct zp_wc zp_wc_t;
int zp_wc_open(zp_wc_t **out, const char *so_path);
void zp_wc_close(zp_wc_t **wcp);
/* circom's circuit.sym (optional): with it, "not all inputs are given" names the missing input
 * signals (the wasm knows them only by hash). zp_wc_find_sym: <dir of wasm>/../NAME.sym or
 * <wasm without .wasm>.sym, where circom writes it; NULL when there is none (caller frees). */
int zp_wc_set_sym(zp_wc_t *wc, const char *sym_path);
char *zp_wc_find_sym(const char *wasm_path);

/* ---- inputs ---- */
typedef struct zp_wc_input zp_wc_input_t;
/* parse an input.json document (an object: signal name -> value or nested array of values);
 * name is used in messages */
int zp_wc_input_parse(zp_wc_input_t **out, const char *text, size_t len, const char *name);
int zp_wc_input_load(zp_wc_input_t **out, const char *path);   /* at most 1 GiB */
void zp_wc_input_free(zp_wc_input_t **inp);
size_t zp_wc_input_signals(const zp_wc_input_t *inp);          /* top-level names */
size_t zp_wc_input_values(const zp_wc_input_t *inp);           /* flattened values, all signals */
/* value (index i over all flattened values) reduced mod p (pn32 little-endian u32 words) into
 * out (pn32 words); the error names the signal and its flat index */
int zp_wc_input_value(uint32_t *out, const zp_wc_input_t *inp, size_t i, const uint32_t *p, unsigned pn32);

/* circom's FNV-1a 64 of a signal name */
uint64_t zp_wc_fnv1a64(const char *s, size_t len);

/* ---- calculation ---- */
typedef struct zp_wc_result {
    uint32_t version;          /* circom generator version (2) */
    uint32_t n8;               /* bytes per value */
    uint32_t n_witness;        /* values written */
    uint8_t prime[64];         /* n8 bytes, little-endian */
    double ms;                 /* wall time of the calculation, fork to exit */
} zp_wc_result_t;
/* Compute the witness of `inp` into out (cap bytes, MAP_SHARED memory). log_fd: where circom's
 * log() lines go (-1 = dropped). */
int zp_wc_calculate(zp_wc_result_t *res, void *out, size_t cap, zp_wc_t *wc, const zp_wc_input_t *inp,
                    const zp_wc_limits_t *lim, int log_fd);

/* MAP_SHARED anonymous memory for zp_wc_calculate's output (reserved, committed as written) */
void *zp_wc_shared_alloc(size_t cap);
void zp_wc_shared_free(void *p, size_t cap);

/* the .wtns header of a result (44 + n8 bytes; the values follow it), and the whole file,
 * byte-identical to snarkjs `wtns calculate` */
#define ZP_WC_WTNS_HDR_MAX (44 + 64)
size_t zp_wc_wtns_header(uint8_t out[ZP_WC_WTNS_HDR_MAX], const zp_wc_result_t *res);
int zp_wc_write_wtns(const char *path, const zp_wc_result_t *res, const void *values);

#endif
