"""The packages' READMEs (what PyPI shows) are for a user who installs from
the registry: they name no file the packages do not ship, no checkout path,
no build from source; and they state the Pythons and platforms the harness
wheel covers in the words the SDK's messages use."""

import re
from pathlib import Path

import pytest

from wasmkeep_actor import _harness_wheel

HERE = Path(__file__).resolve().parent.parent
READMES = [HERE / "README.md", HERE / "harness" / "README.md"]

# What only a checkout has.
FORBIDDEN = [
    "<repo>",
    "cargo install --path",
    "cargo build",
    "sdk-python/",
    "target/",
    "scripts/",
    "examples/",
    "docs/adr",
    ".whl",
    "wheels.sh",
    "setup.sh",
]


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(HERE)))
def test_a_packaged_readme_names_nothing_the_packages_do_not_ship(readme):
    text = readme.read_text()
    for word in FORBIDDEN:
        assert word not in text, f"{readme.name} names {word!r}, which a registry user does not have"
    # Links: only to the web or within the page.
    for target in re.findall(r"\]\(([^)]*)\)", text):
        assert target.startswith(("https://", "http://", "#")), f"{readme.name} links to {target!r}, which does not ship"


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(HERE)))
def test_a_packaged_readme_says_which_pythons_and_platforms_the_harness_covers(readme):
    text = " ".join(readme.read_text().split())
    assert "cp311-abi3-manylinux_2_28_x86_64" in text
    assert "CPython 3.11 or newer (3.12, 3.13, ...) on Linux x86_64 with glibc 2.28 or newer" in text
    assert _harness_wheel.COVERS == "CPython 3.11 or newer on Linux x86_64 with glibc 2.28 or newer"
    assert "from versions: none" in text
