#!/usr/bin/env python3
"""Fails when a host crate's modules refer to each other in a cycle (issue:
the host as layers). Reads each module's source and takes every module it
names: `use` declarations, grouped ones included (`use crate::{a, b::C}`),
and paths written in place (`crate::node::Host` in a signature, `super::x` in
a submodule). It needs no build, so a fresh machine checks it at once
(cargo-modules, which drew the `use` graph before, took 13 minutes to
install). Usage: module_cycles.py <crate src dir>..."""
import re
import sys
from pathlib import Path


def module_name(src: Path, f: Path) -> str:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def without_comments_and_strings(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)


def group_heads(body: str) -> list:
    """The first segment of each item of a `{...}` group: `a, b::C, d::{e}` -> a, b, d."""
    heads, depth, item = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if depth == 0 and ch == ",":
            heads.append(item)
            item = ""
        elif depth == 0:
            item += ch
    heads.append(item)
    out = []
    for h in heads:
        m = re.match(r"\s*(\w+)", h)
        if m and m.group(1) not in ("self", "crate", "super"):
            out.append(m.group(1))
    return out


def braced(text: str, start: int) -> str:
    """The text inside the braces that open at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    return text[start + 1 :]


def names_after(text: str, prefix: str) -> set:
    """Every module named right after `prefix` (`crate::`, `super::`): single or grouped."""
    names = set(re.findall(re.escape(prefix) + r"(\w+)", text))
    for m in re.finditer(re.escape(prefix) + r"\{", text):
        names |= set(group_heads(braced(text, m.end() - 1)))
    return names


def graph_of(src: Path) -> dict:
    mods = {}
    for f in sorted(src.rglob("*.rs")):
        name = module_name(src, f)
        if name in ("lib", "main") or name.startswith("bin"):
            continue
        text = without_comments_and_strings(f.read_text())
        refs = names_after(text, "crate::")
        parent = name.rsplit("::", 1)[0] if "::" in name else ""
        if parent:
            refs |= {f"{parent}::{r}" for r in names_after(text, "super::")}
            refs |= {f"{parent}::{r}" for r in names_after(text, f"crate::{parent}::")}
        mods[name] = refs
    return {m: {r for r in refs if r in mods and r != m} for m, refs in mods.items()}


def cycles(graph: dict) -> list:
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    failed = False
    for arg in sys.argv[1:]:
        src = Path(arg)
        graph = graph_of(src)
        found = cycles(graph)
        edges = sum(len(v) for v in graph.values())
        if found:
            failed = True
            for c in found:
                print(f"module-cycles: {src}: modules that refer to each other: {' <-> '.join(c)}", file=sys.stderr)
        else:
            print(f"module-cycles: {src}: no cycle among its {len(graph)} modules ({edges} references)")
    sys.exit(1 if failed else 0)
