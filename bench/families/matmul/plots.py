"""`python -m bench plot`: the lecture's figures, drawn from result files only.

    throughput   TFLOP/s versus size; one colour per ladder version, solid CUDA, dashed
                 Triton twin; cuBLAS and the measured ceilings as reference lines
    traffic      per version, model vs issued vs L1 vs L2 vs DRAM vs shared (log scale),
                 CUDA and Triton side by side: the lecture's count next to what moved
    model        (no counters needed) the model per version at two sizes, with the
                 lecture formula's count beside it
    roofline     measured copy bandwidth and cuBLAS as roofs, one point per kernel
    lecture      traffic on the left, throughput on the right: the slide

Every figure is written as PNG (for the README and slides) and SVG (for editing). The
functions take payloads as bench/results.py reads them; nothing here runs a kernel.
"""
from __future__ import annotations

import math
from pathlib import Path

from bench.families.matmul.models import LADDER_VERSIONS
from bench.plot_style import bytes_fmt, env_line, log_y, pyplot, save
from bench.results import num

LEVELS = (  # (label, column of a profile row, what it is)
    ("model", "model_global_load_bytes", "global loads the threads issue (closed form)"),
    ("issued", "issued_bytes", "bytes of the load instructions executed"),
    ("L1", "l1_bytes", "bytes requested at L1 (32-byte sectors)"),
    ("L2", "l2_bytes", "bytes L1 fetched from L2"),
    ("DRAM", "dram_read_bytes", "bytes read from HBM"),
    ("shared", "shared_bytes", "bytes loaded from shared memory"),
)
LANG_STYLE = {"cuda": "-", "triton": "--"}
PRECISION_COLOURS = {"fp32": "#222222", "tf32": "#1b9e77", "fp16": "#d95f02", "bf16": "#7570b3"}


def _ok(rows):
    return [r for r in rows if r.get("status", "ok") == "ok"]


# ---------------------------------------------------------------------------------------
# Who is who: ladder versions, colours, labels (from the rows themselves)
# ---------------------------------------------------------------------------------------

LADDER_ORDER = LADDER_VERSIONS


def ladder(rows) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(versions in order, kernel -> ladder version, version -> colour).

    A CUDA kernel's version is its rung; a Triton kernel takes the rung of the CUDA
    kernel whose twin it is (so twins share a colour), else its own version label.
    """
    import matplotlib

    version_of: dict[str, str] = {}
    order: list[str] = []
    for r in rows:
        if r.get("backend") == "cuda":
            version_of[r["kernel"]] = r["version"]
            if r["version"] not in order:
                order.append(r["version"])
            if r.get("twin"):
                version_of[r["twin"]] = r["version"]
    for r in rows:
        if r.get("backend") == "triton" and r["kernel"] not in version_of:
            version_of[r["kernel"]] = r["version"]
            if r["version"] not in order:
                order.append(r["version"])
    # Ladder rungs in the lecture's order whatever order the rows came in (a profile run
    # appended later must not reshuffle the colours), then any other label as found.
    order.sort(key=lambda v: (LADDER_ORDER.index(v) if v in LADDER_ORDER else len(LADDER_ORDER)))
    cmap = matplotlib.colormaps["tab10"]
    colours = {v: matplotlib.colors.to_hex(cmap(i % 10)) for i, v in enumerate(order)}
    return order, version_of, colours


def _size_ticks(ax, sizes):
    sizes = sorted(set(sizes))
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(int(s)) if float(s).is_integer() else f"{s:.0f}" for s in sizes])
    ax.minorticks_off()


# ---------------------------------------------------------------------------------------
# Throughput versus size
# ---------------------------------------------------------------------------------------

def _throughput_panel(ax, rows, ceilings, legend=True):
    rows = [r for r in rows if r.get("op", "matmul") == "matmul"]  # colours from matmul rows only
    order, version_of, colours = ladder(rows)
    fp32 = [r for r in _ok(rows) if r["precision"] == "fp32" and r.get("tflops")]
    sizes = sorted({num(r["size"]) for r in fp32})
    kernels = list(dict.fromkeys(r["kernel"] for r in fp32))
    for name in kernels:
        pts = sorted((num(r["size"]), num(r["tflops"])) for r in fp32 if r["kernel"] == name)
        backend = next(r["backend"] for r in fp32 if r["kernel"] == name)
        if backend in LANG_STYLE:
            style = dict(color=colours.get(version_of.get(name), "grey"),
                         linestyle=LANG_STYLE[backend], marker="o" if backend == "cuda" else "s",
                         markersize=4, linewidth=1.6)
        else:
            style = dict(color="black", linestyle="-", marker="^", markersize=4, linewidth=2.2)
        ax.plot(*zip(*pts), label=f"{name} (fp32)", **style)
    c = ceilings or {}
    peak = (c.get("cublas_tflops") or {}).get("fp32")
    if peak:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                   label=f"measured ceiling: cuBLAS fp32 at {c.get('cublas_shape', '?')} "
                         f"= {peak:.1f}")
    nominal = c.get("fp32_nominal_peak_tflops")
    if nominal:
        ax.axhline(nominal, color="grey", linestyle="-.", linewidth=1.0,
                   label=f"nominal FP32 peak (SMs x 128 x 2 x clock) = {nominal:.1f}")
    log_y(ax)
    if sizes:
        _size_ticks(ax, sizes)
    ax.set_xlabel("N  (square N x N x N product)")
    ax.set_ylabel("TFLOP/s  (2N³ / median time)")
    ax.set_title("FP32 matmul on CUDA cores (FFMA, no tensor cores)")
    if legend:
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _tensor_panel(ax, rows, ceilings):
    tc = [r for r in _ok(rows) if r["precision"] != "fp32" and r.get("tflops")]
    sizes = sorted({num(r["size"]) for r in tc})
    for (name, prec) in dict.fromkeys((r["kernel"], r["precision"]) for r in tc):
        pts = sorted((num(r["size"]), num(r["tflops"])) for r in tc
                     if r["kernel"] == name and r["precision"] == prec)
        backend = next(r["backend"] for r in tc if r["kernel"] == name)
        ax.plot(*zip(*pts), color=PRECISION_COLOURS.get(prec, "grey"),
                linestyle="-" if backend == "cublas" else "--",
                marker="^" if backend == "cublas" else "s", markersize=4,
                label=f"{name} ({prec})")
    log_y(ax)
    if sizes:
        _size_ticks(ax, sizes)
    ax.set_xlabel("N  (square N x N x N product)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("Tensor-core precisions (tf32 / fp16 / bf16): not comparable with FP32 FFMA")
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def throughput(time_payload, out_dir) -> list[Path]:
    plt = pyplot()
    rows = [r for r in time_payload["rows"] if r.get("op", "matmul") == "matmul"]
    ceilings = time_payload.get("meta", {}).get("ceilings", {})
    has_tc = any(r["precision"] != "fp32" and r.get("tflops") for r in _ok(rows))
    if has_tc:
        fig, (a, b) = plt.subplots(2, 1, figsize=(10, 9.5))
        _throughput_panel(a, rows, ceilings)
        _tensor_panel(b, rows, ceilings)
    else:
        fig, a = plt.subplots(figsize=(10, 5))
        _throughput_panel(a, rows, ceilings)
    fig.suptitle(env_line(time_payload), fontsize=8, y=0.995, color="dimgrey")
    fig.tight_layout()
    return save(fig, out_dir, "throughput")


# ---------------------------------------------------------------------------------------
# Traffic, level by level
# ---------------------------------------------------------------------------------------

def _pick_shape(rows, prefer: str | None = None) -> str | None:
    shapes = [r["shape"] for r in rows]
    if prefer and prefer in shapes:
        return prefer
    if not shapes:
        return None
    return max(set(shapes), key=lambda s: (shapes.count(s), s))


def _traffic_axes(ax, by_lang: dict, colour: str, title: str, ymin: float, ymax: float):
    """Grouped bars: x = level, one bar per language (CUDA solid, Triton hatched)."""
    labels = [lv[0] for lv in LEVELS]
    langs = [l for l in ("cuda", "triton") if l in by_lang]
    width = 0.8 / max(1, len(langs))
    for j, lang in enumerate(langs):
        row = by_lang[lang]
        for i, (_label, col, _doc) in enumerate(LEVELS):
            v = num(row.get(col))
            x = i + (j - (len(langs) - 1) / 2) * width
            if math.isnan(v) or v <= 0:
                ax.text(x, ymin * 1.6, "n/a" if math.isnan(v) else "0", ha="center",
                        va="bottom", fontsize=6, rotation=90, color="dimgrey")
                continue
            ax.bar(x, v, width=width * 0.95, color=colour if lang == "cuda" else "white",
                   edgecolor=colour, hatch=None if lang == "cuda" else "///", linewidth=1.2)
    log_y(ax, bytes_axis=True)
    ax.set_ylim(ymin, ymax)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8, rotation=40, ha="right", rotation_mode="anchor")
    ax.set_title(title, fontsize=9)


def _short(group: dict) -> str:
    """'thread_tiling' from cuda_v1.5_thread_tiling: the idea, without language and rung."""
    row = group.get("cuda") or group.get("triton")
    name = row["kernel"].split("_", 1)[-1]          # drop cuda_/triton_
    return name.split("_", 1)[-1] if "_" in name else name  # drop the version


def _traffic_groups(rows, shape):
    """version -> {"cuda": row, "triton": row} at one shape (fp32 rows first)."""
    order, version_of, colours = ladder(rows)
    at = [r for r in _ok(rows) if r["shape"] == shape]
    at.sort(key=lambda r: r["precision"] != "fp32")
    groups: dict[str, dict] = {}
    for r in at:
        lang = r["backend"]
        if lang not in LANG_STYLE:
            continue
        v = version_of.get(r["kernel"], r["version"])
        groups.setdefault(v, {}).setdefault(lang, r)
    return [v for v in order if v in groups], groups, colours


def _value_range(groups) -> tuple[float, float]:
    vals = [num(r.get(col)) for g in groups.values() for r in g.values() for _, col, _ in LEVELS]
    vals = [v for v in vals if not math.isnan(v) and v > 0]
    if not vals:
        return 1.0, 10.0
    lo = 10 ** math.floor(math.log10(min(vals)) - 0.3)
    return lo, 10 ** math.ceil(math.log10(max(vals)) + 0.2)


def traffic(profile_payload, out_dir, shape: str | None = None) -> list[Path]:
    plt = pyplot()
    rows = [r for r in profile_payload["rows"] if r.get("op", "matmul") == "matmul"]
    shape = _pick_shape(_ok(rows), shape)
    versions, groups, colours = _traffic_groups(rows, shape)
    if not versions:
        return []
    ymin, ymax = _value_range(groups)
    n = len(versions)
    fig, axes = plt.subplots(1, n, figsize=(2.6 * n + 1, 4.6), sharey=True, squeeze=False)
    for ax, v in zip(axes[0], versions):
        g = groups[v]
        langs = " + ".join({"cuda": "CUDA", "triton": "Triton"}[l] for l in ("cuda", "triton")
                           if l in g)
        _traffic_axes(ax, g, colours[v], f"{v}: {_short(g)}\n({langs})", ymin, ymax)
    axes[0][0].set_ylabel(f"bytes per launch at {shape} (log)")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="grey", edgecolor="grey", label="CUDA (solid)"),
               Patch(facecolor="white", edgecolor="grey", hatch="///",
                     label="Triton twin (hatched)")]
    fig.suptitle(f"Memory traffic level by level, one launch at {shape}\n"
                 f"model and issued = what the threads ask for; L1, L2, DRAM = what each level "
                 f"moved; shared = shared-memory loads", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(handles=handles, loc="lower right", ncol=2, frameon=False, fontsize=8)
    fig.text(0.01, 0.01, env_line(profile_payload), fontsize=7, color="dimgrey")
    return save(fig, out_dir, "traffic")


# ---------------------------------------------------------------------------------------
# Model only (no GPU needed)
# ---------------------------------------------------------------------------------------

def model(model_payload, out_dir) -> list[Path]:
    """Per version, the model's global loads, shared loads and the compulsory bytes, at
    each modelled size, with the lecture formula's count marked."""
    plt = pyplot()
    rows = [r for r in model_payload["rows"] if r.get("op", "matmul") == "matmul"
            and r.get("backend") == "cuda"]
    if not rows:
        return []
    order = list(dict.fromkeys(r["version"] for r in rows))
    shapes = sorted(dict.fromkeys(r["shape"] for r in rows), key=lambda s: num(
        next(r["size"] for r in rows if r["shape"] == s)))
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.2 * len(shapes), 4.8), squeeze=False)
    series = (("global loads (model)", "global_load_bytes", "#1f77b4"),
              ("shared loads (model)", "shared_load_bytes", "#ff7f0e"),
              ("compulsory (each byte once)", "compulsory_bytes", "#7f7f7f"))

    for ax, shape in zip(axes[0], shapes):
        at = {r["version"]: r for r in rows if r["shape"] == shape}
        w = 0.27
        for j, (label, col, colour) in enumerate(series):
            xs, ys = [], []
            for i, v in enumerate(order):
                y = num(at.get(v, {}).get(col))
                if not math.isnan(y) and y > 0:
                    xs.append(i + (j - 1) * w)
                    ys.append(y)
            ax.bar(xs, ys, width=w * 0.95, color=colour, label=label)
            if col == "global_load_bytes":
                for x, y in zip(xs, ys):
                    ax.annotate(bytes_fmt(y), (x, y), textcoords="offset points",
                                xytext=(0, 12), ha="center", fontsize=7)
        lows = [num(r.get("compulsory_bytes")) for r in at.values()]
        highs = [num(r.get("global_load_bytes")) for r in at.values()]
        ax.set_ylim(min(lows) / 4, max(highs) * 6)
        for i, v in enumerate(order):
            r = at.get(v)
            lec = num(r.get("lecture_global_loads")) if r else math.nan
            if not math.isnan(lec):
                eb = num(r["elem_bytes"])
                ax.plot([i - 1.5 * w, i - 0.5 * w], [lec * eb] * 2, color="black", linewidth=2)
                f = r.get("formula") or ""
                if f:
                    ax.annotate(f, (i - w, lec * eb), textcoords="offset points",
                                xytext=(0, 22), ha="center", fontsize=7, style="italic")
        log_y(ax, bytes_axis=True)
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order)
        ax.set_xlabel("ladder version (CUDA)")
        ax.set_title(f"{shape}: closed-form traffic (fp32, 4 B per element)")
    axes[0][0].set_ylabel("bytes per launch (log)")
    axes[0][0].plot([], [], color="black", linewidth=2, label="lecture formula (square N)")
    axes[0][-1].legend(fontsize=8, loc="upper right", frameon=False)
    fig.suptitle("Traffic the models predict for the CUDA ladder (closed form, no GPU needed); "
                 "black tick = the lecture's formula", fontsize=11)
    fig.tight_layout()
    return save(fig, out_dir, "model_traffic")


# ---------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------

def _spread_labels(ys: list[float], min_gap: float) -> list[float]:
    """Offsets (same units as ys) that keep labels at least min_gap apart: points with
    (nearly) equal y, e.g. kernels of equal speed at one intensity, would print their names
    on top of each other. Labels move up in order of y; the offsets stay small."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed: list[float] = []
    out = [0.0] * len(ys)
    for i in order:
        y = ys[i]
        if placed and y < placed[-1] + min_gap:
            y = placed[-1] + min_gap
        placed.append(y)
        out[i] = y - ys[i]
    return out


def roofline(time_payload, out_dir, profile_payload=None, shape: str | None = None,
             ladder_only: bool = False, fig_name: str = "roofline") -> list[Path]:
    """One point per kernel at one profiled shape (the most profiled one unless ``shape``);
    ``ladder_only`` keeps the lecture's versions and their twins."""
    plt = pyplot()
    trows = [r for r in _ok(time_payload["rows"]) if r.get("op", "matmul") == "matmul"
             and r.get("tflops")]
    c = time_payload.get("meta", {}).get("ceilings", {}) or {}
    bw = c.get("copy_gbps")
    cub = c.get("cublas_tflops") or {}
    if not trows or not bw or not cub.get("fp32"):
        return []
    order, version_of, colours = ladder(trows + (profile_payload or {}).get("rows", []))
    prows = [r for r in _ok((profile_payload or {}).get("rows", []))
             if r.get("op", "matmul") == "matmul"
             and (not ladder_only or version_of.get(r["kernel"]) in LADDER_ORDER)]
    at = _pick_shape(prows, shape)
    prows = [r for r in prows if r["shape"] == at]  # one point per kernel: one shape
    points = []
    if prows:  # measured DRAM bytes at the profiled shape
        for p in prows:
            t = next((r for r in trows if r["kernel"] == p["kernel"] and r["shape"] == p["shape"]
                      and r["precision"] == p["precision"]), None)
            dram = num(p.get("dram_read_bytes")) + num(p.get("dram_write_bytes"))
            if t and not math.isnan(dram) and dram > 0:
                points.append((p["kernel"], p["backend"], t["precision"],
                               num(t["flops"]) / dram, num(t["tflops"]), p["shape"]))
        basis = "intensity from DRAM bytes measured by ncu"
        xs_m = [p[3] for p in points]
        if xs_m and max(xs_m) < 1.1 * min(xs_m):
            basis += ": the same for every kernel, whose inputs fit in L2 at this size"
    if not points and ladder_only:
        return []
    if not points:  # compulsory bytes at the largest timed shape
        big = max(trows, key=lambda r: num(r["size"]))["shape"]
        for r in trows:
            if r["shape"] == big:
                points.append((r["kernel"], r["backend"], r["precision"],
                               num(r["flops"]) / num(r["compulsory_bytes"]), num(r["tflops"]),
                               big))
        basis = "intensity from compulsory bytes (no counters in this result set)"
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [p[3] for p in points]
    # from well left of the ridge point (bandwidth-bound side) to right of every point
    ridge = cub["fp32"] * 1e12 / (bw * 1e9)
    lo, hi = min(xs + [ridge]) / 8, max(xs + [ridge]) * 8
    import numpy as np

    grid = np.logspace(math.log10(lo), math.log10(hi), 200)
    ax.plot(grid, np.minimum(bw * 1e9 * grid / 1e12, cub["fp32"]), color="black", linewidth=2,
            label=f"roof: copy {bw / 1e3:.2f} TB/s, cuBLAS fp32 {cub['fp32']:.1f} TFLOP/s")
    for prec, ls in (("tf32", ":"), ("fp16", "--"), ("bf16", "-.")):
        if cub.get(prec) and any(p[2] == prec for p in points):
            ax.plot(grid, np.minimum(bw * 1e9 * grid / 1e12, cub[prec]),
                    color=PRECISION_COLOURS[prec], linestyle=ls, linewidth=1,
                    label=f"roof with cuBLAS {prec} {cub[prec]:.0f} TFLOP/s (tensor cores)")
    label_dy = _spread_labels([math.log10(p[4]) for p in points], min_gap=0.07)
    for (name, backend, prec, x, y, shape), dy in zip(points, label_dy):
        colour = colours.get(version_of.get(name)) if backend in LANG_STYLE else "black"
        colour = colour or PRECISION_COLOURS.get(prec, "grey")
        ax.scatter([x], [y], color=colour, marker={"cuda": "o", "triton": "s"}.get(backend, "^"),
                   s=36, zorder=3, edgecolor="black", linewidth=0.5)
        ax.annotate(f"{name} ({prec})", (x, y * 10 ** dy), textcoords="offset points",
                    xytext=(6, -3), fontsize=6.5)
    ax.set_xscale("log")
    log_y(ax)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("TFLOP/s")
    shapes = sorted({p[5] for p in points})
    which = "the lecture's versions and their Triton twins" if ladder_only else "every kernel"
    ax.set_title(f"Roofline with the ceilings measured in this run: {which}, at "
                 f"{', '.join(shapes)}\n({basis})", fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left")
    fig.tight_layout()
    return save(fig, out_dir, fig_name)


def _largest_profiled_matmul(profile_payload) -> str | None:
    rows = [r for r in _ok(profile_payload.get("rows", [])) if r.get("op", "matmul") == "matmul"]
    shapes = {r["shape"]: num(r.get("size")) for r in rows}
    if len(shapes) < 2:
        return None
    return max(shapes, key=lambda s: shapes[s])


# ---------------------------------------------------------------------------------------
# The lecture figure
# ---------------------------------------------------------------------------------------

def lecture(time_payload, profile_payload, out_dir, shape: str | None = None) -> list[Path]:
    """Left: the CUDA ladder's traffic per level (model to DRAM), per version; right:
    throughput of the ladder and its Triton twins."""
    plt = pyplot()
    prows = [r for r in _ok(profile_payload["rows"]) if r.get("op", "matmul") == "matmul"]
    shape = _pick_shape(prows, shape)
    versions, groups, colours = _traffic_groups(prows, shape)
    cuda_versions = [v for v in versions if "cuda" in groups[v]]
    if not cuda_versions:
        return []
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 5.6),
                                      gridspec_kw={"width_ratios": [1, 1.15]})
    # The global path (shared has its own story, v3 only), level by level: every level
    # after `bench profile`; the model alone where no counters were taken (the model half
    # beside timings of a GPU without Nsight Compute), with no empty legend entries.
    level_colours = ["#08306b", "#2171b5", "#6baed6", "#fd8d3c", "#d94801"]
    levels, colours_of_levels = [], []
    for lv, lc in zip(LEVELS[:5], level_colours):
        if any(num(groups[v]["cuda"].get(lv[1])) > 0 for v in cuda_versions):
            levels.append(lv)
            colours_of_levels.append(lc)
    w = 0.8 / max(len(levels), 2)
    for j, ((label, col, _doc), lc) in enumerate(zip(levels, colours_of_levels)):
        xs, ys = [], []
        for i, v in enumerate(cuda_versions):
            y = num(groups[v]["cuda"].get(col))
            if not math.isnan(y) and y > 0:
                xs.append(i + (j - (len(levels) - 1) / 2) * w)
                ys.append(y)
        left.bar(xs, ys, width=w * 0.95, color=lc, label=label)
    log_y(left, bytes_axis=True)
    left.set_xticks(range(len(cuda_versions)))
    left.set_xticklabels([f"{v}\n{_short(groups[v])}" for v in cuda_versions], fontsize=8)
    left.set_ylabel(f"bytes per launch at {shape} (log)")
    left.set_title("Global-load traffic, model down to DRAM (CUDA ladder)" if len(levels) > 1
                   else "Global-load traffic the model predicts (CUDA ladder; no counters)")
    left.legend(title="level", fontsize=8, ncol=max(len(levels), 1), loc="upper center",
                bbox_to_anchor=(0.5, -0.13), frameon=False)
    _throughput_panel(right, time_payload["rows"], time_payload.get("meta", {}).get("ceilings"),
                      legend=False)
    right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3,
                 frameon=False)
    fig.suptitle("GPU matmul v1-v3: fewer bytes asked for, more FLOP/s delivered  "
                 "(solid = CUDA, dashed = Triton twin, colour = version)", fontsize=11)
    fig.tight_layout()
    return save(fig, out_dir, "lecture")


CAPTIONS = {
    "lecture": "The lecture figure: traffic per level (left), throughput (right).",
    "throughput": "Throughput versus size: solid CUDA, dashed Triton twin, one colour per "
                  "version; cuBLAS and the measured ceilings as reference lines.",
    "traffic": "Memory traffic level by level, CUDA and Triton side by side (log scale).",
    "roofline": "Roofline with the ceilings measured in this run, one point per kernel.",
    "roofline_ladder": "The lecture's versions and their twins on the roofline at the "
                       "largest profiled size: where the inputs no longer fit in L2, the DRAM "
                       "bytes, and so the intensities, differ from version to version.",
    "model_traffic": "What the closed-form models predict, with the lecture formulas.",
}


def all_figures(s: dict, out_dir) -> dict[str, list[Path]]:
    """Every matmul figure the result set s (kind -> payload) has data for: name -> files."""
    made: dict[str, list[Path]] = {}
    if "time" in s and any(r.get("op", "matmul") == "matmul" for r in s["time"]["rows"]):
        made["throughput"] = throughput(s["time"], out_dir)
        made["roofline"] = roofline(s["time"], out_dir, s.get("profile"))
        big = _largest_profiled_matmul(s["profile"]) if "profile" in s else None
        if big:  # at a size whose inputs do not fit in L2, DRAM bytes tell versions apart
            ladder_fig = roofline(s["time"], out_dir, s["profile"], shape=big,
                                  ladder_only=True, fig_name="roofline_ladder")
            if ladder_fig:
                made["roofline_ladder"] = ladder_fig
    if "profile" in s:
        made["traffic"] = traffic(s["profile"], out_dir)
        if "time" in s:
            made["lecture"] = lecture(s["time"], s["profile"], out_dir)
    if "model" in s:
        made["model_traffic"] = model(s["model"], out_dir)
    order = ("lecture", "throughput", "traffic", "roofline", "roofline_ladder", "model_traffic")
    return {k: made[k] for k in order if made.get(k)}
