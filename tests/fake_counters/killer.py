"""An adapter that kills the worker it was forked from (its parent), as a library that signals its process group."""

import os
import signal


def run(model, inputs):
    os.kill(os.getppid(), signal.SIGKILL)
    return 0
