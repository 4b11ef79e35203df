#!/usr/bin/env bash
# stage_signals.sh ZKPIPE SOURCE_ROOT - issue 9 item 7: the stage daemons install their signal
# handlers first thing. (1) A SIGTERM during a long initialisation (a --preload whose key path
# is a FIFO nobody writes: a stuck mount behaves the same) stops the stage cleanly, exit 0,
# instead of killing it. (2) SIGHUP does not kill a stage, and neither does writing its log to
# a closed stderr pipe (SIGPIPE): a SIGHUP, then a SIGTERM, end in a clean exit 0. Every stage
# daemon is checked (they share the runtime).
. "$(dirname "$0")/stage_lib.sh"
stage_init signals "$1" "$2"
mkfifo "$ST_DIR/key.fifo"
for b in "$SYNTH" "$FINAL" "$GPU"; do
  n=$(basename "$b")
  extra=""; [ "$b" = "$GPU" ] && extra="--backend cpu"
  # (1) SIGTERM while blocked in init
  "$b" $extra --runtime-dir "$ST_DIR/run" --arena "$ST_ARENA" --preload "$ST_DIR/key.fifo" >"$ST_DIR/$n-init.log" 2>&1 &
  P=$!; ST_PIDS="$P"
  st_wait "grep -q 'preloading proving key' '$ST_DIR/$n-init.log'" 60 || st_fail "$n: never started preloading"
  st_wait "[ \"\$(awk '{print \$3}' /proc/$P/stat 2>/dev/null)\" = S ]" 60 || st_fail "$n: not blocked in init"
  kill -TERM "$P"
  st_wait_exit "$P" 60
  [ "$ST_RC" = 0 ] || st_fail "$n: SIGTERM during init: exit status $ST_RC, expected 0 (a clean stop)"
  grep -q "stop signal during initialisation" "$ST_DIR/$n-init.log" || st_fail "$n: no clean-stop message"
  # (2) SIGHUP and a closed stderr pipe
  rm -f "$ST_DIR/err.fifo"; mkfifo "$ST_DIR/err.fifo"
  ( exec 3<"$ST_DIR/err.fifo"; exec 3<&- ) &
  "$b" $extra --runtime-dir "$ST_DIR/run" --arena "$ST_ARENA" --heartbeat-ms 50 >/dev/null 2>"$ST_DIR/err.fifo" &
  P=$!; ST_PIDS="$P"
  st_wait "st_catches $P 15" 60 || st_fail "$n: SIGTERM handler never installed"
  kill -HUP "$P"
  st_wait "! grep -q '^SigPnd:.*[1-9a-f]' /proc/$P/status 2>/dev/null && ! grep -q '^ShdPnd:.*[1-9a-f]' /proc/$P/status 2>/dev/null" 30
  kill -TERM "$P" 2>/dev/null
  st_wait_exit "$P" 60
  [ "$ST_RC" = 0 ] || st_fail "$n: SIGHUP + SIGTERM with a closed stderr: exit status $ST_RC, expected 0 (129: SIGHUP, 141: SIGPIPE)"
  st_log "$n: clean stop during init; survives SIGHUP and a closed stderr"
done
echo "ipc stage_signals: OK"
