"""Writes tests/INDEX.md: for every kernel of the registry, the tests whose ids name it, by
tier folder; then the tests of no one kernel, by topic (their file).

    python -m tests.support.index          # rewrites tests/INDEX.md

The test ids come from `pytest --collect-only -q`, run as on a machine without a GPU (no GPU
needed, and the same ids on every machine). Most tests are parametrized over the registry,
so a kernel's name appears in the ids only; a test is listed under a kernel when its id
names it (see `Names`). tests/cpu/test_index.py fails when INDEX.md is stale.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "tests" / "INDEX.md"
TIERS = ("cpu", "interpreter", "gpu")
TIER_NOTES = {"cpu": "every machine", "interpreter": "Triton through TRITON_INTERPRET=1, no GPU",
              "gpu": "a CUDA GPU"}
WORD = re.compile(r"[A-Za-z0-9_.]+")
SHOWN = 4                 # parametrization values listed before "…"


def collect() -> list[str]:
    """The node ids of every test, as collected on a machine without a GPU. Collecting
    imports the kernels but runs none, so the interpreter stays off (numpy >= 2.4 would
    stop it, and the ids are the same)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="0",
               CVT_SKIP_INTERPRETER="1")
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "tests"],
                         capture_output=True, text=True, cwd=ROOT, env=env)
    ids = [line.strip() for line in out.stdout.splitlines() if "::" in line]
    if out.returncode != 0 or not ids:
        raise RuntimeError(f"pytest --collect-only failed (exit {out.returncode}):\n"
                           f"{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return ids


# --------------------------------------------------------------------------- ids -> kernels

def aliases(kernels) -> dict[str, set[str]]:
    """Words of a test id that name kernels, everywhere: the name (cuda_v3_smem_tiling), the
    source file (matmul_v3_smem_tiling.cu), a module name only one kernel has
    (matmul_autotuned), the name without its language where that is no op's name
    (softmax_row_sram: both twins)."""
    ops = {k.op for k in kernels}
    found: dict[str, set[str]] = defaultdict(set)
    stems: dict[str, set[str]] = defaultdict(set)
    for k in kernels:
        found[k.name].add(k.name)
        found[Path(k.source).name].add(k.name)
        stems[Path(k.source).stem].add(k.name)
        bare = k.name.partition("_")[2]
        if bare and bare not in ops:
            found[bare].add(k.name)
    for stem, names in stems.items():
        if len(names) == 1 and stem not in ops:
            found[stem] |= names
    return found


def file_aliases(path: str, kernels) -> tuple[dict[str, set[str]], set[str]]:
    """What a test file's name adds. test_<family>_<language>.py: a kernel's version names
    it (v3 in test_matmul_triton.py is triton_v3_smem_tiling). test_<family>_<version>.py,
    where one kernel has that version: every test of the file is one of that kernel
    (test_matmul_persistent.py)."""
    m = re.match(r"test_(matmul|memory)_(\w+)\.py$", Path(path).name)
    if not m:
        return {}, set()
    family, rest = m.groups()
    mine = [k for k in kernels if (k.op == "matmul") == (family == "matmul")]
    versions = {k.version: k.name for k in mine if k.backend == rest}
    whole = {k.name for k in mine if k.version == rest}
    return {v: {name} for v, name in versions.items()}, (whole if len(whole) == 1 else set())


def params_of(node_id: str) -> str:
    m = re.search(r"\[(.*)\]$", node_id)
    return m.group(1) if m else ""


class Names:
    """Which kernels a test id names: the words of its parametrization ids (`aliases`, and
    its file's `file_aliases`), and its file's name."""

    def __init__(self, kernels):
        self.everywhere = aliases(kernels)
        self.kernels = kernels
        self.files: dict[str, tuple[dict[str, set[str]], set[str]]] = {}

    def _file(self, path: str):
        if path not in self.files:
            self.files[path] = file_aliases(path, self.kernels)
        return self.files[path]

    def of(self, node_id: str) -> set[str]:
        by_version, whole = self._file(node_id.split("::")[0])
        named = set(whole)
        for word in WORD.findall(params_of(node_id)):
            named |= self.everywhere.get(word, set()) | by_version.get(word, set())
        return named

    def words(self, name: str, path: str) -> set[str]:
        """The words that name a kernel in a file (left out of its condensed ids)."""
        by_version, _ = self._file(path)
        return {w for table in (self.everywhere, by_version) for w, names in table.items()
                if name in names}


# --------------------------------------------------------------------------- rendering

def condensed(params: list[str], drop: set[str]) -> str:
    """The parametrization ids of one test function, in one short line: the values of each
    position (split at "-"), the words naming the kernel left out; a position of more than
    SHOWN values says how many it has unless every test has its own."""
    rows = [[p for p in ids.split("-") if p not in drop] for ids in params]
    rows = [r for r in rows if r]
    if not rows:
        return ""
    if len({len(r) for r in rows}) != 1:
        return "various"
    shown = []
    for column in zip(*rows):
        values = list(dict.fromkeys(column))
        if len(values) <= SHOWN:
            shown.append("|".join(values))
        else:
            many = "" if len(values) == len(params) else f" ({len(values)})"
            shown.append("|".join(values[:SHOWN - 1]) + f"|…|{values[-1]}{many}")
    return " · ".join(shown)


def _function(node_id: str) -> str:
    """The test's name, with its class where it has one, without parameters."""
    return node_id.split("::", 1)[1].split("[")[0]


def _lines(node_ids: list[str], drop: set[str]) -> list[str]:
    """One line per test function of one file: its name, how many tests, its condensed ids."""
    by_function: dict[str, list[str]] = defaultdict(list)
    for n in node_ids:
        by_function[_function(n)].append(params_of(n))
    lines = []
    for function, params in by_function.items():
        text = condensed(params, drop) if any(params) else ""
        count = f" ×{len(params)}" if len(params) > 1 else ""
        lines.append(f"`{function}`{count}" + (f" [{text}]" if text else ""))
    return lines


def tier(node_id: str) -> str:
    return node_id.split("/")[1]


def _topic(path: str) -> str:
    """The first sentence of a test file's docstring, without the tier it may start with."""
    doc = " ".join((ast.get_docstring(ast.parse((ROOT / path).read_text())) or "").split())
    doc = re.sub(r"^(CPU|GPU) tier[^:]*:\s*", "", doc)
    first = re.split(r"(?<=\.)\s", doc, maxsplit=1)[0].rstrip(".")
    if len(first) > 110:                         # a long sentence: up to its first colon
        first = re.split(r"(?<=[:;])\s", first, maxsplit=1)[0].rstrip(":;")
    return first


def _anchor(name: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped."""
    return re.sub(r"[^a-z0-9_\- ]", "", name.lower()).replace(" ", "-")


def _by_file(node_ids: list[str]) -> dict[str, list[str]]:
    files: dict[str, list[str]] = defaultdict(list)
    for n in node_ids:
        files[n.split("::")[0]].append(n)
    return files


def render(node_ids: list[str], kernels) -> str:
    names = Names(kernels)
    by_kernel: dict[str, list[str]] = defaultdict(list)
    orphans = []
    for n in node_ids:
        named = names.of(n)
        for name in named:
            by_kernel[name].append(n)
        if not named:
            orphans.append(n)
    position = {n: i for i, n in enumerate(node_ids)}

    def by_tier(ids):
        return sorted(ids, key=lambda n: (TIERS.index(tier(n)), position[n]))

    out = ["# Tests by kernel", "",
           "Generated by `python -m tests.support.index` from the ids of `pytest --collect-only",
           "-q` (as on a machine without a GPU); do not edit by hand: tests/cpu/test_index.py",
           "fails when this file is stale. A test's tier is its folder: "
           + ", ".join(f"`tests/{t}/` ({TIER_NOTES[t]})" for t in TIERS) + ".",
           "",
           "A test is listed under a kernel when its id names it: the kernel's name, its source",
           "file (`matmul_v3_smem_tiling.cu`), its name without the language (`softmax_row_sram`:",
           "both twins), or its version (`v3`) in a file named after one language",
           "(`test_matmul_triton.py`); every test in a `test_matmul_persistent.py` is one of",
           "`triton_persistent`. The GPU tier's fuzz tests take every CUDA and Triton kernel on",
           "a GPU; collected without one, they list the kernels the interpreter runs.",
           "",
           "`×n`: n tests of one function. Brackets condense their parametrization ids: the",
           "values of each position, `|` between values, `·` between positions. Tests of no one",
           "kernel follow the kernels, by topic (their file).",
           "",
           "| kernel | op | backend | version | " + " | ".join(f"{t}/" for t in TIERS) + " |",
           "|---|---|---|---|" + "---:|" * len(TIERS)]
    for k in kernels:
        counts = [sum(1 for n in by_kernel[k.name] if tier(n) == t) for t in TIERS]
        out.append(f"| [{k.name}](#{_anchor(k.name)}) | {k.op} | {k.backend} | {k.version} | "
                   + " | ".join(str(c) if c else "" for c in counts) + " |")
    for k in kernels:
        out += ["", f"## {k.name}", "", f"{k.op}, {k.backend}, {k.version}: `{k.source}`", ""]
        files = _by_file(by_tier(by_kernel[k.name]))
        if not files:
            out.append("No test id names it.")
        for path, ids in files.items():
            out.append(f"- `{path.removeprefix('tests/')}` ({k.name})")   # a grep shows both
            out += [f"  - {line}" for line in _lines(ids, names.words(k.name, path))]
    out += ["", "## Tests of no one kernel"]
    files = _by_file(by_tier(orphans))
    for t in TIERS:
        out += ["", f"### tests/{t}/", ""]
        for path, ids in files.items():
            if tier(path) == t:
                out.append(f"- `{path.removeprefix('tests/')}`: {_topic(path)}")
                out += [f"  - {line}" for line in _lines(ids, set())]
    return "\n".join(out) + "\n"


def main() -> int:
    from bench import registry

    INDEX.write_text(render(collect(), registry.kernels()))
    print(f"wrote {INDEX.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
