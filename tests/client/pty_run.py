#!/usr/bin/env python3
"""pty_run.py OUT CMD [ARGS...] - run CMD on a pseudo-terminal (stdin/stdout/stderr all the
pty), append everything it prints to OUT as it comes (a test may watch the file), exit with
its exit status. For the progress tests."""
import os
import pty
import sys

out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
with open(out, "wb") as f:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:      # EIO once the child closed the pty
            break
        if not chunk:
            break
        f.write(chunk)
        f.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
