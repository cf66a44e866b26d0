"""Figures of the memory-bound ops, drawn from time.json only.

    bandwidth_<op>   achieved DRAM bandwidth (compulsory bytes / median time) versus the
                     bytes the op must move (binary units), one line per kernel: CUDA solid,
                     Triton dashed, PyTorch eager black, torch.compile grey; the copy
                     bandwidth measured in the same run and the op's target (a fraction of
                     it) as horizontal lines. One panel per precision; softmax gets one panel
                     per layout too (rows: dim = -1; columns: any other dim), since the two
                     read memory differently. One legend for all panels.
    memory_targets   at each op's target shape (>= 256 MB; softmax 4096 x 32768), every
                     kernel's % of the copy bandwidth, the target marked.

Nothing here runs a kernel; rows come from bench/perf.py (op, kernel, backend, version,
shape, precision, compulsory_bytes, gbps_compulsory, status).
"""
from __future__ import annotations

import math
from pathlib import Path

from bench import plot_style
from bench.families.memory.problems import is_memory_op, problem
from bench.results import num

VERSION_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b")


def _is_memory(row) -> bool:
    return is_memory_op(row.get("op", ""))


def _ok(rows):
    return [r for r in rows if r.get("status", "ok") == "ok" and num(r.get("gbps_compulsory")) > 0]


def layout(shape: str) -> str:
    return "columns (dim != -1)" if ":dim=" in str(shape) else "rows (dim = -1)"


def _style(row, colours: dict) -> dict:
    backend, version = row.get("backend"), row.get("version")
    if backend == "torch":
        eager = version != "compile"
        return dict(color="black" if eager else "#7f7f7f", linestyle="-" if eager else "-.",
                    marker="^" if eager else "v", linewidth=2.0 if eager else 1.4, markersize=4)
    return dict(color=colours.get(version, "grey"), linestyle="-" if backend == "cuda" else "--",
                marker="o" if backend == "cuda" else "s", linewidth=1.6, markersize=4)


def _panels(rows, op: str) -> list[tuple[str, str | None]]:
    precisions = list(dict.fromkeys(r["precision"] for r in rows))
    if op == "softmax":
        layouts = sorted(dict.fromkeys(layout(r["shape"]) for r in rows), reverse=True)  # rows first
        return [(p, lay) for p in precisions for lay in layouts]
    return [(p, None) for p in precisions]


def bandwidth(time_payload, out_dir, op: str) -> list[Path]:

    rows = [r for r in _ok(time_payload["rows"]) if r.get("op") == op]
    if not rows:
        return []
    plt = plot_style.pyplot()
    ceilings = (time_payload.get("meta") or {}).get("ceilings") or {}
    copy = ceilings.get("copy_gbps")
    versions = list(dict.fromkeys(r["version"] for r in rows if r["backend"] in ("cuda", "triton")))
    colours = {v: VERSION_COLOURS[i % len(VERSION_COLOURS)] for i, v in enumerate(versions)}
    panels = _panels(rows, op)
    ncols = 2 if op == "softmax" and len(panels) > 1 else min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.6 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    target = _target_fraction(op)
    for ax, (precision, lay) in zip(axes.flat, panels):
        at = [r for r in rows if r["precision"] == precision and (lay is None or layout(r["shape"]) == lay)]
        for name in dict.fromkeys(r["kernel"] for r in at):
            mine = sorted((num(r["compulsory_bytes"]), num(r["gbps_compulsory"]), r) for r in at
                          if r["kernel"] == name)
            ax.plot([m[0] for m in mine], [m[1] for m in mine], label=name,
                    **_style(mine[0][2], colours))
        if copy:
            ax.axhline(copy, color="black", linestyle=":", linewidth=1.2,
                       label=f"copy bandwidth, this run: {copy:.0f} GB/s (DRAM read + write)")
            if target:
                ax.axhline(target * copy, color="#d62728", linestyle=":", linewidth=1.0,
                           label=f"target at the largest shape: {target:.0%} of copy")
        ax.set_xscale("log", base=2)
        plot_style.binary_axis(ax.xaxis, most=7)   # a tick label is wide: fewer of them
        plot_style.log_y(ax)
        ax.set_xlabel("compulsory bytes per launch (inputs read once + output written once)")
        ax.set_ylabel("DRAM GB/s  (compulsory bytes / median time)")
        ax.set_title(f"{op}, {precision}" + (f", {lay}" if lay else ""))
    handles, labels = plot_style.legend_entries(axes.flat[:len(panels)])
    fig.suptitle(f"{op}: achieved DRAM bandwidth versus size, each precision in its own "
                 f"panel\n{plot_style.env_line(time_payload)}", fontsize=10)
    fig.tight_layout(rect=(0, 0.11 / nrows, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8.5, frameon=False)
    return plot_style.save(fig, out_dir, f"bandwidth_{op}")


def _target_fraction(op: str) -> float | None:
    if not is_memory_op(op):
        return None
    p = problem(op)
    return p.bandwidth_target if p.target_shapes else None


def targets(time_payload, out_dir) -> list[Path]:
    """% of the copy bandwidth of every kernel at each op's target shape (float32)."""
    rows = _ok(time_payload["rows"])
    groups = []
    for op in dict.fromkeys(r["op"] for r in rows if _is_memory(r)):
        shapes = problem(op).target_shapes
        for shape in [s for s in shapes.split(",") if s]:
            at = [r for r in rows if r["op"] == op and r["shape"] == shape and r["precision"] == "fp32"]
            if at:
                groups.append((op, shape, at))
    if not groups:
        return []
    plt = plot_style.pyplot()
    width = max(8.0, 1.9 * sum(len(g[2]) for g in groups) / 2)
    fig, ax = plt.subplots(figsize=(width, 4.8))
    x, ticks, labels = 0.0, [], []
    for op, shape, at in groups:
        start = x
        for r in at:
            style = _style(r, {})
            face = {"cuda": "#1f77b4", "triton": "#ff7f0e"}.get(r["backend"], style["color"])
            pct = num(r.get("pct_roof"))
            ax.bar(x, pct, width=0.8, color=face,
                   hatch="///" if r["backend"] == "triton" else None, edgecolor="black", linewidth=0.5)
            ax.text(x, pct + 1, f"{pct:.0f}", ha="center", va="bottom", fontsize=7)
            ticks.append(x)
            labels.append(r["kernel"])
            x += 1
        target = _target_fraction(op)
        if target:
            ax.plot([start - 0.5, x - 0.5], [100 * target] * 2, color="#d62728", linestyle="--",
                    linewidth=1.2)
        moved = plot_style.bytes_fmt(num(at[0]["compulsory_bytes"]))
        ax.text((start + x - 1) / 2, 108, f"{op} {shape} ({moved} moved)", ha="center",
                va="center", fontsize=8)
        x += 0.8
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=50, ha="right", fontsize=7, rotation_mode="anchor")
    ax.set_ylabel("DRAM GB/s (compulsory bytes / time)\nas % of the copy bandwidth of this run")
    ax.set_ylim(0, 115)
    ax.set_title("Memory-bound ops at their target shapes, fp32: red dashes = the target; "
                 "CUDA blue, Triton orange (hatched), PyTorch eager black, torch.compile grey")
    fig.tight_layout()
    return plot_style.save(fig, out_dir, "memory_targets")


def caption(name: str) -> str | None:
    if not name.startswith("bandwidth_") and name != "memory_targets":
        return None
    if name == "memory_targets":
        return ("Memory-bound ops at their target shapes: % of the copy bandwidth measured in "
                "the same run, the target dashed.")
    return (f"{name[len('bandwidth_'):]}: achieved DRAM GB/s (compulsory bytes / median time) "
            "versus the bytes the op must move, one panel per precision; CUDA solid, Triton "
            "dashed, PyTorch eager black, torch.compile grey; the copy bandwidth measured in "
            "the same run and the target as horizontal lines.")


def all_figures(time_payload, out_dir) -> dict[str, list[Path]]:
    made = {}
    ops = dict.fromkeys(r.get("op") for r in _ok(time_payload["rows"]) if _is_memory(r))
    for op in ops:
        made[f"bandwidth_{op}"] = bandwidth(time_payload, out_dir, op)
    made["memory_targets"] = targets(time_payload, out_dir)
    return {k: v for k, v in made.items() if v}
