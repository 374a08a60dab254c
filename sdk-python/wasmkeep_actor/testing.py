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
`wasmkeep_host` (a fresh host per test) and `wasmkeep_component` (build a
module with the SDK's build command); see `wasmkeep_actor.pytest_plugin`.
"""

from __future__ import annotations

import json as _json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Union

from .context import to_datetime, to_ms
from .errors import CallError, CallFailed, CallRefused, CallRejected

__all__ = [
    "CallError",
    "CallFailed",
    "CallRefused",
    "CallRejected",
    "ClassInit",
    "Closed",
    "Faults",
    "HostError",
    "TestActor",
    "TestHost",
    "TestResponse",
    "TestSocket",
    "host_version",
]


def _native() -> Any:
    try:
        import wasmkeep_actor_harness
    except ImportError as e:
        raise ImportError(
            "wasmkeep_actor.testing needs the native harness (the wasmkeep-actor-harness package), which is not installed: "
            "pip install <path to the wasmkeep repository>/sdk-python/harness (it builds with Rust's cargo and "
            f"maturin; see the SDK's README). The import failed with: {e}"
        ) from e
    return wasmkeep_actor_harness


try:
    from wasmkeep_actor_harness import HostError
except ImportError:  # the harness is missing: TestHost() says how to install it

    class HostError(RuntimeError):  # type: ignore[no-redef]
        """The host refused or failed an operation."""


#: `HostError`: the host refused or failed an operation: no such app or
#: class, a class closed to requests (`internal`) or to new actors
#: (`existing`), a closed host. A `RuntimeError`.

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
    ) -> TestResponse:
        """Sends a request event for `/<class>/<name><path>` and waits for the answer.
        The method defaults to GET, or POST when there is a body."""
        pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
        if json is not None:
            body = _json.dumps(json)
            pairs.append(("content-type", "application/json"))
        data = body.encode() if isinstance(body, str) else (body or b"")
        m = method or ("POST" if body is not None else "GET")
        if not path.startswith("/"):
            path = "/" + path
        status, hs, out = self._host._native.request(*self._k(), m, path, pairs, data)
        return TestResponse(status, hs, out)

    def get(self, path: str = "/") -> TestResponse:
        return self.fetch(path, "GET")

    def post(self, path: str = "/", body: str | bytes = b"", json: Any = None) -> TestResponse:
        return self.fetch(path, "POST", body=body, json=json)

    def put(self, path: str = "/", body: str | bytes = b"", json: Any = None) -> TestResponse:
        return self.fetch(path, "PUT", body=body, json=json)

    def delete(self, path: str = "/") -> TestResponse:
        return self.fetch(path, "DELETE")

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

    def run_alarm(self) -> bool:
        """Runs this actor's alarm if it is due on the virtual clock; tells whether one ran."""
        return bool(self._host._native.run_alarm(*self._k()))

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

    def arm(self, kind: str, count: int = 1) -> None:
        """Arms a fault by the host's name for it (`"fail-removal"`, ...)."""
        self._host._native.arm_fault(kind, count)

    def clear(self) -> None:
        """Clears every armed fault."""
        self._host._native.clear_faults()


class TestHost:
    """A host running one app, with a virtual clock and isolated storage.

    `classes` maps class names to component files (or `(file, access)` with
    access `"open"`, `"existing"` or `"internal"`); or give `manifest`, a
    `wasmkeep.toml`. Close it (or use `with`) to remove its temporary data.
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
    ) -> None:
        native = _native()
        self._native = native.NativeHost(
            None if data_dir is None else str(data_dir),
            str(cache_dir) if cache_dir is not None else _default_cache_dir(),
            event_timeout_ms,
            idle_timeout_ms,
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

    def advance(self, by: timedelta | int) -> datetime:
        """Moves the virtual clock forward by a timedelta (or milliseconds).
        Due alarms run only on `run_due_alarms()` / `actor.run_alarm()`.
        Returns the new time."""
        ms = int(by / timedelta(milliseconds=1)) if isinstance(by, timedelta) else int(by)
        if ms < 0:
            raise ValueError("the clock only moves forward")
        return to_datetime(self._native.advance_clock(ms))

    def advance_to(self, at: datetime) -> datetime:
        """Moves the virtual clock forward to `at` (an aware datetime)."""
        return self.advance(max(0, to_ms(at) - self.now_ms()))

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

    def close(self) -> None:
        """Stops the host and removes its temporary data directory. Safe to call twice."""
        self._native.close()

    def __enter__(self) -> TestHost:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
