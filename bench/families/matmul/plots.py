"""`python -m bench plot`: the lecture's figures, drawn from result files only.

    throughput   TFLOP/s versus size: fp32 (FFMA) on top, one colour per ladder version,
                 solid CUDA, dashed Triton twin; below, one panel per tensor-core precision
                 (tf32, fp16, bf16), one colour per kernel; cuBLAS and the measured
                 ceilings as reference lines; a precision the set has no rows of gets no
                 panel
    traffic      bytes per launch level by level (model, issued, L1, L2, DRAM; shared
                 apart), one line per kernel: the lecture's ladder at the profiled size
                 where DRAM tells the versions apart, the other Triton matmuls beside it
    model        (no counters needed) the model per version at two sizes, with the
                 lecture formula's count beside it
    roofline     measured copy bandwidth and cuBLAS as roofs, one point per kernel at the
                 profiled size where DRAM intensity differs between kernels: fp32 (FFMA)
                 and the tensor-core precisions in panels of their own
    lecture      traffic on the left, throughput on the right: the slide
    rounds       the kernels timed in alternating rounds, × cuBLAS per round, bar after bar in
                 the ladder's order: what each rung's idea bought
    lecture_model  (no counters needed) the slide's left half from the models alone, beside
                 the throughput where there are timings

Byte axes are in binary units (KiB, MiB, GiB); every figure is written as PNG (for the
README and slides) and SVG (for editing). The functions take payloads as bench/results.py
reads them; nothing here runs a kernel.
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

from bench.families.matmul.models import is_ladder, ladder_order
from bench.families.matmul.report import is_ladder_row
from bench.plot_style import bytes_fmt, env_line, legend_entries, log_y, pyplot, save
from bench.results import num
from bench.text import cube

LEVELS = (  # (label, column of a profile row, what it is)
    ("model", "model_global_load_bytes", "global loads the threads issue (closed form)"),
    ("issued", "issued_bytes", "bytes of the load instructions executed"),
    ("L1", "l1_bytes", "bytes requested at L1 (32-byte sectors)"),
    ("L2", "l2_bytes", "bytes L1 fetched from L2"),
    ("DRAM", "dram_read_bytes", "bytes read from HBM"),
    ("shared", "shared_bytes", "bytes loaded from shared memory"),
)
# The level names as a figure's axis shows them: which level counts the bytes.
LEVEL_TICKS = {"model": "model\n(threads ask,\nclosed form)",
               "issued": "issued\n(threads ask,\ncounted)", "L1": "L1\n(requested)",
               "L2": "L2\n(L1 misses)", "DRAM": "DRAM\n(read)", "shared": "shared\n(loads)"}
LANG_STYLE = {"cuda": "-", "triton": "--"}
TENSOR_CORE_PRECISIONS = ("tf32", "fp16", "bf16")
# markers that tell kernels of one colour family apart in print (tensor-core panels)
MARKERS = ("s", "D", "v", "P", "X", "h", "<", ">")
REFERENCE_COLOUR = "black"   # cuBLAS


def _ok(rows):
    return [r for r in rows if r.get("status", "ok") == "ok"]


# ---------------------------------------------------------------------------------------
# Who is who: ladder versions, colours, labels (from the rows themselves)
# ---------------------------------------------------------------------------------------

RUNG_COLOURS = {"v1": "#1f77b4", "v1c": "#ff7f0e", "v1.5": "#2ca02c", "v2": "#d62728",
                "v3": "#9467bd", "v4": "#17becf", "v5": "#000080", "v6": "#e6ab02",
                "v7": "#a6761d", "v8": "#666666", "t1": "#1b9e77", "t2": "#3f007d",
                "t3": "#c51b7d", "t4": "#ff4500", "t5": "#7fbc41"}
OTHER_COLOURS = ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a",
                 "#637939", "#d6616b"]


def ladder(rows) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(versions in order, kernel -> ladder version, version -> colour).

    A CUDA kernel's version is its rung; a Triton kernel takes the rung of the CUDA
    kernel whose twin it is (so twins share a colour), else its own version label.
    """
    import matplotlib

    version_of: dict[str, str] = {}
    order: list[str] = []
    # matmul rows only: the memory-bound ops' versions must not shift the ladder's colours
    rows = [r for r in rows if is_ladder_row(r)]
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
    order.sort(key=ladder_order)
    # Each rung keeps one colour whatever else is drawn (the lecture's five as they always
    # were, tab10's first five); the other labels (the Triton matmuls past the ladder) take
    # the remaining colours in order, so no two lines of a figure share one.
    colours = {v: RUNG_COLOURS[v] for v in order if v in RUNG_COLOURS}
    spare = [c for c in OTHER_COLOURS if c not in colours.values()]
    for v in order:
        if v not in colours:
            colours[v] = spare.pop(0) if spare else matplotlib.colors.to_hex(
                matplotlib.colormaps["tab20"](len(colours) % 20))
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

def _kernel_style(name: str, backend: str, version_of: dict, colours: dict) -> dict:
    """One kernel's line everywhere: its version's colour (twins share it), solid CUDA with
    circles, dashed Triton with squares; cuBLAS thick black with triangles."""
    if backend in LANG_STYLE:
        return dict(color=colours.get(version_of.get(name), "grey"),
                    linestyle=LANG_STYLE[backend], marker="o" if backend == "cuda" else "s",
                    markersize=4, linewidth=1.6)
    return dict(color=REFERENCE_COLOUR, linestyle="-", marker="^", markersize=5, linewidth=2.2)


def _throughput_panel(ax, rows, ceilings, legend=True):
    rows = [r for r in rows if is_ladder_row(r)]  # colours from matmul rows only
    order, version_of, colours = ladder(rows)
    fp32 = [r for r in _ok(rows) if r["precision"] == "fp32" and r.get("tflops")]
    sizes = sorted({num(r["size"]) for r in fp32})
    kernels = list(dict.fromkeys(r["kernel"] for r in fp32))
    for name in kernels:
        pts = sorted((num(r["size"]), num(r["tflops"])) for r in fp32 if r["kernel"] == name)
        backend = next(r["backend"] for r in fp32 if r["kernel"] == name)
        ax.plot(*zip(*pts), label=name, **_kernel_style(name, backend, version_of, colours))
    c = ceilings or {}
    peak = (c.get("cublas_tflops") or {}).get("fp32")
    if peak:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                   label=f"measured ceiling: cuBLAS fp32 at {c.get('cublas_shape', '?')} "
                         f"= {peak:.1f}")
    nominal = c.get("fp32_nominal_peak_tflops")
    if nominal:
        ax.axhline(nominal, color="grey", linestyle="-.", linewidth=1.0,
                   label=f"nominal FP32 peak (SMs x FP32 lanes x 2 x clock) = {nominal:.1f}")
    log_y(ax)
    if sizes:
        _size_ticks(ax, sizes)
    ax.set_xlabel("N  (square N x N x N product)")
    ax.set_ylabel("TFLOP/s  (2N³ / median time)")
    ax.set_title("fp32: FFMA on CUDA cores (no tensor cores)")
    if legend:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  title="solid CUDA, dashed Triton;\ncolour = ladder version", title_fontsize=8)


def _tensor_kernels(rows) -> list[str]:
    """The kernels of the tensor-core panels, in order, cuBLAS last."""
    names = list(dict.fromkeys(r["kernel"] for r in rows))
    return sorted(names, key=lambda n: next(r["backend"] for r in rows if r["kernel"] == n)
                  in ("cublas",))


def tensor_styles(tc_rows, rows) -> dict[str, dict]:
    """kernel -> line style of the tensor-core panels: every kernel keeps its colour in
    every panel (its version's, as in the fp32 panel; cuBLAS black), and a marker of its
    own tells it apart in print."""
    _order, version_of, colours = ladder(rows)
    styles = {}
    for i, name in enumerate(_tensor_kernels(tc_rows)):
        backend = next(r["backend"] for r in tc_rows if r["kernel"] == name)
        style = _kernel_style(name, backend, version_of, colours)
        if backend in LANG_STYLE:
            style.update(linestyle="-", marker=MARKERS[i % len(MARKERS)], markersize=5)
        styles[name] = style
    return styles


def _tensor_panel(ax, rows, precision, ceilings, styles):
    """One tensor-core precision: one line per kernel, the colours of the fp32 panel."""
    at = [r for r in rows if r["precision"] == precision]
    for name in _tensor_kernels(at):
        pts = sorted((num(r["size"]), num(r["tflops"])) for r in at if r["kernel"] == name)
        ax.plot(*zip(*pts), label=name, **styles[name])
    peak = ((ceilings or {}).get("cublas_tflops") or {}).get(precision)
    if peak:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1.2)
        ax.annotate(f"cuBLAS at {cube((ceilings or {}).get('cublas_shape', '?'))}: "
                    f"{peak:.0f}", (0.02, peak), xycoords=("axes fraction", "data"),
                    xytext=(0, 3), textcoords="offset points", fontsize=7.5)
    log_y(ax)
    _size_ticks(ax, [num(r["size"]) for r in at])
    ax.set_xlabel("N")
    ax.set_title(f"{precision} (tensor cores)")


def throughput(time_payload, out_dir) -> list[Path]:
    fig = throughput_figure(time_payload)
    return save(fig, out_dir, "throughput") if fig is not None else []


def throughput_figure(time_payload):
    """The throughput figure (a matplotlib Figure, not saved), or None without a timed row:
    the fp32 panel on top, a row of tensor-core panels below, each only where the set has
    rows of its precision (a set of 16-bit rows only gets the bottom row alone)."""
    plt = pyplot()
    rows = [r for r in time_payload["rows"] if is_ladder_row(r)]
    ceilings = time_payload.get("meta", {}).get("ceilings", {})
    has_fp32 = any(r["precision"] == "fp32" and r.get("tflops") for r in _ok(rows))
    tc = [r for r in _ok(rows) if r["precision"] in TENSOR_CORE_PRECISIONS and r.get("tflops")]
    precisions = [p for p in TENSOR_CORE_PRECISIONS if any(r["precision"] == p for r in tc)]
    if not precisions:
        if not has_fp32:
            return None
        fig, a = plt.subplots(figsize=(11, 5))
        _throughput_panel(a, rows, ceilings)
        fig.suptitle(env_line(time_payload), fontsize=8, y=0.995, color="dimgrey")
        fig.tight_layout()
        return fig
    # a column on the right holds the legends of both rows
    n = len(precisions)
    if has_fp32:
        fig = plt.figure(figsize=(15, 10.5))
        grid = fig.add_gridspec(2, n + 1, height_ratios=[1.1, 1], width_ratios=[1] * n + [0.8])
        top = fig.add_subplot(grid[0, :n])
        _throughput_panel(top, rows, ceilings, legend=False)
        top_legend = fig.add_subplot(grid[0, n])
        top_legend.axis("off")
        top_legend.legend(*top.get_legend_handles_labels(), loc="center left", fontsize=8,
                          frameon=False, title="fp32: solid CUDA, dashed Triton twin,\n"
                                               "colour = ladder version", title_fontsize=8)
        bottom = [grid[1, j] for j in range(n + 1)]   # the panels, then the legend
    else:   # no fp32 row: no fp32 panel, the tensor-core row alone
        fig = plt.figure(figsize=(15, 5.6))
        grid = fig.add_gridspec(1, n + 1, width_ratios=[1] * n + [0.8])
        bottom = [grid[0, j] for j in range(n + 1)]
    styles = tensor_styles(tc, rows)
    axes = []
    for j, p in enumerate(precisions):
        ax = fig.add_subplot(bottom[j], sharey=axes[0] if axes else None)
        _tensor_panel(ax, tc, p, ceilings, styles)
        axes.append(ax)
    axes[0].set_ylabel("TFLOP/s")
    handles, labels = legend_entries(axes)
    bottom_legend = fig.add_subplot(bottom[n])
    bottom_legend.axis("off")
    bottom_legend.legend(handles, labels,
                         loc="center left", fontsize=8.5, frameon=False,
                         title="tensor cores: one colour per kernel,\ndotted = cuBLAS at "
                               f"{ceilings.get('cublas_shape', '?')}", title_fontsize=8)
    fig.suptitle("Matmul throughput versus size, each precision against cuBLAS at the same "
                 "precision\n" + env_line(time_payload), fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------
# Which profiled size to draw
# ---------------------------------------------------------------------------------------

def _pick_shape(rows, prefer: str | None = None) -> str | None:
    shapes = [r["shape"] for r in rows]
    if prefer and prefer in shapes:
        return prefer
    if not shapes:
        return None
    return max(set(shapes), key=lambda s: (shapes.count(s), s))


def _dram(r) -> float:
    return num(r.get("dram_read_bytes")) + num(r.get("dram_write_bytes"))


def contrast_shape(prows, prefer: str | None = None) -> str | None:
    """The profiled size to draw DRAM traffic at: the largest one with two kernels or more
    whose DRAM bytes differ between kernels (by a quarter or more). Below it the inputs of
    every kernel fit in L2 (50 MiB on the H100): DRAM then moves the compulsory bytes for
    all of them and tells nothing apart. The most profiled size if no size qualifies."""
    if prefer:
        return _pick_shape(prows, prefer)
    sizes = {r["shape"]: num(r.get("size")) for r in prows}
    for shape in sorted(sizes, key=lambda s: -sizes[s]):
        dram = [_dram(r) for r in prows if r["shape"] == shape]
        dram = [d for d in dram if not math.isnan(d) and d > 0]
        if len(dram) >= 2 and max(dram) >= 1.25 * min(dram):
            return shape
    return _pick_shape(prows)


def _largest_profiled_matmul(profile_payload) -> str | None:
    rows = [r for r in _ok(profile_payload.get("rows", [])) if is_ladder_row(r)]
    shapes = {r["shape"]: num(r.get("size")) for r in rows}
    if len(shapes) < 2:
        return None
    return max(shapes, key=lambda s: shapes[s])


def _precisions(rows) -> str:
    return ", ".join(dict.fromkeys(r["precision"] for r in rows))


# ---------------------------------------------------------------------------------------
# Traffic, level by level
# ---------------------------------------------------------------------------------------

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


def _staircase(ax, rows, version_of, colours) -> list[str]:
    """One line per kernel across the global-memory levels (model to DRAM), and its shared
    loads apart, on a log axis of bytes. Returns the kernels whose counters read 0 at a
    level (drawn as a triangle on the bottom edge)."""
    path = [lv for lv in LEVELS if lv[0] != "shared"]
    shared_x = len(path) + 0.4
    zeros = []
    values = []
    for r in rows:
        style = _kernel_style(r["kernel"], r["backend"], version_of, colours)
        ys = [num(r.get(col)) for _l, col, _d in path]
        values += [y for y in ys if y > 0]
        ax.plot(range(len(path)), [y if y > 0 else math.nan for y in ys],
                label=f"{r['kernel']} ({r['precision']})", **style)
        sh = num(r.get("shared_bytes"))
        if sh > 0:
            values.append(sh)
            ax.plot([shared_x], [sh], linestyle="none", marker=style["marker"],
                    color=style["color"], markersize=5)
        for x, y in enumerate(ys):
            if y == 0:
                zeros.append((x, style["color"], r["kernel"]))
    lo, hi = (min(values), max(values)) if values else (1.0, 2.0)
    ax.set_yscale("log", base=2)
    ax.set_ylim(lo / 3, hi * 3)
    log_y(ax, bytes_axis=True)
    for x, colour, _name in zeros:
        ax.plot([x], [lo / 2.4], marker="v", color=colour, markersize=7, linestyle="none",
                clip_on=False)
    ax.axvline(len(path) - 0.3, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(list(range(len(path))) + [shared_x])
    ax.set_xticklabels([LEVEL_TICKS[lv[0]] for lv in path] + [LEVEL_TICKS["shared"]],
                       fontsize=8)
    ax.set_xlim(-0.3, shared_x + 0.4)
    return list(dict.fromkeys(name for _x, _c, name in zeros))


def traffic(profile_payload, out_dir, shape: str | None = None) -> list[Path]:
    """Left: the lecture's ladder (CUDA and Triton twins) at the profiled size where DRAM
    tells the versions apart; right: the other Triton matmuls at the size they were
    profiled at most. One line per kernel, from what the threads ask for down to DRAM."""
    plt = pyplot()
    rows = [r for r in _ok(profile_payload["rows"]) if is_ladder_row(r)
            and r.get("backend") in LANG_STYLE]
    order, version_of, colours = ladder(rows)
    lad = [r for r in rows if is_ladder(version_of.get(r["kernel"]))]
    rest = [r for r in rows if not is_ladder(version_of.get(r["kernel"]))]
    panels = []
    if lad:
        at = contrast_shape(lad, shape)
        panels.append(("The lecture's ladder: CUDA (solid) and its Triton twins (dashed)",
                       at, [r for r in lad if r["shape"] == at]))
    if rest:
        at = contrast_shape(rest, shape)
        panels.append(("Triton matmuls past the ladder", at, [r for r in rest if r["shape"] == at]))
    panels = [p for p in panels if p[2]]
    if not panels:
        return []
    fig, axes = plt.subplots(1, len(panels), figsize=(7.6 * len(panels), 8), squeeze=False)
    zeros = []
    for ax, (title, at, prow) in zip(axes[0], panels):
        zeros += _staircase(ax, prow, version_of, colours)
        ax.set_title(f"{title}\none launch at {at}, {_precisions(prow)}", fontsize=10)
        ax.set_ylabel("bytes per launch (log scale, binary units)")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)
    note = ("model: the bytes the threads' global loads ask for, closed form; issued: the "
            "bytes of the load instructions executed, as ncu counts them (a load that every "
            "lane of a warp makes from one address counts once: v1's broadcast operand); L1, "
            "L2, DRAM: what each level moved; shared: shared-memory loads.")
    if zeros:
        note += (f"  ▼ on the bottom edge: the counter reads 0 ({', '.join(zeros)}: TMA loads "
                 f"do not go through the load unit the issued and L1 counters watch).")
    fig.suptitle("Memory traffic level by level: what the threads ask for, and what each "
                 "level of the memory moved", fontsize=11)
    fig.text(0.01, 0.03, textwrap.fill(note, 105 * len(panels)), fontsize=8)
    fig.text(0.01, 0.005, env_line(profile_payload), fontsize=7, color="dimgrey")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return save(fig, out_dir, "traffic")


# ---------------------------------------------------------------------------------------
# Model only (no GPU needed)
# ---------------------------------------------------------------------------------------

def model(model_payload, out_dir) -> list[Path]:
    """Per version, the model's global loads, shared loads and the compulsory bytes, at
    each modelled size, with the lecture formula's count marked."""
    plt = pyplot()
    rows = [r for r in model_payload["rows"] if is_ladder_row(r)
            and r.get("backend") == "cuda"]
    if not rows:
        return []
    order = list(dict.fromkeys(r["version"] for r in rows))
    shapes = sorted(dict.fromkeys(r["shape"] for r in rows), key=lambda s: num(
        next(r["size"] for r in rows if r["shape"] == s)))
    # one panel per size, stacked, 1.25 inch per version: the rungs' formulas (three
    # to five wrapped lines under each bar group) and the byte labels stay apart
    fig, axes = plt.subplots(len(shapes), 1, figsize=(max(6.4, 1.25 * len(order)),
                                                       5.6 * len(shapes)), squeeze=False)
    series = (("global loads (model)", "global_load_bytes", "#1f77b4"),
              ("shared loads (model)", "shared_load_bytes", "#ff7f0e"),
              ("compulsory (each byte once)", "compulsory_bytes", "#7f7f7f"))

    for ax, shape in zip(axes[:, 0], shapes):
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
        lows = [num(r.get("compulsory_bytes")) for r in at.values()]
        highs = [max(num(r.get("global_load_bytes")), num(r.get("shared_load_bytes")))
                 for r in at.values()]
        ax.set_yscale("log", base=2)
        ax.set_ylim(min(lows) / 4, max(highs) * 8)
        for i, v in enumerate(order):
            r = at.get(v)
            lec = num(r.get("lecture_global_loads")) if r else math.nan
            y = num(r.get("global_load_bytes")) if r else math.nan
            if not math.isnan(lec):
                eb = num(r["elem_bytes"])
                ax.plot([i - 1.5 * w, i - 0.5 * w], [lec * eb] * 2, color="black", linewidth=2)
                y = max(y, lec * eb)
            if not math.isnan(y):
                ax.annotate(bytes_fmt(y), (i - w, y), textcoords="offset points",
                            xytext=(0, 4), ha="center", va="bottom", fontsize=7.5)
        log_y(ax, bytes_axis=True)
        ax.set_xticks(range(len(order)))
        # each version with the lecture's formula under it (wrapped: "2N³ (same count,
        # coalesced)" is wider than a bar group)
        ax.set_xticklabels([v + "\n" + "\n".join(textwrap.wrap(at[v].get("formula") or "", 16))
                            if v in at else v for v in order], fontsize=8)
        ax.set_xlabel("ladder version (CUDA) and the formula of the lecture notes")
        precision = ", ".join(dict.fromkeys(r.get("precision") or "fp32" for r in at.values()))
        eb = ", ".join(dict.fromkeys(f"{int(num(r['elem_bytes']))} B" for r in at.values()))
        ax.set_title(f"{shape}, {precision} ({eb} per element)")
        ax.set_ylabel("bytes per launch (log scale, binary units)")
    axes[0][0].plot([], [], color="black", linewidth=2, label="lecture formula (square N)")
    axes[0][0].legend(fontsize=8, loc="upper right", frameon=True, framealpha=0.9)
    fig.suptitle("Traffic the closed-form models predict for the CUDA ladder (no GPU needed); "
                 "black tick = the formula of the lecture notes", fontsize=11)
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


def _roof_points(trows, prows, at, ladder_only, version_of):
    """(kernel, backend, precision, intensity, TFLOP/s, measured?) at the shape `at`: the
    intensity from the DRAM bytes ncu measured where the kernel was profiled there, else
    (not ladder_only) from the compulsory bytes, an upper bound of it."""
    points = []
    measured = set()
    for p in prows:
        t = next((r for r in trows if r["kernel"] == p["kernel"] and r["shape"] == at
                  and r["precision"] == p["precision"]), None)
        dram = _dram(p)
        if t and not math.isnan(dram) and dram > 0:
            points.append((p["kernel"], p["backend"], t["precision"], num(t["flops"]) / dram,
                           num(t["tflops"]), True))
            measured.add((p["kernel"], p["precision"]))
    if not ladder_only:
        for r in trows:
            if r["shape"] == at and (r["kernel"], r["precision"]) not in measured:
                points.append((r["kernel"], r["backend"], r["precision"],
                               num(r["flops"]) / num(r["compulsory_bytes"]), num(r["tflops"]),
                               False))
    return points


def _roof_panel(ax, points, precisions, bw, cub, version_of, colours, title):
    import numpy as np

    xs = [p[3] for p in points]
    ridges = [cub[p] * 1e12 / (bw * 1e9) for p in precisions if cub.get(p)]
    lo, hi = min(xs + ridges) / 8, max(xs + ridges) * 6
    grid = np.logspace(math.log10(lo), math.log10(hi), 200)
    for p in precisions:
        if cub.get(p):
            ax.plot(grid, np.minimum(bw * 1e9 * grid / 1e12, cub[p]), color="black",
                    linewidth=2, label=f"roof: copy {bw / 1e3:.2f} TB/s (DRAM), cuBLAS {p} "
                                       f"{cub[p]:.1f} TFLOP/s")
    for name, backend, prec, x, y, measured in points:
        style = _kernel_style(name, backend, version_of, colours)
        ax.scatter([x], [y], marker=style["marker"], s=46, zorder=3, linewidth=1.2,
                   facecolor=style["color"] if measured else "white", edgecolor=style["color"])
    dy = _spread_labels([math.log10(p[4]) for p in points], min_gap=0.055)
    for (name, _b, prec, x, y, _m), d in zip(points, dy):
        # a name moved away from its point keeps a thin line to it
        ax.annotate(name, (x, y), xytext=(x * 1.15, y * 10 ** d), textcoords="data",
                    va="center", fontsize=7.5,
                    arrowprops=dict(arrowstyle="-", color="grey", linewidth=0.6,
                                    shrinkA=0, shrinkB=3) if d > 0.01 else None)
    ax.set_xscale("log")
    log_y(ax)
    # room above the roof for the names the spreading pushed up
    top = max([p[4] * 10 ** d for p, d in zip(points, dy)] + [cub.get(q, 0) for q in precisions])
    ax.set_ylim(min(min(p[4] for p in points), bw * 1e9 * lo / 1e12) / 1.3, top * 1.35)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left")


def roofline(time_payload, out_dir, profile_payload=None, shape: str | None = None,
             ladder_only: bool = False, fig_name: str = "roofline") -> list[Path]:
    """One point per kernel x precision at one size: the profiled size where DRAM bytes
    differ between kernels unless ``shape``. A filled marker takes its intensity from the
    DRAM bytes ncu measured; a hollow one (a kernel not profiled at that size) from its
    compulsory bytes, the most it could reach. ``ladder_only`` keeps the lecture's versions
    and their twins (filled markers only). The tensor-core precisions get a panel of their
    own: their roofs are ten times higher than FFMA's."""
    plt = pyplot()
    trows = [r for r in _ok(time_payload["rows"]) if is_ladder_row(r)
             and r.get("tflops")]
    c = time_payload.get("meta", {}).get("ceilings", {}) or {}
    bw = c.get("copy_gbps")
    cub = c.get("cublas_tflops") or {}
    if not trows or not bw or not cub.get("fp32"):
        return []
    order, version_of, colours = ladder(trows + (profile_payload or {}).get("rows", []))
    prows = [r for r in _ok((profile_payload or {}).get("rows", []))
             if is_ladder_row(r)
             and (not ladder_only or is_ladder(version_of.get(r["kernel"])))]
    at = contrast_shape(prows, shape) if prows else None
    if at is None:
        if ladder_only:
            return []
        at = max(trows, key=lambda r: num(r["size"]))["shape"]   # compulsory bytes only
    prows = [r for r in prows if r["shape"] == at]
    points = _roof_points(trows, prows, at, ladder_only, version_of)
    if ladder_only and not points:
        return []
    if not points:
        return []
    precisions = [p for p in ("fp32",) + TENSOR_CORE_PRECISIONS if any(q[2] == p for q in points)]
    titles = {"fp32": "fp32: FFMA on CUDA cores"}
    panels = [([q for q in points if q[2] == p], p, titles.get(p, f"{p}: tensor cores"))
              for p in precisions]
    # one panel per precision: the tensor cores' roofs are ten times higher than FFMA's, and
    # kernels of one precision sit at one intensity, where names need the room
    ncols = 1 if len(panels) == 1 else 2
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(9.5 * ncols, 6.2 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (pts, prec, title) in zip(axes.flat, panels):
        _roof_panel(ax, pts, [prec], bw, cub, version_of, colours, title)
    which = ("the ladder (the lecture's versions, the FFMA rungs) and the Triton twins"
             if ladder_only else "every kernel")
    basis = ("filled: intensity from the DRAM bytes ncu measured; hollow: not profiled at "
             "this size, intensity from the compulsory bytes (an upper bound)"
             if any(not p[5] for p in points) else
             "intensity from the DRAM bytes ncu measured")
    fig.suptitle(f"Roofline with the ceilings measured in this run: {which}, at {at}\n"
                 f"({basis})", fontsize=11)
    fig.tight_layout()
    return save(fig, out_dir, fig_name)


# ---------------------------------------------------------------------------------------
# The lecture figure
# ---------------------------------------------------------------------------------------

def lecture(time_payload, profile_payload, out_dir, shape: str | None = None,
            name: str = "lecture") -> list[Path]:
    """Left: the CUDA ladder's traffic per level (model to DRAM), per version, at the
    profiled size where DRAM tells the versions apart; right: throughput of the ladder and
    its Triton twins. Without timings (time_payload None, or no fp32 matmul timed: a
    laptop), the left panel alone."""
    plt = pyplot()
    prows = [r for r in _ok(profile_payload["rows"]) if is_ladder_row(r)]
    order, version_of, _colours = ladder(prows)
    cuda = [r for r in prows if r.get("backend") == "cuda"
            and is_ladder(version_of.get(r["kernel"]))]
    shape = contrast_shape(cuda or prows, shape)
    versions, groups, colours = _traffic_groups(prows, shape)
    cuda_versions = [v for v in versions if "cuda" in groups[v]]
    if not cuda_versions:
        return []
    timed = time_payload is not None and any(
        is_ladder_row(r) and r["precision"] == "fp32" and r.get("tflops")
        for r in _ok(time_payload["rows"]))
    # the ladder's panel about 0.75 inch per rung (15 rungs: "vectorized" and "warptiling"
    # under neighbouring bars ran into each other at a fixed width)
    ladder_w = max(7.0, 0.75 * len(cuda_versions))
    if timed:
        fig, (left, right) = plt.subplots(1, 2, figsize=(ladder_w * 2.15, 5.8),
                                          gridspec_kw={"width_ratios": [1, 1.15]})
    else:
        fig, left = plt.subplots(1, 1, figsize=(ladder_w + 1.5, 5.8))
    # The global path (shared has its own story: v3 and the FFMA rungs), level by level:
    # every level after `bench profile`; the model alone where no counters were taken (the
    # model half beside timings of a GPU without Nsight Compute), with no empty legend entries.
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
        left.bar(xs, ys, width=w * 0.95, color=lc, label=LEVEL_TICKS[label].replace("\n", " "))
    left.set_yscale("log", base=2)
    if len(levels) == 1:   # the model alone: room under the shortest bar, or it reads as none
        ys = [num(groups[v]["cuda"].get(levels[0][1])) for v in cuda_versions]
        ys = [y for y in ys if y > 0]
        if ys:
            left.set_ylim(min(ys) / 4, max(ys) * 2)
    log_y(left, bytes_axis=True)
    left.set_xticks(range(len(cuda_versions)))
    # a label's lines as wide as the columns allow: ten rungs leave ~9 characters each
    left.set_xticklabels([f"{v}\n" + _short(groups[v]).replace("_", "\n") for v in cuda_versions],
                         fontsize=8 if len(cuda_versions) <= 8 else 7)
    left.set_ylabel("bytes per launch (log scale, binary units)")
    precision = _precisions([groups[v]["cuda"] for v in cuda_versions])
    left.set_title(f"Global-load traffic, model down to DRAM (CUDA ladder, {shape}, {precision})"
                   if len(levels) > 1 else
                   f"Global-load traffic the model predicts (CUDA ladder, {shape}, {precision}; "
                   f"no counters)", fontsize=10)
    left.legend(title="level", fontsize=7.5, ncol=min(max(len(levels), 1), 3), loc="upper center",
                bbox_to_anchor=(0.5, -0.13), frameon=False)
    if timed:
        _throughput_panel(right, time_payload["rows"],
                          time_payload.get("meta", {}).get("ceilings"), legend=False)
        right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3,
                     frameon=False)
        fig.suptitle(f"GPU matmul {cuda_versions[0]}-{cuda_versions[-1]}: fewer bytes asked "
                     "for, more FLOP/s delivered  "
                     "(solid = CUDA, dashed = Triton twin, colour = version)", fontsize=11)
    else:
        fig.suptitle(f"GPU matmul {cuda_versions[0]}-{cuda_versions[-1]}: fewer bytes asked "
                     "for, version by version (closed-form models; the measured half needs a "
                     "GPU)", fontsize=11)
    fig.tight_layout()
    return save(fig, out_dir, name)


def lecture_model(model_payload, time_payload, out_dir) -> list[Path]:
    """The lecture figure where no counters were taken (a laptop, a GPU without Nsight
    Compute): the global loads the models predict for the CUDA ladder, at the larger model
    size, beside the timings where the set has them."""
    half = [dict(r, model_global_load_bytes=r["global_load_bytes"])
            for r in model_payload["rows"] if is_ladder_row(r)]
    if not half:
        return []
    biggest = max(half, key=lambda r: num(r.get("size")))["shape"]
    return lecture(time_payload, {"rows": half}, out_dir, shape=biggest, name="lecture_model")


def _round_ratios(r) -> list[float]:
    """× cuBLAS in each alternating round of a row: "kernel_ms/cublas_ms ..." per round."""
    out = []
    for pair in str(r.get("alternating_rounds_ms") or "").split():
        mine, ref = (num(x) for x in pair.split("/"))
        if mine > 0 and ref > 0:
            out.append(ref / mine)
    return out


def rounds(time_payload, out_dir) -> list[Path]:
    """Every kernel timed in alternating rounds (`bench time --alternate N`), × cuBLAS at
    the same shape and precision: a bar per kernel in the set's order (the ladder's, rung
    after rung), the median of the rounds, whiskers over the rounds' range; one panel per
    precision and shape. Read down a column, each bar is what one more idea bought."""
    plt = pyplot()
    rows = [r for r in _ok(time_payload["rows"]) if num(r.get("alternating_pct_reference")) > 0]
    if not rows:
        return []
    shapes = sorted({r["shape"] for r in rows}, key=lambda s: num(s.split("x")[0]))
    order = ("fp32",) + TENSOR_CORE_PRECISIONS[::-1]        # fp32, bf16, fp16, tf32
    precisions = [p for p in order if any(r["precision"] == p for r in rows)]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    _order, version_of, colours = ladder(time_payload["rows"])
    # one x range for every panel, so that bars side by side compare, wide enough for every
    # bar, whisker and label (a bar past the range lost its value)
    low = min(min(num(r["alternating_pct_reference"]) / 100 for r in rows), 1.0) - 0.1
    high = max([1.0] + [max([num(r["alternating_pct_reference"]) / 100, *_round_ratios(r)])
                        for r in rows])
    high += 0.12 * (high - max(0.0, low))       # room for the label after the longest bar
    size = (3.6 * len(precisions) + 2.6, 0.34 * len(kernels) * len(shapes) + 1.8)
    fig, axes = plt.subplots(len(shapes), len(precisions), squeeze=False, figsize=size)
    for i, shape in enumerate(shapes):
        labelled = False        # kernel names on the leftmost panel drawn in this row
        for j, p in enumerate(precisions):
            ax = axes[i][j]
            at = {r["kernel"]: r for r in rows if r["shape"] == shape and r["precision"] == p}
            names = [k for k in kernels if k in at]
            if not names:       # this shape was not timed in rounds at this precision
                ax.axis("off")
                continue
            for y, name in enumerate(names):
                r = at[name]
                ratio = num(r["alternating_pct_reference"]) / 100
                each = _round_ratios(r) or [ratio]
                colour = colours.get(version_of.get(name, ""), "#999999")
                ax.barh(y, ratio, color=colour, alpha=0.9 if r["backend"] == "cuda" else 0.45,
                        hatch=None if r["backend"] == "cuda" else "//", edgecolor="white")
                ax.plot([min(each), max(each)], [y, y], color="black", linewidth=1)
                ax.annotate(f"{ratio:.3f}", (max(ratio, *each), y), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7.5)
            ax.axvline(1.0, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.2)
            ax.set_yticks(range(len(names)))
            ax.set_yticklabels(names if not labelled else [""] * len(names), fontsize=8)
            labelled = True
            ax.invert_yaxis()
            ax.set_xlim(max(0.0, low), high)
            ax.set_title(f"{p} {cube(shape)}", fontsize=9)
            ax.set_xlabel("× cuBLAS (dotted: 1.0)" if i == len(shapes) - 1 else "", fontsize=8)
    fig.suptitle("Alternating rounds: each kernel × cuBLAS, timed turn about at the same "
                 "shape (bar: the median round; whiskers: every round)\n"
                 + env_line(time_payload), fontsize=9)
    fig.tight_layout()
    return save(fig, out_dir, "rounds")


CAPTIONS = {
    "lecture": "The lecture figure: global-load traffic per level for the CUDA ladder at the "
               "profiled size where DRAM tells the versions apart (left), fp32 throughput of "
               "the ladder and its Triton twins (right).",
    "throughput": "Throughput versus size. Top, fp32 (FFMA on CUDA cores): solid CUDA, dashed "
                  "Triton twin, one colour per ladder version. Below, one panel per "
                  "tensor-core precision, one colour per kernel. cuBLAS (black) and the "
                  "measured ceilings as reference lines.",
    "traffic": "Memory traffic level by level, one line per kernel, from the bytes the "
               "threads ask for (model, issued) down to what DRAM moved; shared-memory loads "
               "apart. Left the lecture's ladder, right the other Triton matmuls.",
    "roofline": "Roofline with the ceilings measured in this run, one point per kernel and "
                "precision, at the profiled size where DRAM intensity differs between "
                "kernels; fp32 (FFMA) and tensor-core precisions in panels of their own.",
    "roofline_ladder": "The lecture's versions and their twins on the roofline at the "
                       "largest profiled size: where the inputs no longer fit in L2, the DRAM "
                       "bytes, and so the intensities, differ from version to version.",
    "rounds": "Alternating rounds: each kernel × cuBLAS timed turn about at the same shape, "
              "in the set's order (rung after rung, so each bar shows what one more idea "
              "bought); the bar is the median round, the whiskers every round.",
    "model_traffic": "What the closed-form models predict for the CUDA ladder, with the "
                     "formulas of the lecture notes.",
    "lecture_model": "The lecture figure from the closed-form models (no counters were "
                     "taken): the global loads each version of the CUDA ladder asks for, at "
                     "the larger model size, beside the fp32 throughput where the set has "
                     "timings. `python -m bench profile` on a GPU adds the measured levels, "
                     "L1 down to DRAM.",
}


def all_figures(s: dict, out_dir) -> dict[str, list[Path]]:
    """Every matmul figure the result set s (kind -> payload) has data for: name -> files."""
    made: dict[str, list[Path]] = {}
    if "time" in s and any(is_ladder_row(r) for r in s["time"]["rows"]):
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
        if "profile" not in s:   # no counters: the lecture figure's model half
            made["lecture_model"] = lecture_model(s["model"], s.get("time"), out_dir)
    if "time" in s:
        from bench.families.matmul import suite_report

        made["suite"] = suite_report.figure(s["time"], out_dir)
        made["rounds"] = rounds(s["time"], out_dir)
    order = ("lecture", "lecture_model", "throughput", "rounds", "suite", "traffic",
             "roofline", "roofline_ladder", "model_traffic")
    return {k: made[k] for k in order if made.get(k)}
