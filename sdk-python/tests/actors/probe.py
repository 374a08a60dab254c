"""An actor that exercises the SDK's API, one route per feature; the SDK's
own tests (test_harness.py) drive it through wasmkeep_actor.testing."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import NamedTuple

from wasmkeep_actor import (
    Actor,
    Address,
    CallRejected,
    NotAllowed,
    Request,
    Response,
    SqliteError,
    alarms,
    calls,
    context,
    log,
    LogHandler,
    sockets,
    storage,
)


@dataclass
class KvRow:
    k: str
    v: int
    note: str = field(default="none")


class KvTuple(NamedTuple):
    k: str
    v: int


class Probe(Actor):
    def on_init(self) -> None:
        if context.self_address().name == "init-fails":
            raise LookupError("on_init boom")
        storage.exec("CREATE TABLE kv(k TEXT PRIMARY KEY, v)")
        storage.exec("CREATE TABLE events(what TEXT, detail TEXT)")

    def on_request(self, request: Request) -> Response | str | dict | bytes | None:
        route = request.pathname
        if route == "/values":
            # Every SQLite type through a parameter and back.
            row = storage.query_one("SELECT ?, ?, ?, ?, ?, ?", None, 7, 1.5, "x", b"\x00\xff", True)
            assert row is not None
            return {"values": [repr(v) for v in row], "types": [type(v).__name__ for v in row]}
        if route == "/rows":
            storage.exec("INSERT INTO kv VALUES (?, ?), (?, ?)", "a", 1, "b", 2)
            rows = storage.query("SELECT k, v FROM kv ORDER BY k")
            first = rows[0]
            k, v = first
            return {
                "columns": rows.columns,
                "by_key": first["k"],
                "by_attr": first.v,
                "unpacked": [k, v],
                "dict": [r.as_dict() for r in rows],
                "mapping": dict(rows[1]),
                "count": storage.query_value("SELECT count(*) FROM kv"),
                "empty_columns": storage.query("SELECT k FROM kv WHERE 0").columns,
                "one": dict(storage.query_one("SELECT k, v FROM kv ORDER BY k DESC") or {}),
                "one_by_name": (storage.query_one("SELECT v AS n FROM kv ORDER BY k") or {"n": None})["n"],
                "one_none": storage.query_one("SELECT k FROM kv WHERE 0"),
                "value_text": storage.query_value("SELECT k FROM kv ORDER BY k"),
                "value_none": storage.query_value("SELECT k FROM kv WHERE 0"),
                "value_null": storage.query_value("SELECT NULL"),
            }
        if route == "/rows-as":
            storage.exec("INSERT INTO kv VALUES (?, ?), (?, ?)", "a", 1, "b", 2)
            rows = storage.query("SELECT k, v FROM kv ORDER BY k", as_=KvRow)
            out: dict[str, object] = {
                "rows": [repr(r) for r in rows],
                "types": sorted({type(r).__name__ for r in rows}),
                "one": repr(storage.query_one("SELECT k, v, 'x' AS note FROM kv WHERE k = ?", "b", as_=KvRow)),
                "none": repr(storage.query_one("SELECT k, v FROM kv WHERE 0", as_=KvRow)),
                "tuple": repr(storage.query("SELECT k, v FROM kv ORDER BY k LIMIT 1", as_=KvTuple)),
            }
            for what, sql in (("extra", "SELECT k, v, 1 AS nope FROM kv"), ("missing", "SELECT k FROM kv")):
                try:
                    storage.query(sql, as_=KvRow)
                except ValueError as e:
                    out[what] = str(e)
            try:
                storage.query("SELECT k FROM kv", as_=dict)  # type: ignore[arg-type]
            except TypeError as e:
                out["not_a_dataclass"] = str(e)
            return out
        if route == "/bump":
            storage.exec("INSERT INTO events VALUES ('bump', '')")
            return str(storage.query_value("SELECT count(*) FROM events WHERE what = 'bump'"))
        if route == "/errors":
            out = {}
            storage.exec("INSERT INTO kv VALUES ('dup', 1)")
            try:
                storage.exec("INSERT INTO kv VALUES ('dup', 2)")
            except SqliteError as e:
                out["constraint"] = [e.kind, e.code, e.code == SqliteError.CONSTRAINT, e.message]
            try:
                storage.exec("BEGIN")
            except NotAllowed as e:
                out["begin_as_sql"] = [e.kind, e.message]
            try:
                storage.exec("SELEC nonsense")
            except SqliteError as e:
                out["syntax"] = [e.code]
            try:
                storage.exec("SELECT ?", object())  # type: ignore[arg-type]
            except TypeError as e:
                out["bad_param"] = str(e)
            try:
                storage.exec("SELECT ?", 1 << 70)
            except OverflowError as e:
                out["too_big"] = str(e)
            return out
        if route == "/transaction":
            with storage.transaction():
                storage.exec("INSERT INTO kv VALUES ('kept', 1)")
            try:
                with storage.transaction():
                    storage.exec("INSERT INTO kv VALUES ('undone', 1)")
                    raise ValueError("changed my mind")
            except ValueError:
                pass
            return {"keys": [r.k for r in storage.query("SELECT k FROM kv ORDER BY k")]}
        if route == "/delete-durable":
            storage.delete_self_durable()
            out = {"alarm_after": repr(alarms.get())}
            try:
                storage.exec("SELECT 1")
            except NotAllowed as e:
                out["after"] = e.message
            return out
        if route == "/delete-durable-in-transaction":
            storage.begin()
            try:
                storage.delete_self_durable()
            except NotAllowed as e:
                storage.rollback()
                return {"refused": e.message}
            return {"refused": None}
        if route == "/delete":
            storage.delete_self()
            return "bye"
        if route == "/early":
            request.respond(Response.text("early", 202))
            storage.exec("INSERT INTO events VALUES ('after-answer', '')")
            return None
        if route == "/alarm":
            alarms.set(timedelta(minutes=5))
            at = alarms.get()
            assert at is not None
            return {"at": at.isoformat(), "now": context.now().isoformat(), "ms": alarms.get_ms()}
        if route == "/clear-alarm":
            alarms.clear()
            return {"alarm": repr(alarms.get())}
        if route == "/context":
            me = context.self_address()
            d = context.previous_deletion()
            return {
                "cls": me.cls,
                "name": me.name,
                "app": context.app(),
                "now_ms": context.now_ms(),
                "previous_deletion": None if d is None else {"cause": d.cause.value, "at_ms": d.at_ms},
            }
        if route == "/log":
            log.info("hello", 42)
            log.warning("careful")
            return "logged"
        if route == "/logging":
            logger = logging.getLogger("probe")
            if not logger.handlers:
                logger.addHandler(LogHandler())
                logger.setLevel(logging.DEBUG)
            logger.warning("through logging: %s", 7)
            logger.debug("quiet detail")
            return "logged"
        if route == "/call":
            peer = request.query.get("peer", "peer")
            answer = calls.call_json(Address("probe", peer), {"from": context.self_address().name})
            try:
                calls.call(("probe", peer), b"reject me")
            except CallRejected as e:
                return {"answer": answer, "rejected": e.message}
            return {"answer": answer, "rejected": None}
        if route == "/raise":
            storage.exec("INSERT INTO events VALUES ('before-raise', '')")
            raise RuntimeError("boom from on_request")
        if route == "/raise-sql":
            storage.exec("SELEC nonsense")
        if route == "/raise-in-alarm":
            alarms.set(timedelta(0))
            storage.exec("INSERT INTO kv VALUES ('alarm-raises', 1)")
            return "set"
        if route == "/echo":
            return Response(
                201,
                [("x-method", request.method), ("x-header", request.header("X-Test") or "")],
                request.body,
            )
        if route == "/json":
            return {"got": request.json(), "query": request.query}
        if route == "/bytes":
            return b"\x01\x02"
        if route == "/broadcast":
            return {"reached": sockets.broadcast(request.text())}
        if route == "/close-all":
            for s in sockets.open_sockets():
                sockets.close(s, 4000, "bye")
            return "closed"
        return Response.text(f"no route {route}", 404)

    def on_alarm(self) -> None:
        if storage.query_value("SELECT count(*) FROM kv WHERE k = 'alarm-raises'"):
            raise ArithmeticError("on_alarm boom")
        storage.exec("INSERT INTO events VALUES ('alarm', ?)", str(context.now_ms()))

    def on_call(self, payload: bytes, caller: Address | None) -> bytes | str:
        if payload == b"reject me":
            raise ValueError("rejected on purpose")
        who = None if caller is None else str(caller)
        return f'{{"caller": "{who}", "payload": {payload.decode()}}}'

    def on_socket_open(self, socket: int, path: str) -> None:
        storage.exec("INSERT INTO events VALUES ('open', ?)", path)

    def on_socket_message(self, socket: int, message: str | bytes) -> None:
        if isinstance(message, bytes):
            sockets.send(socket, message[::-1])
        elif message == "raise":
            raise KeyError("on_socket_message boom")
        else:
            sockets.send(socket, f"echo {message}")

    def on_socket_close(self, socket: int, code: int, reason: str) -> None:
        storage.exec("INSERT INTO events VALUES ('close', ?)", f"{code} {reason}")
