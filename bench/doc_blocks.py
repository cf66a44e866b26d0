"""Numbers in the docs are generated from result sets, never typed: `python -m bench docs`.

A number of README.md or of docs/ that comes from a committed result set sits inside a
marked block naming the block and the set it reads:

    <!-- cvt:begin ffma-ladder set=results/h100 -->
    | version | CUDA kernel | TFLOP/s | ... |      (written by this module)
    <!-- cvt:end ffma-ladder -->

A block whose begin marker ends its line is filled with whole lines (a table, a paragraph);
one followed by text on the same line is filled inline (a few numbers inside a sentence or
a table cell). A block without `set=` reads no result set (the registry's kernel list);
other KEY=VALUE words of the marker are the renderer's arguments: the inline block
`ratio set=results/h100 kernel=cuda_v7_lean_fetch precision=fp32` writes v7's × cuBLAS at
4096³ in that set, `0.95` (a marker is one line; the block between two markers may span
several).

A number from a committed table of results/sweeps/ that is not a result set (a sweep's
printed table, a driver's or Nsight Compute's output, a CSV file) is written the same way
by the block `sweep-cell`, whose set= names the file: `sweep-cell
set=results/sweeps/h100/ffma_sweep.txt row=20 field=-4` writes row 20's × cuBLAS at 4096³,
`0.847`.

`python -m bench docs` fills every block from its set; `python -m bench docs --check`
writes nothing and exits 1 listing the blocks whose text differs from what their set
says (tests/cpu/test_doc_numbers.py runs the same check on every commit). Each renderer
below reads the result files (bench/results.py), as the report does, or the one committed
table its block names, and nothing else.
"""
from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path

from bench import report, results
from bench.results import num
from bench.text import cube, f, md_table
from bindings import precision as prec

ROOT = Path(__file__).resolve().parents[1]
BEGIN = re.compile(r"<!-- cvt:begin (?P<name>[\w.-]+)(?P<args>(?: \w+=[\w./+-]+)*) -->")
MATMUL_4096 = "4096x4096x4096"
MATMUL_8192 = "8192x8192x8192"
PRECISION_ORDER = tuple(prec.TABLE)       # fp32, tf32, fp16, bf16 (, u8)


class DocBlockError(ValueError):
    """A marked block that cannot be filled (the message is one line)."""


def doc_files(root: Path | None = None) -> list[Path]:
    """The pages whose blocks are generated: README.md and every page under docs/."""
    root = ROOT if root is None else root
    return [root / "README.md"] + sorted((root / "docs").rglob("*.md"))


# ---------------------------------------------------------------------------------------
# Reading a set
# ---------------------------------------------------------------------------------------

class ResultSet:
    """One committed result set, read once, with the lookups the renderers need."""

    def __init__(self, root: Path, name: str):
        self.name = name.rstrip("/")
        self.path = root / self.name
        if not any((self.path / f"{kind}.json").exists() for kind in ("time", "check", "profile")):
            raise DocBlockError(f"{self.name}: not a result set (no time.json, check.json or "
                                "profile.json)")
        self.payloads = results.load_set(self.path)
        self.env = next((p.get("env") for p in self.payloads.values() if p.get("env")), {}) or {}

    def rows(self, kind: str) -> list[dict]:
        return (self.payloads.get(kind) or {}).get("rows", [])

    def timed(self, kernel: str, shape: str, precision: str) -> dict | None:
        for r in self.rows("time"):
            if (r["kernel"], r["shape"], r["precision"]) == (kernel, shape, precision) \
                    and r.get("status") == "ok":
                return r
        return None

    def must_time(self, kernel: str, shape: str, precision: str) -> dict:
        """timed, where a timing the block names and the set lacks is an error, not a gap."""
        r = self.timed(kernel, shape, precision)
        if r is None:
            raise DocBlockError(f"{self.name} has no timing of {kernel} {shape} {precision}")
        return r

    def profiled(self, kernel: str, shape: str, precision: str) -> dict | None:
        for r in self.rows("profile"):
            if (r["kernel"], r["shape"], r["precision"]) == (kernel, shape, precision):
                return r
        return None

    def ceilings(self) -> dict:
        return report._ceilings(self.payloads.get("time") or {})


def times(x) -> str:
    """A ratio to cuBLAS as the docs write it: 0.95, 0.063, 0.010 (two significant digits
    below 0.1)."""
    x = num(x)
    if math.isnan(x):
        return "–"
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}"


def _tflops(x) -> str:
    """TFLOP/s as the docs round it: 709, 45.1."""
    x = num(x)
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def _per_precision(values: dict) -> str:
    """{precision: TFLOP/s} in the precisions' order: fp32 51.7, tf32 385.7, ..."""
    return ", ".join(f"{p} {f(values[p], 1)}" for p in PRECISION_ORDER if p in values)


def _ratio(row: dict | None, key: str = "pct_reference") -> float:
    return num(row.get(key)) / 100 if row else math.nan


def _link(doc: Path, target: Path, root: Path) -> str:
    return Path(os.path.relpath(root / target, doc.parent)).as_posix()


# ---------------------------------------------------------------------------------------
# Renderers: (set, doc page, root) -> markdown
# ---------------------------------------------------------------------------------------

def render_result_set(s: ResultSet, doc: Path, root: Path) -> str:
    """What the set is (GPU, date, commit, software), how many checks passed, the ceilings
    measured in it and how the two timers agreed."""
    env = s.env
    here = _link(doc, Path(s.name), root)
    kinds = [k for k in results.KINDS if k in s.payloads]
    checks = [r for r in s.rows("check") if r.get("status") != "skip"]
    passed = [r for r in checks if r.get("status") not in ("FAIL", "ERROR")]
    c = s.ceilings()
    cublas = c.get("cublas_tflops") or {}
    shapes = sorted({r["shape"] for r in s.rows("profile") if r.get("op") == "matmul"},
                    key=lambda x: int(x.split("x")[0]))
    text = (f"Measured on an {env.get('gpu', 'unknown GPU')} on {env.get('date_utc', '')[:10]} "
            f"(commit {env.get('git_sha', '?')}, torch {env.get('torch', '?')}, triton "
            f"{env.get('triton', '?')}, CUDA {env.get('cuda_runtime', '?')}): "
            f"{', '.join(kinds)} of the default suite in [`{s.name}/`]({here}/), whose "
            f"[`report.md`]({here}/report.md) and figures are drawn from its CSV/JSON files.")
    if checks:
        text += f" {len(passed)} of {len(checks)} checks passed."
    if c:
        text += (f" Ceilings measured in the same run: device copy "
                 f"{f(num(c.get('copy_gbps')) / 1000, 2)} TB/s; cuBLAS "
                 + _per_precision(cublas)
                 + f" TFLOP/s at {cube(c.get('cublas_shape', '?'))}.")
    if shapes:
        at = [cube(x) for x in shapes]
        text += (" Nsight Compute counters at "
                 + (", ".join(at[:-1]) + " and " if len(at) > 1 else "") + at[-1] + ".")
    both = report.crosscheck_rows(s.payloads.get("time") or {})
    if both:
        agree = sum(abs(report._disagreement(r)) <= report.CROSSCHECK_AGREE for r in both)
        text += (f" Timed again by `triton.testing.do_bench`, {agree} of {len(both)} kernels "
                 f"agree with the harness within {100 * report.CROSSCHECK_AGREE:.0f}% "
                 f"(as ratios to the reference).")
    return text


def _ladder_kernels():
    """The CUDA rungs of the FFMA ladder (the @ladder group: v1, v1c, v1.5, v2, ...)."""
    from bench import registry

    return [k for k in registry.select("@ladder") if k.backend == "cuda"]


def _tensor_rungs() -> list[str]:
    """The tensor-core rungs' names (the @tensor_cores group: t1, t2, ...)."""
    from bench import registry

    return [k.name for k in registry.select("@tensor_cores")]


def render_ffma_ladder(s: ResultSet, doc: Path, root: Path) -> str:
    """The FFMA ladder at 4096³ in fp32: each CUDA rung and its Triton twin, TFLOP/s and
    × cuBLAS timed in the same run; then cuBLAS and triton_autotuned."""
    from bench import registry

    names = registry.by_name()
    rows = []
    for k in _ladder_kernels():
        r = s.timed(k.name, MATMUL_4096, "fp32")
        twin = s.timed(k.twin, MATMUL_4096, "fp32") if k.twin in names else None
        rows.append([k.version, f"`{k.name}`", f(r and r["tflops"], 2), times(_ratio(r)),
                     f"`{k.twin}`" if twin else "(no twin)",
                     f(twin["tflops"], 2) if twin else "", times(_ratio(twin)) if twin else ""])
    for name in ("cublas", "triton_autotuned"):
        r = s.timed(name, MATMUL_4096, "fp32")
        if r is None:
            continue
        cells = [f(r["tflops"], 2), times(_ratio(r))]
        rows.append(["", f"`{name}`", *cells, "", "", ""] if name == "cublas"
                    else ["", "", "", "", f"`{name}`", *cells])
    return md_table(["rung", "CUDA kernel (fp32 FFMA, 4096³)", "TFLOP/s", "× cuBLAS",
                     "Triton twin", "TFLOP/s", "× cuBLAS"], rows)


def render_tensor_rungs(s: ResultSet, doc: Path, root: Path) -> str:
    """The tensor-core rungs and triton_persistent at 4096³: TFLOP/s, × cuBLAS at the same
    precision in the same run, the tensor pipe and the warp instructions Nsight Compute
    counted; where the set timed 8192³ in alternating rounds, × cuBLAS there too."""
    from bench import registry

    kernels = [registry.get(name) for name in _tensor_rungs() + ["triton_persistent"]]
    rounds = any(num(r.get("alternating_pct_reference")) > 0 and r["shape"] == MATMUL_8192
                 for r in s.rows("time"))
    rows = []
    for k in kernels:
        for p in sorted(k.precisions, key=PRECISION_ORDER.index):
            r = s.timed(k.name, MATMUL_4096, p)
            if r is None:
                continue
            prof = s.profiled(k.name, MATMUL_4096, p) or {}
            busy = num(prof.get("tensor_active_pct"))
            inst = num(prof.get("warp_inst"))
            row = [f"`{k.name}`", p, f(r["tflops"], 1), times(_ratio(r))]
            if rounds:
                row.append(times(_ratio(s.timed(k.name, MATMUL_8192, p),
                                        "alternating_pct_reference")))
            row += ["–" if math.isnan(busy) else f"{busy:.0f}%",
                    "–" if math.isnan(inst) else f"{inst / 1e6:.1f} M"]
            rows.append(row)
    return md_table(["kernel", "precision", "TFLOP/s 4096³", "× cuBLAS 4096³"]
                    + (["× cuBLAS 8192³, alternating rounds"] if rounds else [])
                    + ["tensor pipe busy", "warp instructions"], rows)


def _issued(x) -> str:
    """Issued over modelled loads: 1.0000 where it is the model, 0.25, 34."""
    x = num(x)
    if math.isnan(x):
        return "–"
    return f"{x:.0f}" if x >= 10 else f"{x:.4f}" if x > 0.9 else f"{x:.2f}"


def _dram(prof: dict) -> float:
    return num(prof.get("dram_read_bytes")) + num(prof.get("dram_write_bytes"))


def render_ladder_counters(s: ResultSet, doc: Path, root: Path) -> str:
    """The FFMA ladder at 4096³ with its counters: TFLOP/s and × cuBLAS from the timing,
    issued/model, DRAM bytes, FLOP per DRAM byte and shared-memory wavefronts from Nsight
    Compute; each Triton twin beside its rung."""
    from bench import registry

    names = registry.by_name()
    rows = []
    for k in _ladder_kernels():
        r = s.timed(k.name, MATMUL_4096, "fp32")
        prof = s.profiled(k.name, MATMUL_4096, "fp32") or {}
        wave = num(prof.get("shared_wavefronts"))
        fma = num(prof.get("ffma"))
        flops = num(r["flops"]) if r else math.nan
        row = [k.version, f"`{k.name}`", f(r and r["tflops"], 2), times(_ratio(r)),
               _issued(prof.get("ratio_issued")), f"{_dram(prof) / 2**20:,.0f}" if prof else "–",
               f(flops / _dram(prof), 0) if prof else "–",
               f(wave / (fma / 2048), 1) if wave > 0 and fma > 0 else "–"]
        twin = s.timed(k.twin, MATMUL_4096, "fp32") if k.twin in names else None
        tprof = (s.profiled(k.twin, MATMUL_4096, "fp32") or {}) if twin else {}
        if twin:
            row += [f"`{k.twin}`", f(twin["tflops"], 2),
                    f(num(twin["tflops"]) / num(r["tflops"]), 2) if r else "–",
                    _issued(tprof.get("ratio_issued")),
                    f(num(twin["flops"]) / _dram(tprof), 0) if tprof else "–"]
        else:
            row += ["(no twin)", "–", "–", "–", "–"]
        rows.append(row)
    ref = s.timed("cublas", MATMUL_4096, "fp32")
    if ref:
        rows.append(["", "`cublas`", f(ref["tflops"], 2), times(_ratio(ref))] + [""] * 9)
    return md_table(["rung", "CUDA kernel", "TFLOP/s", "× cuBLAS", "issued / model",
                     "DRAM, MiB", "FLOP per DRAM byte",
                     "shared wavefronts per 2048 FMAs", "Triton twin", "TFLOP/s",
                     "twin / CUDA", "twin's issued / model", "twin's FLOP per DRAM byte"],
                    rows)


def render_timed(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                 shape: str = MATMUL_4096) -> str:
    """Inline: one kernel's TFLOP/s and × cuBLAS (its reference) at one shape and precision."""
    r = s.must_time(kernel, shape, precision)
    return f"{f(r['tflops'], 1)} TFLOP/s, {times(_ratio(r))}× cuBLAS"


TIMERS = {"harness": "pct_reference", "dobench": "dobench_pct_reference",
          "alternating": "alternating_pct_reference"}


def render_ratio(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                 shape: str = MATMUL_4096, timer: str = "harness", digits: str = "") -> str:
    """Inline: one kernel's × cuBLAS (its reference) at one shape and precision, by the
    harness's timer, do_bench's or the alternating rounds': 0.95 (digits=3: 0.953)."""
    r = s.must_time(kernel, shape, precision)
    if timer not in TIMERS:
        raise DocBlockError(f"timer={timer}: one of {', '.join(TIMERS)}")
    if not num(r.get(TIMERS[timer])) > 0:
        raise DocBlockError(f"{s.name} has no {timer} ratio of {kernel} {shape} {precision}")
    x = _ratio(r, TIMERS[timer])
    return f"{x:.{int(digits)}f}" if digits else times(x)


def render_tflops(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                  shape: str = MATMUL_4096, digits: str = "") -> str:
    """Inline: one kernel's TFLOP/s at one shape and precision, as the docs round it: 709,
    45.1 (digits=2: 45.06)."""
    x = num(s.must_time(kernel, shape, precision)["tflops"])
    return f"{x:.{int(digits)}f}" if digits else _tflops(x)


def render_speedup(s: ResultSet, doc: Path, root: Path, kernel: str, over: str,
                   precision: str, shape: str = MATMUL_4096, digits: str = "2") -> str:
    """Inline: one kernel's speed over another's, timed in the same run: 1.16."""
    a, b = s.must_time(kernel, shape, precision), s.must_time(over, shape, precision)
    return f"{num(a['tflops']) / num(b['tflops']):.{int(digits)}f}"


def render_cell(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                shape: str = MATMUL_4096) -> str:
    """Inline: one kernel at one shape in several precisions (precision=fp32/tf32), each
    TFLOP/s (× cuBLAS): 39.9 (0.77) / 83.5 (0.22)."""
    cells = []
    for p in precision.split("/"):
        r = s.must_time(kernel, shape, p)
        cells.append(f"{_tflops(r['tflops'])} ({times(_ratio(r))})")
    return " / ".join(cells)


def render_tensor_sizes(s: ResultSet, doc: Path, root: Path) -> str:
    """The tensor-core rungs and the Triton matmuls at 4096³ and 8192³ in bf16, fp16 and
    tf32: at 4096³ TFLOP/s (× cuBLAS by the harness; by do_bench where it timed), at 8192³
    TFLOP/s; × cuBLAS in the alternating rounds; cuBLAS's TFLOP/s last. A kernel the set
    never timed has no row."""
    kernels = _tensor_rungs() + ["triton_autotuned", "triton_persistent", "triton_batched"]
    columns = [(p, shape) for p in ("bf16", "fp16", "tf32") for shape in (MATMUL_4096, MATMUL_8192)]

    def cell(kernel: str, p: str, shape: str) -> str:
        r = s.timed(kernel, shape, p)
        if r is None:
            return "–"
        if kernel == "cublas":
            return f(r["tflops"], 1)
        if shape == MATMUL_8192:
            return f"{f(r['tflops'], 1)}; {_ratio(r, TIMERS['alternating']):.3f}"
        extra = (f"; {_ratio(r, TIMERS['dobench']):.3f}"
                 if num(r.get(TIMERS["dobench"])) > 0 else "")
        return f"{f(r['tflops'], 1)} ({_ratio(r):.3f}{extra})"

    rows = [[f"`{k}`"] + [cell(k, p, shape) for p, shape in columns] for k in kernels]
    rows = [r for r in rows if any(c != "–" for c in r[1:])]     # a rung the set never timed
    rows.append(["cuBLAS"] + [cell("cublas", p, shape) for p, shape in columns])
    return md_table(["kernel"] + [f"{p} {cube(shape)}" for p, shape in columns], rows)


def _memory_rows(s: ResultSet, kernels: str, precision: str, shape: str) -> list[dict]:
    """The timed rows of kernels (joined by '+') x precisions (joined by '/') x shapes
    (joined by '+'), in that order; a triple the set never timed is an error, not a gap."""
    return [s.must_time(kernel, sh, p) for kernel in kernels.split("+")
            for sh in shape.split("+") for p in precision.split("/")]


def _of_copy(s: ResultSet, r: dict) -> float:
    return 100 * num(r["gbps_compulsory"]) / num(s.ceilings().get("copy_gbps"))


def _span(values: list[float], digits: int) -> str:
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return lo if lo == hi else f"{lo}–{hi}"


def render_copy_range(s: ResultSet, doc: Path, root: Path, kernels: str, precision: str,
                      shape: str, digits: str = "0") -> str:
    """Inline: the lowest to the highest % of the copy bandwidth (compulsory bytes / time,
    against the copy measured in the same run) among kernels x precisions x shapes."""
    return _span([_of_copy(s, r) for r in _memory_rows(s, kernels, precision, shape)],
                  int(digits))


def render_copy_each(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                     shape: str, digits: str = "1") -> str:
    """Inline: one kernel's % of the copy bandwidth in each precision: 92.1 / 94.0 / 94.0."""
    return " / ".join(f"{_of_copy(s, r):.{int(digits)}f}"
                      for r in _memory_rows(s, kernel, precision, shape))


def render_roof_range(s: ResultSet, doc: Path, root: Path, kernels: str, precision: str,
                      shape: str, digits: str = "0") -> str:
    """Inline: the lowest to the highest % of the roofline limit (the report's "% roof": the
    time the ceilings of the same run allow over the time taken) among kernels x precisions
    x shapes: 30–77."""
    return _span([num(r["pct_roof"]) for r in _memory_rows(s, kernels, precision, shape)],
                 int(digits))


def render_speedup_range(s: ResultSet, doc: Path, root: Path, kernels: str, precision: str,
                         shape: str, digits: str = "2") -> str:
    """Inline: the lowest to the highest speed-up over the op's reference (PyTorch eager for
    the memory-bound ops) among kernels x precisions x shapes: 1.31–1.83."""
    return _span([num(r["pct_reference"]) / 100 for r in _memory_rows(s, kernels, precision,
                                                                        shape)], int(digits))


def _count(field: str):
    """A profile row's counter as a whole number, thousands separated: 2,493,255,680."""
    return lambda r: f"{num(r[field]):,.0f}"


COUNTERS = {   # metric -> how a profile row's counter reads in a sentence
    "registers": lambda r: f"{num(r['registers']):.0f}",
    "warp_inst": lambda r: f"{num(r['warp_inst']) / 1e9:.2f} G",
    "shared_kib": lambda r: _kib(_shared_bytes(r)),
    "dram_mib": lambda r: f"{_dram(r) / 2**20:,.0f} MiB",
    "dram_read_mib": lambda r: f"{num(r['dram_read_bytes']) / 2**20:,.0f} MiB",
    "ffma_share": lambda r: f"{100 * num(r['ffma']) / 32 / num(r['warp_inst']):.0f}%",
    "shared_wavefronts": _count("shared_wavefronts"),
    "shared_bank_conflicts": _count("shared_bank_conflicts"),
    "issued": lambda r: _issued(r.get("ratio_issued")),
    "flop_per_dram_byte": lambda r: f"{2 * num(r['mnk']) / _dram(r):.0f}",
    "warp_inst_m": lambda r: f"{num(r['warp_inst']) / 1e6:.1f} M",
    "tensor_busy": lambda r: f"{num(r['tensor_active_pct']):.0f}%",
    "tensor_busy_1": lambda r: f"{num(r['tensor_active_pct']):.1f}%",
    "warp_inst_count": _count("warp_inst"),
    "ffma_count": _count("ffma"),
    "ffma_model": lambda r: _issued(r.get("ratio_ffma")),
    "issued_elements": _count("issued_elements"),
    "load_warp_inst": _count("ld_warp_inst"),
    "ldgsts_warp_inst": _count("ldgsts_warp_inst"),
    "ldgsts_bytes": _count("ldgsts_bytes"),
    "ldgsts_share": lambda r: f"{num(r['ldgsts_bytes']) / num(r['model_global_load_bytes']):.3f}",
    "model_load_bytes": _count("model_global_load_bytes"),
    "model_load_size": lambda r: _si(num(r["model_global_load_bytes"]), "B"),
    "l1_size": lambda r: _si(num(r["l1_bytes"]), "B"),
    "dram_read_size": lambda r: _si(num(r["dram_read_bytes"]), "B"),
    "shared_ld_bytes": _count("shared_ld_bytes"),
    "shared_elements": _count("shared_elements"),
    "shared_model": lambda r: f"{num(r['ratio_shared']):.5g}",
    "shared_wavefronts_m": lambda r: f"{num(r['shared_wavefronts']) / 1e6:.1f} M",
    "ncu_time_us": lambda r: f"{num(r['ncu_time_ns']) / 1e3:.0f} µs",
    "ncu_tflops": lambda r: f"{2 * num(r['mnk']) / num(r['ncu_time_ns']) / 1e3:.0f}",
    "shared_kib_whole": lambda r: f"{_shared_bytes(r) / 1024:.0f} KiB",
    "shared_issued": lambda r: _issued(r.get("ratio_shared")),
    "tensor_inst_m": lambda r: f"{num(r['hmma_warp_inst']) / 1e6:.3g} M",
    "threads": lambda r: f"{num(r['block_threads']):.0f}",
    "shared_bank_conflicts_m": lambda r: f"{num(r['shared_bank_conflicts']) / 1e6:.2f} M",
    "l2_size": lambda r: _si(num(r["l2_bytes"]), "B"),
    "dram_compulsory": lambda r: f"{_dram(r) / num(r['compulsory_bytes']):.3f}",
    "model_load_mib": lambda r: f"{num(r['model_global_load_bytes']) / 2**20:,.0f} MiB",
}


def _shared_bytes(r: dict) -> float:
    return num(r["smem_static_bytes"]) + num(r["smem_dynamic_bytes"])


def _si(x: float, unit: str) -> str:
    """Three significant digits and a decimal prefix: 35.4 GB, 5.37 GB, 344 GB, 2.47 TB."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if abs(x) >= scale:
            v = x / scale
            return f"{v:.{max(0, 2 - int(math.floor(math.log10(abs(v)))))}f} {prefix}{unit}"
    return f"{x:.0f} {unit}"


def _kib(x: float) -> str:
    k = x / 1024
    return f"{k:.0f} KiB" if k == round(k) else f"{k:.1f} KiB"


def render_counter(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                   metric: str, shape: str = MATMUL_4096) -> str:
    """Inline: one counter Nsight Compute read for one kernel at one shape and precision
    (metric: one of COUNTERS)."""
    show = _counter(metric)
    r = s.profiled(kernel, shape, precision)
    if r is None:
        raise DocBlockError(f"{s.name} has no profile of {kernel} {shape} {precision}")
    return show(r)


def _counter(metric: str):
    if metric not in COUNTERS:
        raise DocBlockError(f"metric={metric}: one of {', '.join(COUNTERS)}")
    return COUNTERS[metric]


def _text_span(texts: list[str], values: list[float]) -> str:
    """The text of the lowest to that of the highest value, or one text where they read the
    same: 0.955–0.979."""
    lo, hi = texts[values.index(min(values))], texts[values.index(max(values))]
    return lo if lo == hi else f"{lo}–{hi}"


def render_counter_range(s: ResultSet, doc: Path, root: Path, kernels: str, precision: str,
                         metric: str, shape: str) -> str:
    """Inline: the lowest to the highest of one counter (metric: one of COUNTERS, a number)
    among kernels (joined by '+') profiled at any of the shapes (joined by '+'); a kernel
    the set profiled at none of them is an error: 0.955–0.979."""
    show = _counter(metric)
    texts = []
    for kernel in kernels.split("+"):
        found = [r for sh in shape.split("+") for p in precision.split("/")
                 if (r := s.profiled(kernel, sh, p)) is not None]
        if not found:
            raise DocBlockError(f"{s.name} has no profile of {kernel} at {shape} {precision}")
        texts += [show(r) for r in found]
    return _text_span(texts, [float(re.sub(r"[^\d.]", "", x)) for x in texts])


def render_memory_targets(s: ResultSet, doc: Path, root: Path, what: str = "met") -> str:
    """Inline: the memory-bound ops' targets as the report counts them
    (bench/families/memory/report.py): what=met, how many were met (169 of 188); what=noise,
    how many of the misses are within the timing noise (15 of the 19)."""
    from bench.families.memory import report as memory_report

    results = memory_report.evaluate_targets(s.payloads.get("time") or {"rows": []})
    if not results:
        raise DocBlockError(f"{s.name} has no memory-bound targets")
    misses = [r for r in results if not r["met"]]
    if what == "met":
        return f"{len(results) - len(misses)} of {len(results)}"
    if what == "noise":
        return f"{sum(bool(r.get('noise')) for r in misses)} of the {len(misses)}"
    raise DocBlockError(f"what={what}: met or noise")


def render_suite_summary(s: ResultSet, doc: Path, root: Path) -> str:
    """The shape suite per precision (as report.md's "Shape suite" computes it): each
    language's best, geomean × cuBLAS over the shapes with a cuBLAS row, and its worst
    shape against max(cuBLAS, the other language's best)."""
    from bench.families.matmul import suite_report as sr

    rows = s.rows("time")
    srows = sr.suite_rows(rows)
    table = []
    for p in sr.PRECISIONS:
        shapes, ls = sr.lines(rows, p)
        if not shapes:
            continue
        cublas = sr._reference_name(srows, p)
        cells = [p]
        for label in sr.BEST.values():
            line = ls.get(label)
            vs = sr.against_the_field(ls, label, cublas)
            worst = min(vs, key=vs.get) if vs else None
            cells += [f"{f(line.geomean_cublas(), 2)}x" if line else "–",
                      f"{f(vs[worst], 2)} at {worst}" if worst else "–"]
        table.append(cells)
    return md_table(["precision", "best CUDA x cuBLAS (geomean)",
                     "worst CUDA vs max(cuBLAS, Triton)", "best Triton x cuBLAS",
                     "worst Triton vs max(cuBLAS, CUDA)"], table)


def render_tensor_alternating(s: ResultSet, doc: Path, root: Path,
                              shape: str = MATMUL_4096) -> str:
    """The tensor-core rungs and triton_persistent at one square (default 4096³) in bf16,
    fp16 and tf32: × cuBLAS, the median of the alternating rounds, and in brackets the
    single timing's; a precision no rung was timed at has no column."""
    kernels = _tensor_rungs() + ["triton_persistent"]
    precisions = [p for p in ("bf16", "fp16", "tf32")
                  if any(s.timed(k, shape, p) for k in kernels)]
    if not precisions:
        raise DocBlockError(f"{s.name} has no tensor-core rung timed at {shape}")
    rows = []
    for k in kernels:
        cells = []
        for p in precisions:
            r = s.timed(k, shape, p)
            alt = _ratio(r, TIMERS["alternating"]) if r else math.nan
            cells.append("–" if math.isnan(alt) else f"{alt:.3f} ({_ratio(r):.3f})")
        if any(c != "–" for c in cells):
            rows.append([f"`{k}`", *cells])
    return md_table(["kernel", *(f"{p} {cube(shape)}" for p in precisions)], rows)


def render_clock(s: ResultSet, doc: Path, root: Path, kernel: str, precision: str,
                 shape: str = MATMUL_4096) -> str:
    """Inline: the SM clock the harness read before and after one kernel's timings:
    1965 to 1455 MHz."""
    r = s.must_time(kernel, shape, precision)
    before, after = num(r.get("sm_clock_mhz_before")), num(r.get("sm_clock_mhz"))
    if not (before > 0 and after > 0):
        raise DocBlockError(f"{s.name} has no SM clock of {kernel} {shape} {precision}")
    return f"{before:.0f} to {after:.0f} MHz"


def render_checks(s: ResultSet, doc: Path, root: Path) -> str:
    """Inline: how many of the set's checks passed: 2019 of 2019."""
    runs, failed = report.ran_and_failed(s.rows("check"))
    if not runs:
        raise DocBlockError(f"{s.name} has no checks")
    return f"{len(runs) - len(failed)} of {len(runs)}"


def render_copy_gbps(s: ResultSet, doc: Path, root: Path) -> str:
    """Inline: the copy bandwidth measured in the set's run: 4213 GB/s."""
    return f"{num(s.ceilings().get('copy_gbps')):.0f} GB/s"


def render_ceiling(s: ResultSet, doc: Path, root: Path, of: str) -> str:
    """Inline: one ceiling measured in the set's run: of=copy, the copy bandwidth (3000
    GB/s); of=fp32, tf32, fp16 or bf16, cuBLAS at 4096³ in that precision (51.7 TFLOP/s)."""
    c = s.ceilings()
    if of == "copy":
        return render_copy_gbps(s, doc, root)
    x = (c.get("cublas_tflops") or {}).get(of)
    if x is None:
        raise DocBlockError(f"of={of}: copy or a precision of {s.name}'s ceilings "
                            f"({', '.join(c.get('cublas_tflops') or {})})")
    return f"{f(x, 1)} TFLOP/s"


def render_ridge(s: ResultSet, doc: Path, root: Path, precision: str) -> str:
    """Inline: the ridge of one precision, cuBLAS's FLOP/s over the copy's bytes/s, both
    measured in the set's run: FLOPs per compulsory byte, 17."""
    c = s.ceilings()
    x = num((c.get("cublas_tflops") or {}).get(precision)) * 1e12 / (num(c.get("copy_gbps")) * 1e9)
    if math.isnan(x):
        raise DocBlockError(f"{s.name} has no ceilings of {precision}")
    return f"{x:.0f}"


def render_cublas_ceilings(s: ResultSet, doc: Path, root: Path) -> str:
    """Inline: cuBLAS at 4096³ as measured for the set's ceilings, and the date."""
    return (_per_precision(s.ceilings().get("cublas_tflops") or {})
            + f" TFLOP/s ({s.env.get('date_utc', '')[:10]})")


def render_cublas_timed(s: ResultSet, doc: Path, root: Path) -> str:
    """Inline: cuBLAS at 4096³ as timed beside the kernels (the ratios divide by these)."""
    timed = {p: r["tflops"] for p in PRECISION_ORDER
             if (r := s.timed("cublas", MATMUL_4096, p)) is not None}
    return _per_precision(timed) + f" TFLOP/s ({s.env.get('date_utc', '')[:10]})"


def render_api_table(s: ResultSet | None, doc: Path, root: Path) -> str:
    """Every kernel as a function of bench.kernels (`python -m bench list --markdown`)."""
    from bench import kernels

    return kernels.markdown()


def render_kernel_table(s: ResultSet | None, doc: Path, root: Path, rows: str) -> str:
    """A table of docs/kernels.md from the registry: rows= ladder, tensor-cores, fast-triton
    or shape-paths (bench/families/matmul/report.py), or memory (every memory-bound
    record: bench/families/memory/report.py)."""
    if rows == "memory":
        from bench.families.memory import report as memory_report

        return memory_report.readme_table()
    from bench.families.matmul import report as matmul_report

    return matmul_report.kernel_table(rows)


# ---------------------------------------------------------------------------------------
# Committed tables of results/sweeps: a sweep's printed table, a driver's or Nsight
# Compute's output, a comparison's compare.md
# ---------------------------------------------------------------------------------------

class SweepTable:
    """One committed table under results/sweeps/, read as lines of fields: a CSV file's
    cells (its first line names the columns), a markdown row's cells (`| a | b |`), else
    the words of the line (`20  v6_pipelined ... 0.847`). A row is found by its leading
    fields, never by position alone, so that a table whose rows moved fails instead of
    naming another row."""

    def __init__(self, root: Path, name: str):
        self.name = name
        path = root / name
        if not name.startswith("results/sweeps/") or not path.is_file():
            raise DocBlockError(f"{name}: not a committed table under results/sweeps/")
        self.lines = path.read_text().splitlines()
        self.csv = path.suffix == ".csv"
        self.columns = self.fields(self.lines[0]) if self.csv and self.lines else []

    def fields(self, line: str) -> list[str]:
        if self.csv:
            return next(csv.reader([line]), [])
        s = line.strip()
        if s.startswith("|"):
            return [c.strip() for c in s.strip("|").split("|")]
        return s.split()

    def row(self, key: str) -> list[str]:
        """The fields of the one line whose leading fields are key's parts, joined by '/':
        `20`, `smsp__inst_executed.sum`, `cuda_copy/fp32`."""
        parts = key.split("/")
        found = [fs for fs in map(self.fields, self.lines) if fs[:len(parts)] == parts]
        if len(found) != 1:
            raise DocBlockError(f"{self.name}: {len(found)} rows start with {' '.join(parts)!r}"
                                " (one expected)")
        return found[0]

    def line(self, n: str) -> list[str]:
        """The fields of line n (from 1), for a table whose rows share their leading
        fields."""
        if not n.isdigit() or not 1 <= int(n) <= len(self.lines):
            raise DocBlockError(f"line={n}: {self.name} has lines 1 to {len(self.lines)}")
        return self.fields(self.lines[int(n) - 1])


NUMBER = re.compile(r"[(x×]*(-?\d[\d,]*(?:\.\d+)?)")


def _field_number(token: str) -> str:
    """The number a table's field starts with, as printed: '2,493,255,680', 'x0.534' ->
    '0.534', '88.1%' -> '88.1', '4219.1 GB/s' -> '4219.1'."""
    m = NUMBER.match(token)
    if m is None:
        raise DocBlockError(f"field {token!r} is not a number")
    return m.group(1)


def render_sweep_cell(t: SweepTable, doc: Path, root: Path, field: str, row: str = "",
                      line: str = "", digits: str = "", part: str = "") -> str:
    """Inline: one number of a committed sweep table, as the table prints it (without
    its `x` or `%`) or rounded to digits= decimals (thousands separated where the table
    separates them, and from 10,000). row= names the row by its leading fields (`20`,
    `cuda_copy/fp32`), line= by its line number where rows share their leading fields;
    field= is the number's index in the row (0 the first, -1 the last). Several rows or
    lines joined by '+' give the lowest to the highest: 0.85–0.92. In a CSV file field=
    may name the column: `field=tensor_active_pct`. part=N takes the N-th (from 0) of the
    numbers a field joins by '/': `1838/1901`, part=1 -> 1901."""
    if bool(row) == bool(line):
        raise DocBlockError("name the row by row= or by line=, one of the two")
    try:
        index = int(field)
    except ValueError:
        if field not in t.columns:
            raise DocBlockError(f"field={field}: an index into the row (0, 1, ..., -1)"
                                + (" or a column of the CSV file" if t.csv else "")) from None
        index = t.columns.index(field)
    tokens = []
    for key in (row or line).split("+"):
        fs = t.row(key) if row else t.line(key)
        if not -len(fs) <= index < len(fs):
            raise DocBlockError(f"{t.name}: row {key!r} has {len(fs)} fields, not field {index}")
        token = fs[index]
        if part:
            pieces = token.split("/")
            if not part.isdigit() or int(part) >= len(pieces):
                raise DocBlockError(f"part={part}: field {token!r} has {len(pieces)} parts")
            token = pieces[int(part)]
        tokens.append(token)
    printed = [_field_number(tok) for tok in tokens]
    values = [float(x.replace(",", "")) for x in printed]

    def show(text: str, x: float) -> str:
        if not digits:
            return text
        grouped = "," in text or abs(x) >= 10000
        return f"{x:,.{int(digits)}f}" if grouped else f"{x:.{int(digits)}f}"

    return _text_span([show(text, x) for text, x in zip(printed, values)], values)


# name -> (renderer, what it reads: "set" a result set, "table" a committed sweep table,
# None the registry)
BLOCKS = {
    "result-set": (render_result_set, "set"),
    "ffma-ladder": (render_ffma_ladder, "set"),
    "tensor-rungs": (render_tensor_rungs, "set"),
    "ladder-counters": (render_ladder_counters, "set"),
    "timed": (render_timed, "set"),
    "ratio": (render_ratio, "set"),
    "tflops": (render_tflops, "set"),
    "speedup": (render_speedup, "set"),
    "cell": (render_cell, "set"),
    "tensor-sizes": (render_tensor_sizes, "set"),
    "counter": (render_counter, "set"),
    "suite-summary": (render_suite_summary, "set"),
    "copy-gbps": (render_copy_gbps, "set"),
    "checks": (render_checks, "set"),
    "clock": (render_clock, "set"),
    "tensor-alternating": (render_tensor_alternating, "set"),
    "copy-range": (render_copy_range, "set"),
    "copy-each": (render_copy_each, "set"),
    "speedup-range": (render_speedup_range, "set"),
    "roof-range": (render_roof_range, "set"),
    "ceiling": (render_ceiling, "set"),
    "ridge": (render_ridge, "set"),
    "counter-range": (render_counter_range, "set"),
    "memory-targets": (render_memory_targets, "set"),
    "cublas-ceilings": (render_cublas_ceilings, "set"),
    "cublas-timed": (render_cublas_timed, "set"),
    "sweep-cell": (render_sweep_cell, "table"),
    "api-table": (render_api_table, None),
    "kernel-table": (render_kernel_table, None),
}


# ---------------------------------------------------------------------------------------
# Filling and checking
# ---------------------------------------------------------------------------------------

def blocks(text: str):
    """(name, set, start, end, inline, args) of every marked block of a page:
    text[start:end] is what lies between its begin and end markers, args the marker's
    other KEY=VALUE words (`kernel=triton_autotuned precision=fp32`). A marker that this
    grammar does not read is an error, never skipped: its numbers would go unchecked."""
    found, read = [], set()
    pos = 0
    while (m := BEGIN.search(text, pos)) is not None:
        end_marker = f"<!-- cvt:end {m['name']} -->"
        end = text.find(end_marker, m.end())
        if end < 0:
            raise DocBlockError(f"block {m['name']!r} has no end marker ({end_marker})")
        inline = not text.startswith("\n", m.end())
        args = dict(a.split("=", 1) for a in m["args"].split())
        found.append((m["name"], args.pop("set", None), m.end(), end, inline, args))
        read |= {m.start(), end}
        pos = end + len(end_marker)
    for stray in re.finditer(r"<!-- cvt:(?:begin|end)\b", text):
        if stray.start() not in read:
            line = text.count("\n", 0, stray.start()) + 1
            raise DocBlockError(f"line {line}: a marker not read as a block: "
                                f"{text[stray.start():text.find('-->', stray.start()) + 3]!r}")
    return found


def fill_text(text: str, doc: Path, root: Path = ROOT, cache: dict | None = None) -> str:
    """The page with every block rewritten from its set."""
    cache = {} if cache is None else cache
    out, last = [], 0
    for name, set_name, start, end, inline, args in blocks(text):
        where = f"{doc.relative_to(root) if doc.is_relative_to(root) else doc}: block {name!r}"
        if name not in BLOCKS:
            raise DocBlockError(f"{where}: no such block (known: {', '.join(BLOCKS)})")
        render, reads = BLOCKS[name]
        if reads and not set_name:
            raise DocBlockError(f"{where}: names no result set (set=results/...)")
        s = None
        if set_name:
            opener = SweepTable if reads == "table" else ResultSet
            if (opener, set_name) not in cache:
                try:
                    cache[opener, set_name] = opener(root, set_name)
                except DocBlockError as exc:
                    raise DocBlockError(f"{where}: {exc}") from None
            s = cache[opener, set_name]
        try:
            body = render(s, doc, root, **args)
        except (TypeError, DocBlockError) as exc:
            raise DocBlockError(f"{where}: {exc}") from None
        out += [text[last:start], body if inline else f"\n{body}\n"]
        last = end
    return "".join(out) + text[last:]


def _filled(root: Path):
    """(page, its text, the text filled from the sets) of every page that has blocks."""
    cache: dict = {}
    for page in doc_files(root):
        text = page.read_text()
        if "<!-- cvt:" in text:
            yield page, text, fill_text(text, page, root, cache)


def stale(root: Path | None = None) -> list[str]:
    """'page: block NAME (set)' for every block whose text differs from its set's."""
    root = ROOT if root is None else root
    bad = []
    for page, text, new in _filled(root):
        if new == text:
            continue
        old_blocks, new_blocks = blocks(text), blocks(new)
        for (name, set_name, s0, e0, *_), (_, _, s1, e1, *_) in zip(old_blocks, new_blocks):
            if text[s0:e0] != new[s1:e1]:
                bad.append(f"{page.relative_to(root)}: block {name}"
                           + (f" ({set_name})" if set_name else ""))
    return bad


def fill(root: Path | None = None) -> list[Path]:
    """Rewrites every page whose blocks differ from their sets; returns the pages written."""
    root = ROOT if root is None else root
    written = []
    for page, text, new in _filled(root):
        if new != text:
            results.atomic_write_text(page, new)
            written.append(page)
    return written
