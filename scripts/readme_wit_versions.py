"""Fails when a README that ships in a package names a WIT version other
than `wit/actor.wit`'s (issue 58: "a test holds the WIT version each README
names to wit/"). Every `wasmkeep:actor@X.Y.Z` and `wasmkeep:actor/<iface>@X.Y.Z`
in the packaged READMEs is checked; a version named as when something came
(`(WIT 0.2.1)`, `@since`) is not that form and is left alone.

    python3 scripts/readme_wit_versions.py
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The READMEs that ship in a package (crates, npm, PyPI, the C archive).
PACKAGED = [
    "sdk-rust/README.md",
    "sdk-rust/testing/README.md",
    "sdk-ts/README.md",
    "sdk-python/README.md",
    "sdk-python/harness/README.md",
    "sdk-c/README.md",
    "sdk-c/ARCHIVE_README.md",
]
NAMED = re.compile(r"wasmkeep:actor(?:/[a-z-]+)?@(\d+\.\d+\.\d+)")


def wit_version(root):
    text = (root / "wit/actor.wit").read_text()
    m = re.search(r"^package wasmkeep:actor@(\d+\.\d+\.\d+);", text, re.M)
    if not m:
        sys.exit("readme-wit-versions: wit/actor.wit has no `package wasmkeep:actor@X.Y.Z;` line")
    return m.group(1)


def wrong_versions(root, version, files):
    """(file, line, named) for every WIT version a README names that is not `version`."""
    out = []
    for rel in files:
        path = root / rel
        if not path.exists():
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            for m in NAMED.finditer(line):
                if m.group(1) != version:
                    out.append((rel, i, m.group(0)))
    return out


def self_test():
    """The check finds a stale version and passes a current one."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        (d / "a.md").write_text("speaks `wasmkeep:actor@0.2.1`; exports wasmkeep:actor/events@0.2.4\n(WIT 0.2.1)\n")
        found = wrong_versions(d, "0.2.4", ["a.md", "missing.md"])
        assert found == [("a.md", 1, "wasmkeep:actor@0.2.1")], found


def main():
    self_test()
    version = wit_version(ROOT)
    wrong = wrong_versions(ROOT, version, PACKAGED)
    for rel, line, named in wrong:
        print(f"readme-wit-versions: {rel}:{line} names {named}, but wit/actor.wit is {version}: "
              f"write wasmkeep:actor@{version} there", file=sys.stderr)
    if wrong:
        sys.exit(1)
    print(f"readme-wit-versions: every packaged README names wasmkeep:actor@{version}")


if __name__ == "__main__":
    main()
