#!/usr/bin/env python3
"""Fails when docs/architecture.md draws an arrow the code does not have.

The drawing's module arrows are read from the picture itself: `a ─► b` on a
line, `│` … `▼` down a column from one module's name to another's, and
`├─► b` / `└─► b` branching off a column. Each must be a reference in the code
of the crate whose box holds it: a module (or one of its submodules) naming
the other (or one of its submodules) by `crate::` path, as
scripts/module_cycles.py reads them. The crate arrows, which the picture
draws between boxes, are listed under "Crate arrows, as checked" in the same
document, `a -> b` per line, and each must be a path dependency in `a`'s
Cargo.toml. Every module of those crates must be named in the document too,
and its map, "Every crate and folder", must list every top-level folder and
every member of the workspace. Usage: architecture_arrows.py [repository root]."""
import re
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from module_cycles import graph_of  # noqa: E402

# The box a module arrow is in: the crate named at the left margin of its rows.
BOX_CRATE = {"host/runtime": "host/runtime/src", "host/store": "host/store/src", "host/shim": "host/shim/src"}
NAME = re.compile(r"[a-z][a-z0-9_]*")


def drawing(doc: str) -> list:
    """The lines of the first ```text block."""
    block = doc.split("```text\n", 1)[1].split("\n```", 1)[0]
    return block.split("\n")


def names_at(line: str) -> list:
    """(start, end, name) of each module-like word on a line."""
    return [(m.start(), m.end(), m.group()) for m in NAME.finditer(line)]


def name_over(line: str, col: int):
    for start, end, name in names_at(line):
        if start <= col < end:
            return name
    return None


def at(lines: list, row: int, col: int) -> str:
    return lines[row][col] if 0 <= row < len(lines) and col < len(lines[row]) else " "


def drawn_arrows(lines: list) -> set:
    arrows = set()
    # Horizontal: `a ─► b`, and each link of a chain `a ─► b ─► c` (a
    # lookahead, so that matches overlap).
    for line in lines:
        for m in re.finditer(r"(?=(?:^|\s)([a-z][a-z0-9_]*) ─► ([a-z][a-z0-9_]*))", line):
            arrows.add((m.group(1), m.group(2)))
    # Down a column: a name, `│` below it, ..., `▼`, a name below that; or
    # `├─► name` / `└─► name` off the column.
    for row, line in enumerate(lines):
        for start, end, source in names_at(line):
            for col in range(start, end):
                if at(lines, row + 1, col) != "│":
                    continue
                r = row + 1
                while at(lines, r, col) in "│├└":
                    ch = at(lines, r, col)
                    if ch in "├└":
                        m = re.match(r"[├└]─► ([a-z][a-z0-9_]*)", lines[r][col:])
                        if m:
                            arrows.add((source, m.group(1)))
                        if ch == "└":
                            break
                    r += 1
                if at(lines, r, col) == "▼":
                    target = name_over(lines[r + 1], col) if r + 1 < len(lines) else None
                    if target:
                        arrows.add((source, target))
    return arrows


def refers(graph: dict, a: str, b: str) -> bool:
    """Whether module `a` (or a submodule of it) names `b` (or a submodule of it)."""
    def inside(m: str, top: str) -> bool:
        return m == top or m.startswith(top + "::")

    return any(inside(m, a) and any(inside(r, b) for r in refs) for m, refs in graph.items())


def crate_arrows(doc: str) -> list:
    section = doc.split("Crate arrows, as checked", 1)
    if len(section) < 2:
        return []
    block = section[1].split("```text\n", 1)[1].split("\n```", 1)[0]
    return [tuple(p.strip() for p in line.split("->")) for line in block.splitlines() if "->" in line]


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    doc = (root / "docs/architecture.md").read_text()
    lines = drawing(doc)
    graphs = {crate: graph_of(root / src) for crate, src in BOX_CRATE.items()}
    failures, checked = [], 0
    for a, b in sorted(drawn_arrows(lines)):
        crates = [c for c, g in graphs.items() if any(m == a or m.startswith(a + "::") for m in g)]
        if not crates:
            failures.append(f"the drawing's arrow {a} ─► {b}: no module {a} in {', '.join(BOX_CRATE.values())}")
            continue
        checked += 1
        if not any(refers(graphs[c], a, b) for c in crates):
            failures.append(f"the drawing's arrow {a} ─► {b}: {a} (in {crates[0]}) never names {b}")
    for a, b in crate_arrows(doc):
        checked += 1
        deps = tomllib.loads((root / a / "Cargo.toml").read_text()).get("dependencies", {})
        paths = {(root / a / v["path"]).resolve() for v in deps.values() if isinstance(v, dict) and "path" in v}
        names = set(deps)
        target = tomllib.loads((root / b / "Cargo.toml").read_text())["package"]["name"]
        workspace = tomllib.loads((root / "Cargo.toml").read_text())["workspace"].get("dependencies", {})
        via_workspace = any(
            n == target and isinstance(v, dict) and v.get("workspace") for n, v in deps.items()
        ) and target in workspace
        if (root / b).resolve() not in paths and not via_workspace and target not in names:
            failures.append(f"the crate arrow {a} -> {b}: {a}/Cargo.toml does not depend on {target}")
    # Every module of each crate is named in the document (its table, or the
    # crate's paragraph), so none is left out of the map.
    for src in BOX_CRATE.values():
        for f in sorted((root / src).glob("*")):
            name = f.stem if f.suffix == ".rs" else f.name
            if name in ("lib", "main") or not (f.suffix == ".rs" or f.is_dir()):
                continue
            checked += 1
            if f"`{name}`" not in doc:
                failures.append(f"{src}/{f.name}: the module `{name}` is not named in docs/architecture.md")
    # The document's map names every top-level folder and every member of the
    # workspace (a fixture without the map skips this).
    manifest = root / "Cargo.toml"
    members = tomllib.loads(manifest.read_text()).get("workspace", {}).get("members", []) if manifest.exists() else []
    if members or "## Every crate and folder" in doc:
        section = doc.split("## Every crate and folder", 1)
        if len(section) < 2 or "```" not in section[1]:
            failures.append('docs/architecture.md has no map under "## Every crate and folder": list every folder and crate there')
        else:
            block = section[1].split("```", 2)[1]
            listed = {line.split()[0].rstrip("/") for line in block.splitlines()[1:] if line.strip()}
            folders = [
                str(d.relative_to(root)) for d in sorted(root.iterdir())
                if d.is_dir() and not d.name.startswith(".") and d.name != "target"
            ]
            # A folder is listed by itself or by what is under it (host/ by
            # its crates); each member of the workspace by itself.
            for name in folders:
                checked += 1
                if name not in listed and not any(entry.startswith(name + "/") for entry in listed):
                    failures.append(f"docs/architecture.md's map (Every crate and folder) does not list the folder {name}/: add a line for it")
            for name in (m.rstrip("/") for m in members):
                checked += 1
                if name not in listed:
                    failures.append(f"docs/architecture.md's map (Every crate and folder) does not list the crate {name}/ (a workspace member): add a line for it")
    for f in failures:
        print(f"architecture-arrows: {f}", file=sys.stderr)
    if failures:
        print("architecture-arrows: fix the drawing in docs/architecture.md (or the code)", file=sys.stderr)
        return 1
    print(f"architecture-arrows: {checked} checks: every arrow docs/architecture.md draws exists in the code, and it names every module")
    return 0


if __name__ == "__main__":
    sys.exit(main())
