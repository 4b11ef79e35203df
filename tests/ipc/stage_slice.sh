#!/usr/bin/env bash
# stage_slice.sh ZKPIPE SOURCE_ROOT - issue 10: the default tier of the GPU worker's control
# threads, no privilege and no option: the normal policy with a 100 us scheduling slice
# (lib/util/rt.c). The checks of stage_rt.sh, run in that tier.
RT_MODE=slice
. "$(dirname "$0")/stage_rt.sh"
