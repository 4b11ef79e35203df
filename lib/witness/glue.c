/* glue.c - NOT part of libzkpipe: compiled into every generated witness module, beside wasm2c's
 * output of the circuit (wc.c / wc.h, module name "zpwc") and wabt's wasm-rt-impl.c
 * (register.c writes it there; embed.py keeps its text in the zkpipe binary).
 * It implements circom's imports (runtime.exceptionHandler, printErrorMessage,
 * writeBufferMessage, showSharedRWMemory) as circom_runtime's witness_calculator.js does, and
 * drives the exports in its order: init; per input signal getInputSignalSize, then per value
 * writeSharedRWMemory and setInputSignal; getInputSize; getWitness + readSharedRWMemory per
 * witness value. Runs only in the calculator's child process (run.c): wasm_rt_init installs its
 * SIGSEGV handler for the guard pages there, and a trap long-jumps back here. The only symbol
 * it exports is zp_wc_glue_v1. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "wasm-rt-impl.h"
#include "wc.h"
#include "wc_abi.h"

struct Z_runtime_instance_t {
    zp_wc_host_t *h;
    Z_zpwc_instance_t *inst;
};

static Z_zpwc_instance_t g_inst;
static struct Z_runtime_instance_t g_rt;

static void append(char *buf, uint32_t *len, uint32_t cap, const char *s, size_t n)
{
    if (*len + n >= cap) n = *len + 1 < cap ? cap - 1 - *len : 0;
    memcpy(buf + *len, s, n);
    *len += (uint32_t)n;
    buf[*len] = 0;
}

/* circom's getMessage(): chars until 0 (bounded) */
static size_t get_message(char *m, size_t cap)
{
    size_t n = 0;
    for (size_t guard = 0; guard < (1u << 20); guard++) {
        uint32_t c = Z_zpwcZ_getMessageChar(&g_inst);
        if (!c) break;
        if (n + 1 < cap) m[n++] = (char)c;
    }
    m[n] = 0;
    return n;
}

void Z_runtimeZ_exceptionHandler(struct Z_runtime_instance_t *rt, u32 code)
{
    rt->h->fail = WC_EXC;
    rt->h->exc_code = (int32_t)code;
    wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE);
}

void Z_runtimeZ_printErrorMessage(struct Z_runtime_instance_t *rt)
{
    char m[1024];
    size_t n = get_message(m, sizeof m);
    append(rt->h->err, &rt->h->err_len, sizeof rt->h->err, m, n);
    append(rt->h->err, &rt->h->err_len, sizeof rt->h->err, "\n", 1);
}

static void flush_line(zp_wc_host_t *h)
{
    if (h->log_fd >= 0) {
        h->msg[h->msg_len] = '\n';
        ssize_t w = write(h->log_fd, h->msg, h->msg_len + 1);
        (void)w;
    }
    h->msg_len = 0;
    h->msg[0] = 0;
}

void Z_runtimeZ_writeBufferMessage(struct Z_runtime_instance_t *rt)
{
    zp_wc_host_t *h = rt->h;
    char m[1024];
    size_t n = get_message(m, sizeof m);
    if (n == 1 && m[0] == '\n') {
        flush_line(h);
        return;
    }
    if (h->msg_len) append(h->msg, &h->msg_len, sizeof h->msg - 1, " ", 1);
    append(h->msg, &h->msg_len, sizeof h->msg - 1, m, n);
}

/* the shared memory's number in decimal (circom's log of a signal) */
void Z_runtimeZ_showSharedRWMemory(struct Z_runtime_instance_t *rt)
{
    zp_wc_host_t *h = rt->h;
    uint32_t n32 = Z_zpwcZ_getFieldNumLen32(&g_inst), v[16] = {0};
    if (n32 > 16) n32 = 16;
    for (uint32_t j = 0; j < n32; j++) v[j] = Z_zpwcZ_readSharedRWMemory(&g_inst, j);
    char dec[160];
    size_t pos = sizeof dec;
    dec[--pos] = 0;
    for (;;) {
        uint64_t rem = 0;
        int nz = 0;
        for (uint32_t j = n32; j-- > 0;) {
            uint64_t cur = rem << 32 | v[j];
            v[j] = (uint32_t)(cur / 10);
            rem = cur % 10;
            nz |= v[j] != 0;
        }
        dec[--pos] = (char)('0' + rem);
        if (!nz || pos == 0) break;
    }
    if (h->msg_len) append(h->msg, &h->msg_len, sizeof h->msg - 1, " ", 1);
    append(h->msg, &h->msg_len, sizeof h->msg - 1, dec + pos, strlen(dec + pos));
}

static int meta(zp_wc_host_t *h)
{
    if (h->abi != ZP_WC_ABI || h->size != sizeof *h) return -1;
    wasm_rt_init();
    Z_zpwc_init_module();
    g_rt.h = h;
    g_rt.inst = &g_inst;
    wasm_rt_trap_t t = wasm_rt_impl_try();
    if (t != WASM_RT_TRAP_NONE) {
        h->trap = (uint32_t)t;
        if (!h->fail) h->fail = WC_TRAP;
        return -1;
    }
    Z_zpwc_instantiate(&g_inst, &g_rt);
    wasm_rt_memory_t *mem = Z_zpwcZ_memory(&g_inst);
    h->pages = mem->pages;
    if (mem->pages > h->max_pages) {
        h->fail = WC_MEM;
        return -1;
    }
    if (mem->max_pages > h->max_pages) mem->max_pages = h->max_pages;   /* memory.grow past the cap fails */
    h->version = Z_zpwcZ_getVersion(&g_inst);
    if (h->version != 2) {
        h->fail = WC_VERSION;
        return -1;
    }
    h->n32 = Z_zpwcZ_getFieldNumLen32(&g_inst);
    if (h->n32 == 0 || h->n32 > 16) {
        h->fail = WC_VERSION;
        return -1;
    }
    Z_zpwcZ_getRawPrime(&g_inst);
    for (uint32_t j = 0; j < h->n32; j++) h->prime[j] = Z_zpwcZ_readSharedRWMemory(&g_inst, j);
    h->witness_size = Z_zpwcZ_getWitnessSize(&g_inst);
    h->input_size = Z_zpwcZ_getInputSize(&g_inst);
    return 0;
}

static int run(zp_wc_host_t *h)
{
    volatile uint32_t done = 0;
    wasm_rt_trap_t t = wasm_rt_impl_try();
    if (t != WASM_RT_TRAP_NONE) {
        h->trap = (uint32_t)t;
        h->done_in = done;
        if (!h->fail) h->fail = WC_TRAP;
        return -1;
    }
    Z_zpwcZ_init(&g_inst, 0);
    const uint32_t *v = h->vals;
    for (uint32_t s = 0; s < h->nsig; s++) {
        uint32_t msb = h->sig_hash[2 * s], lsb = h->sig_hash[2 * s + 1];
        int32_t size = (int32_t)Z_zpwcZ_getInputSignalSize(&g_inst, msb, lsb);
        h->bad_sig = s;
        h->bad_size = (uint32_t)size;
        if (size <= 0) { h->fail = WC_NOT_FOUND; return -1; }   /* circom 2.2 answers 0 for an unknown hash */
        if (h->sig_count[s] < (uint32_t)size) { h->fail = WC_NOT_ENOUGH; return -1; }
        if (h->sig_count[s] > (uint32_t)size) { h->fail = WC_TOO_MANY; return -1; }
        for (uint32_t i = 0; i < h->sig_count[s]; i++) {
            for (uint32_t j = 0; j < h->n32; j++) Z_zpwcZ_writeSharedRWMemory(&g_inst, j, v[j]);
            v += h->n32;
            Z_zpwcZ_setInputSignal(&g_inst, msb, lsb, i);
            done = done + 1;
        }
    }
    h->done_in = done;
    if (done < Z_zpwcZ_getInputSize(&g_inst)) {
        h->fail = WC_NOT_ALL;
        return -1;
    }
    uint64_t n8 = (uint64_t)h->n32 * 4;
    if ((uint64_t)h->witness_size * n8 > h->out_cap) {
        h->fail = WC_OUT;
        return -1;
    }
    for (uint32_t i = 0; i < h->witness_size; i++) {
        Z_zpwcZ_getWitness(&g_inst, i);
        uint8_t *o = h->out + i * n8;
        for (uint32_t j = 0; j < h->n32; j++) {
            uint32_t w = Z_zpwcZ_readSharedRWMemory(&g_inst, j);
            memcpy(o + 4 * j, &w, 4);
        }
    }
    if (h->msg_len) flush_line(h);
    return 0;
}

static int probe(zp_wc_host_t *h)
{
    wasm_rt_trap_t t = wasm_rt_impl_try();
    if (t != WASM_RT_TRAP_NONE) return -1;
    for (uint32_t k = 0; k < h->probe_n && k < 256; k++)
        h->probe_size[k] = (int32_t)Z_zpwcZ_getInputSignalSize(&g_inst, h->probe_hash[2 * k], h->probe_hash[2 * k + 1]);
    return 0;
}

__attribute__((visibility("default"))) const zp_wc_glue_t zp_wc_glue_v1 = {ZP_WC_ABI, sizeof(zp_wc_host_t), meta, run, probe};
