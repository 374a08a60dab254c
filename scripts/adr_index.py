#!/usr/bin/env python3
"""Fails when docs/adr/README.md, the index of the ADRs, and the files in
docs/adr/ disagree.

Every `docs/adr/NNN-*.md` must be one row of the index's table, exactly once:
its first cell `[NNN](NNN-….md)` links the file, its title is the file's
heading (without `ADR NNN:` or `NNN.`), its kind is `decision` or
`tuning note`, and its status says what became of it (`Accepted…`,
`Superseded…`). A row whose file does not exist, and any link in a row to an
ADR that does not exist, fail too, as does an ADR file without a `Status:`
line near its top. The checker is first run on a small fixture with a
missing and an extra row, so a reader that sees no rows cannot pass by
accident. Usage: adr_index.py [repository root]."""
import re
import sys
import tempfile
from pathlib import Path

INDEX = "docs/adr/README.md"
KINDS = ("decision", "tuning note")
STATUSES = ("Accepted", "Superseded", "Proposed", "Rejected", "Withdrawn")
FILE = re.compile(r"^(\d{3})-[a-z0-9][a-z0-9-]*\.md$")
FIRST_CELL = re.compile(r"^\[(\d{3})\]\(([^)\s]+)\)$")
ADR_LINK = re.compile(r"\]\(((\d{3})-[^)\s]*\.md)\)")


def heading_title(text: str) -> str:
    """The ADR's title: its first heading without `ADR NNN:` or `NNN.`."""
    for line in text.splitlines():
        if line.startswith("# "):
            return re.sub(r"^(ADR )?\d{3}[.:]\s*", "", line[2:].strip())
    return ""


def rows_of(index: str) -> list:
    """(line number, cells) of each row of the table whose header starts `| ADR |`."""
    rows, in_table = [], False
    for n, line in enumerate(index.splitlines(), 1):
        if line.startswith("| ADR |"):
            in_table = True
            continue
        if in_table and re.match(r"^\|\s*-+", line):
            continue
        if in_table and line.startswith("|"):
            rows.append((n, [c.strip() for c in line.strip().strip("|").split(" | ")]))
        elif in_table:
            in_table = False
    return rows


def check(root: Path) -> tuple:
    """The failures, and the counts the success line gives."""
    adr_dir = root / "docs/adr"
    failures = []
    files = {}
    for f in sorted(adr_dir.glob("*.md")):
        if f.name == "README.md":
            continue
        m = FILE.match(f.name)
        if not m:
            failures.append(f"docs/adr/{f.name}: an ADR's file is named NNN-title-in-words.md; rename it")
            continue
        if m.group(1) in files:
            failures.append(f"docs/adr/{f.name}: number {m.group(1)} is also {files[m.group(1)].name}; give it the next free number")
            continue
        files[m.group(1)] = f
        head = f.read_text().splitlines()[:12]
        if not any("Status:" in line for line in head):
            failures.append(
                f"docs/adr/{f.name} has no 'Status:' line near its top: add one (e.g. 'Status: accepted (YYYY-MM-DD).')"
            )
    index_path = root / INDEX
    if not index_path.exists():
        failures.append(f"{INDEX} is missing: it must list every ADR in docs/adr/ (number, title, kind, status, one line)")
        return failures, {}
    rows = rows_of(index_path.read_text())
    if not rows:
        failures.append(f"{INDEX} has no table whose header starts '| ADR |': it must list every ADR")
    listed = {}
    kinds = {k: 0 for k in KINDS}
    superseded = 0
    previous = ""
    for n, cells in rows:
        where = f"{INDEX}:{n}"
        if len(cells) != 5:
            failures.append(f"{where}: a row has 5 cells (ADR | Title | Kind | Status | In one line), this one {len(cells)}")
            continue
        first, title, kind, status, _ = cells
        m = FIRST_CELL.match(first)
        if not m:
            failures.append(f"{where}: the first cell must be [NNN](NNN-title.md), not {first!r}")
            continue
        number, target = m.groups()
        if number in listed:
            failures.append(f"{where}: ADR {number} is listed again (first on line {listed[number]}); remove one row")
            continue
        listed[number] = n
        if number < previous:
            failures.append(f"{where}: ADR {number} comes after {previous}; keep the rows in order of number")
        previous = max(previous, number)
        f = files.get(number)
        if f is None or target != f.name:
            if not (adr_dir / target).exists():
                what = "which does not exist in docs/adr/" + (f" (ADR {number} is {f.name})" if f else "")
                failures.append(f"{where}: lists {target}, {what}: fix the link or remove the row")
            else:
                failures.append(f"{where}: [{number}] links {target}, whose number is not {number}")
            continue
        want = heading_title(f.read_text())
        if title != want:
            failures.append(f"{where}: ADR {number}'s title is {title!r} here and {want!r} in {f.name}: copy the heading")
        if kind not in KINDS:
            failures.append(f"{where}: ADR {number}'s kind is {kind!r}: write 'decision' or 'tuning note'")
        else:
            kinds[kind] += 1
        if not status.startswith(STATUSES):
            failures.append(f"{where}: ADR {number}'s status {status!r} starts with none of {', '.join(STATUSES)}")
        if status.startswith("Superseded"):
            superseded += 1
        for link, linked in ADR_LINK.findall(" | ".join(cells[1:])):
            if not (adr_dir / link).exists():
                failures.append(f"{where}: ADR {number}'s row links {link}, which does not exist in docs/adr/")
    for number, f in sorted(files.items()):
        if number not in listed:
            failures.append(
                f"docs/adr/{f.name} is not in {INDEX}: add its row "
                f"(| [{number}]({f.name}) | {heading_title(f.read_text())} | decision or tuning note | Accepted | one line |)"
            )
    return failures, {"adrs": len(files), "superseded": superseded, **kinds}


def self_test() -> list:
    """The checker on a fixture with one ADR missing from the index and one row too many."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs/adr").mkdir(parents=True)
        (root / "docs/adr/001-one.md").write_text("# ADR 001: One\n\nStatus: accepted.\n")
        (root / "docs/adr/002-two.md").write_text("# 002. Two\n\nStatus: accepted.\n")
        (root / INDEX).write_text(
            "| ADR | Title | Kind | Status | In one line |\n| --- | --- | --- | --- | --- |\n"
            "| [001](001-one.md) | One | decision | Accepted | one |\n"
            "| [003](003-three.md) | Three | decision | Accepted | three |\n"
        )
        failures, _ = check(root)
    missing = any("002-two.md is not in" in f for f in failures)
    extra = any("lists 003-three.md" in f for f in failures)
    if missing and extra and len(failures) == 2:
        return []
    return ["the checker did not report exactly the fixture's missing 002-two.md and extra 003-three.md:", *failures]


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    broken = self_test()
    if broken:
        for line in broken:
            print(f"adr-index: {line}", file=sys.stderr)
        return 1
    failures, counts = check(root)
    for f in failures:
        print(f"adr-index: {f}", file=sys.stderr)
    if failures:
        print(f"adr-index: {INDEX} must list every docs/adr/NNN-*.md once, and only those; fix the index (or the file)", file=sys.stderr)
        return 1
    print(
        f"adr-index: {counts['adrs']} ADRs, each listed once in {INDEX}: "
        f"{counts['decision']} decisions, {counts['tuning note']} tuning notes, {counts['superseded']} superseded in part"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
