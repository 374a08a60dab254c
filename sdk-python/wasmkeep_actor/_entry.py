"""Not public API: what the build command wires into the component (the WIT
`events` export). May change in any release.

componentize-py looks for a class named `Events` in the entry module and
calls its methods for the world's exported `events` interface. The build
command writes an entry module that does

    Events = events_for(<the app module>)
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import traceback
from types import ModuleType
from typing import Any, Callable, TypeVar

from ._wit import Err, context, during_event
from ._wit import http as _h
from ._wit import types as _t
from .actor import Actor
from .context import Address, log
from . import storage
from .errors import SqlError
from .http import Request, Response, to_response

_R = TypeVar("_R")


def find_actor(module: ModuleType) -> type[Actor]:
    """The actor class of an app module: `module.actor` if set, else the one
    `Actor` subclass defined in the module."""
    named = getattr(module, "actor", None)
    if named is not None:
        if isinstance(named, type) and issubclass(named, Actor):
            return named
        raise TypeError(f"{module.__name__}.actor must be an Actor subclass (the class, not an instance), not {named!r}")
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Actor) and v is not Actor and v.__module__ == module.__name__
    ]
    if len(found) == 1:
        return found[0]
    if not found:
        raise TypeError(
            f"{module.__name__} defines no actor: define a class that extends wasmkeep_actor.Actor "
            "(from wasmkeep_actor import Actor; class MyActor(Actor): ...)"
        )
    names = ", ".join(c.__name__ for c in found)
    raise TypeError(f"{module.__name__} defines several Actor subclasses ({names}): say which one with `actor = <Class>` at module level")


def _to_wit_response(r: Response) -> _h.Response:
    return _h.Response(r.status, [(str(k), str(v)) for k, v in r.headers], r.body_bytes())


def headline(err: BaseException) -> str:
    """`ExceptionType: message` (the type's own name, unqualified)."""
    name = type(err).__qualname__
    try:
        message = str(err)
    except BaseException:  # noqa: BLE001
        message = "<the exception's str() failed>"
    return f"{name}: {message}" if message else name


def _trace(err: BaseException) -> str:
    """The traceback as Python prints it, from the actor's code (this
    module's frames are left out), or empty."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(err), err, tb)).rstrip()
    except BaseException:  # noqa: BLE001
        return ""


def describe(err: BaseException) -> str:
    """`ExceptionType: message` first, then the traceback (from the actor's
    code: this module's frames are left out), as Python prints it."""
    trace = _trace(err)
    return f"{headline(err)}\n{trace}" if trace else headline(err)


def _report(what: str, err: BaseException, outcome: str = "the event failed", failing: bool = True) -> str:
    """Tells the host why the event fails (`context.report-failure`, which
    the failed event's answer carries), then writes it to the host's log.
    An event that is not failing (`failing=False`: an exception that answers
    a call `rejected`) is only logged. Never raises: reporting must not hide
    the failure."""
    text = describe(err)
    if failing:
        try:
            context.report_failure(context.FailureReport(headline(err), _trace(err)))
        except BaseException:  # noqa: BLE001 (outside a component, or the call failed: stderr instead)
            try:
                print(text, file=sys.stderr, flush=True)
            except BaseException:  # noqa: BLE001
                pass
    try:
        log.error(f"{what} raised ({outcome}): {text}")
    except BaseException:  # noqa: BLE001
        pass
    return text


class EventFailed(Exception):
    """What an event fails with after its exception was reported: the
    engine prints only this one line for it (see `_excepthook`), not a
    second traceback."""


_previous_hook = sys.excepthook


def _excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    # componentize-py prints an exception that escapes an export with
    # sys.excepthook before it traps: the report is already out.
    if isinstance(value, EventFailed):
        print(str(value), file=sys.stderr, flush=True)
        return
    _previous_hook(kind, value, tb)


sys.excepthook = _excepthook


def _as_event(method: Callable[..., _R]) -> Callable[..., _R]:
    """An export that runs as an event: the host's imports may be called inside it."""

    @functools.wraps(method)
    def event(self: object, *args: object) -> _R:
        return during_event(method, self, *args)

    return event


def _keep_sources(module: ModuleType) -> None:
    """Puts the source of the app's modules into linecache while the build
    imports them: at run time the component has no files to read, and a
    traceback without its source lines is hard to read. (An entry whose mtime
    is None is one `linecache.checkcache` leaves alone.)"""
    base = os.path.dirname(getattr(module, "__file__", None) or "")
    if not base:
        return
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str) and f.endswith(".py") and f.startswith(base + os.sep):
            try:
                lines = linecache.getlines(f)
            except Exception:  # noqa: BLE001 (only a nicer traceback is at stake)
                continue
            if lines:
                linecache.cache[f] = (sum(len(line) for line in lines), None, lines, f)


def events_for(module: ModuleType) -> type:
    """The `Events` class componentize-py exports for the actor of `module`."""
    cls = find_actor(module)
    _keep_sources(module)
    state: dict[str, Actor] = {}

    def actor() -> Actor:
        # Created at the first event, not at build time: the build pre-imports
        # the module in a sandbox where no host is there to call.
        a = state.get("a")
        if a is None:
            a = state["a"] = run(f"{cls.__name__}()", cls)
        return a

    def run(what: str, f: Any, *args: Any) -> Any:
        try:
            return f(*args)
        except BaseException as err:
            _report(what, err)
            first = headline(err).split("\n")[0]
            raise EventFailed(f"{what} failed: {first[:300]}") from None

    class Events:
        def on_init(self) -> None:
            run("on_init", actor().on_init)

        def on_request(self, request: Any, out: Any) -> None:
            def send_now(response: Response) -> None:
                _h.ResponseOutparam.set(out, _to_wit_response(response))

            def send(response: Response) -> None:
                # The answer acknowledges the writes before it: they are kept first.
                try:
                    storage.flush()
                except SqlError as err:
                    if response.status < 500:
                        response = Response.not_kept(err)
                send_now(response)

            req = Request(request.method, request.path, list(request.headers), bytes(request.body), send, send_now)
            answer = run("on_request", actor().on_request, req)
            if req.responded:
                if answer is not None:
                    # The first answer went out already; failing the event now would only lose its writes.
                    log.warning("on_request returned an answer after request.respond(...) had sent one; it was dropped")
                return
            if answer is None:
                req.respond(Response.text("on_request returned None without request.respond(...)", 500))
                return
            req.respond(run("on_request's answer", to_response, answer))

        def on_alarm(self) -> None:
            run("on_alarm", actor().on_alarm)

        def on_call(self, caller: Any, payload: bytes) -> bytes:
            who = None if caller is None else Address(caller.class_, caller.name)
            a = actor()
            try:
                answer = a.on_call(bytes(payload), who)
            except Exception as err:  # noqa: BLE001 (every exception answers the caller `rejected`)
                _report("on_call", err, "the caller gets CallRejected", failing=False)
                raise Err(str(err) or type(err).__name__) from None
            # The caller hears the answer only once what this call wrote is kept.
            try:
                storage.flush()
            except SqlError as err:
                raise Err(f"the call's writes are not known to be kept ({err}); try again") from None
            if answer is None:
                return b""
            return answer.encode() if isinstance(answer, str) else bytes(answer)

        def on_socket_open(self, socket: int, path: str) -> None:
            run("on_socket_open", actor().on_socket_open, socket, path)

        def on_socket_message(self, socket: int, message: Any) -> None:
            value = message.value if isinstance(message, _t.Message_Text) else bytes(message.value)
            run("on_socket_message", actor().on_socket_message, socket, value)

        def on_socket_close(self, socket: int, code: int, reason: str) -> None:
            run("on_socket_close", actor().on_socket_close, socket, code, reason)

    for name, method in list(vars(Events).items()):
        if name.startswith("on_"):
            setattr(Events, name, _as_event(method))
    Events.__name__ = Events.__qualname__ = "Events"
    return Events
