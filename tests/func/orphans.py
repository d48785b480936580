#!/usr/bin/python3
"""orphans.py COMMAND...: run COMMAND as a child subreaper, as a
container's init is for what it starts, and print every process left
behind as this one's child once COMMAND has ended (zombies included):
an init that reaps none would keep them. Exits 1 if any."""
import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36

libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
    sys.exit("orphans: prctl: %s" % os.strerror(ctypes.get_errno()))
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL).returncode
# What exits by itself once COMMAND has gone has had time to.
time.sleep(0.3)
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        st = open("/proc/%s/stat" % pid).read()
    except OSError:
        continue
    comm = st[st.index("(") + 1:st.rindex(")")]
    state, ppid = st[st.rindex(")") + 2:].split()[:2]
    if int(ppid) == os.getpid():
        left.append("%s %s (%s)" % (pid, comm, state))
print("command status %d; left: %s" % (rc, ", ".join(left) or "none"))
sys.exit(1 if left or rc else 0)
