"""The WIT bindings the SDK calls: not public API.

Inside a component, componentize-py provides the real `wit_world` package
(its functions call the host). Outside one (the build command, the test
harness, a type checker, a plain `import wasmkeep_actor`), the typed stubs
generated into `_bindings/` by `sdk-python/scripts/gen.sh` stand in, and every
host call raises `OutsideComponentError` instead of doing nothing.
"""

from __future__ import annotations

import os
import sys
import types as _pytypes
from typing import Callable, TypeVar

_T = TypeVar("_T")

try:
    import componentize_py_runtime  # noqa: F401  (present only inside a component)

    IN_COMPONENT = True
except ImportError:
    IN_COMPONENT = False

if not IN_COMPONENT:
    _stubs = os.path.join(os.path.dirname(__file__), "_bindings")
    if _stubs not in sys.path:
        # Appended, so that a real `wit_world` earlier on the path still wins.
        sys.path.append(_stubs)

from componentize_py_types import Err  # noqa: E402
from wit_world.imports import alarms, calls, context, http, sockets, storage, types  # noqa: E402


class OutsideComponentError(RuntimeError):
    """A host call was made outside an actor component."""


class OutsideEventError(RuntimeError):
    """A host call was made inside a component but outside an event: while
    the module was imported (at build time), where no host is there."""


class _EventState:
    """How many events are running (0 or 1; the SDK counts, the host runs one at a time)."""

    depth = 0


def in_event() -> bool:
    """Whether the host is running one of the actor's events."""
    return _EventState.depth > 0


def during_event(f: Callable[..., _T], *args: object) -> _T:
    """Runs `f(*args)` as (part of) an event: host calls are allowed inside it."""
    _EventState.depth += 1
    try:
        return f(*args)
    finally:
        _EventState.depth -= 1


def outside_event_message(call: str) -> str:
    return (
        f"{call}() was called outside an event, while the module was being imported (at module level): "
        "the host's storage, alarms, sockets, calls and context exist only while an event runs. "
        "Move it into on_init (once per new actor: CREATE TABLE goes there) or into a handler "
        "(on_request, on_alarm, ...)."
    )


def _only_in_events(module: str, name: str, f: Callable[..., object]) -> Callable[..., object]:
    def guarded(*args: object, **kwargs: object) -> object:
        if _EventState.depth == 0:
            raise OutsideEventError(outside_event_message(f"{module}.{name}"))
        return f(*args, **kwargs)

    guarded.__name__ = guarded.__qualname__ = name
    guarded.__doc__ = f.__doc__
    return guarded


def _refuse(module: str, name: str) -> Callable[..., object]:
    def refused(*_args: object, **_kwargs: object) -> object:
        raise OutsideComponentError(
            f"{module}.{name}() calls the wasmkeep host, which exists only inside an actor component: "
            "build the actor with `python -m wasmkeep_actor build app.py -o app.wasm` and run it with "
            "wasmkeep_actor.testing (pytest) or `wasmkeep-shim serve`"
        )

    return refused


for _m in (alarms, calls, context, sockets, storage):
    for _name, _f in list(vars(_m).items()):
        if isinstance(_f, _pytypes.FunctionType) and _f.__module__ == _m.__name__:
            _short = _m.__name__.rsplit(".", 1)[-1]
            # In a component the module is imported at build time, with no host: a
            # host call there gets a message saying where it belongs.
            setattr(_m, _name, _only_in_events(_short, _name, _f) if IN_COMPONENT else _refuse(_short, _name))
if not IN_COMPONENT:
    http.ResponseOutparam.set = classmethod(lambda cls, out, response: _refuse("http", "set")())  # type: ignore[method-assign, assignment]

__all__ = [
    "Err",
    "IN_COMPONENT",
    "OutsideComponentError",
    "OutsideEventError",
    "alarms",
    "calls",
    "context",
    "during_event",
    "http",
    "in_event",
    "outside_event_message",
    "sockets",
    "storage",
    "types",
]
