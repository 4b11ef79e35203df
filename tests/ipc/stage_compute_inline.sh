#!/usr/bin/env bash
# stage_compute_inline.sh ZKPIPE SOURCE_ROOT - stage_compute.sh with ZP_GPU_INLINE_COMPUTE=1: the
# CPU backend's compute on the work thread (the old way, kept for comparison): no compute thread.
COMPUTE_MODE=inline
. "$(dirname "$0")/stage_compute.sh"
