/* cli.h - subcommands of the `zkpipe` command. Each returns the process exit status.
 * main.c dispatches argv[1]; each subcommand parses its own options (argv[0] = subcommand). */
#ifndef ZP_CLI_H
#define ZP_CLI_H
#include <stdbool.h>
int zp_cmd_prove(int argc, char **argv);    /* cli/prove.c   */
int zp_cmd_verify(int argc, char **argv);   /* cli/verify.c  */
int zp_cmd_wtns(int argc, char **argv);     /* cli/wtns.c: `zkpipe wtns calculate` */
int zp_cmd_fullprove(int argc, char **argv); /* cli/wtns.c: input.json to proof */
/* one local proof (cli/prove.c); wtns_buf: a .wtns already in memory (fullprove), else read wtns */
#include <stddef.h>
#include <stdint.h>
typedef struct {
    const char *zkey, *wtns, *proof, *pub, *r1cs, *bin, *r, *s;
    unsigned threads;
    bool json, quiet;
    bool times;                             /* the phase table on stderr (--times, issue 31) */
    const uint8_t *wtns_buf;
    size_t wtns_len;
    uint64_t t0;                            /* start time for the stage lines; 0 = now */
    bool recheck;                           /* bellman key: subgroup checks even if the check record matches */
} zp_prove_args_t;
/* a zkey, or a bellman .params (handed to zp_prove_bellman) */
int zp_prove_run(const zp_prove_args_t *a);
/* cli/prove_bellman.c: `zkpipe prove` / `fullprove` with a bellman .params key (a->zkey) */
int zp_prove_bellman(const zp_prove_args_t *a);
int zp_cmd_bench(int argc, char **argv);    /* cli/bench.c   */
int zp_bench_arith(int argc, char **argv); /* cli/bench_arith.c: `zkpipe bench arith` */
int zp_cmd_msm(int argc, char **argv);     /* cli/bench_arith.c: `zkpipe msm calibrate|check|which` */
int zp_bench_wakeup(int argc, char **argv); /* cli/bench_wakeup.c: `zkpipe bench wakeup` */
int zp_bench_filecoin(int argc, char **argv); /* cli/bench_filecoin.c: `zkpipe bench filecoin` */
int zp_cmd_up(int argc, char **argv);       /* cli/up.c      */
int zp_cmd_submit(int argc, char **argv);   /* cli/client.c  */
int zp_cmd_await(int argc, char **argv);    /* cli/client.c  */
int zp_cmd_status(int argc, char **argv);   /* cli/client.c  */
int zp_cmd_cancel(int argc, char **argv);   /* cli/client.c  */
int zp_cmd_trace(int argc, char **argv);    /* cli/client.c  */
int zp_cmd_metrics(int argc, char **argv);  /* cli/client.c  */
int zp_cmd_testkey(int argc, char **argv);  /* cli/testkey.c: INSECURE test keys */
int zp_cmd_keys(int argc, char **argv);     /* cli/keys.c: proving keys by tier */
/* cli/help.c: the long help of each command (`zkpipe help CMD`, also the man pages'
 * DESCRIPTION); NULL when there is none. */
const char *zp_cli_help_text(const char *cmd);
bool zp_cli_is_client_cmd(const char *cmd);
#include <stdbool.h>
int zp_cmd_fleet(int argc, char **argv);         /* cli/fleet.c: `zkpipe fleet init` */
int zp_cmd_fleet_client(int argc, char **argv);  /* cli/fleet.c: submit|await|status|cancel --fleet */
bool zp_fleet_wanted(int argc, char **argv);     /* cli/fleet.c: --fleet given, or $ZP_FLEET set */
#endif
