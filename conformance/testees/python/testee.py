"""The Python conformance testee (see conformance/PROTOCOL.md): runs the
operations a request lists through the Python SDK's public API and answers
each outcome. It holds no test logic."""

from __future__ import annotations

import json
from typing import Any

from wasmkeep_actor import (
    Actor,
    Address,
    CallError,
    Request,
    Response,
    SocketError,
    SqlError,
    SqliteError,
    alarms,
    calls,
    context,
    log,
    sockets,
    storage,
)


class BadOp(Exception):
    """A malformed operation."""


class Testee(Actor):
    def on_init(self) -> None:
        storage.exec("CREATE TABLE IF NOT EXISTS init_log(n INTEGER)")
        storage.exec("INSERT INTO init_log(n) VALUES ((SELECT count(*) FROM init_log) + 1)")

    def on_request(self, request: Request) -> Response | None:
        try:
            ops = parse_ops(request.body)
        except ValueError as e:
            return Response(400, [("content-type", "application/json")], to_json({"error": str(e)}))
        outcomes = run_ops(ops, request)
        if not request.responded:
            # The WIT's own semantics (answer, then the event's end keeps the
            # writes); a case asks for the SDK's kept answer with `respond`'s `kept`.
            request.respond_before_kept(outcomes_response(200, outcomes))
        return None

    def on_alarm(self) -> None:
        storage.exec("CREATE TABLE IF NOT EXISTS alarm_log(at TEXT)")
        storage.exec("INSERT INTO alarm_log(at) VALUES (?1)", str(context.now_ms()))

    def on_call(self, payload: bytes, caller: Address | None) -> bytes:
        outcomes = run_ops(parse_ops(payload), None)
        return to_json({"outcomes": outcomes}).encode()

    def on_socket_open(self, socket: int, path: str) -> None:
        log_socket("open", socket, path)

    def on_socket_message(self, socket: int, message: str | bytes) -> None:
        if isinstance(message, str):
            log_socket("message", socket, message)
            if message.startswith("echo:"):
                try:
                    sockets.send(socket, message[len("echo:") :])
                except SocketError as e:
                    log.warning(f"echo on socket {socket}: {e}")
        else:
            log_socket("message", socket, message.hex())

    def on_socket_close(self, socket: int, code: int, reason: str) -> None:
        log_socket("close", socket, f"{code} {reason}")


def log_socket(event: str, socket: int, detail: str) -> None:
    """Records a socket event in socket_log(event, socket, detail)."""
    try:
        storage.exec("CREATE TABLE IF NOT EXISTS socket_log(event TEXT, socket TEXT, detail TEXT)")
        storage.exec("INSERT INTO socket_log(event, socket, detail) VALUES (?1, ?2, ?3)", event, str(socket), detail)
    except SqlError as e:
        log.error(f"socket_log: {e}")


def to_json(value: Any) -> str:
    """Compact JSON with sorted keys: the same bytes as the other testees
    write (a `call` answers the callee's JSON verbatim)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def outcomes_response(status: int, outcomes: list[Any]) -> Response:
    return Response(status, [("content-type", "application/json")], to_json({"outcomes": outcomes}))


def parse_ops(body: bytes) -> list[Any]:
    """The `ops` list of a request body (an empty body is no operations)."""
    if not body.strip():
        return []
    try:
        doc = json.loads(body)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("ops"), list):
        raise ValueError('the body must be an object with an "ops" array')
    return doc["ops"]


def run_ops(ops: list[Any], request: Request | None) -> list[Any]:
    """Runs every operation in order; one outcome each, except `trap` and
    `loop`, which end the event."""
    outcomes: list[Any] = []
    for op in ops:
        try:
            outcomes.append({"ok": run_op(op, request, outcomes)})
        except (BadOp, SqlError, SocketError, CallError) as e:
            outcomes.append({"err": error_json(e)})
    return outcomes


def error_json(e: Exception) -> dict[str, Any]:
    if isinstance(e, BadOp):
        return {"kind": "bad-op", "message": str(e)}
    if isinstance(e, SqliteError):
        return {"kind": "sqlite", "code": e.code, "message": e.message}
    if isinstance(e, SqlError):
        return {"kind": e.kind, "message": e.message}
    if isinstance(e, SocketError):
        return {"kind": "not-open", "message": "socket not open"}
    if isinstance(e, CallError):
        return {"kind": e.kind, "message": e.message}
    raise TypeError(f"not an operation error: {e!r}")


def field(op: dict[str, Any], name: str) -> Any:
    if name not in op:
        raise BadOp(f'missing field "{name}"')
    return op[name]


def bookmark_json(b: str | None) -> dict[str, Any]:
    """A bookmark, or none, as the protocol answers it."""
    return {"none": True} if b is None else {"bookmark": b}


def str_field(op: dict[str, Any], name: str) -> str:
    v = field(op, name)
    if not isinstance(v, str):
        raise BadOp(f'"{name}" must be a string')
    return v


def u64_field(op: dict[str, Any], name: str) -> int:
    """A u64 given as a decimal string (or, leniently, a JSON number)."""
    v = field(op, name)
    try:
        n = int(v) if isinstance(v, str) else v
    except ValueError:
        n = None
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 1 << 64:
        raise BadOp(f'"{name}" must be a decimal string of a u64')
    return n


def params(op: dict[str, Any]) -> list[storage.Param]:
    ps = op.get("params")
    if ps is None:
        return []
    if not isinstance(ps, list):
        raise BadOp('"params" must be an array')
    return [value_from_json(v) for v in ps]


def value_from_json(v: Any) -> storage.Param:
    if not isinstance(v, dict) or len(v) != 1:
        raise BadOp(f"a value is an object with one key, not {json.dumps(v)}")
    ((kind, inner),) = v.items()
    try:
        if kind == "null":
            return None
        if kind == "integer":
            if isinstance(inner, bool):
                raise ValueError
            return int(inner) if isinstance(inner, (str, int)) else int("x")
        if kind == "real":
            if isinstance(inner, bool) or not isinstance(inner, (int, float)):
                raise ValueError
            return float(inner)
        if kind == "text":
            if not isinstance(inner, str):
                raise ValueError
            return inner
        if kind == "blob":
            return bytes.fromhex(inner) if isinstance(inner, str) and len(inner) % 2 == 0 else bytes.fromhex("x")
    except ValueError:
        raise BadOp(f"invalid {kind} value {json.dumps(inner)}") from None
    raise BadOp(f'unknown value kind "{kind}"')


def value_to_json(v: storage.Value) -> dict[str, Any]:
    if v is None:
        return {"null": True}
    if isinstance(v, int):
        return {"integer": str(v)}
    if isinstance(v, float):
        return {"real": v}
    if isinstance(v, str):
        return {"text": v}
    return {"blob": v.hex()}


def run_op(op: Any, request: Request | None, outcomes_so_far: list[Any]) -> Any:
    if not isinstance(op, dict):
        raise BadOp("an operation is a JSON object")
    name = str_field(op, "op")
    if name == "exec":
        return {"changed": storage.exec(str_field(op, "sql"), *params(op))}
    if name == "exec-durable":
        return {"changed": storage.exec_durable(str_field(op, "sql"), *params(op))}
    if name == "query":
        rows = storage.query(str_field(op, "sql"), *params(op))
        return {"columns": rows.columns, "rows": [[value_to_json(v) for v in row] for row in rows]}
    if name == "flush":
        storage.flush()
        return None
    if name == "current-bookmark":
        return bookmark_json(storage.current_bookmark())
    if name == "bookmark-for-time":
        return bookmark_json(storage.bookmark_for_time(u64_field(op, "at")))
    if name == "restore-on-next-session":
        return {"undo": storage.restore_on_next_session(str_field(op, "bookmark"))}
    if name == "begin":
        storage.begin()
        return None
    if name == "commit":
        storage.commit()
        return None
    if name == "rollback":
        storage.rollback()
        return None
    if name == "delete-self":
        storage.delete_self()
        return None
    if name == "delete-self-durable":
        storage.delete_self_durable()
        return None
    if name == "get-alarm":
        at = alarms.get_ms()
        return {"pending": False} if at is None else {"pending": True, "at": str(at)}
    if name == "set-alarm":
        if "at" in op:
            alarms.set_ms(u64_field(op, "at"))
        elif "in" in op:
            alarms.set_ms(context.now_ms() + u64_field(op, "in"))
        else:
            raise BadOp('set-alarm needs "at" or "in"')
        return None
    if name == "clear-alarm":
        alarms.clear()
        return None
    if name == "now":
        return {"now": str(context.now_ms())}
    if name == "self":
        me = context.self_address()
        return {"class": me.cls, "name": me.name, "app": context.app()}
    if name == "previous-deletion":
        d = context.previous_deletion()
        return {"deleted": False} if d is None else {"deleted": True, "at": str(d.at_ms), "cause": d.cause.value}
    if name == "log":
        log.info(str_field(op, "message"))
        return None
    if name == "respond":
        status = op.get("status", 200)
        if status is None:
            status = 200
        if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 65535:
            raise BadOp('"status" must be a number')
        if request is None or request.responded:
            raise BadOp("respond: no request to answer (already answered, or a call)")
        answer = outcomes_response(status, list(outcomes_so_far))
        if op.get("kept") is True:
            request.respond(answer)
        else:
            request.respond_before_kept(answer)
        return None
    if name == "trap":
        raise RuntimeError("trap requested by the conformance case")
    if name == "loop":
        n = 0
        while True:
            n += 1
    if name == "alloc":
        mb = u64_field(op, "mb")
        try:
            block = bytearray(b"\x01") * (mb << 20)
        except MemoryError:
            # The event fails (as PROTOCOL.md asks); say why in the guest output.
            raise MemoryError(f"out of memory: {mb} MiB could not be allocated") from None
        return {"bytes": len(block)}
    if name == "call":
        target = Address(str_field(op, "class"), str_field(op, "name"))
        answer = calls.call(target, str_field(op, "payload"))
        return {"payload": answer.decode(errors="replace")}
    if name == "sockets":
        return {"sockets": [str(s) for s in sockets.open_sockets()]}
    if name == "send":
        sockets.send(u64_field(op, "socket"), str_field(op, "text"))
        return None
    if name == "close":
        code = field(op, "code")
        if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 65535:
            raise BadOp('"code" must be a number')
        sockets.close(u64_field(op, "socket"), code, str_field(op, "reason"))
        return None
    raise BadOp(f'unknown op "{name}"')

