"""`wasmkeep_actor.testing`: run built actor components in the wasmkeep host,
in-process, from pytest (or any Python code).

The host is the `wasmkeep_shim` library (the one `wasmkeep-shim serve` runs)
loaded as a native module, with a virtual clock and its own temporary data
directory per `TestHost`.

    from wasmkeep_actor.testing import TestHost

    def test_counts():
        with TestHost({"counter": "counter.wasm"}) as host:
            c = host.actor("counter", "a")
            assert c.post("/").text() == "1"
            assert c.rows("counter") == [{"id": 1, "n": 1}]

Under pytest the plugin (loaded automatically) gives the same as fixtures:
`wasmkeep_host` (a fresh host per test) and `wasmkeep_build` (build a
module with the SDK's build command); see `wasmkeep_actor.pytest_plugin`.

The whole host is reachable: a local cluster (`TestHost(..., nodes=2)`,
`actor.fetch(..., node=2)`, `host.cut_off(1)`), restarts, operator deletes,
idle expiry, app deletes, deletion status, `host.reset()`, going back in
time (`TestHost(..., history=True)`, `actor.history()`,
`actor.restore(time=...)` / `actor.restore(bookmark=...)`), and seeded chaos
(`run_chaos(host, range(1000), body)`; `WASMKEEP_CHAOS_SEED=<seed>` replays
one seed).
"""

from __future__ import annotations

import json as _json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Union

from .build import StaleComponentError, check_fresh
from .context import to_datetime, to_ms
from ._native_harness import load as _native
from .chaos import ChaosFailure, ChaosRecord, chaos_seed_from_env, run_chaos
from .errors import CallError, CallFailed, CallRefused, CallRejected

__all__ = [
    "CHAOS_SEED_VAR",
    "CallError",
    "CallFailed",
    "CallRefused",
    "CallRejected",
    "ChaosFailure",
    "ChaosRecord",
    "ClassInit",
    "Closed",
    "DeletionStatus",
    "Faults",
    "HistoryPosition",
    "HostError",
    "Restored",
    "StaleComponentError",
    "TestActor",
    "TestHost",
    "TestResponse",
    "TestSocket",
    "chaos_seed_from_env",
    "host_version",
    "run_chaos",
]

#: The variable that replays one seed of `run_chaos` alone.
CHAOS_SEED_VAR = "WASMKEEP_CHAOS_SEED"


try:
    from wasmkeep_actor_harness import HostError
except ImportError:  # the harness is missing: TestHost() says how to install it

    class HostError(RuntimeError):  # type: ignore[no-redef]
        """The host refused or failed an operation."""

        kind: str


#: `HostError`: the host refused or failed an operation: no such app or
#: class, a class closed to requests (`internal`) or to new actors
#: (`existing`), a closed host. A `RuntimeError`. Its `kind` names what
#: happened, for a test to match on: the host's failure kinds
#: (`"no-such-app"`, `"no-such-class"`, `"needs-cluster"`, `"no-such-socket"`,
#: ...) or the harness's own (`"closed"`, `"no-such-node"`, `"busy"`: `run_chaos`
#: found the host in use by a thread its body left running). A bad argument
#: (an unknown fault, an idle limit below an hour, `nodes=0`) is a
#: `ValueError` with the same `kind` attribute (`"unknown-fault"`,
#: `"bad-argument"`, `"bad-nodes"`).

def host_version() -> str:
    """The version of the host library the harness was built from."""
    return str(_native().HOST_VERSION)


Access = Literal["open", "existing", "internal"]
#: A class of the test app: a component file, or `(file, access)`.
ClassInit = Union[str, "os.PathLike[str]", "tuple[str | os.PathLike[str], Access]"]


def _default_cache_dir() -> str | None:
    """Where compiled components are kept between test runs: compiling a
    Python component takes seconds, loading a cached one milliseconds.
    None lets the host choose the cache `wasmkeep-shim serve` uses too
    (`$WASMKEEP_CACHE_DIR`, else the user's cache directory), so a component
    is compiled once for tests and serving."""
    return os.environ.get("WASMKEEP_CACHE_DIR") or None


@dataclass(frozen=True)
class TestResponse:
    """An actor's answer."""

    __test__ = False  # not a pytest test class

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header (case-insensitive)."""
        n = name.lower()
        return next((v for k, v in self.headers if k.lower() == n), None)

    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return _json.loads(self.body)


@dataclass(frozen=True)
class Closed:
    """The actor (or the host) closed a socket with this code and reason."""

    code: int
    reason: str


@dataclass(frozen=True)
class DeletionStatus:
    """Whether an actor was deleted, from positive evidence only
    (`actor.deletion_status()`): absence is never "deleted".

    `status` is `"deleted"` (with `at_ms`, when, and `how`: `"self"`,
    `"self_durable"`, `"operator"`, `"expired"`, or `"unknown"`),
    `"not-deleted"` (no evidence of a delete), or `"unknown"` (the bucket
    could not be read; `reason` says why).
    """

    status: Literal["deleted", "not-deleted", "unknown"]
    at_ms: int | None = None
    how: str | None = None
    reason: str | None = None

    @property
    def deleted(self) -> bool:
        """True only on positive evidence of a delete."""
        return self.status == "deleted"

    @property
    def at(self) -> datetime | None:
        """When it was deleted, as an aware UTC datetime (None unless deleted)."""
        return None if self.at_ms is None else to_datetime(self.at_ms)


@dataclass(frozen=True)
class HistoryPosition:
    """One position of an actor's history (`actor.history()`).

    `bookmark` is what `actor.restore(bookmark=...)` takes (bookmarks sort as
    positions do); `kind` what the position is (`"upload"`, a whole image,
    `"pages"`, `"fence"` or `"reset"`); `at_ms` when it was written on the
    host's clock; `head` whether it is the actor's current state.
    """

    bookmark: str
    kind: str
    at_ms: int
    head: bool

    @property
    def at(self) -> datetime:
        """When it was written, as an aware UTC datetime."""
        return to_datetime(self.at_ms)


@dataclass(frozen=True)
class Restored:
    """What `actor.restore(...)` did: three bookmarks. `from_` is the
    position whose state was restored, `at` the new head where it now
    stands, `undo` the head before: `actor.restore(bookmark=r.undo)` undoes it."""

    from_: str
    at: str
    undo: str


class TestSocket:
    """A WebSocket client connected to an actor."""

    __test__ = False

    def __init__(self, actor: TestActor, socket_id: int) -> None:
        self._actor = actor
        #: The socket's id, as the actor sees it.
        self.id = socket_id

    def send(self, message: str | bytes) -> None:
        """Sends a message (the actor's `on_socket_message` runs; `actor.settle()` waits for it)."""
        self._actor._host._native.socket_send(self.id, message)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """The client closes the socket (the actor's `on_socket_close` runs)."""
        self._actor._host._native.socket_close(self.id, code, reason)

    def received(self) -> list[str | bytes | Closed]:
        """What the actor sent since the last call, in order: text as `str`,
        binary as `bytes`, the close as `Closed`. Waits for the actor's queued
        events first."""
        self._actor.settle()
        return [Closed(*m) if isinstance(m, tuple) else m for m in self._actor._host._native.socket_take(self.id)]


class TestActor:
    """One actor of the host, by class and name. Nothing is created until an event reaches it."""

    __test__ = False

    def __init__(self, host: TestHost, app: str, cls: str, name: str) -> None:
        self._host = host
        self.app = app
        self.cls = cls
        self.name = name

    def __repr__(self) -> str:
        return f"TestActor({self.app} {self.cls}/{self.name})"

    def _k(self) -> tuple[str, str, str]:
        return (self.app, self.cls, self.name)

    def fetch(
        self,
        path: str = "/",
        method: str | None = None,
        headers: Mapping[str, str] | list[tuple[str, str]] | None = None,
        body: str | bytes | None = None,
        json: Any = None,
        node: int | None = None,
    ) -> TestResponse:
        """Sends a request event for `/<class>/<name><path>` and waits for the answer
        and the event's end.
        The method defaults to GET, or POST when there is a body. `node`
        (a cluster's node, from 1) sends it to that node, which serves it or
        forwards it to the actor's holder; by default node 1 (under chaos:
        any live node). An answer of 500 or more prints what the actor
        logged to stderr (pytest shows it with the failure)."""
        pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
        if json is not None:
            body = _json.dumps(json)
            pairs.append(("content-type", "application/json"))
        data = body.encode() if isinstance(body, str) else (body or b"")
        m = method or ("POST" if body is not None else "GET")
        if not path.startswith("/"):
            path = "/" + path
        status, hs, out, explanation = self._host._native.request(*self._k(), m, path, pairs, data, node)
        if explanation is not None:
            # What the actor logged is what explains a failure.
            print(explanation, end="", file=sys.stderr)
        return TestResponse(status, hs, out)

    def get(self, path: str = "/", node: int | None = None) -> TestResponse:
        return self.fetch(path, "GET", node=node)

    def post(self, path: str = "/", body: str | bytes = b"", json: Any = None, node: int | None = None) -> TestResponse:
        return self.fetch(path, "POST", body=body, json=json, node=node)

    def put(self, path: str = "/", body: str | bytes = b"", json: Any = None, node: int | None = None) -> TestResponse:
        return self.fetch(path, "PUT", body=body, json=json, node=node)

    def delete(self, path: str = "/", node: int | None = None) -> TestResponse:
        return self.fetch(path, "DELETE", node=node)

    def logs(self) -> list[dict[str, Any]]:
        """What this actor logged (every node's log: at, actor, level, message)."""
        return list(_json.loads(self._host._native.logs_of_json(self.app, self.cls, self.name)))

    def restart(self) -> None:
        """Restarts the actor as a crash and recovery would: what it kept in
        memory is gone, an open transaction rolled back; its next event
        recovers it from its database. Its sockets stay open."""
        self._host._native.restart(*self._k())

    def operator_delete(self) -> str:
        """Deletes the actor as an operator would (`wasmkeep-shim actor
        delete` on one node): no guest code runs, its sockets are closed with
        1000. Returns `"deleted"`, `"removed-unopenable"` (its database could
        not be opened; its files were removed) or `"absent"` (there was none)."""
        return str(self._host._native.operator_delete(*self._k()))

    def request_operator_delete(self) -> str:
        """Cluster: asks for an operator delete as `wasmkeep-shim actor delete`
        does (a request in the bucket) and runs every node's control pass so
        that its holder carries it out before this returns; the request's id.
        On a single node use `operator_delete()`."""
        return str(self._host._native.request_operator_delete(*self._k()))

    def deletion_status(self) -> DeletionStatus:
        """Whether the actor was deleted, from positive evidence only (in a
        cluster, a reset at the head of its history; on one node, the record
        its finished removal left)."""
        d = _json.loads(self._host._native.deletion_status_json(*self._k()))
        return DeletionStatus(d["status"], d.get("at_ms"), d.get("how"), d.get("reason"))

    def history(self) -> list[HistoryPosition]:
        """The actor's history, oldest first. A single node keeps one only
        when the host was started with `history=True` (else a `ValueError`
        whose `kind` is `"bad-argument"`); a cluster always does. An actor
        never written has none."""
        return [HistoryPosition(*p) for p in self._host._native.history(*self._k())]

    def restore(self, *, bookmark: str | None = None, time: datetime | int | None = None) -> Restored:
        """Restores the actor to a `bookmark` of its history (or a restore's
        `undo`), or to a `time` (an aware datetime, or ms since the epoch on
        the host's clock): the last state written at or before it. It runs
        after the events queued for the actor: its open sockets close with
        1012, its alarm becomes the restored state's, and its next event runs
        on the restored state. The restore is a new position:
        `actor.restore(bookmark=r.undo)` undoes it.

        Raises `ValueError` (`kind` `"bad-argument"`) for a malformed
        bookmark, a host without history, or a target before the actor's
        first state or its last delete; `HostError` (`kind`
        `"no-such-actor"`) for an actor that never was."""
        if (bookmark is None) == (time is None):
            e = ValueError("restore(bookmark=...) or restore(time=...): give one of the two")
            e.kind = "bad-argument"  # type: ignore[attr-defined]
            raise e
        time_ms = None if time is None else (to_ms(time) if isinstance(time, datetime) else int(time))
        return Restored(*self._host._native.restore(*self._k(), bookmark, time_ms))

    def call(self, payload: str | bytes = b"") -> bytes:
        """Runs `on_call` as the host (caller None); returns the answer.
        Raises `CallRefused`, `CallRejected` or `CallFailed`."""
        data = payload.encode() if isinstance(payload, str) else payload
        kind, value = self._host._native.call(*self._k(), data)
        if kind == "ok":
            return value  # type: ignore[no-any-return]
        raise {"refused": CallRefused, "rejected": CallRejected}.get(kind, CallFailed)(value)

    def call_text(self, payload: str | bytes = b"") -> str:
        return self.call(payload).decode()

    def call_json(self, payload: Any) -> Any:
        return _json.loads(self.call(_json.dumps(payload)))

    def open_socket(self, path: str = "/") -> TestSocket:
        """Opens a WebSocket on `/<class>/<name><path>` (the actor's `on_socket_open` runs)."""
        return TestSocket(self, self._host._native.open_socket(*self._k(), path))

    def run_alarm(self, node: int | None = None) -> bool:
        """Runs this actor's alarm if it is due on the virtual clock; tells
        whether one ran. In a cluster it goes through `node` (numbered from 1),
        or by default the lowest live node, which forwards it to the holder."""
        return bool(self._host._native.run_alarm(*self._k(), node))

    @property
    def alarm(self) -> datetime | None:
        """The pending alarm, or None."""
        info = self._info()
        at = None if info is None else info.get("alarm")
        return None if at is None else to_datetime(at)

    def exists(self) -> bool:
        """Whether the actor has a database (False before its first event and after a delete)."""
        return bool(self._host._native.exists(*self._k()))

    def status(self) -> str:
        """`"resident"`, `"hibernated"`, `"deleted"` or `"absent"`."""
        info = self._info()
        return "absent" if info is None else str(info["status"])

    def _info(self) -> dict[str, Any] | None:
        for a in self._host.actors():
            if (a.get("app"), a.get("class"), a.get("name")) == self._k():
                return a
        return None

    def settle(self) -> None:
        """Waits until the events queued for this actor (socket messages, closes) have run."""
        self._host._native.settle(*self._k())

    def tables(self) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
        """Every table of the actor's database: name → (columns, rows)."""
        return dict(self._host._native.tables(*self._k()))

    def rows(self, table: str) -> list[dict[str, Any]]:
        """One table's rows as dicts (`[]` when the table or the actor does not exist)."""
        if not self.exists():
            return []
        t = self.tables().get(table)
        if t is None:
            return []
        columns, rows = t
        return [dict(zip(columns, r)) for r in rows]


class Faults:
    """Faults to inject into the host."""

    def __init__(self, host: TestHost) -> None:
        self._host = host

    def fail_removal(self, count: int = 1) -> None:
        """The next `count` attempts to remove an actor's files fail
        (`delete_self_durable()` raises `Internal`)."""
        self.arm("fail-removal", count)

    def arm(self, kind: str, count: int = 1, node: int = 1) -> None:
        """Arms a fault by the host's name for it (`"fail-removal"`, ...) on
        `node` (numbered from 1): it hits only events that node runs."""
        self._host._native.arm_fault(kind, count, node)

    def clear(self) -> None:
        """Clears every armed fault."""
        self._host._native.clear_faults()


class TestHost:
    """A host running one app, with a virtual clock and isolated storage.

    `classes` maps class names to component files (or `(file, access)` with
    access `"open"`, `"existing"` or `"internal"`); or give `manifest`, a
    `wasmkeep.toml`. Close it (or use `with`) to remove its temporary data.
    With `history=True` a single node keeps its actors' history, every state
    restorable (`actor.history()`, `actor.restore(...)`); a cluster
    (`nodes=2` or more) keeps it in its bucket whatever `history` says.
    """

    __test__ = False

    def __init__(
        self,
        classes: Mapping[str, ClassInit] | None = None,
        *,
        app: str = "test/app",
        manifest: str | os.PathLike[str] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        event_timeout_ms: int | None = None,
        idle_timeout_ms: int | None = None,
        nodes: int | None = None,
        history: bool = False,
    ) -> None:
        native = _native()
        if nodes is not None and nodes < 1:
            e = ValueError(f"nodes={nodes}: give 1 (a single node) or more (a local cluster sharing a bucket)")
            e.kind = "bad-nodes"  # type: ignore[attr-defined]
            raise e
        self._native = native.NativeHost(
            None if data_dir is None else str(data_dir),
            str(cache_dir) if cache_dir is not None else _default_cache_dir(),
            event_timeout_ms,
            idle_timeout_ms,
            nodes,
            history,
        )
        self.app = app
        if manifest is not None:
            self.app = self._native.load_manifest(str(manifest))
        if classes:
            self.add_app(self.app, classes)
        #: Faults to inject.
        self.faults = Faults(self)

    @property
    def data_dir(self) -> str:
        return str(self._native.data_dir)

    def add_app(self, app: str, classes: Mapping[str, ClassInit]) -> None:
        """Adds (or replaces) an app, compiling its components (or loading them from the cache)."""
        specs = []
        for name, init in classes.items():
            if isinstance(init, tuple):
                component, access = init
            else:
                component, access = init, "open"
            path = Path(component)
            if not path.is_file():
                raise FileNotFoundError(
                    f"class {name}: no component at {path}: build it first "
                    f"(python -m wasmkeep_actor build app.py -o {path})"
                )
            # A component the build command made from sources that changed
            # since: the test would run an old build (StaleComponentError).
            try:
                check_fresh(path)
            except StaleComponentError as e:
                raise StaleComponentError(f"class {name}: {e}") from None
            specs.append((name, str(path), access))
        self._native.add_app(app, specs)

    def actor(self, cls: str, name: str, app: str | None = None) -> TestActor:
        """An actor of the app by class and name."""
        return TestActor(self, app or self.app, cls, name)

    def now_ms(self) -> int:
        """The virtual clock, ms since the epoch."""
        return int(self._native.now())

    def now(self) -> datetime:
        """The virtual clock as a UTC datetime."""
        return to_datetime(self.now_ms())

    def advance(self, by: timedelta | int, run_due: bool = False) -> datetime:
        """Moves the virtual clock forward by a timedelta (or milliseconds).
        Returns the new time.

        By default due alarms run only on `run_due_alarms()` /
        `actor.run_alarm()`. With `run_due=True` the clock moves as a running
        clock would and runs what falls due on the way: each alarm due by the
        new time runs at its own time, in order (an alarm that sets itself
        again inside the window runs again), alarms already due first; a
        cluster's passes run as the clock passes their intervals."""
        ms = int(by / timedelta(milliseconds=1)) if isinstance(by, timedelta) else int(by)
        if ms < 0:
            raise ValueError("the clock only moves forward")
        if run_due:
            now, _ran = self._native.advance_clock_running_due(ms)
            return to_datetime(now)
        return to_datetime(self._native.advance_clock(ms))

    def advance_to(self, at: datetime, run_due: bool = False) -> datetime:
        """Moves the virtual clock forward to `at` (an aware datetime);
        `run_due` as for `advance`."""
        return self.advance(max(0, to_ms(at) - self.now_ms()), run_due=run_due)

    def run_due_alarms(self) -> int:
        """Runs every due alarm; returns how many ran."""
        return int(self._native.run_due_alarms())

    def actors(self) -> list[dict[str, Any]]:
        """Every actor the host knows: app, class, name, status, alarm (ms or None)."""
        return list(_json.loads(self._native.actors_json()))

    def logs(self) -> list[dict[str, Any]]:
        """What actors logged: at (ms), actor, level, message."""
        return list(_json.loads(self._native.logs_json()))

    def metrics(self) -> str:
        """The host's metrics in Prometheus text."""
        return str(self._native.metrics())

    def hibernate_all(self) -> None:
        """Hibernates every resident actor (the next event starts it from its files)."""
        self._native.hibernate_all()

    @property
    def nodes(self) -> int:
        """How many nodes the host runs (1: a single node)."""
        return int(self._native.node_count)

    def cut_off(self, node: int) -> None:
        """Cluster: cuts node `node` (from 1) off: it holds nothing from now
        on (its requests answer 503), and the other nodes take its actors
        over from the bucket, with what was durable there."""
        self._native.cut_off(node)

    def run_control_passes(self) -> None:
        """Cluster: runs each node's control pass once (app tombstones,
        operator delete requests), as a moving clock does every second."""
        self._native.run_control_passes()

    def set_expire_after_idle(self, cls: str, limit: timedelta | None, app: str | None = None) -> None:
        """Cluster: the class's `expire-after-idle` on every node (at least an
        hour; None removes it), as the manifest's key does. Idle actors expire
        at `run_expiry_passes()` (and as the clock moves, every ten minutes of
        virtual time)."""
        ms = None if limit is None else int(limit / timedelta(milliseconds=1))
        self._native.set_expire_after_idle(app or self.app, cls, ms)

    def run_expiry_passes(self) -> int:
        """Cluster: runs each node's idle-expiry pass once; how many actors expired."""
        return int(self._native.run_expiry_passes())

    def delete_app(self, app: str | None = None) -> None:
        """Cluster: deletes the app as `wasmkeep-shim app delete` does: its
        tombstone first, every node stops serving it, then its data goes.
        Its requests then answer 409."""
        self._native.delete_app(app or self.app)

    def reset(self) -> None:
        """Starts over, for the next test: every actor, socket, alarm, fault,
        log line and chaos schedule is gone, the clock is back at its start,
        and the same apps are loaded again (already compiled). Sockets are
        dropped without close events (a `TestSocket` of before is no longer
        known)."""
        self._native.reset()

    def restart_host(self) -> None:
        """Restarts the whole host, as its process would stop and start again
        on the same data: every socket is closed with 1001 "going away" (a
        `TestSocket` of before is no longer known), every resident actor is
        released (an open transaction rolled back), and the host starts again
        on the same data, at the same virtual time, with the same apps; alarms
        stay indexed, and a node that was cut off is live again. Chaos goes on."""
        self._native.restart_host()

    def start_chaos(self, seed: int) -> None:
        """Starts the seed's chaos schedule: before each request, call and
        socket opening it may inject a fault (see `run_chaos`, which is what
        tests usually call). Starting again replaces the schedule."""
        self._native.start_chaos(seed)

    @property
    def chaos_seed(self) -> int | None:
        """The seed of the chaos running now (inside a `run_chaos` body), or None."""
        return self._native.chaos_seed  # type: ignore[no-any-return]

    def end_chaos(self) -> list[ChaosRecord]:
        """Stops the chaos `start_chaos` started; what its schedule did, in
        order (empty when none was running)."""
        return [ChaosRecord(*r) for r in self._native.end_chaos()]

    def close(self) -> None:
        """Stops the host and removes its temporary data directory. Safe to call twice."""
        self._native.close()

    def __enter__(self) -> TestHost:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
