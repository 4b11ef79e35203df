#!/usr/bin/env python3
# notify_recv.py ADDR LOG - a stand-in for systemd's notification socket, for tests/ipc/notify.sh.
# Binds an AF_UNIX datagram socket at ADDR (a path, or @name in the abstract namespace), asks
# for the sender's credentials (SO_PASSCRED), and appends one line per received KEY=VALUE line
# to LOG: "<sender pid> <monotonic s> <line>". Writes "0 0 LISTENING" once bound. Runs until
# SIGTERM.
import os, signal, socket, struct, sys, time

addr, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
with open(log, "a", buffering=1) as f:
    f.write("0 0 LISTENING\n")
    while True:
        data, anc, _flags, _a = s.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = -1
        for level, typ, cdata in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS and len(cdata) >= 12:
                pid = struct.unpack("iII", cdata[:12])[0]
        for line in data.decode("utf-8", "replace").split("\n"):
            if line:
                f.write("%d %.3f %s\n" % (pid, time.monotonic(), line))
