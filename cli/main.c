/* main.c - the `zkpipe` command: dispatch to subcommands (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/util/util.h"

static const struct { const char *name; int (*fn)(int, char **); const char *help; } cmds[] = {
    {"prove", zp_cmd_prove, "prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> [--r1cs F] [--threads N]"},
    {"verify", zp_cmd_verify, "verify <verification_key.json|circuit.zkey> <public.json> <proof.json>"},
    {"bench", zp_cmd_bench, "bench [arith|prove ZKEY WTNS] ...  print timings"},
    {"up", zp_cmd_up, "up [--config FILE]  run a local process group in the foreground"},
    {"submit", zp_cmd_submit, "submit --zkey Z [--r1cs R] --priority P --request-id ID W1.wtns ..."},
    {"await", zp_cmd_await, "await JOB [--timeout S] --out DIR"},
    {"status", zp_cmd_status, "status [--json]"},
    {"cancel", zp_cmd_cancel, "cancel JOB"},
    {"trace", zp_cmd_trace, "trace --out trace.json"},
    {"metrics", zp_cmd_metrics, "metrics  print the broker's metrics (Prometheus text format)"},
    {"fleet", zp_cmd_fleet, "fleet init [URL]  create/upgrade the PostgreSQL fleet schema; submit|await|status|cancel --fleet URL"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe <command> [args]\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) fprintf(f, "  zkpipe %s\n", cmds[i].help);
}

int main(int argc, char **argv)
{
    zp_log_init("zkpipe");
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (zp_fleet_wanted(argc - 1, argv + 1)) return zp_cmd_fleet_client(argc - 1, argv + 1);   /* cli/fleet.c */
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "zkpipe: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
