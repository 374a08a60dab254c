"""Who the actor is, and the host's clock and log.

    from wasmkeep_actor import context, log

    me = context.self_address()          # Address(cls="counter", name="a")
    log.info("saved", item_id)
"""

from __future__ import annotations

import enum
import logging
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, NamedTuple

from ._wit import IN_COMPONENT, in_event
from ._wit import context as _c

__all__ = [
    "Address",
    "Deletion",
    "DeletionCause",
    "LogHandler",
    "LogLevel",
    "app",
    "log",
    "now",
    "now_ms",
    "previous_deletion",
    "self_address",
    "to_datetime",
    "to_ms",
]

LogLevel = Literal["debug", "info", "warn", "error"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Address(NamedTuple):
    """An actor's address inside its app: its class and its name.

    (`cls`, because `class` is a keyword; `Address("counter", "a")` works too.)
    """

    cls: str
    name: str

    def __str__(self) -> str:
        return f"{self.cls}/{self.name}"


def self_address() -> Address:
    """This actor's address."""
    a = _c.self_address()
    return Address(a.class_, a.name)


def app() -> str:
    """The app this actor belongs to, as `tenant/app`."""
    return _c.app()


def now_ms() -> int:
    """The host's time in milliseconds since the Unix epoch: the clock alarms
    run on (virtual under the test harness, so use it rather than
    `time.time()` for alarm times)."""
    return _c.now()


def now() -> datetime:
    """The host's time (`now_ms`) as a timezone-aware UTC datetime."""
    return to_datetime(_c.now())


def to_datetime(ms: int) -> datetime:
    """Milliseconds since the epoch as a UTC datetime (exact: no float on the way)."""
    return _EPOCH + timedelta(milliseconds=ms)


def to_ms(at: datetime) -> int:
    """A timezone-aware datetime as milliseconds since the epoch.

    A naive datetime is refused: it names no instant (use
    `datetime.now(timezone.utc)`-style values, or `context.now() + timedelta(...)`).
    """
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(
            f"{at!r} has no timezone: pass an aware datetime, e.g. context.now() + timedelta(minutes=5) "
            "or datetime(..., tzinfo=timezone.utc)"
        )
    delta = at - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_LEVELS = {"debug": _c.LogLevel.DEBUG, "info": _c.LogLevel.INFO, "warn": _c.LogLevel.WARN, "error": _c.LogLevel.ERROR}


def _write(level: LogLevel, parts: tuple[object, ...]) -> None:
    line = " ".join(p if isinstance(p, str) else repr(p) for p in parts)
    if IN_COMPONENT and not in_event():
        # At import time (the build) there is no host log: the build's output shows stderr.
        print(f"{level}: {line}", file=sys.stderr)
        return
    _c.log(_LEVELS[level], line)


class _Log:
    """The host's log, by level: `log.info("saved", item_id)`. Parts are
    joined with spaces; non-strings are written with `repr`."""

    def debug(self, *parts: object) -> None:
        _write("debug", parts)

    def info(self, *parts: object) -> None:
        _write("info", parts)

    def warning(self, *parts: object) -> None:
        _write("warn", parts)

    warn = warning

    def error(self, *parts: object) -> None:
        _write("error", parts)

    def __call__(self, level: LogLevel, *parts: object) -> None:
        if level not in _LEVELS:
            raise ValueError(f"log level {level!r} is not one of {sorted(_LEVELS)}")
        _write(level, parts)


log = _Log()


class LogHandler(logging.Handler):
    """A `logging` handler that writes to the host's log, so that code using
    the standard `logging` module logs where the host shows it:

        logging.getLogger().addHandler(LogHandler())
    """

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            level: LogLevel = "error"
        elif record.levelno >= logging.WARNING:
            level = "warn"
        elif record.levelno >= logging.INFO:
            level = "info"
        else:
            level = "debug"
        try:
            _write(level, (self.format(record),))
        except Exception:  # noqa: BLE001 (logging must never raise into the caller)
            self.handleError(record)


class DeletionCause(str, enum.Enum):
    """How an earlier incarnation of this address was deleted."""

    DELETE_SELF = "delete-self"
    DELETE_SELF_DURABLE = "delete-self-durable"
    OPERATOR = "operator"
    EXPIRED = "expired"


@dataclass(frozen=True)
class Deletion:
    """A deletion of this address that took effect: when (ms since the epoch
    on the host's clock, and as a datetime) and how."""

    at_ms: int
    cause: DeletionCause

    @property
    def at(self) -> datetime:
        return to_datetime(self.at_ms)


_CAUSES = {
    _c.DeletionCause.DELETE_SELF: DeletionCause.DELETE_SELF,
    _c.DeletionCause.DELETE_SELF_DURABLE: DeletionCause.DELETE_SELF_DURABLE,
    _c.DeletionCause.OPERATOR: DeletionCause.OPERATOR,
    _c.DeletionCause.EXPIRED: DeletionCause.EXPIRED,
}


def previous_deletion() -> Deletion | None:
    """The last deletion of this address before its current database was
    created, or None if the host holds no such record (never deleted).

    Known from positive evidence only, so a late write (a webhook for a
    deleted account) can refuse to recreate state:

        if context.previous_deletion() is not None:
            return Response.text("account closed", 410)

    Since WIT 0.2.1.
    """
    d = _c.previous_deletion()
    return None if d is None else Deletion(d.at, _CAUSES[d.cause])
