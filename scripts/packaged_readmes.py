"""Fails when a README that ships in a Rust crate or in the C archive links a
file the package does not ship, or when an SDK's packaged README does not
name the dashboard's URL (issue 58: "no packaged README names a path or file
it does not ship, and a test checks it"; "every SDK README names the
dashboard"). The TypeScript and Python READMEs' links are held by their own
tests (sdk-ts/test/readme.test.js, sdk-python/tests/test_readmes.py); this is
their pattern for the other two:

- a crate's README: what `cargo package --list` ships for each published
  crate (`xtask/src/release.rs`'s list) whose package holds a README.md;
- the C archive's README (`sdk-c/ARCHIVE_README.md`, the archive's
  `README.md`): what `make -C sdk-c install` puts in a prefix, with the
  `bin/wasmkeep-shim` and `README.md` that `cargo xtask release` adds.

A link may go to the web (`https://`, `http://`), within the page (`#...`),
or to a file or folder the package ships, relative to the README.

    python3 scripts/packaged_readmes.py
"""

import os
import pathlib
import posixpath
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]*)\)")
# Where a guest author starts: every SDK's packaged README names it.
DASHBOARD = "/_shim/ui"
SDK_READMES = [
    "sdk-rust/README.md",
    "sdk-ts/README.md",
    "sdk-python/README.md",
    "sdk-c/ARCHIVE_README.md",
]


def published_crates(root):
    """The crates `cargo xtask release` publishes, from its list."""
    text = (root / "xtask/src/release.rs").read_text()
    m = re.search(r"PUBLISHED_CRATES: &\[&str\] = &\[(.*?)\];", text, re.S)
    if not m:
        sys.exit("packaged-readmes: xtask/src/release.rs has no PUBLISHED_CRATES list")
    return re.findall(r'"([^"]+)"', m.group(1))


def crate_files(root, crate):
    """(the crate's folder, the files `cargo package --list` ships)."""
    cargo = os.environ.get("CARGO", "cargo")
    meta = subprocess.run(
        [cargo, "pkgid", "-p", crate, "--offline"], cwd=root, capture_output=True, text=True
    )
    listed = subprocess.run(
        [cargo, "package", "--list", "-p", crate, "--allow-dirty", "--offline"],
        cwd=root, capture_output=True, text=True,
    )
    if listed.returncode != 0 or meta.returncode != 0:
        sys.exit(f"packaged-readmes: cargo package --list -p {crate} failed:\n{listed.stderr}{meta.stderr}")
    # pkgid: path+file:///<dir>#<name>@<version> (or #<version>)
    url = meta.stdout.strip().split("#", 1)[0]
    folder = pathlib.Path(re.sub(r"^path\+file://", "", url))
    return folder, {line.strip() for line in listed.stdout.splitlines() if line.strip()}


def c_archive_files(root):
    """The files the C archive holds, by path from its top: a dry install
    into a temporary prefix (the harness libraries and the WASI adapter as
    empty stand-ins, so that nothing needs building), plus what the release
    adds."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        target, prefix = tmp / "target", tmp / "prefix"
        target.mkdir()
        for lib in ["libwasmkeep_c_harness.so", "libwasmkeep_c_harness.a"]:
            (target / lib).write_bytes(b"")
        adapter = tmp / "wasi_snapshot_preview1.reactor.wasm"
        adapter.write_bytes(b"")
        done = subprocess.run(
            ["make", "--quiet", "-C", str(root / "sdk-c"), "install", f"PREFIX={prefix}",
             f"WASMKEEP_TARGET={target}", f"ADAPTER={adapter}"],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            sys.exit(f"packaged-readmes: make -C sdk-c install into a temporary prefix failed:\n{done.stderr}")
        files = {p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if not p.is_dir()}
    return files | {"bin/wasmkeep-shim", "README.md"}


def bad_links(text, readme_at, shipped):
    """The links in `text` (a README at `readme_at` in its package) to
    anything but the web, the page itself, or a file or folder in `shipped`."""
    folders = {posixpath.dirname(f) for f in shipped}
    folders |= {posixpath.dirname(d) for d in list(folders)}
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if target.startswith(("https://", "http://", "#", "mailto:")):
                continue
            path = posixpath.normpath(posixpath.join(posixpath.dirname(readme_at), target.split("#", 1)[0]))
            if path in shipped or path.rstrip("/") in folders:
                continue
            out.append((i, target))
    return out


def self_test():
    """The check finds a link out of the package and passes one into it."""
    text = "[a](src/lib.rs) [b](../docs/x.md) [c](https://x.org) [d](#here) [e](src) [f](examples/y)\n"
    found = bad_links(text, "README.md", {"README.md", "src/lib.rs"})
    assert found == [(1, "../docs/x.md"), (1, "examples/y")], found


def main():
    self_test()
    failures = []
    checked = []
    for crate in published_crates(ROOT):
        folder, shipped = crate_files(ROOT, crate)
        if "README.md" not in shipped:
            continue
        rel = (folder / "README.md").relative_to(ROOT).as_posix()
        for line, target in bad_links((folder / "README.md").read_text(), "README.md", shipped):
            failures.append(f"{rel}:{line} links {target}, which the crate {crate} does not ship "
                            f"(cargo package --list -p {crate}): link the web, or name it in words")
        checked.append(rel)
    archive = c_archive_files(ROOT)
    text = (ROOT / "sdk-c/ARCHIVE_README.md").read_text()
    for line, target in bad_links(text, "README.md", archive):
        failures.append(f"sdk-c/ARCHIVE_README.md:{line} links {target}, which the C archive does not hold")
    checked.append("sdk-c/ARCHIVE_README.md")
    for rel in SDK_READMES:
        if DASHBOARD not in (ROOT / rel).read_text():
            failures.append(f"{rel} does not name the dashboard ({DASHBOARD} on the serving address, "
                            "e.g. http://127.0.0.1:8787/_shim/ui)")
    for f in failures:
        print(f"packaged-readmes: {f}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"packaged-readmes: {', '.join(checked)} link only what they ship; "
          f"every SDK's packaged README names {DASHBOARD}")


if __name__ == "__main__":
    main()
