"""The parts of the SDK that run on the host's Python: the build command,
row objects, time conversions, responses, finding the actor class."""

import os
import types
from pathlib import Path
from datetime import datetime, timedelta, timezone

import pytest

import wasmkeep_actor
from wasmkeep_actor import Actor, Internal, Response, storage
from wasmkeep_actor._entry import find_actor
from wasmkeep_actor._wit import OutsideComponentError
from wasmkeep_actor.build import BuildError, build
from wasmkeep_actor.context import to_datetime, to_ms
from wasmkeep_actor.http import Request, to_response


def test_version():
    from wasmkeep_actor.testing import host_version

    assert wasmkeep_actor.__version__ == "0.2.0"
    assert host_version() == "0.2.0"
    assert wasmkeep_actor.WIT_PACKAGE == "wasmkeep:actor@0.2.4"


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


def test_a_row_type_is_made_once_per_set_of_columns():
    # Making a class per query cost the Python counter a third of its
    # requests per second (issue 25, item 5).
    assert storage._row_type(["id", "name"]) is storage._row_type(["id", "name"])
    assert storage._row_type(["id"]) is not storage._row_type(["name"])


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


def test_not_kept_names_its_kind_and_when_to_retry():
    r = Response.not_kept(Internal("the upload failed"))
    assert r.status == 503
    assert ("retry-after", "1") in r.headers
    assert ("wasmkeep-failure", "not-acknowledged") in r.headers


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



def test_the_same_inputs_reuse_a_kept_build_into_any_output(tmp_path, monkeypatch):
    # componentize-py's output differs from build to build: without the kept
    # build, the same sources built into a second file (or again after an
    # edit was undone) were a new component for the host to compile.
    from wasmkeep_actor import build as b

    store = tmp_path / "builds"
    monkeypatch.setenv("WASMKEEP_PY_BUILD_CACHE", str(store))
    app = tmp_path / "src" / "app.py"
    app.parent.mkdir()
    app.write_text("from wasmkeep_actor import Actor\n\n\nclass App(Actor):\n    pass\n")
    stage = tmp_path / "stage"
    stage.mkdir()
    b._stage(app.resolve(), [], stage)
    digest = b._digest(stage, b._SDK / "wit", b._componentize_version(b._componentize_cmd()))
    store.mkdir()
    (store / f"{digest}.wasm").write_bytes(b"the kept component")

    one = build(app, tmp_path / "one.wasm", quiet=True)
    two = build(app, tmp_path / "out" / "two.wasm", quiet=True)
    assert one.reused and two.reused and not one.skipped
    assert (tmp_path / "one.wasm").read_bytes() == (tmp_path / "out" / "two.wasm").read_bytes() == b"the kept component"
    assert build(app, tmp_path / "one.wasm", quiet=True).skipped, "its stamp is written: unchanged next time"

    monkeypatch.setenv("WASMKEEP_PY_BUILD_CACHE", "off")
    assert b.builds_dir() is None


def test_the_build_cache_keeps_the_newest_few(tmp_path, monkeypatch):
    from wasmkeep_actor import build as b

    store = tmp_path / "builds"
    store.mkdir()
    monkeypatch.setenv("WASMKEEP_PY_BUILD_CACHE", str(store))
    for i in range(b.KEEP_BUILDS + 2):
        old = store / f"old{i}.wasm"
        old.write_bytes(b"x")
        os.utime(old, (1000 + i, 1000 + i))
    component = tmp_path / "new.wasm"
    component.write_bytes(b"new")
    b._keep(component, "fresh")
    kept = sorted(p.name for p in store.glob("*.wasm"))
    assert len(kept) == b.KEEP_BUILDS and "fresh.wasm" in kept and "old0.wasm" not in kept


def test_a_component_older_than_its_sources_is_refused_with_the_command_that_builds_it(tmp_path):
    # A test given a component (an environment variable, a path in
    # conftest.py) ran it even when its module had changed since its build.
    from wasmkeep_actor import build as b
    from wasmkeep_actor.testing import StaleComponentError, TestHost

    app = tmp_path / "src" / "counter.py"
    app.parent.mkdir()
    app.write_text((Path(__file__).parents[2] / "examples" / "counter-py" / "counter.py").read_text())
    stage = tmp_path / "stage"
    stage.mkdir()
    b._stage(app.resolve(), [], stage)
    digest = b._digest(stage, b._SDK / "wit", b._componentize_version(b._componentize_cmd()))
    component = tmp_path / "counter.wasm"
    built = os.environ.get("COUNTER_PY_WASM")
    component.write_bytes(Path(built).read_bytes() if built else b"not loaded")
    b._stamp(component).write_text(b._stamp_text(digest, app.resolve(), []))
    b.check_fresh(component)  # the same sources: fresh
    if built:
        TestHost({"counter": component}).close()

    app.write_text(app.read_text() + "# an edit\n")
    with pytest.raises(StaleComponentError, match="counter.wasm is older than its sources") as e:
        TestHost({"counter": component})
    assert f"python -m wasmkeep_actor build {app.resolve()} -o {component}" in str(e.value)
    assert str(e.value).startswith("class counter: ")
