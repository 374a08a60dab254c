#!/usr/bin/env python3
"""Fails when a host crate's modules refer to each other in a cycle through
paths written in place (`crate::node::Host` in a signature, `super::x` in a
submodule), which cargo-modules' graph of `use` declarations does not show.
Usage: module_paths_cycles.py <crate src dir>..."""
import re
import sys
from pathlib import Path


def module_name(src: Path, f: Path) -> str:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def graph_of(src: Path) -> dict:
    mods = {}
    for f in sorted(src.rglob("*.rs")):
        name = module_name(src, f)
        if name in ("lib", "main") or name.startswith("bin"):
            continue
        text = re.sub(r"//[^\n]*", "", f.read_text())
        refs = set(re.findall(r"crate::(\w+)", text))
        parent = name.rsplit("::", 1)[0] if "::" in name else ""
        if parent:
            refs |= {f"{parent}::{r}" for r in re.findall(r"super::(\w+)", text)}
            refs |= {f"{parent}::{r}" for r in re.findall(r"crate::" + re.escape(parent) + r"::(\w+)", text)}
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


failed = False
for arg in sys.argv[1:]:
    src = Path(arg)
    found = cycles(graph_of(src))
    if found:
        failed = True
        for c in found:
            print(f"module-cycles: {src}: modules referring to each other by path: {' <-> '.join(c)}", file=sys.stderr)
    else:
        print(f"module-cycles: {src}: no cycle through paths written in place")
sys.exit(1 if failed else 0)
