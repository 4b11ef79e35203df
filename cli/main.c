/* main.c - the `zkpipe` command: dispatch to subcommands (cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/msm/msm.h"
#include "lib/util/util.h"

static const struct { const char *name; int (*fn)(int, char **); const char *help; } cmds[] = {
    {"prove", zp_cmd_prove, "prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [--r1cs F] [--threads N]"},
    {"verify", zp_cmd_verify, "verify <verification_key.json|circuit.zkey> <public.json> <proof.json>"},
    {"wtns", zp_cmd_wtns, "wtns calculate <circuit.wasm> <input.json> <witness.wtns>  witness from input.json, as snarkjs"},
    {"fullprove", zp_cmd_fullprove, "fullprove <input.json> <circuit.wasm> <circuit.zkey> <proof.json> <public.json>"},
    {"bench", zp_cmd_bench, "bench [arith|prove ZKEY WTNS] ...  print timings"},
    {"msm", zp_cmd_msm, "msm calibrate [--out FILE] [--quick] [--thread-cpu] | check FILE | which  the MSM method/window table, per path (issue 31)"},
    {"up", zp_cmd_up, "up [--config FILE]  run a local process group in the foreground"},
    {"submit", zp_cmd_submit, "submit --zkey Z [--r1cs R] [--priority P] [--request-id ID] [--inline] W1.wtns ..."},
    {"await", zp_cmd_await, "await JOB [--timeout S] [--out DIR] [--json] [--quiet]"},
    {"status", zp_cmd_status, "status [--json]"},
    {"cancel", zp_cmd_cancel, "cancel JOB"},
    {"trace", zp_cmd_trace, "trace --out trace.json"},
    {"testkey", zp_cmd_testkey, "testkey --curve C --power P --out DIR --insecure-known-tau  INSECURE test key (tests only)"},
    {"metrics", zp_cmd_metrics, "metrics  print the broker's metrics (Prometheus text format)"},
    {"fleet", zp_cmd_fleet, "fleet init [URL]  create/upgrade the PostgreSQL fleet schema; submit|await|status|cancel --fleet URL"},
    {"keys", zp_cmd_keys, "keys [list|preload ZKEY...|evict ZKEY...|--all] [--arena NAME]  proving keys by tier"},
};

/* the client commands' exit statuses (libzkpipe-client's result codes, zkpipe-client.h) */
static const char k_exit_codes[] =
    "exit status of submit, await, status, cancel, trace, metrics:\n"
    "  0  done (await: every partition proved)\n"
    "  1  a partition failed (await)\n"
    "  2  bad usage or input (unknown option, missing file, empty --request-id)\n"
    "  3  timed out (await --timeout passed; the job goes on)\n"
    "  4  the job was canceled (await)\n"
    "  5  broker unreachable (not running, permission denied, untrusted runtime directory,\n"
    "     no answer within --broker-timeout; calls are retried across broker restarts)\n"
    "  6  refused by the broker (unknown job, invalid request)\n"
    "  7  local failure (out of memory, cannot write --out files)\n";

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe [--log-format text|json] <command> [args]     (zkpipe help COMMAND: details)\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) fprintf(f, "  zkpipe %s\n", cmds[i].help);
    fputs(k_exit_codes, f);
}

/* `zkpipe help [CMD]`: the command's own --help text (the man pages hold the same) */
static int help(int argc, char **argv)
{
    if (argc < 2) { usage(stdout); return 0; }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name)) {
            printf("zkpipe %s\n", cmds[i].help);
            if (zp_cli_help_text(cmds[i].name)) fputs(zp_cli_help_text(cmds[i].name), stdout);
            if (zp_cli_is_client_cmd(cmds[i].name)) fputs(k_exit_codes, stdout);
            return 0;
        }
    fprintf(stderr, "zkpipe help: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    /* global option: --log-format text|json, for this process and every child (ZP_LOG_FORMAT) */
    if (argc > 2 && !strcmp(argv[1], "--log-format")) {
        if (strcmp(argv[2], "text") && strcmp(argv[2], "json")) {
            fprintf(stderr, "zkpipe: --log-format must be text or json, got '%s'\n", argv[2]);
            return 2;
        }
        setenv("ZP_LOG_FORMAT", argv[2], 1);
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    zp_log_init("zkpipe");
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "help")) return help(argc - 1, argv + 1);
    if (zp_fleet_wanted(argc - 1, argv + 1)) return zp_cmd_fleet_client(argc - 1, argv + 1);   /* cli/fleet.c */
    /* the commands that run MSMs refuse a malformed MSM calibration file (lib/msm/msm.h) */
    if ((!strcmp(argv[1], "prove") || !strcmp(argv[1], "fullprove") || !strcmp(argv[1], "up")) &&
        zp_msm_calib_init()) {
        fprintf(stderr, "zkpipe: %s\n", zp_err_msg());
        return 2;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "zkpipe: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
