"""A hostile factory: it starts a grandchild that leaves flopcheck's session (fork, then os.setsid, the way a daemon
does), writes that grandchild's pid to the file named in $FLOPCHECK_TEST_MARKER, and never returns. A Ctrl-C must
stop flopcheck at once, with this process and its grandchild gone."""

import os
import time


def build():
    pid = os.fork()
    if pid == 0:  # the grandchild: its own session, out of every process group flopcheck knows
        os.setsid()
        time.sleep(600)
        os._exit(0)
    with open(os.environ["FLOPCHECK_TEST_MARKER"], "w") as f:
        f.write(str(pid))
    time.sleep(600)  # the factory hangs: its deadline is far away
