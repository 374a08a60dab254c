"""The pytest plugin of `wasmkeep_actor.testing`, loaded automatically once
the SDK is installed (entry point `pytest11`). Fixtures:

- `wasmkeep_build` (session): `wasmkeep_build("app.py")` builds an actor
  module with the SDK's build command and returns the component's path. The
  component is kept in pytest's cache folder, and the build is skipped while
  the module, the files beside it and the SDK are unchanged.
- `wasmkeep_classes` (session): the classes of the app `wasmkeep_host` runs,
  `{class name: component}`. Empty by default: override it in `conftest.py`.
- `wasmkeep_app` (session): the app's name, `"test/app"` by default.
- `wasmkeep_host`: a fresh `TestHost` per test, with its own temporary
  storage and virtual clock, running `wasmkeep_classes`; closed after the test.
- `wasmkeep_host_factory`: makes more hosts (`wasmkeep_host_factory(classes)`),
  all closed after the test.

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
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .testing import ClassInit, TestHost


@pytest.fixture(scope="session")
def wasmkeep_build(request: pytest.FixtureRequest) -> Callable[..., Path]:
    """Builds an actor module into a component (cached); returns its path."""
    from .build import BuildError, build

    cache = request.config.cache
    out_dir = Path(cache.mkdir("wasmkeep-components")) if cache is not None else Path(".wasmkeep-components")

    def build_module(app: str | os.PathLike[str], name: str | None = None) -> Path:
        path = Path(app)
        if not path.is_absolute():
            path = Path(request.config.rootpath) / path
        out = out_dir / f"{name or path.stem}.wasm"
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


@pytest.fixture
def wasmkeep_host_factory() -> Iterator[Callable[..., TestHost]]:
    """Makes hosts (`TestHost(classes, **options)`), closing every one after the test."""
    from .testing import TestHost

    hosts: list[TestHost] = []

    def make(classes: Mapping[str, ClassInit] | None = None, **options: Any) -> TestHost:
        host = TestHost(classes, **options)
        hosts.append(host)
        return host

    yield make
    for h in hosts:
        h.close()


@pytest.fixture
def wasmkeep_host(
    wasmkeep_host_factory: Callable[..., TestHost], wasmkeep_classes: Mapping[str, ClassInit], wasmkeep_app: str
) -> TestHost:
    """A host per test: its own temporary storage and virtual clock, running `wasmkeep_classes`."""
    return wasmkeep_host_factory(wasmkeep_classes, app=wasmkeep_app)
