"""Child processes, in one place: a module run in a child that streams JSON lines, and a function run in a forked
child with a deadline. A crash, a segfault, sys.exit, os._exit, a read of stdin or a hang is an answer here (an
error line), never a lost result or a hung parent.

Used by the counters' pool and workers (counters/pool.py, counters/worker.py) and the specs' builds
(specs/child.py): each of them says what to run; this module owns the processes, their deadlines and their deaths.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

DEFAULT_DEADLINE_S = 600.0  # a count or a build: seconds, unless its code never returns
_DEADLINE: ContextVar[float] = ContextVar("flopcheck_deadline_s", default=DEFAULT_DEADLINE_S)


def deadline_s() -> float:
    """The seconds a child may take for one count or one build, where the caller gave none: DEFAULT_DEADLINE_S, or
    what an enclosing `with deadline(...)` set (a verb's timeout_s, the CLI's --timeout)."""
    return _DEADLINE.get()


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block every child without a deadline of its own gets `seconds` (None: as it was)."""
    token = _DEADLINE.set(seconds) if seconds else None
    try:
        yield
    finally:
        if token is not None:
            _DEADLINE.reset(token)


PARENT_ENV = "FLOPCHECK_PARENT_PID"  # the pid a child watches: it exits when that process is gone
TOKEN_ENV = "FLOPCHECK_ANSWER_TOKEN"  # the secret each answer line starts with: the model's own output has none


def answer_channel() -> Callable[[dict[str, Any]], None]:
    """In a child, before any model's code runs: the original stdout kept for answers alone (fd 1 then points at
    stderr, so prints, C++ logs and subprocesses land there), and a writer of answer lines, each prefixed by the
    parent's token (taken out of the environment here, so the model's code cannot read it there). A model that
    writes into the kept descriptor anyway writes lines without the token, which the parent never reads as
    answers."""
    token = os.environ.pop(TOKEN_ENV, "")
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def send(message: dict[str, Any]) -> None:
        out.write(token + json.dumps(message) + "\n")
        out.flush()

    return send


def framed(data: bytes, token: bytes) -> dict[str, Any] | None:
    """The JSON after the last token in data (what flopcheck's code wrote last), or None: no token there, or no
    JSON after it (the model's own writes into the channel, a partial line of them before the answer too)."""
    at = data.rfind(token)
    if at < 0:
        return None
    try:
        message = json.loads(data[at + len(token) :])
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def child_env(**extra: str) -> dict[str, Any]:
    """The environment of a child: flopcheck importable as this process imports it, and this process's pid to
    watch (watch_parent)."""
    path = os.pathsep.join([*sys.path[:1], os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, **{PARENT_ENV: str(os.getpid())}, **extra)


def watch_parent(parent: int | None = None, interval_s: float = 0.5) -> None:
    """This process exits when its parent is gone (a SIGKILL'd flopcheck too, which can clean nothing up): a
    daemon thread checks every interval_s that the parent is still the one it was started by."""
    expected = parent or int(os.environ.get(PARENT_ENV) or os.getppid())

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(interval_s)
        os._exit(1)

    threading.Thread(target=watch, name="flopcheck-watch-parent", daemon=True).start()


def one_line(err: BaseException, limit: int = 300) -> str:
    """'TypeError: the first line of its message', at most `limit` characters (an error whose class says `plain`
    is a sentence already: its message alone)."""
    text = str(err).strip().splitlines()
    if getattr(err, "plain", False):
        return (text[0] if text else "")[:limit]
    return f"{type(err).__name__}: {text[0] if text else ''}"[:limit]


def _parents() -> dict[int, list[int]]:
    """Every process's children by its parent's pid, read from /proc (empty where there is no /proc)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it ended while we looked
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])  # after the command's name, which may hold spaces
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(roots: list[int]) -> list[int]:
    """The pids under roots, at any depth (one that called setsid to leave its process group too)."""
    tree, found, todo = _parents(), [], list(roots)
    while todo:
        kids = tree.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL to pid, its process group (a forked count's children) and every process under it, found before
    any of them dies (a dead parent's children are no longer found under it)."""
    for target in [pid, *descendants([pid])]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # a Child leads its own group (start_new_session)


_LIVE: set[Child] = set()  # the children not yet closed: stop_all's list
_STOPPING = threading.Event()  # set by stop_all: no child starts after it


def stop_all() -> None:
    """Every child this process started, and everything under them, killed now (Ctrl-C): a thread waiting on one
    reads its end at once; a spec's grandchild that called setsid is found through /proc, and, where this process is
    a subreaper (the command line), an orphan handed to it too."""
    _STOPPING.set()
    for child in list(_LIVE):
        kill_tree(child.proc.pid)
    if _SUBREAPER:
        for pid in descendants([os.getpid()]):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # orphans reaped, so none is left a zombie
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


@contextlib.contextmanager
def interruptible(adopt: bool = False) -> Iterator[None]:
    """Within the block a Ctrl-C first stops every child flopcheck started and what they started (a thread waiting
    on one then returns at once, not at its deadline: report's), then raises KeyboardInterrupt; with adopt (a
    process of its own: the command line), orphans of a spec's grandchildren are adopted, so they are found too.
    Outside the main thread, where no signal handler can be set, a KeyboardInterrupt still stops them all."""

    def stop(signum: int, frame: object) -> None:
        stop_all()
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    if adopt:
        adopt_orphans()
    before = signal.signal(signal.SIGINT, stop) if main else None
    try:
        yield
    except KeyboardInterrupt:
        stop_all()
        raise
    finally:
        if main:  # a handler set outside Python reads as None: Python's own is put back then
            signal.signal(signal.SIGINT, signal.default_int_handler if before is None else before)
        _STOPPING.clear()  # the next call starts children again (a Python session goes on after a Ctrl-C)


_SUBREAPER: list[bool] = []  # [True] once this process adopts its descendants' orphans


def adopt_orphans() -> None:
    """This process becomes its descendants' subreaper (Linux): a grandchild whose parent died (a double fork after
    setsid) becomes its child, so stop_all finds it; elsewhere nothing changes."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(36, 1, 0, 0, 0) == 0:  # PR_SET_CHILD_SUBREAPER
            _SUBREAPER[:] = [True]


class Child:
    """`python -m MODULE ARGS` in a child process: JSON lines in on stdin (or stdin closed), JSON lines out on
    stdout, its stderr kept for the line that says why it died. It leads its own process group, so a terminal's
    Ctrl-C reaches flopcheck alone, which stops it and everything under it (stop_all)."""

    def __init__(self, module: str, args: tuple[str, ...] = (), stdin: bool = True, **env: str):
        if _STOPPING.is_set():  # interrupted: nothing new starts
            raise KeyboardInterrupt
        self.stderr = tempfile.TemporaryFile()
        self.token = secrets.token_hex(16)  # answers start with it; a forged line cannot (answer_channel)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=child_env(**env, **{TOKEN_ENV: self.token}),
            start_new_session=True,
        )
        _LIVE.add(self)
        self._buffer = b""
        self.foreign: list[bytes] = []  # lines without the token: what the model wrote into the channel, not read

    def fileno(self) -> int:
        assert self.proc.stdout is not None  # opened with a pipe
        return self.proc.stdout.fileno()

    def send(self, message: dict[str, Any] | None) -> None:
        """One JSON line to its stdin; None closes it. A child that died takes nothing, and says so when read."""
        stdin = self.proc.stdin
        assert stdin is not None, "started without stdin"
        try:
            if message is None:
                stdin.close()
            else:
                stdin.write((json.dumps(message) + "\n").encode())
                stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def read(self) -> list[dict[str, Any]] | None:
        """The JSON lines that one read completes ([] if none yet); None when the child has closed its stdout."""
        chunk = os.read(self.fileno(), 1 << 16)
        if not chunk:
            return None
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        got = [(line, framed(line, self.token.encode())) for line in lines if line.strip()]
        self.foreign += [line[:200] for line, message in got if message is None]
        return [message for _, message in got if message is not None]

    def kill(self) -> None:
        """It and every process under it stopped (a grandchild that called setsid too)."""
        kill_tree(self.proc.pid)
        self.proc.wait()
        _LIVE.discard(self)

    def close(self) -> None:
        """Stopped, its pipes closed."""
        self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        self.stderr.close()

    def why_gone(self, what: str = "it") -> str:
        """Why it stopped, in one line: '{what} died (exit code N, or signal S): the last line of its stderr'."""
        code = self.proc.wait()
        self.stderr.seek(0)
        last = self.stderr.read().decode(errors="replace").strip().splitlines()[-1:] or [""]
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        return f"{what} died ({how})" + (f": {last[0][:200]}" if last[0] else "")


def ready(children: list[Child], timeout_s: float) -> list[Child]:
    """The children with something to read (or that have ended) within timeout_s."""
    if not children:
        return []
    found, _, _ = select.select(children, [], [], max(0.0, min(timeout_s, 3600.0)))
    return found


def answers(child: Child, expected: int, timeout_s: float) -> tuple[list[dict[str, Any]], str]:
    """Up to `expected` JSON lines from one child, each within timeout_s of the one before: (lines, '') when all
    came, else (the lines that came, 'timeout' or 'ended')."""
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < expected:
        if not ready([child], deadline - time.monotonic()):
            return got, "timeout"
        lines = child.read()
        if lines is None:
            return got, "ended"
        if lines:
            got += lines
            deadline = time.monotonic() + timeout_s
    return got, ""


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to fd until EOF, or None if the deadline passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        found, _, _ = select.select([fd], [], [], min(left, 3600.0))  # past time_t's range: OverflowError
        if found:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def forked(work: Callable[[], dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """`work()` in a forked child with a deadline: its JSON answer (or {'error': one line}) and its peak RSS."""
    r, w = os.pipe()
    parent = os.getpid()
    token = secrets.token_hex(16).encode()  # the answer follows it: what the model writes into the pipe does not
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        watch_parent(parent)  # dies with the process that forked it
        quiet = os.open(os.devnull, os.O_WRONLY)  # a library's prints, warnings and C++ logs: not the caller's
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        try:
            out = work()
        except BaseException as err:  # a crashing counter becomes its error result
            out = {"error": one_line(err)}
        try:
            data = json.dumps(out).encode()
        except (TypeError, ValueError) as err:  # an answer JSON cannot hold: its error, not a dead child
            data = json.dumps({"error": f"its answer cannot be sent back: {one_line(err)}"}).encode()
        data = token + data
        while data:
            data = data[os.write(w, data) :]
        os._exit(0)
    os.close(w)
    got = _read_all(r, time.monotonic() + timeout_s)
    os.close(r)
    if got is None:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    peak = usage.ru_maxrss / 1024
    if got is None:
        return {
            "error": f"timed out after {timeout_s:g} s: killed (raise the timeout if it is only slow)",
            "peak_rss_mb": peak,
        }
    if not got:
        return {"error": f"the counting process died ({_status(status)})", "peak_rss_mb": peak}
    answer = framed(got, token)
    if answer is None:  # bytes, but none of flopcheck's: the counted code wrote into the pipe and died or exited
        return {"error": f"the counting process sent no answer ({_status(status)}): its code wrote {got[:60]!r}"}
    return {**answer, "peak_rss_mb": peak}


__all__ = [
    "Child",
    "answer_channel",
    "answers",
    "child_env",
    "framed",
    "deadline",
    "deadline_s",
    "forked",
    "one_line",
    "ready",
    "watch_parent",
]
