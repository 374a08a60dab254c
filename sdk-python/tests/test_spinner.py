"""The build command's spinner (wasmkeep_actor/_spinner.py), on a fake stream:
silent off a terminal (pipes and CI logs keep exactly the plain lines), frames
with the elapsed time on one, and its line cleared when the block ends, by an
error or Ctrl-C too."""

from __future__ import annotations

import io
import re
import time

import pytest

from wasmkeep_actor._spinner import CLEAR, spinner


class FakeTerminal(io.StringIO):
    """A stand-in for stderr that records each write."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty
        self.writes: list[str] = []

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.writes.append(s)
        return super().write(s)


def test_off_a_terminal_it_writes_nothing() -> None:
    stream = FakeTerminal(tty=False)
    with spinner("wasmkeep build: componentizing app.py", stream=stream, interval=0.005) as spinning:
        time.sleep(0.05)
    assert spinning is False
    assert stream.writes == []


def test_on_a_terminal_it_rewrites_one_line_and_clears_it() -> None:
    stream = FakeTerminal(tty=True)
    with spinner("wasmkeep build: componentizing app.py", stream=stream, interval=0.005) as spinning:
        time.sleep(0.1)
    assert spinning is True
    frames, last = stream.writes[:-1], stream.writes[-1]
    assert len(frames) >= 3, stream.writes
    for f in frames:
        assert re.fullmatch(r"\rwasmkeep build: componentizing app\.py \S \d+\.\d s", f), f
    assert len({f.split(" ")[-3] for f in frames}) > 1, "the frame turns"
    assert last == CLEAR
    assert "\n" not in stream.getvalue()


@pytest.mark.parametrize("error", [RuntimeError("componentize-py failed"), KeyboardInterrupt()])
def test_an_error_or_ctrl_c_clears_the_line_too(error: BaseException) -> None:
    stream = FakeTerminal(tty=True)
    with pytest.raises(type(error)):
        with spinner("wasmkeep build: componentizing app.py", stream=stream, interval=0.005):
            time.sleep(0.02)
            raise error
    assert stream.writes[-1] == CLEAR
    assert CLEAR not in stream.writes[:-1], "no frame after the clear"


def test_the_tty_flag_overrides_the_stream() -> None:
    stream = FakeTerminal(tty=True)
    with spinner("x", stream=stream, tty=False, interval=0.005):
        time.sleep(0.02)
    assert stream.writes == []


def test_a_line_wider_than_the_terminal_is_cut() -> None:
    stream = FakeTerminal(tty=True)  # no real terminal: 80 columns
    with spinner("wasmkeep build: " + "x" * 200, stream=stream, interval=10):
        pass
    assert len(stream.writes[0]) - 1 < 80, stream.writes[0]
    assert re.search(r"… \S 0\.0 s$", stream.writes[0])
