"""Seeded chaos for `wasmkeep_actor.testing` (re-exported there):
`run_chaos` runs a test's body once per seed under that seed's schedule of
what goes wrong, and `ChaosFailure` reports the seed that failed with its
schedule. The schedule and the report are the host library's, so a seed means
the same in every language's harness."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._native_harness import load as _native

if TYPE_CHECKING:
    from .testing import TestHost


@dataclass(frozen=True)
class ChaosRecord:
    """One thing a chaos schedule did: before `event` (1 for the seed's
    first) to `actor` (`app:class/name`) on `node`, the `step` (`"fail-removal"`,
    `"restart"`, `"hibernate"`, `"late-alarms"` (`value`: the ms the clock
    moved), `"lose-answer"`, `"crash-after-answer"`, `"fail-upload"`,
    `"upload-lands-but-fails"`, `"lose-hold"`,
    `"cut-off"` (`value`: the node)). `str()` is the line the report prints."""

    event: int
    actor: str
    node: int
    step: str
    value: int | None
    text: str

    def __str__(self) -> str:
        return self.text


class ChaosFailure(AssertionError):
    """The body of `run_chaos` failed under `seed`; `schedule` is what the
    seed's schedule did before it failed, `message` the body's failure. The
    message (`str()`) is the host library's report: the seed, how to replay
    it alone (`WASMKEEP_CHAOS_SEED=<seed>`) and the schedule."""

    def __init__(self, seed: int, schedule: list[ChaosRecord], message: str) -> None:
        self.seed = seed
        self.schedule = schedule
        self.message = message
        report = _native().chaos_report(
            seed, message, [(r.event, r.actor, r.node, r.step, r.value, r.text) for r in schedule]
        )
        super().__init__(str(report).rstrip("\n"))

    def __reduce__(self) -> tuple[type[ChaosFailure], tuple[int, list[ChaosRecord], str]]:
        # Pickled with its own arguments (pytest-xdist sends failures across processes).
        return (type(self), (self.seed, self.schedule, self.message))


def chaos_seed_from_env() -> int | None:
    """The seed to replay alone, from `WASMKEEP_CHAOS_SEED` (None when unset
    or empty). Raises `ValueError` when it is set but is not a number."""
    seed = _native().chaos_seed_from_env()
    return None if seed is None else int(seed)


def run_chaos(host: TestHost, seeds: Iterable[int], body: Callable[[TestHost], object]) -> int:
    """Runs `body(host)` once per seed, each after `host.reset()` under that
    seed's schedule of what goes wrong at the durable boundaries (failed
    removals, restarts, hibernation, late alarms; in a cluster also failed
    and ambiguous uploads, lost holds, cut-off nodes, events sent to any live
    node; before any event, an answer lost after the event ran; before a
    request, the host crashing right after its answer went out, before the
    event's end, so that nothing the event would write after its answer is
    kept). Returns how
    many seeds ran. Inside the body `host.chaos_seed` is the seed: draw the
    body's own choices from it, so that the seed replays them too.

    On the first seed whose body raises, raises `ChaosFailure` (an
    `AssertionError`) with the seed, its schedule and how to replay it; the
    host is left as the failure left it (its logs, its actors), out of chaos.
    With `WASMKEEP_CHAOS_SEED` set, only that seed runs. The host is never
    left in chaos mode, whether this returns or raises.

    A reset that fails raises `HostError` with the host's `kind` and the
    `seed` it was to run. A body that returns while a thread it started is
    still inside one of the host's methods raises `HostError` of kind
    `"busy"` (its `seed` the body's): the loop cannot reset the host or end
    its chaos then; join such threads before the body returns.
    """
    # The loop is the host library's (the testing crate's `run_chaos`, the
    # one the C harness runs too): it resets the host, starts and ends the
    # chaos, and calls the body with the GIL held. The body's exception is
    # the seed's failure, its message an assertion's own (or that it had
    # none), or any other exception's type and message; KeyboardInterrupt
    # and SystemExit go through as they are.
    native = _native()
    chosen = [int(s) for s in seeds]
    for s in chosen:
        if not 0 <= s < 2**64:
            raise ValueError(f"run_chaos: seeds: {s} is not a seed: give whole numbers from 0 to 2**64 - 1")
    try:
        return int(host._native.run_chaos(chosen, lambda _seed: body(host)))
    except native.ChaosFailed as failed:
        # What explained the seed's 5xx answers (kept while it ran: under
        # chaos they are expected) is shown for the seed that fails.
        for text in failed.explanations:
            print(text, end="", file=sys.stderr)
        raise ChaosFailure(
            failed.seed, [ChaosRecord(*r) for r in failed.records], failed.message
        ) from failed.__cause__
