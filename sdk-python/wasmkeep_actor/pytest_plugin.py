"""The pytest plugin of `wasmkeep_actor.testing`, loaded automatically once
the SDK is installed (entry point `pytest11`). Fixtures:

- `wasmkeep_build` (session): `wasmkeep_build("app.py")` builds an actor
  module with the SDK's build command and returns the component's path. When
  the project's `wasmkeep.toml` (beside the module or in a folder above it,
  up to pytest's root) has a class built from that module (its `build`
  command names the module and `-o <file>`, or its `component` is
  `<module's name>.wasm`), the component is built into that very file, so
  the tests and `wasmkeep-shim serve` run the same build; otherwise it is
  kept in pytest's cache folder. Either way the build is skipped while the
  module, the files beside it and the SDK are unchanged.
- `wasmkeep_classes` (session): the classes of the app `wasmkeep_host` runs,
  `{class name: component}`. Empty by default: override it in `conftest.py`.
- `wasmkeep_app` (session): the app's name, `"test/app"` by default.
- `wasmkeep_host`: a fresh `TestHost` per test, with its own temporary
  storage and virtual clock, running `wasmkeep_classes`; closed after the test.
  With `wasmkeep_reuse_host = true` in the ini file (`[tool.pytest.ini_options]`),
  one host per session instead, `reset()` before each test.
- `wasmkeep_host_factory`: makes more hosts (`wasmkeep_host_factory(classes,
  nodes=2, ...)`, any `TestHost` option), all closed after the test.

When a test fails, what the actors of its hosts logged is added to its
report (the section "wasmkeep actor logs").

    # conftest.py
    from pathlib import Path
    import pytest

    @pytest.fixture(scope="session")
    def wasmkeep_classes(wasmkeep_build):
        return {"counter": wasmkeep_build(Path(__file__).parent / "counter.py")}

    # test_counter.py
    def test_counts(wasmkeep_host):
        c = wasmkeep_host.actor("counter", "a")
        assert c.post().text() == "1"
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .testing import ClassInit, TestHost

_HOSTS = pytest.StashKey[list["TestHost"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "wasmkeep_reuse_host",
        "wasmkeep_host: one host per session, reset() before each test, instead of a new host per test",
        type="bool",
        default=False,
    )


def _built_by(spec: Mapping[str, Any], manifest_dir: Path, module: Path) -> Path | None:
    """The output a class's `build` command writes when it builds `module`
    (`python -m wasmkeep_actor build <module> -o <out>`), else None."""
    build = spec.get("build")
    if not isinstance(build, str):
        return None
    try:
        words = shlex.split(build)
    except ValueError:
        return None
    if "wasmkeep_actor" not in words or "build" not in words:
        return None
    named = [w for w in words if w.endswith(".py") and (manifest_dir / w).resolve() == module]
    for flag in ("-o", "--output"):
        if named and flag in words[:-1]:
            return (manifest_dir / words[words.index(flag) + 1]).resolve()
    return None


def manifest_component(module: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Path | None:
    """The component file the project's `wasmkeep.toml` serves for `module`:
    the nearest manifest in the module's folder or a folder above it (up to
    `root`, pytest's root folder, when the module is inside it), and in it
    the class whose `build` command builds the module (its `-o` file), else
    the class whose `component` is `<module's name>.wasm`. None when no
    manifest names one."""
    path = Path(module).resolve()
    folders = [path.parent]
    top = Path(root).resolve() if root is not None else None
    if top is not None and path.is_relative_to(top):
        folders += [d for d in path.parent.parents if d.is_relative_to(top)]
    for d in folders:
        manifest = d / "wasmkeep.toml"
        if not manifest.is_file():
            continue
        try:
            classes = tomllib.loads(manifest.read_text()).get("classes", {})
        except (OSError, tomllib.TOMLDecodeError):
            return None  # a broken manifest: serve says what is wrong with it
        if not isinstance(classes, dict):
            return None
        specs = [s for s in classes.values() if isinstance(s, dict)]
        for spec in specs:
            out = _built_by(spec, d, path)
            if out is not None:
                return out
        for spec in specs:
            component = spec.get("component")
            if isinstance(component, str) and Path(component).name == f"{path.stem}.wasm":
                return (d / component).resolve()
        return None
    return None


@pytest.fixture(scope="session")
def wasmkeep_build(request: pytest.FixtureRequest) -> Callable[..., Path]:
    """Builds an actor module into a component (cached); returns its path."""
    from .build import BuildError, build

    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    out_dir = Path(cache.mkdir("wasmkeep-components")) if cache is not None else Path(".wasmkeep-components")

    def build_module(app: str | os.PathLike[str], name: str | None = None) -> Path:
        path = Path(app)
        if not path.is_absolute():
            path = Path(request.config.rootpath) / path
        # The file the project's wasmkeep.toml serves, when it names one: the
        # tests never run another build than serve does.
        served = None if name is not None else manifest_component(path, request.config.rootpath)
        out = served or out_dir / f"{name or path.stem}.wasm"
        try:
            return build(path, out, quiet=True).output
        except BuildError as e:
            pytest.fail(f"wasmkeep_build({str(app)!r}): {e}", pytrace=False)

    return build_module


@pytest.fixture(scope="session")
def wasmkeep_classes() -> Mapping[str, ClassInit]:
    """The classes `wasmkeep_host` runs: override in conftest.py."""
    return {}


@pytest.fixture(scope="session")
def wasmkeep_app() -> str:
    """The name of the app `wasmkeep_host` runs (`tenant/app`)."""
    return "test/app"


def _hosts_of(node: pytest.Item | Any) -> list[TestHost]:
    """The hosts a test used (for its failure report)."""
    hosts = node.stash.get(_HOSTS, None)
    if hosts is None:
        hosts = []
        node.stash[_HOSTS] = hosts
    return hosts


@pytest.fixture
def wasmkeep_host_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., TestHost]]:
    """Makes hosts (`TestHost(classes, **options)`), closing every one after the test."""
    from .testing import TestHost

    hosts: list[TestHost] = []

    def make(classes: Mapping[str, ClassInit] | None = None, **options: Any) -> TestHost:
        host = TestHost(classes, **options)
        hosts.append(host)
        _hosts_of(request.node).append(host)
        return host

    yield make
    for h in hosts:
        h.close()


@pytest.fixture(scope="session")
def _wasmkeep_session_host(
    wasmkeep_classes: Mapping[str, ClassInit], wasmkeep_app: str
) -> Iterator[TestHost]:
    from .testing import TestHost

    host = TestHost(wasmkeep_classes, app=wasmkeep_app)
    yield host
    host.close()


@pytest.fixture
def wasmkeep_host(
    request: pytest.FixtureRequest,
    wasmkeep_host_factory: Callable[..., TestHost],
    wasmkeep_classes: Mapping[str, ClassInit],
    wasmkeep_app: str,
) -> TestHost:
    """A host per test: its own temporary storage and virtual clock, running
    `wasmkeep_classes` (with `wasmkeep_reuse_host = true`: the session's
    host, reset before the test)."""
    if request.config.getini("wasmkeep_reuse_host"):
        host: TestHost = request.getfixturevalue("_wasmkeep_session_host")
        host.reset()
        _hosts_of(request.node).append(host)
        return host
    return wasmkeep_host_factory(wasmkeep_classes, app=wasmkeep_app)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """A failed test's report gets what the actors of its hosts logged."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        hosts: list[TestHost] = item.stash.get(_HOSTS, [])
        for i, host in enumerate(hosts):
            try:
                lines = host.logs()
            except Exception:  # noqa: BLE001 (a closed host has nothing to add)
                continue
            text = "\n".join(f"[{line['level']} {line['actor']}] {line['message']}" for line in lines)
            title = "wasmkeep actor logs" + (f" (host {i + 1})" if i else "")
            report.sections.append((title, text or "(the actors logged nothing)"))
