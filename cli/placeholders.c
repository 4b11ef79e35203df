/* placeholders.c - weak definitions for subcommands whose module has not landed yet; each
 * says so plainly and fails. A real definition in its own file overrides it. */
#include <stdio.h>

#include "cli/cli.h"

#define ZP_PLACEHOLDER(fn, what)                                                   \
    __attribute__((weak)) int fn(int argc, char **argv)                            \
    {                                                                              \
        (void)argc; (void)argv;                                                    \
        fprintf(stderr, "zkpipe: '%s' is not available in this build\n", what);    \
        return 2;                                                                  \
    }
ZP_PLACEHOLDER(zp_cmd_prove, "prove")
ZP_PLACEHOLDER(zp_cmd_verify, "verify")
ZP_PLACEHOLDER(zp_cmd_bench, "bench")
ZP_PLACEHOLDER(zp_cmd_up, "up")
ZP_PLACEHOLDER(zp_cmd_submit, "submit")
ZP_PLACEHOLDER(zp_cmd_await, "await")
ZP_PLACEHOLDER(zp_cmd_status, "status")
ZP_PLACEHOLDER(zp_cmd_cancel, "cancel")
ZP_PLACEHOLDER(zp_cmd_trace, "trace")
