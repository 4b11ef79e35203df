#!/usr/bin/env python3
"""pty_run.py OUT CMD [ARGS...] - run CMD on a pseudo-terminal (stdin/stdout/stderr all the
pty), write everything it printed to OUT, exit with its exit status. For the progress tests."""
import os
import pty
import sys

out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:          # EIO once the child closed the pty
        break
    if not chunk:
        break
    data += chunk
_, status = os.waitpid(pid, 0)
with open(out, "wb") as f:
    f.write(data)
sys.exit(os.waitstatus_to_exitcode(status))
