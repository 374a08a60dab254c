"""`Actor`: the base class of an actor. Override the events it answers.

    from wasmkeep_actor import Actor, Request, storage

    class Visits(Actor):
        def on_init(self) -> None:
            storage.exec("CREATE TABLE visits(at INTEGER)")

        def on_request(self, request: Request) -> str:
            storage.exec("INSERT INTO visits VALUES (?)", context.now_ms())
            return str(storage.query_value("SELECT count(*) FROM visits"))

Each event runs alone (one at a time per actor) and synchronously. Keep
state in `storage`: the instance may or may not survive between events (the
host hibernates idle actors and starts them again from scratch).
"""

from __future__ import annotations

from .context import Address
from .http import Request, Response, ResponseLike

__all__ = ["Actor"]


class Actor:
    """The events an actor answers; every method has a default.

    The build command finds the one `Actor` subclass of the module it builds
    (or the one named by a module-level `actor = MyActor`) and creates one
    instance of it, with no arguments, when the first event arrives.
    """

    def on_init(self) -> None:
        """Once per new database, before the first other event (and again after a delete)."""

    def on_request(self, request: Request) -> ResponseLike:
        """A request routed to this actor. Return the answer, or send it early
        with `request.respond(...)` and return None. An exception fails the
        event: an open transaction is rolled back and an unanswered request
        gets 500. Without an override every request gets 404."""
        return Response.text(f"{type(self).__name__} has no on_request", 404)

    def on_alarm(self) -> None:
        """The alarm's time has come. It is already cleared; set it again to repeat."""

    def on_call(self, payload: bytes, caller: Address | None) -> bytes | str | None:
        """Another actor called this one (`caller`), or the host did (None).
        Return the answer (str is sent as UTF-8, None as empty). An exception
        answers the caller `CallRejected` with its message."""
        raise NotImplementedError(f"{type(self).__name__} takes no calls (it has no on_call)")

    def on_socket_open(self, socket: int, path: str) -> None:
        """A WebSocket opened on `/<class>/<name><path>`."""

    def on_socket_message(self, socket: int, message: str | bytes) -> None:
        """A message arrived: text as `str`, binary as `bytes`."""

    def on_socket_close(self, socket: int, code: int, reason: str) -> None:
        """A socket closed (by the client, or by the actor after the event that closed it)."""
