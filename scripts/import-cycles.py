#!/usr/bin/env python3
"""Import circles between the top-level modules of each crate.

Issue 17 asks for no import circle in crates/core or crates/engine: a
module (a file `x.rs` or a folder `x/`) that names `crate::y` depends on
`y`, and modules that reach each other through such names form a strongly
connected component. This prints every component of more than one module,
per crate, and fails (exit 1) when a crate's largest component is larger
than its allowance (`--max core=34`): a ratchet that the work on the
circles lowers to zero, and that stops a new circle from being added
meanwhile. Unit tests (`#[cfg(test)] mod tests` at the end of a file,
`tests.rs`, `tests/`) are not counted: they may use anything.

usage: scripts/import-cycles.py [--max CRATE=N ...] [CRATE ...]
       (default: every crate under crates/, allowance 0 unless given)
"""
import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")


def test_only(src):
    """Modules the crate root declares under `#[cfg(test)]`."""
    root = next((os.path.join(src, f) for f in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, f))), None)
    if root is None:
        return set()
    with open(root, encoding="utf-8") as fh:
        return set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+)", fh.read()))


def top_modules(src):
    """Top-level module name -> its source files."""
    mods = {}
    skip = test_only(src)
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if entry in ("lib.rs", "main.rs") or entry.removesuffix(".rs") in skip:
            continue
        if entry.endswith(".rs"):
            mods.setdefault(entry[:-3], []).append(path)
        elif os.path.isdir(path):
            for dirpath, _, files in os.walk(path):
                for f in files:
                    if f.endswith(".rs"):
                        mods.setdefault(entry, []).append(os.path.join(dirpath, f))
    return mods


def is_test_file(path):
    base = os.path.basename(path)
    return base == "tests.rs" or base.endswith("_tests.rs") or os.sep + "tests" + os.sep in path


def without_tests(text):
    """The text before a trailing unit-test module, comments removed (a
    doc link such as [`crate::keys`] is not an import)."""
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
    text = text[: cut.start()] if cut else text
    return re.sub(r"//[^\n]*", "", text)


def names_used(text, top_level_file):
    """The crate-level module names a file refers to."""
    used = set(re.findall(r"\bcrate::([a-z_0-9]+)", text))
    for group in re.findall(r"\bcrate::\{([^}]*)\}", text, re.S):
        used.update(re.findall(r"(?:^|,)\s*([a-z_0-9]+)", group))
    if top_level_file:
        # In `x.rs`, `super::y` is the crate root's `y`.
        used.update(re.findall(r"\bsuper::([a-z_0-9]+)", text))
    return used


def graph(src):
    mods = top_modules(src)
    edges = {m: set() for m in mods}
    for name, files in mods.items():
        for f in files:
            if is_test_file(f):
                continue
            with open(f, encoding="utf-8") as fh:
                text = without_tests(fh.read())
            top = os.path.dirname(f) == src
            edges[name].update(u for u in names_used(text, top) if u in mods and u != name)
    return edges


def components(edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", action="append", default=[], help="CRATE=N: largest circle allowed")
    ap.add_argument("crates", nargs="*")
    args = ap.parse_args()
    allowance = {}
    for m in args.max:
        crate, n = m.split("=")
        allowance[crate] = int(n)
    crates = args.crates or sorted(
        c for c in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, c, "src"))
    )
    failed = False
    for crate in crates:
        comps = [c for c in components(graph(os.path.join(ROOT, crate, "src"))) if len(c) > 1]
        largest = max((len(c) for c in comps), default=0)
        allowed = allowance.get(crate, 0)
        verdict = "ok" if largest <= allowed else f"OVER its allowance of {allowed}"
        print(f"{crate}: largest circle {largest} modules ({verdict})")
        for c in comps:
            print(f"  {len(c)}: {' '.join(c)}")
        failed |= largest > allowed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
