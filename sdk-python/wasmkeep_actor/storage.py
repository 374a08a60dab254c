"""The actor's own SQLite database. Each actor has one; nobody else reads it.

Writes are kept when the event ends; `exec_durable` and `delete_self_durable`
return only once what they did is durable. Transactions are opened with
`with storage.transaction():` (or `begin`), never with SQL text; one still
open when the event ends, or when the event fails, is rolled back.

Values: `None` is NULL, `int` INTEGER (64-bit), `float` REAL, `str` TEXT and
`bytes` BLOB, in both directions; `bool` binds as 1 or 0, `bytearray` and
`memoryview` as BLOB.

    from wasmkeep_actor import storage

    storage.exec("CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, name TEXT)")
    storage.exec("INSERT INTO items(name) VALUES (?)", "apple")
    for row in storage.query("SELECT id, name FROM items"):
        print(row["id"], row.name)   # or: id, name = row

    @dataclass
    class Item:
        id: int
        name: str

    items = storage.query("SELECT id, name FROM items", as_=Item)   # [Item(id=1, name='apple')]
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable, SupportsIndex, TypeVar, Union, overload

from ._wit import Err
from ._wit import storage as _s
from ._wit import types as _t
from .errors import Internal, NotAllowed, SqlError, SqliteError, sql_error_from_wit

__all__ = [
    "Internal",
    "NotAllowed",
    "Param",
    "Row",
    "Rows",
    "SqlError",
    "SqliteError",
    "Value",
    "begin",
    "bookmark_for_time",
    "commit",
    "current_bookmark",
    "delete_self",
    "delete_self_durable",
    "exec",
    "exec_durable",
    "flush",
    "query",
    "query_one",
    "query_value",
    "restore_on_next_session",
    "rollback",
    "transaction",
]

#: A value read from a row.
Value = Union[None, int, float, str, bytes]
#: A value bound as a parameter.
Param = Union[None, int, float, str, bytes, bytearray, memoryview, bool]

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_T = TypeVar("_T")


class Row(tuple):  # type: ignore[type-arg]
    """One row of `query`: a tuple of the values in column order that can
    also be read by column name.

        row[0], row["name"], row.name   # by position, by key, as an attribute
        id, name = row                   # unpacks like a tuple
        dict(row)                        # {"id": 1, "name": "apple"}

    Columns that share a name (a join) are reachable by position only; by
    name you get the first.
    """

    # A tuple cannot carry attributes: the column names live on a subclass
    # made once per set of column names (see _row_type), shared by its rows.
    __slots__ = ()
    _columns: tuple[str, ...] = ()
    _index: dict[str, int] = {}  # noqa: RUF012 (replaced per query, never mutated)

    @overload
    def __getitem__(self, key: SupportsIndex) -> Value: ...
    @overload
    def __getitem__(self, key: str) -> Value: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[Value, ...]: ...
    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise KeyError(f"no column {key!r}; the columns are {list(self._columns)}") from None
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Value:
        index = type(self)._index
        if name in index:
            value: Value = tuple.__getitem__(self, index[name])
            return value
        raise AttributeError(f"no column {name!r}; the columns are {list(type(self)._columns)}")

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._columns)

    def as_dict(self) -> dict[str, Value]:
        """The row as a dict of column name → value."""
        return dict(zip(self._columns, self))

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{c}={v!r}" for c, v in zip(self._columns, self)) + ")"


class Rows(list):  # type: ignore[type-arg]
    """The rows of `query` (a list of `Row`), with the column names in
    `columns`, known even when there are no rows."""

    columns: list[str]

    def __init__(self, columns: list[str], rows: list[Row]) -> None:
        super().__init__(rows)
        self.columns = columns


def _row_type(columns: list[str]) -> type[Row]:
    return _row_type_of(tuple(columns))


@functools.lru_cache(maxsize=256)
def _row_type_of(columns: tuple[str, ...]) -> type[Row]:
    # Made once per set of column names, not once per query: making a class
    # is one of the dearest things CPython does, and each one lives until a
    # cyclic collection finds it (issue 25, item 5).
    index: dict[str, int] = {}
    for i, c in enumerate(columns):
        index.setdefault(c, i)
    return type("Row", (Row,), {"__slots__": (), "_columns": columns, "_index": index})


def _to_wit(p: object, n: int) -> _t.SqlValue:
    if p is None:
        return _t.SqlValue_Null()
    if isinstance(p, bool):
        return _t.SqlValue_Integer(int(p))
    if isinstance(p, int):
        if not _I64_MIN <= p <= _I64_MAX:
            raise OverflowError(f"parameter {n}: {p} does not fit in a 64-bit SQLite INTEGER; bind it as str or float")
        return _t.SqlValue_Integer(p)
    if isinstance(p, float):
        return _t.SqlValue_Real(p)
    if isinstance(p, str):
        return _t.SqlValue_Text(p)
    if isinstance(p, (bytes, bytearray, memoryview)):
        return _t.SqlValue_Blob(bytes(p))
    raise TypeError(
        f"parameter {n}: cannot bind a {type(p).__name__} as an SQL value "
        "(use None, int, float, str, bytes or bool; convert others first, e.g. str(x) or x.isoformat())"
    )


def _params(ps: tuple[object, ...]) -> list[_t.SqlValue]:
    if not ps:
        # Most statements have none: no comprehension to run (ADR 057).
        return []
    return [_to_wit(p, i + 1) for i, p in enumerate(ps)]


def _from_wit(v: _t.SqlValue) -> Value:
    if isinstance(v, _t.SqlValue_Null):
        return None
    return v.value


def _call(f: Callable[..., _T], *args: Any) -> _T:
    try:
        return f(*args)
    except Err as e:
        raise sql_error_from_wit(e.value) from None


def exec(sql: str, *params: Param) -> int:
    """Runs SQL and returns the number of rows it changed.

    With parameters the text must be one statement (`?`, `?1`, `?2`, ...
    are bound in order); without parameters it may be several statements
    separated by `;`, run all or nothing.

    Raises `SqliteError` (syntax, constraint, ...), `NotAllowed` (forbidden
    statement, deleted in this event, ...) or `Internal`.
    """
    return _call(_s.exec, sql, _params(params))


def _row_maker(cls: type[_T], columns: list[str]) -> Callable[[list[Value]], _T]:
    """Makes `cls` (a dataclass or a NamedTuple) from a row, column by field name."""
    if dataclasses.is_dataclass(cls):
        fields = [f.name for f in dataclasses.fields(cls) if f.init]
        required = {
            f.name
            for f in dataclasses.fields(cls)
            if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
    elif isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        fields = list(getattr(cls, "_fields"))  # noqa: B009 (a NamedTuple's; not in type[_T])
        defaults = getattr(cls, "_field_defaults", {})
        required = {f for f in fields if f not in defaults}
    else:
        raise TypeError(
            f"as_={getattr(cls, '__name__', cls)!r}: give a dataclass or a NamedTuple class whose fields are "
            "named as the query's columns"
        )
    name = cls.__name__
    seen = set()
    for c in columns:
        if c in seen:
            raise ValueError(f"as_={name}: the query has two columns named {c!r}: give one an alias (AS ...)")
        seen.add(c)
    extra = [c for c in columns if c not in fields]
    if extra:
        raise ValueError(
            f"as_={name}: column(s) {extra} have no field in {name} (its fields: {fields}): "
            "select only those, or alias them (SELECT x AS field)"
        )
    missing = sorted(required - seen)
    if missing:
        raise ValueError(
            f"as_={name}: field(s) {missing} of {name} are not among the query's columns {columns} "
            "and have no default: select them, or give the fields defaults"
        )
    return lambda values: cls(**dict(zip(columns, values)))


@overload
def query(sql: str, *params: Param) -> Rows: ...
@overload
def query(sql: str, *params: Param, as_: type[_T]) -> list[_T]: ...
def query(sql: str, *params: Param, as_: type[_T] | None = None) -> Rows | list[_T]:
    """Runs one statement and returns its rows (`Row`: a tuple that can also
    be read by column name; `Rows.columns` has the column names). Raises as
    `exec`.

        [(n,)] = storage.query("SELECT count(*) FROM items")
        names = [r.name for r in storage.query("SELECT name FROM items")]

    With `as_=` a dataclass (or a NamedTuple) class, each row is made into
    one, column by field name (the values as they come: int, float, str,
    bytes or None), and a plain list of them is returned. Every column must
    have a field and every field without a default a column (`ValueError`
    otherwise, naming them).

        items = storage.query("SELECT id, name FROM items", as_=Item)
    """
    r = _call(_s.query, sql, _params(params))
    if as_ is not None:
        make = _row_maker(as_, list(r.columns))
        return [make([_from_wit(v) for v in values]) for values in r.rows]
    row = _row_type(r.columns)
    return Rows(list(r.columns), [tuple.__new__(row, [_from_wit(v) for v in values]) for values in r.rows])


@overload
def query_one(sql: str, *params: Param) -> Row | None: ...
@overload
def query_one(sql: str, *params: Param, as_: type[_T]) -> _T | None: ...
def query_one(sql: str, *params: Param, as_: type[_T] | None = None) -> Row | _T | None:
    """The first row of `query` (made into `as_` when given), or None when there is none."""
    if as_ is not None:
        rows: list[Any] = query(sql, *params, as_=as_)
        return rows[0] if rows else None
    # Only the first row is made: no `Rows`, no tuple for the others (ADR 057).
    r = _call(_s.query, sql, _params(params))
    if not r.rows:
        return None
    return tuple.__new__(_row_type(r.columns), [_from_wit(v) for v in r.rows[0]])


def query_value(sql: str, *params: Param) -> Value:
    """The first column of the first row, or None when there is no row.

        n = storage.query_value("SELECT count(*) FROM items")
    """
    # Straight from the bindings' answer: no row type, no row (ADR 057).
    rows = _call(_s.query, sql, _params(params)).rows
    return _from_wit(rows[0][0]) if rows and rows[0] else None


def exec_durable(sql: str, *params: Param) -> int:
    """Like `exec`, but always exactly one statement, and returns only once the
    write is durable (one node: synced to disk; a cluster: acknowledged by the
    bucket).

    Raises `NotAllowed` inside an open transaction (nothing changes) and
    `Internal` when the write is not known to be durable.
    """
    return _call(_s.exec_durable, sql, _params(params))


def flush() -> None:
    """Returns once every write this event has made so far is kept: what the
    end of the event would keep, but before the answer goes out. The SDK calls
    it before it sends an answer (`request.respond`, an `on_request`'s return
    value) and before an `on_call` answer, so a 200 acknowledges the writes
    before it; call it yourself before an answer that leaves another way (a
    socket message).

    In a cluster the database is uploaded if it changed since it was last
    acknowledged; on one node committed writes are already kept (they survive a
    crash of the host; `exec_durable` also syncs the disk), so it returns at
    once. Since WIT 0.2.2.

    Raises `NotAllowed` inside an open transaction (commit first) and
    `Internal` when the writes are not known to be kept (the upload may still
    land): the event's writes are then not kept, and the next event restores
    what the bucket holds. Answer so that the client retries.
    """
    _call(_s.flush)


def begin() -> None:
    """Opens a transaction. Raises `NotAllowed` if one is already open.
    Prefer `with storage.transaction():`."""
    _call(_s.begin)


def commit() -> None:
    """Commits the open transaction. Raises `NotAllowed` if none is open."""
    _call(_s.commit)


def rollback() -> None:
    """Rolls the open transaction back. Raises `NotAllowed` if none is open."""
    _call(_s.rollback)


@contextmanager
def transaction() -> Iterator[None]:
    """A transaction around a block: committed when the block ends, rolled
    back (and the exception re-raised) when it raises.

        with storage.transaction():
            storage.exec("UPDATE accounts SET balance = balance - ? WHERE id = ?", 10, a)
            storage.exec("UPDATE accounts SET balance = balance + ? WHERE id = ?", 10, b)
    """
    begin()
    try:
        yield
    except BaseException:
        try:
            rollback()
        except SqlError:
            # The transaction may be gone already (e.g. the actor was deleted);
            # the block's own exception is the one that matters.
            pass
        raise
    commit()


def delete_self() -> None:
    """Deletes the actor when this event ends. Storage keeps working until then.

    At the end of the event the alarm is forgotten, sockets are closed with
    1000 "actor deleted" and the files are removed; the next event at this
    address meets a new, empty actor (`on_init` runs again).
    """
    _s.delete_self()


def delete_self_durable() -> None:
    """Deletes the actor inside the call, so that the answer can follow it.

    On return the delete is durable; every later storage call in this event
    raises `NotAllowed` ("deleted in this event"), `alarms.get()` returns
    None and `alarms.set`/`alarms.clear` do nothing.

    Raises `NotAllowed` inside an open transaction (nothing changes: commit
    or roll back first) and `Internal` when the delete is not known to be
    durable (storage stays refused until the event ends; calling again is
    safe). Act on the outside world (cancel a subscription, send the mail)
    only after it returned.
    """
    _call(_s.delete_self_durable)


def current_bookmark() -> str | None:
    """The bookmark of the actor's state as it is now: an opaque string naming
    a position in the actor's history, which `restore_on_next_session` can go
    back to. Bookmarks of one actor sort as their positions do (a later
    state's sorts after an earlier one's). What the event wrote so far is
    made durable first, as `flush` does. None where the host keeps no history
    (a node served with `--no-history`; otherwise it is kept for the app's
    retention window).
    Durable Objects' `getCurrentBookmark`. Since WIT 0.2.4.

    Raises as `flush`: `NotAllowed` inside an open transaction or after
    `delete_self_durable`, `Internal` when the writes are not known to be kept.
    """
    return _call(_s.current_bookmark)


def bookmark_for_time(at_ms: int) -> str | None:
    """The bookmark of the last state written at or before `at_ms`
    (milliseconds since the epoch on the host's clock, as `context.now()`
    gives it), or None: no state was written by then, it lies before the
    actor's newest delete, or the host keeps no history (a node served with
    `--no-history`).
    Durable Objects' `getBookmarkForTime`. Since WIT 0.2.4.

    Raises `Internal` when the history could not be read.
    """
    if at_ms < 0:
        raise ValueError(f"bookmark_for_time: {at_ms} is before the epoch")
    return _call(_s.bookmark_for_time, at_ms)


def restore_on_next_session(bookmark: str) -> str:
    """Asks the host to restore the actor to `bookmark` once this event has
    ended, and returns the bookmark that undoes it (the state as it is now,
    made durable first as `current_bookmark` does). Durable Objects'
    `onNextSessionRestoreBookmark`. Since WIT 0.2.4.

    When the event ends with its writes kept, the state at `bookmark` becomes
    the actor's newest state before its next event: open sockets are closed
    with 1012 "actor restored", the alarm becomes the restored state's, and
    the next event starts a fresh instance on the restored state (`on_init`
    does not run again). The last call of an event counts; an event that
    deletes the actor, or whose writes are not kept, restores nothing. A
    restore the host refuses then (a bookmark before the actor's newest
    delete, or older than the retention window) changes nothing and is logged
    by the host.

    Raises `NotAllowed` at once, nothing asked: not a bookmark, or one after
    the current state; no history is kept (a node served with
    `--no-history`); inside an open transaction; after a delete in this
    event. `Internal`: the current state is not known to be kept.
    """
    return _call(_s.restore_on_next_session, bookmark)
