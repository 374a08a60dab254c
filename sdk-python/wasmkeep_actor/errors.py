"""The errors the SDK raises.

- `SqlError` from storage calls, one subclass per case of the WIT `sql-error`:
  `NotAllowed`, `Internal` and `SqliteError` (which carries SQLite's result
  code), so that `except NotAllowed:` reads as it should.
- `SocketError` from socket calls (the socket is not open).
- `CallError` from calls to other actors: `CallRefused`, `CallRejected`,
  `CallFailed`.
"""

from __future__ import annotations

from typing import Literal

SqlErrorKind = Literal["not-allowed", "internal", "sqlite"]
CallErrorKind = Literal["refused", "rejected", "failed"]


class SqlError(Exception):
    """A storage call failed. Catch a subclass to handle one case.

    `kind` is the WIT case (`"not-allowed"`, `"internal"` or `"sqlite"`),
    `message` the host's or SQLite's message.
    """

    kind: SqlErrorKind

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class NotAllowed(SqlError):
    """Refused in this state; nothing was changed.

    The message says which state: "deleted in this event", "open transaction",
    "database closed by a failed delete", "no open transaction", or the
    forbidden statement (ATTACH, VACUUM INTO, load_extension, file PRAGMAs,
    BEGIN/COMMIT written as SQL, the host's own tables).
    """

    kind: SqlErrorKind = "not-allowed"


class Internal(SqlError):
    """The host failed: what the call asked for is not known to be durable.

    It may or may not have happened. `storage.delete_self_durable()` is safe
    to call again.
    """

    kind: SqlErrorKind = "internal"


class SqliteError(SqlError):
    """SQLite refused the statement (syntax, constraint, type, ...).

    `code` is SQLite's primary result code: 1 `SQLITE_ERROR` (syntax, no such
    table), 19 `SQLITE_CONSTRAINT` (UNIQUE, NOT NULL, CHECK, ...), and so on.
    """

    kind: SqlErrorKind = "sqlite"

    #: `code` of a constraint violation (UNIQUE, NOT NULL, CHECK, FOREIGN KEY).
    CONSTRAINT = 19

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} (SQLite code {self.code})"

    def __repr__(self) -> str:
        return f"SqliteError(code={self.code}, message={self.message!r})"


class SocketError(Exception):
    """A socket call failed: the socket is closed, closing, or not this actor's."""

    kind: Literal["not-open"] = "not-open"

    def __init__(self, socket: int) -> None:
        super().__init__(f"socket {socket} is not open (closed, closing, or not this actor's)")
        self.socket = socket


class CallError(Exception):
    """A call to another actor failed. Catch a subclass to handle one case."""

    kind: CallErrorKind

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CallRefused(CallError):
    """Not delivered: unknown class, a class that takes no calls, a call to
    itself or back along its own call chain, or the host is stopping."""

    kind: CallErrorKind = "refused"


class CallRejected(CallError):
    """Delivered; the callee's `on_call` answered with this error (it raised)."""

    kind: CallErrorKind = "rejected"


class CallFailed(CallError):
    """Delivered; the callee's event failed (trap or time limit). Its writes
    before the failure may have been kept."""

    kind: CallErrorKind = "failed"


def sql_error_from_wit(err: object) -> SqlError:
    """The SDK's error for a WIT `sql-error` value (the `.value` of a componentize-py `Err`)."""
    from ._wit import types as t

    if isinstance(err, t.SqlError_NotAllowed):
        return NotAllowed(err.value)
    if isinstance(err, t.SqlError_Internal):
        return Internal(err.value)
    if isinstance(err, t.SqlError_Sqlite):
        return SqliteError(err.value.code, err.value.message)
    return Internal(f"unexpected sql-error value from the host: {err!r}")


def call_error_from_wit(err: object) -> CallError:
    """The SDK's error for a WIT `call-error` value."""
    from ._wit import calls as c

    if isinstance(err, c.CallError_Refused):
        return CallRefused(err.value)
    if isinstance(err, c.CallError_Rejected):
        return CallRejected(err.value)
    if isinstance(err, c.CallError_Failed):
        return CallFailed(err.value)
    return CallFailed(f"unexpected call-error value from the host: {err!r}")
