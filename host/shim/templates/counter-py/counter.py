"""A counter actor: GET reads the count, POST adds one, DELETE deletes the
actor (the next request meets a new counter at 0).

Copy this directory to start a new wasmkeep actor in Python.
"""

from wasmkeep_actor import Actor, Internal, Request, Response, storage


class Counter(Actor):
    def on_init(self) -> None:
        # Runs once per new database: create the table and its one row.
        storage.exec(
            """
            CREATE TABLE counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
            INSERT INTO counter VALUES (1, 0);
            """
        )

    def on_request(self, request: Request) -> Response | str:
        if request.method == "GET":
            return str(count())
        if request.method == "POST":
            storage.exec("UPDATE counter SET n = n + 1 WHERE id = 1")
            return str(count())
        if request.method == "DELETE":
            # Durable before the answer: a 200 means the counter is gone.
            try:
                storage.delete_self_durable()
            except Internal as e:
                # Not known to be durable; the client may retry (503, retry-after).
                return Response.not_kept(e)
            return "deleted"
        return Response.text("use GET, POST or DELETE", 405)


def count() -> int:
    """The current count."""
    n = storage.query_value("SELECT n FROM counter WHERE id = 1")
    assert isinstance(n, int)
    return n
