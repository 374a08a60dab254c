"""The parts of the SDK that run on the host's Python: the build command,
row objects, time conversions, responses, finding the actor class."""

import types
from datetime import datetime, timedelta, timezone

import pytest

import wasmkeep_actor
from wasmkeep_actor import Actor, Response, storage
from wasmkeep_actor._entry import find_actor
from wasmkeep_actor._wit import OutsideComponentError
from wasmkeep_actor.build import BuildError, build
from wasmkeep_actor.context import to_datetime, to_ms
from wasmkeep_actor.http import Request, to_response


def test_version():
    from wasmkeep_actor.testing import host_version

    assert wasmkeep_actor.__version__ == "0.2.0"
    assert host_version() == "0.2.0"
    assert wasmkeep_actor.WIT_PACKAGE == "wasmkeep:actor@0.2.1"


def test_host_calls_outside_a_component_say_what_to_do():
    with pytest.raises(OutsideComponentError, match="python -m wasmkeep_actor build"):
        storage.exec("SELECT 1")


def test_rows():
    row_type = storage._row_type(["id", "name", "id"])
    row = tuple.__new__(row_type, [1, "a", 2])
    assert row == (1, "a", 2)
    assert (row[0], row["name"], row.name, row["id"]) == (1, "a", "a", 1)
    assert dict(storage._row_type(["id", "name"])((1, "a"))) == {"id": 1, "name": "a"}
    with pytest.raises(KeyError, match="no column 'x'"):
        row["x"]
    with pytest.raises(AttributeError, match="no column 'x'"):
        row.x  # noqa: B018
    assert repr(row) == "Row(id=1, name='a', id=2)"


def test_times():
    at = datetime(2026, 1, 1, 12, 0, 0, 250_000, tzinfo=timezone.utc)
    assert to_datetime(to_ms(at)) == at
    assert to_ms(datetime(1970, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))) == 0
    with pytest.raises(ValueError, match="no timezone"):
        to_ms(datetime(2026, 1, 1))


def test_responses():
    assert to_response("hi").headers == [("content-type", "text/plain; charset=utf-8")]
    assert to_response({"a": 1}).body == '{"a": 1}'
    assert Response.text("x", 404, {"x-a": "b"}).headers[1] == ("x-a", "b")
    with pytest.raises(TypeError, match="return a Response"):
        to_response(42)  # type: ignore[arg-type]


def test_request_helpers():
    sent = []
    r = Request("GET", "/items?page=2&q=a+b", [("X-A", "1")], b'{"k": 1}', sent.append)
    assert (r.pathname, r.query, r.header("x-a"), r.json()) == ("/items", {"page": "2", "q": "a b"}, "1", {"k": 1})
    r.respond("ok")
    assert r.responded and sent[0].status == 200
    with pytest.raises(RuntimeError, match="already sent"):
        r.respond("again")


def test_find_actor():
    m = types.ModuleType("app")

    class A(Actor):
        pass

    A.__module__ = "app"
    m.A = A
    assert find_actor(m) is A

    class B(Actor):
        pass

    B.__module__ = "app"
    m.B = B
    with pytest.raises(TypeError, match="several Actor subclasses"):
        find_actor(m)
    m.actor = B
    assert find_actor(m) is B
    with pytest.raises(TypeError, match="defines no actor"):
        find_actor(types.ModuleType("empty"))


def test_build_refuses_what_is_not_a_module(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(BuildError, match="not a Python file"):
        build(tmp_path / "notes.txt", tmp_path / "x.wasm")
    (tmp_path / "my-app.py").write_text("x = 1\n")
    with pytest.raises(BuildError, match="not a valid module name"):
        build(tmp_path / "my-app.py", tmp_path / "x.wasm")


def test_a_module_without_an_actor_fails_the_build_with_the_reason(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    with pytest.raises(BuildError, match="defines no actor"):
        build(tmp_path / "app.py", tmp_path / "app.wasm")


def test_storage_at_import_time_fails_the_build_saying_where_it_belongs(tmp_path):
    (tmp_path / "app.py").write_text(
        "from wasmkeep_actor import Actor, storage\n\n"
        'storage.exec("CREATE TABLE IF NOT EXISTS t(x)")\n\n\n'
        "class App(Actor):\n    pass\n"
    )
    with pytest.raises(BuildError) as e:
        build(tmp_path / "app.py", tmp_path / "app.wasm", quiet=True)
    message = str(e.value)
    assert message.startswith("app.py calls the host while it is imported (at build time):\n")
    assert '  app.py, line 3: storage.exec("CREATE TABLE IF NOT EXISTS t(x)")\n' in message
    assert "storage.exec() was called outside an event" in message
    assert "Move it into on_init" in message and "or into a handler" in message
    assert "Traceback" not in message and "Caused by" not in message

