/* help.c - the long help of each `zkpipe` command: `zkpipe help CMD` prints it, and the man
 * pages zkpipe-CMD(1) are made from the same text at build time (scripts/man-page, meson
 * custom_target), so the two never disagree. Tests: tests/client/install.sh (man pages
 * installed and non-empty; `zkpipe help await` names the exit codes). */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cli/cli.h"

static const struct { const char *cmd, *text; } k_help[] = {
    {"prove",
     "Prove one witness in this process (CPU backend) and write snarkjs-compatible proof.json and\n"
     "public.json. --r1cs FILE checks the witness against the constraints first (the failing\n"
     "constraint is named); --threads N (0 = every CPU this process may use, at most 4096);\n"
     "--bin FILE also writes the binary proof. Exit 0 on success, 1 on bad input, 2 on usage.\n"
     "A bellman/Filecoin circuit.params (BLS12-381) takes --r1cs circuit.r1cs and writes bellman's\n"
     "192-byte proof.bin; the key's subgroup checks run once per file (a check record in\n"
     "~/.cache/zkpipe/keycheck, ZKPIPE_KEYCHECK_DIR), --recheck runs them again (doc/filecoin.md).\n"
     "zkpipe fullprove circuit.params circuit.wasm input.json proof.bin public.json --r1cs FILE\n"
     "does the same from input.json, the witness in memory.\n"},
    {"verify",
     "Verify a proof against a verification_key.json (or the .zkey itself) and public.json.\n"
     "A bellman/Filecoin key (circuit.vk, or the circuit.params itself; BLS12-381) takes bellman's\n"
     "192-byte proof.bin: zkpipe verify circuit.vk public.json proof.bin (doc/filecoin.md).\n"
     "Prints OK! and exits 0 when it verifies, 1 when it does not, 2 on usage or bad input.\n"},
    {"bench", "Print timings: `bench arith` (field and curve operations), `bench prove ZKEY WTNS` (each stage).\n"},
    {"msm",
     "The MSM's method table (issue 31, doc/msm.md): each MSM takes the endomorphism split or the\n"
     "plain Pippenger, its window (the model's or one bit either side) and, at that window, its batch\n"
     "size K and point ranges per window P (the plan's, halved or doubled), by group, curve, scalar\n"
     "shape, size, thread class and arithmetic path (scalar, or AVX-512 IFMA: each MSM reads the rows\n"
     "of the path it runs on, the other path's where that has none), from measured times.\n"
     "`msm calibrate [--out FILE] [--quick] [--sizes \"12 16\"] [--threads N] [--groups g1,g2]\n"
     "[--reps N] [--thread-cpu] [--many-only] [--kp-only]` measures every candidate on this CPU and\n"
     "path (1 and N threads; 10-20 min on 2 cores, --quick: 2^12-2^16 only; --thread-cpu: N-thread\n"
     "rows as the busiest thread's CPU time; --kp-only: K and P alone, at the windows of the table in\n"
     "use; ZP_MSM_VECTOR=0: the scalar path) and writes the table (format 4, with its `path` line;\n"
     "stdout without --out); scripts/msm-calib-merge merges runs; install it as\n"
     "PREFIX/share/zkpipe/msm-calib.txt or point ZKPIPE_MSM_CALIB at it (a malformed file stops\n"
     "prove, fullprove and up with the file and line). `msm check FILE` parses one; `msm which`\n"
     "prints the table in use, the path in use, and the method and window it picks per size with\n"
     "the rows it read (k-/k+, p-/p+: K or P halved / doubled). ZP_MSM_METHOD=endo|plain forces a\n"
     "method, ZP_MSM_WINDOW=model the model's window, K and P.\n"},
    {"up",
     "Run a whole process group in the foreground: the broker, synthesizers, GPU workers and\n"
     "finalizers, restarted when they die. --config FILE reads the same options from a file\n"
     "(see /etc/zkpipe/zkpipe.conf.example after `meson install`). --http-listen IP:PORT and\n"
     "--http-token-file FILE switch on the broker's HTTP JSON API (127.0.0.1 unless an address is\n"
     "given; Bearer tokens, one per line, required when the file is given).\n"},
    {"submit",
     "Queue a job: one partition per witness. Paths are made absolute (the daemons run elsewhere);\n"
     "--inline sends the witness bytes instead (no shared storage needed; size limited by the\n"
     "broker's --max-frame). --request-id is the idempotency key: submitting it again returns\n"
     "the same job, also after a broker restart. Prints the job id.\n"
     "--wasm W --input IN.json...: one partition per input.json instead; the synthesizers compute\n"
     "the witnesses with W (circom --wasm; registered once, cached under the state directory).\n"
     "The inputs are sent inline (4 MiB each at most); a bad one fails its partition only.\n"},
    {"await",
     "Wait for a job and print its outcome; --out DIR writes proof-I.json, public-I.json (and\n"
     "proof-I.bin) per partition; --json prints the result as one JSON object (the HTTP API's\n"
     "job shape). On a terminal a progress line (proved/total, elapsed, estimate) is redrawn in\n"
     "place on stderr; otherwise a plain line is printed when the count changes; --quiet: none.\n"
     "The wait survives broker restarts (the call is repeated on a fresh connection).\n"},
    {"status", "Print the broker's status: workers, slots, jobs (--json: machine-readable).\n"},
    {"cancel", "Cancel a job: its queued and running partitions stop; their slots are freed.\n"},
    {"trace", "Write a Chrome/Perfetto trace of the recent partitions (--out FILE, - for stdout).\n"},
    {"metrics", "Print the broker's metrics in the Prometheus text format (also GET /metrics over HTTP).\n"},
    {"keys",
     "The deployment's proving keys by tier (doc/keys.md). `keys list`: the shared-memory key store\n"
     "(hot: objects, MiB, last use, the pids holding each), the page-cache residency of their zkey\n"
     "files (warm), and the broker's view: which worker holds which key (shm, pinned, on the device),\n"
     "its key loads and evictions (--no-broker: skip it). `keys preload ZKEY...` fills the store (every\n"
     "stage then maps the key instead of parsing it; --warm: only read the file into the page cache;\n"
     "--store-budget BYTES: evict least recently used unheld objects first). `keys evict ZKEY...|--all`\n"
     "unlinks store objects no process holds (--force: also held ones; their users keep their mapping;\n"
     "--cold: also drop the files from the page cache). --arena NAME: the deployment (default).\n"},
};

const char *zp_cli_help_text(const char *cmd)
{
    for (size_t i = 0; i < sizeof k_help / sizeof k_help[0]; i++)
        if (!strcmp(cmd, k_help[i].cmd)) return k_help[i].text;
    return NULL;
}

bool zp_cli_is_client_cmd(const char *cmd)
{
    static const char *const k[] = {"submit", "await", "status", "cancel", "trace", "metrics"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(cmd, k[i])) return true;
    return false;
}
