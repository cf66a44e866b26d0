"""The shape suite in the report: every kernel against each suite shape's own limit.

A timing row carries `roof_tflops`, what the measured roofline allows at its shape and
precision (bench/ceilings.py: min(cuBLAS's TFLOP/s at 4096^3, copy bandwidth x FLOPs per
compulsory byte)), and `pct_roof`, the row's TFLOP/s as a percentage of it. Over the rows of
the suite's shapes (bench/families/matmul/suite.py) this module gives, per precision:

    per kernel       the geometric mean of its % of the limit and of its speed x cuBLAS's
                     over the shapes it ran, and its worst shape
    best CUDA,       at each shape the fastest kernel of that language, the suite's answer
    best Triton      to "how close can each language get here"
    vs the other     each language's best at each shape against max(cuBLAS, the other
                     language's best): the issue of competence, its worst shape named

and a figure: % of the limit per shape for cuBLAS, the best CUDA and the best Triton, the
shapes ordered by arithmetic intensity (memory-bound on the left), one panel per precision.
Nothing here times anything: it reads time.json's rows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench.families.matmul import suite
from bench.results import num
from bench.text import f, md_table
from bindings import precision as prec

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# A precision counts as a run of the suite when its rows were timed with --suite (a part of
# the suite cut short by a time limit too: the report says how many shapes it holds), or
# when at least MIN_SHAPES of its shapes were: a sweep of squares (the default time shapes
# hold three suite shapes) is not one.
MIN_SHAPES = len(suite.SUITE) // 2
MIN_SUITE_SHAPES = 2
BEST = {"cuda": "best CUDA", "triton": "best Triton"}


def _geomean(values: list[float]) -> float:
    good = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in good) / len(good)) if good else math.nan


@dataclass
class Line:
    """One kernel (or a language's best) over the suite at one precision."""
    name: str
    pct_roof: dict[str, float] = field(default_factory=dict)      # shape -> % of the limit
    x_cublas: dict[str, float] = field(default_factory=dict)      # shape -> speed / cuBLAS's
    picked: dict[str, str] = field(default_factory=dict)          # shape -> kernel (best)

    def geomean_roof(self) -> float:
        return _geomean(list(self.pct_roof.values()))

    def geomean_cublas(self) -> float:
        return _geomean(list(self.x_cublas.values()))

    def worst(self) -> str | None:
        """The shape of its lowest % of the limit."""
        return min(self.pct_roof, key=self.pct_roof.get) if self.pct_roof else None


def suite_rows(rows) -> list[dict]:
    """The ok matmul timing rows at a suite shape, with a limit."""
    shapes = suite.by_shape()
    return [r for r in rows if r.get("op", "matmul") == "matmul" and r.get("status") == "ok"
            and r["shape"] in shapes and num(r.get("pct_roof")) > 0]


def ordered_shapes(shapes, precision: str) -> list[str]:
    """Suite shapes by arithmetic intensity at this precision, then by text."""
    eb = prec.element_bytes(precision)
    return sorted(shapes, key=lambda s: (suite.intensity(suite.MatmulShape.parse(s), eb), s))


def lines(rows, precision: str) -> tuple[list[str], dict[str, Line]]:
    """(the suite shapes timed at this precision in intensity order, name -> Line): every
    kernel's line, then "best CUDA" and "best Triton" (the fastest of each language at each
    shape, references left out). ([], {}) where fewer than MIN_SHAPES were timed."""
    mine = [r for r in suite_rows(rows) if r["precision"] == precision]
    shapes = ordered_shapes(dict.fromkeys(r["shape"] for r in mine), precision)
    timed_as_suite = any(str(r.get("suite", "")).startswith(suite.NAME) for r in mine)
    if len(shapes) < (MIN_SUITE_SHAPES if timed_as_suite else MIN_SHAPES):
        return [], {}
    cublas = {r["shape"]: num(r["tflops"]) for r in mine if r.get("is_reference")}
    out: dict[str, Line] = {}
    for r in mine:
        line = out.setdefault(r["kernel"], Line(r["kernel"]))
        line.pct_roof[r["shape"]] = num(r["pct_roof"])
        if cublas.get(r["shape"]):
            line.x_cublas[r["shape"]] = num(r["tflops"]) / cublas[r["shape"]]
    for backend, label in BEST.items():
        best = Line(label)
        for s in shapes:
            cands = [r for r in mine if r["shape"] == s and r.get("backend") == backend
                     and not r.get("is_reference")]
            if not cands:
                continue
            top = max(cands, key=lambda r: num(r["tflops"]))
            best.pct_roof[s] = num(top["pct_roof"])
            best.picked[s] = top["kernel"]
            if cublas.get(s):
                best.x_cublas[s] = num(top["tflops"]) / cublas[s]
        if best.pct_roof:
            out[label] = best
    return shapes, out


def against_the_field(ls: dict[str, Line], label: str, cublas: str | None) -> dict[str, float]:
    """shape -> a language's best speed / max(cuBLAS's, the other language's best) (ratios
    of % of one limit are ratios of speed)."""
    mine = ls.get(label)
    if mine is None:
        return {}
    rivals = [ls[n] for n in (cublas, *BEST.values()) if n in ls and n != label]
    out = {}
    for s, pct in mine.pct_roof.items():
        best_rival = max((r.pct_roof[s] for r in rivals if s in r.pct_roof), default=None)
        if best_rival:
            out[s] = pct / best_rival
    return out


def _reference_name(srows, precision) -> str | None:
    """The reference kernel among suite_rows() at this precision (cuBLAS)."""
    return next((r["kernel"] for r in srows
                 if r["precision"] == precision and r.get("is_reference")), None)


def _cell(line: Line, shape: str) -> str:
    pct = line.pct_roof.get(shape)
    return "-" if pct is None else f"{f(pct, 0)}%"


def section_suite(time_payload: dict) -> str:
    """## Shape suite: per precision, every kernel's geomean and worst shape, then the
    shapes one per row with their limit and the three lines of the figure."""
    rows = time_payload["rows"]
    srows = suite_rows(rows)
    if not srows:
        return ""
    compute = (time_payload.get("meta", {}).get("ceilings") or {}).get("cublas_tflops") or {}
    parts = ["## Shape suite",
             f"{len(suite.SUITE)} shapes (`bench time --suite {suite.NAME}`; "
             "bench/families/matmul/suite.py): KernelBench level 1, transformer projections "
             "at real token counts, unaligned K or N, skinny, few output tiles, squares. Each "
             "shape's limit is the larger of its FLOPs at the measured ceiling of its "
             "precision (cuBLAS at 4096³) and its compulsory bytes at the measured copy "
             "bandwidth; every number below is a percentage of that limit, or a speed over "
             "cuBLAS's at the same shape and precision. Best CUDA and best Triton take the "
             "fastest kernel of their language at each shape."]
    for p in PRECISIONS:
        shapes, ls = lines(rows, p)
        if not shapes:
            continue
        cublas = _reference_name(srows, p)
        at = {r["shape"]: r for r in srows if r["precision"] == p}    # the limit is per shape
        table = []
        for name, line in sorted(ls.items(), key=lambda kv: (kv[0] not in (cublas, *BEST.values()),
                                                             kv[0])):
            w = line.worst()
            worst = (f"{w} ({f(line.pct_roof[w], 0)}%, {f(line.x_cublas.get(w), 2)}x)"
                     if w else "-")
            field = ""
            if name in BEST.values():
                vs = against_the_field(ls, name, cublas)
                if vs:
                    s = min(vs, key=vs.get)
                    field = f"{f(vs[s], 2)} at {s}"
            table.append([name, f"{len(line.pct_roof)}/{len(shapes)}",
                          f"{f(line.geomean_roof(), 1)}%", f"{f(line.geomean_cublas(), 2)}x",
                          worst, field])
        parts.append(f"### {p}\n\n" + md_table(
            ["kernel", "shapes", "geomean % of limit", "geomean x cuBLAS",
             "worst shape (% of limit, x cuBLAS)",
             "worst vs max(cuBLAS, other language)"], table))
        names = suite.by_shape()
        eb = prec.element_bytes(p)
        per_shape = []
        for s in shapes:
            r = at[s]
            shape = suite.MatmulShape.parse(s)
            roof = num(r["roof_tflops"])
            limit_ms = num(r["flops"]) / (roof * 1e12) * 1e3
            bound = "compute" if roof >= num(compute.get(p)) * (1 - 1e-9) else "memory"
            cells = [_cell(ls[n], s) if n in ls else "-" for n in (cublas, *BEST.values())]
            picked = [ls[n].picked.get(s, "") if n in ls else "" for n in BEST.values()]
            per_shape.append([s, names[s][0], names[s][1], f(suite.intensity(shape, eb), 0),
                              f"{f(limit_ms, 3)} ms ({bound})", cells[0],
                              f"{cells[1]} {picked[0]}".strip(), f"{cells[2]} {picked[1]}".strip()])
        parts.append(md_table(["shape", "name", "category", "FLOP/B", "limit",
                               "cuBLAS", "best CUDA", "best Triton"], per_shape))
    return "\n\n".join(parts) if len(parts) > 2 else ""    # no precision ran the suite


def summary_lines(time_payload: dict) -> list[str]:
    """One line per precision: each language's best, geomean x cuBLAS and worst shape."""
    out = []
    rows = time_payload["rows"]
    for p in PRECISIONS:
        shapes, ls = lines(rows, p)
        if not shapes:
            continue
        parts = []
        for label in BEST.values():
            line = ls.get(label)
            if line is None:
                continue
            w = line.worst()
            parts.append(f"{label} {f(line.geomean_cublas(), 2)}x cuBLAS (geomean), worst "
                         f"{w} at {f(line.pct_roof[w], 0)}% of its limit")
        if parts:
            out.append(f"- Shape suite, {p} ({len(shapes)} shapes): " + "; ".join(parts) + ".")
    return out


def figure(time_payload: dict, out_dir):
    """% of the limit per suite shape (x: by arithmetic intensity) for cuBLAS, the best CUDA
    and the best Triton, one panel per precision; [] without suite rows."""
    from bench.plot_style import env_line, pyplot, save

    rows = time_payload["rows"]
    panels = [(p, *lines(rows, p)) for p in PRECISIONS]
    panels = [(p, s, ls) for p, s, ls in panels if s]
    if not panels:
        return []
    plt = pyplot()
    width = max(10.0, 0.28 * max(len(s) for _p, s, _ls in panels) + 5)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 3.2 * len(panels) + 1.2),
                             squeeze=False)
    names = suite.by_shape()
    styles = {"reference": dict(color="black", marker="o", linestyle=":"),
              "best CUDA": dict(color="tab:green", marker="s", linestyle="-"),
              "best Triton": dict(color="tab:blue", marker="D", linestyle="--")}
    srows = suite_rows(rows)
    for ax, (p, shapes, ls) in zip(axes[:, 0], panels):
        cublas = _reference_name(srows, p)
        xs = list(range(len(shapes)))
        for label, key in ((cublas, "reference"), ("best CUDA", "best CUDA"),
                           ("best Triton", "best Triton")):
            if label not in ls:
                continue
            ys = [ls[label].pct_roof.get(s, math.nan) for s in shapes]
            ax.plot(xs, ys, label=f"{label} (geomean {f(ls[label].geomean_roof(), 0)}%)",
                    markersize=4, linewidth=1, **styles[key])
        ax.axhline(100, color="grey", linewidth=0.8)
        top = max((v for line in ls.values() for v in line.pct_roof.values()), default=100)
        ax.set_ylim(0, max(110, 1.05 * top))      # past 100%: faster than cuBLAS at 4096^3
        ax.set_ylabel(f"{p}: % of the limit")
        ax.set_xticks(xs)
        ax.set_xticklabels([names[s][0].split(" / ")[0] for s in shapes], rotation=90,
                           fontsize=7)
        ax.set_xlim(-0.5, len(shapes) - 0.5)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.grid(axis="y", alpha=0.3)
    axes[-1, 0].set_xlabel("suite shapes, by FLOPs per compulsory byte (memory-bound on the left)")
    fig.suptitle("Matmul shape suite: each shape against its own limit (max of FLOPs at the "
                 "measured ceiling, compulsory bytes at copy bandwidth)\n" + env_line(time_payload),
                 fontsize=9)
    fig.tight_layout()
    return save(fig, out_dir, "suite")


CAPTION = ("The shape suite: every shape's time as a percentage of its own limit, the larger "
           "of its FLOPs at the measured ceiling of its precision and its compulsory bytes at "
           "the measured copy bandwidth, for cuBLAS, the fastest CUDA kernel and the fastest "
           "Triton kernel at that shape; shapes ordered by arithmetic intensity, one panel per "
           "precision.")
