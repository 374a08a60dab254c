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
from typing import Callable

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


def _refuse(module: str, name: str) -> Callable[..., object]:
    def refused(*_args: object, **_kwargs: object) -> object:
        raise OutsideComponentError(
            f"{module}.{name}() calls the wasmkeep host, which exists only inside an actor component: "
            "build the actor with `python -m wasmkeep_actor build app.py -o app.wasm` and run it with "
            "wasmkeep_actor.testing (pytest) or `wasmkeep-shim serve`"
        )

    return refused


if not IN_COMPONENT:
    for _m in (alarms, calls, context, sockets, storage):
        for _name, _f in list(vars(_m).items()):
            if isinstance(_f, _pytypes.FunctionType) and _f.__module__ == _m.__name__:
                setattr(_m, _name, _refuse(_m.__name__.rsplit(".", 1)[-1], _name))
    http.ResponseOutparam.set = classmethod(lambda cls, out, response: _refuse("http", "set")())  # type: ignore[method-assign, assignment]

__all__ = ["Err", "IN_COMPONENT", "OutsideComponentError", "alarms", "calls", "context", "http", "sockets", "storage", "types"]
