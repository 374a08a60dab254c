"""The pytest plugin: the component a test runs is the one the project's
wasmkeep.toml serves (issue 12), a failed test's report has the actors' log,
and `wasmkeep_reuse_host` resets one host instead of making one per test."""

import os
import shutil
from pathlib import Path

import pytest

from wasmkeep_actor.pytest_plugin import manifest_component

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_manifest_names_the_component_of_a_module(tmp_path):
    module = write(tmp_path / "actor.py", "")
    write(
        tmp_path / "wasmkeep.toml",
        'app = "local/x"\n[classes.shop]\ncomponent = "shop.wasm"\n'
        'build = "/some venv/bin/python -m wasmkeep_actor build actor.py -o shop.wasm"\n',
    )
    assert manifest_component(module, tmp_path) == tmp_path / "shop.wasm", "as `wasmkeep-shim new` writes it"
    write(tmp_path / "wasmkeep.toml", 'app = "local/x"\n[classes.a]\ncomponent = "out/actor.wasm"\n')
    assert manifest_component(module, tmp_path) == tmp_path / "out" / "actor.wasm", "by the component's name"
    write(tmp_path / "wasmkeep.toml", 'app = "local/x"\n[classes.a]\ncomponent = "other.wasm"\n')
    assert manifest_component(module, tmp_path) is None
    nested = write(tmp_path / "src" / "actor.py", "")
    write(tmp_path / "wasmkeep.toml", 'app = "local/x"\n[classes.a]\ncomponent = "actor.wasm"\n')
    assert manifest_component(nested, tmp_path) == tmp_path / "actor.wasm", "a manifest in a folder above"
    assert manifest_component(nested, tmp_path / "src") is None, "never above pytest's root"


def test_wasmkeep_build_builds_into_the_file_serve_runs(pytester):
    # The counter example's module in a project whose wasmkeep.toml serves
    # counter.wasm. Before this, the fixture built into pytest's cache and
    # serve could run an older counter.wasm than the tests did.
    project = pytester.path
    shutil.copy(REPO / "examples" / "counter-py" / "counter.py", write(project / "app" / "counter.py", ""))
    write(project / "wasmkeep.toml", 'app = "local/counter"\n[classes.counter]\ncomponent = "app/counter.wasm"\n')
    built = os.environ.get("COUNTER_PY_WASM")
    if built and Path(built).is_file():
        # The same inputs (the module alone, the SDK): the build is skipped.
        stamp = Path(built).with_name(f".{Path(built).name}.inputs")
        shutil.copy(built, project / "app" / "counter.wasm")
        if stamp.is_file():
            shutil.copy(stamp, project / "app" / ".counter.wasm.inputs")
    pytester.makeconftest(
        """
import pytest

@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build):
    return {"counter": wasmkeep_build("app/counter.py")}
"""
    )
    pytester.makepyfile(
        test_it="""
from pathlib import Path

def test_it(wasmkeep_host, wasmkeep_classes):
    assert Path(wasmkeep_classes["counter"]) == Path("app/counter.wasm").resolve()
    assert wasmkeep_host.actor("counter", "c").post().text() == "1"
"""
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert (project / "app" / ".counter.wasm.inputs").is_file(), "the build's stamp is beside the served file"


def probe_conftest(pytester, wasmkeep_classes):
    component = str(wasmkeep_classes["probe"])
    pytester.makeconftest(
        f"""
import pytest

@pytest.fixture(scope="session")
def wasmkeep_classes():
    return {{"probe": {component!r}}}
"""
    )


def test_a_failed_test_reports_what_the_actors_logged(pytester, wasmkeep_classes):
    probe_conftest(pytester, wasmkeep_classes)
    pytester.makepyfile(
        test_it="""
def test_it(wasmkeep_host):
    wasmkeep_host.actor("probe", "p").get("/log")
    assert False, "the test failed"
"""
    )
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*wasmkeep actor logs*", "*[[]info test/app:probe/p[]] hello 42*"])


def test_reuse_host_resets_one_host_between_tests(pytester, wasmkeep_classes):
    probe_conftest(pytester, wasmkeep_classes)
    pytester.makeini("[pytest]\nwasmkeep_reuse_host = true\n")
    pytester.makepyfile(
        test_it="""
hosts = []

def test_first(wasmkeep_host):
    hosts.append(wasmkeep_host)
    assert wasmkeep_host.actor("probe", "p").get("/bump").text() == "1"

def test_second(wasmkeep_host):
    assert wasmkeep_host is hosts[0], "the same host"
    assert wasmkeep_host.actor("probe", "p").get("/bump").text() == "1", "reset: nothing left"
"""
    )
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=2)
