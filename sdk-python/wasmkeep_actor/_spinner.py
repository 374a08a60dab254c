"""A one-line spinner for the build command's long step (componentize-py, 6-16 s).

The step's line with a turning frame and the elapsed time, rewritten in place
a few times per second, so that a build does not look hung. Only on a
terminal: in a pipe or a CI log the frames would be noise, so there it writes
nothing and the caller prints its plain line instead.

    with spinner("wasmkeep build: componentizing app.py") as active:
        if not active:
            print("wasmkeep build: componentizing app.py", file=sys.stderr)
        subprocess.run(...)

Leaving the block, by an exception or Ctrl-C (KeyboardInterrupt) too, clears
the line, so that what is printed next starts at column 0.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CLEAR = "\r\x1b[K"


def is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal that understands "\\x1b[K" (not a pipe, a file or TERM=dumb)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):  # a fake or redirected stream
        return 80


def frame_line(text: str, frame: str, seconds: float, columns: int) -> str:
    """`text ⠹ 7.3 s`, cut to the terminal's width so that it never wraps
    (a wrapped line is not rewritten by "\\r")."""
    tail = f" {frame} {seconds:.1f} s"
    room = columns - 1 - len(tail)
    head = text if len(text) <= room else text[: max(0, room - 1)] + "…"
    return head + tail


@contextmanager
def spinner(text: str, stream: TextIO | None = None, tty: bool | None = None, interval: float = 0.1) -> Iterator[bool]:
    """Spins on `stream` (stderr by default) while the block runs, when it is
    a terminal; `tty` overrides that (the tests' fake terminal). Yields
    whether it spins."""
    stream = stream if stream is not None else sys.stderr
    if not (is_terminal(stream) if tty is None else tty):
        yield False
        return
    started = time.monotonic()
    columns = _columns(stream)
    done = threading.Event()

    def draw(n: int) -> None:
        stream.write("\r" + frame_line(text, FRAMES[n % len(FRAMES)], time.monotonic() - started, columns))
        stream.flush()

    def spin() -> None:
        n = 0
        while True:
            draw(n)
            n += 1
            if done.wait(interval):
                return

    # A daemon thread: it never keeps the interpreter alive on its own.
    thread = threading.Thread(target=spin, name="wasmkeep-spinner", daemon=True)
    thread.start()
    try:
        yield True
    finally:
        done.set()
        # Its last frame is written before the line is cleared, never after.
        thread.join()
        stream.write(CLEAR)
        stream.flush()
