"""One alarm per actor: an `on_alarm` event at or after a time.

Times are timezone-aware datetimes (UTC when read back) on the host's clock,
which is virtual under the test harness: compute them from `context.now()`,
not `datetime.now()`.

    from datetime import timedelta
    from wasmkeep_actor import alarms, context

    alarms.set(context.now() + timedelta(minutes=5))
    alarms.set(timedelta(minutes=5))      # the same: relative to the host's now
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._wit import alarms as _a
from .context import now_ms, to_datetime, to_ms

__all__ = ["clear", "get", "get_ms", "set", "set_ms"]

_U64_MAX = (1 << 64) - 1


def get() -> datetime | None:
    """The pending alarm's time (UTC), or None. None after
    `storage.delete_self_durable()` succeeded in this event."""
    at = _a.get_alarm()
    return None if at is None else to_datetime(at)


def get_ms() -> int | None:
    """The pending alarm in milliseconds since the epoch, or None."""
    return _a.get_alarm()


def set(at: datetime | timedelta) -> None:  # noqa: A001 (alarms.set reads as intended)
    """Sets (or moves) the alarm to fire once, at or after `at`: an aware
    datetime, or a timedelta from the host's now. It never fires after the
    actor was deleted, and does nothing after a durable delete in this event."""
    if isinstance(at, timedelta):
        ms = now_ms() + max(0, int(at / timedelta(milliseconds=1)))
    elif isinstance(at, datetime):
        ms = to_ms(at)
    else:
        raise TypeError(f"alarms.set takes a datetime or a timedelta, not {type(at).__name__} (for milliseconds use alarms.set_ms)")
    set_ms(ms)


def set_ms(at_ms: int) -> None:
    """`set` with milliseconds since the epoch."""
    if not 0 <= at_ms <= _U64_MAX:
        raise ValueError(f"alarm time {at_ms} ms is before the epoch or too large")
    _a.set_alarm(at_ms)


def clear() -> None:
    """Clears the pending alarm, if any."""
    _a.clear_alarm()
