"""`python -m bench compare A B`: two result sets side by side (two GPUs, two drivers, two
versions of a kernel).

    python -m bench compare results/h100 results/h200

For every kernel x precision the two sets both timed, at the largest shape they share: the
median times and B's speed-up over A. Beside them, the ceilings each set measured (copy
bandwidth, cuBLAS at every precision, the nominal FP32 peak) and their ratios: a kernel bound
by memory should follow the copy bandwidth's ratio, one bound by arithmetic the cuBLAS
ratio. The environments' differences are listed first. Writes compare.md (the tables) and
figures/compare.png (the speed-ups against the two ceiling ratios) to --out.

Only timings are compared, never counters: an Nsight Compute run and a timing run are
different measurements (docs/DESIGN.md, "The flow of one run").
"""
from __future__ import annotations

from pathlib import Path

from bench import results
from bench.results import num
from bench.text import f, md_table
from bindings import precision as prec

ENV_SHOWN = ("gpu", "compute_capability", "sm_count", "memory_gib", "l2_cache_bytes",
             "sm_clock_max_mhz", "driver", "cuda_runtime", "torch", "triton", "version",
             "git_sha", "date_utc")


class CompareError(ValueError):
    """A result set that cannot be compared (no time.json): one line, exit 2."""


def _timing(result_dir) -> dict:
    payload = results.read(result_dir, "time")
    if payload is None:
        raise CompareError(f"{result_dir}: no time.json to compare (run `python -m bench time "
                           f"--out {result_dir}` or `make report` there)")
    return payload


def _name(result_dir, payload) -> str:
    return (payload.get("env") or {}).get("gpu") or Path(result_dir).name


def env_rows(a: dict, b: dict) -> list[list[str]]:
    """(what, A, B) for the environment keys, differences first."""
    ea, eb = a.get("env") or {}, b.get("env") or {}
    rows = [[k, str(ea.get(k, "-")), str(eb.get(k, "-"))] for k in ENV_SHOWN
            if ea.get(k) is not None or eb.get(k) is not None]
    return sorted(rows, key=lambda r: r[1] == r[2])


def ceiling_ratios(a: dict, b: dict) -> list[tuple[str, float, float, str]]:
    """(ceiling, A value, B value, unit) for the ceilings both sets measured."""
    ca, cb = (a.get("meta") or {}).get("ceilings") or {}, (b.get("meta") or {}).get("ceilings") or {}
    out = []
    if ca.get("copy_gbps") and cb.get("copy_gbps"):
        out.append(("device copy bandwidth", ca["copy_gbps"], cb["copy_gbps"], "GB/s"))
    for p, ta in (ca.get("cublas_tflops") or {}).items():
        tb = (cb.get("cublas_tflops") or {}).get(p)
        if ta and tb:
            out.append((f"cuBLAS {p}", ta, tb, "TFLOP/s"))
    if ca.get("fp32_nominal_peak_tflops") and cb.get("fp32_nominal_peak_tflops"):
        out.append(("nominal FP32 peak", ca["fp32_nominal_peak_tflops"],
                    cb["fp32_nominal_peak_tflops"], "TFLOP/s"))
    return out


def _bound(row: dict) -> str:
    """"memory" for kernels judged by bandwidth (no useful flops), else "compute"."""
    return "compute" if num(row.get("flops")) > 0 else "memory"


def pairs(a: dict, b: dict) -> list[dict]:
    """One entry per kernel x precision both sets timed (status ok), at the largest shape
    they share: the rows of A and B and B's speed-up (A's time over B's)."""
    def ok(payload):
        return {(r["kernel"], r["precision"], r["shape"]): r for r in payload["rows"]
                if r.get("status") == "ok" and num(r.get("median_ms")) > 0}

    ra, rb = ok(a), ok(b)
    best: dict = {}
    for key in ra.keys() & rb.keys():
        kernel, precision, _shape = key
        size = num(ra[key].get("size"))
        if (kernel, precision) not in best or size > best[(kernel, precision)][0]:
            best[(kernel, precision)] = (size, key)
    out = []
    for (kernel, precision), (_size, key) in sorted(best.items()):
        x, y = ra[key], rb[key]
        out.append(dict(kernel=kernel, precision=precision, shape=key[2], op=x.get("op"),
                        bound=_bound(x), a_ms=num(x["median_ms"]), b_ms=num(y["median_ms"]),
                        speedup=num(x["median_ms"]) / num(y["median_ms"]),
                        a_rate=x.get("tflops") if _bound(x) == "compute" else x.get("gbps_compulsory"),
                        b_rate=y.get("tflops") if _bound(x) == "compute" else y.get("gbps_compulsory")))
    return out


def markdown(dir_a, dir_b, a: dict, b: dict, rows: list[dict]) -> str:
    name_a, name_b = _name(dir_a, a), _name(dir_b, b)
    parts = [f"# {name_a} (A) against {name_b} (B)",
             f"A = `{dir_a}`, B = `{dir_b}`, written by `python -m bench compare`. "
             f"Speed-up = A's median time / B's, at the largest shape both timed. A kernel "
             f"bound by memory should gain what the copy bandwidth gains; one bound by "
             f"arithmetic what cuBLAS gains."]
    parts.append("## Environments\n\n" + md_table(["what", "A", "B"], env_rows(a, b)))
    ceilings = ceiling_ratios(a, b)
    if ceilings:
        parts.append("## Ceilings\n\n" + md_table(
            ["ceiling", "A", "B", "B / A"],
            [[c, f"{f(va, 1)} {unit}", f"{f(vb, 1)} {unit}", f(vb / va, 2)]
             for c, va, vb, unit in ceilings]))
    if rows:
        table = [[r["kernel"], r["precision"], r["shape"], r["bound"], f(r["a_ms"], 4),
                  f(r["b_ms"], 4), f(r["speedup"], 2)] for r in rows]
        parts.append("## Kernels\n\n" + md_table(
            ["kernel", "prec", "shape", "bound by", "A ms", "B ms", "speed-up"], table))
    else:
        parts.append("## Kernels\n\nThe two sets timed no kernel x precision x shape in common.")
    return "\n\n".join(parts) + "\n"


BACKEND_COLOURS = {"cuda": "#2ca02c", "triton": "#1f77b4", "torch": "#7f7f7f",
                   "cublas": "#000000"}


def _group(r: dict) -> str:
    """The figure's column of a row: the op, with the precision for compute-bound ops
    (their ceiling, cuBLAS, differs per precision)."""
    return f"{r['op']} {r['precision']}" if r["bound"] == "compute" else str(r["op"])


def figure(rows: list[dict], ceilings, name_a: str, name_b: str, out_dir) -> list[Path]:
    """One column per op (per precision for matmul), one dot per kernel coloured by its
    language, and the ratio of the ceiling that bounds that column as a line across it: the
    copy bandwidth's for memory-bound ops, cuBLAS's at the column's precision for matmul."""
    from bench import plot_style, registry

    plt = plot_style.pyplot()
    order = list(prec.TABLE)
    groups = sorted({_group(r) for r in rows}, key=lambda g: (
        not g.startswith("matmul"), order.index(g.split()[1]) if " " in g else 0, g))
    ratio = {what: vb / va for what, va, vb, _unit in ceilings}
    backend = {k.name: k.backend for k in registry.kernels()}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 * len(groups) + 2), 4.6))
    seen: set = set()
    for b in ("cuda", "triton", "cublas", "torch"):          # the legend's order
        if any(backend.get(r["kernel"], "torch") == b for r in rows):
            ax.scatter([], [], s=22, color=BACKEND_COLOURS[b], label=b)
            seen.add(b)
    for x, g in enumerate(groups):
        members = sorted((r for r in rows if _group(r) == g), key=lambda r: r["kernel"])
        for i, r in enumerate(members):
            b = backend.get(r["kernel"], "torch")
            offset = (i - (len(members) - 1) / 2) * min(0.08, 0.7 / max(len(members), 1))
            ax.scatter(x + offset, r["speedup"], s=22, color=BACKEND_COLOURS.get(b, "#9467bd"),
                       label=None if b in seen else b, zorder=3, edgecolor="white",
                       linewidth=0.4)
            seen.add(b)
        bound_by = (f"cuBLAS {g.split()[1]}" if g.startswith("matmul")
                    else "device copy bandwidth")
        if bound_by in ratio:
            ax.hlines(ratio[bound_by], x - 0.42, x + 0.42, color="#d62728", linewidth=1.6,
                      zorder=2, label=None if "ceiling" in seen else
                      "ratio of the ceiling that bounds the column")
            seen.add("ceiling")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30, ha="right")
    ax.set_ylabel("speed-up of B over A\n(A's median time / B's)")
    copy = ratio.get("device copy bandwidth")
    ax.set_title(f"B = {name_b} against A = {name_a}" +
                 (f"\ncopy bandwidth x{copy:.2f}; cuBLAS " + ", ".join(
                     f"{w.split()[1]} x{v:.2f}" for w, v in ratio.items() if w.startswith("cuBLAS"))
                  if copy else ""), fontsize=10)
    ax.legend(fontsize=8, loc="best")
    return plot_style.save(fig, Path(out_dir) / "figures", "compare")


def run(dir_a, dir_b, out_dir, force: bool = False) -> tuple[str, list[Path]]:
    """Reads both sets, writes compare.md and figures/compare.{png,svg}; returns the
    markdown and the figure files."""
    a, b = _timing(dir_a), _timing(dir_b)
    out = Path(out_dir)
    target = out / "compare.md"
    if target.exists() and not force:
        raise results.OutDirError(f"{target} exists: --force replaces it, or choose --out")
    results.check_writable(out)
    rows = pairs(a, b)
    text = markdown(dir_a, dir_b, a, b, rows)
    files = figure(rows, ceiling_ratios(a, b), _name(dir_a, a), _name(dir_b, b), out) \
        if rows else []
    results.atomic_write_text(target, text)
    return text, files
