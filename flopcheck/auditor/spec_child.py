"""The child process that runs a model spec's code: `python -m flopcheck.auditor.spec_child JOB_JSON`.

A `module:factory` spec imports and runs the user's code, so it runs here, away from flopcheck: stdin is
closed, whatever the code prints goes to stderr, and the answer (or a one-line error) is the last line on
stdout. The parent (models.py) gives it a deadline.
"""
from __future__ import annotations

import json
import os
import sys


def main() -> None:
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the user's prints go to stderr; stdout carries the answer alone
    job = json.loads(sys.argv[1])
    sys.path[:0] = [p for p in job["paths"] if p not in sys.path]
    from flopcheck.auditor.models import ClaimError, _one_line, count_spec

    try:
        out = count_spec(job["spec"], job["shape"], job["resolution"])
    except ClaimError as err:
        out = {"error": str(err)}
    except BaseException as err:  # SystemExit and KeyboardInterrupt from the user's code too: one line
        out = {"error": f"model {job['spec']!r} raised {_one_line(err)}"}
    results.write(json.dumps(out) + "\n")
    results.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
