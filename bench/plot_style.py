"""What every figure shares: the matplotlib setup, saving (atomically, PNG and SVG), log
axes with plain labels (bytes in binary units: KiB, MiB, GiB), and the environment line
(each family's plots.py)."""
from __future__ import annotations

import contextlib
from pathlib import Path

from bench import results

# Who wants to hear of each figure saved: the progress of a long drawing (bench/plots.py).
_listeners: list = []


@contextlib.contextmanager
def announce(callback):
    """While active, callback(name) runs after each figure is saved."""
    _listeners.append(callback)
    try:
        yield
    finally:
        _listeners.remove(callback)


def pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.grid": True,
                         "grid.alpha": 0.3, "savefig.dpi": 150, "svg.fonttype": "none",
                         # the same data give the same SVG bytes (no random ids)
                         "svg.hashsalt": "cuda-vs-triton"})
    return plt


def save(fig, out_dir, name: str) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    for p in paths:
        # no date in the SVG: a replot of unchanged results leaves the files unchanged
        metadata = {"Date": None} if p.suffix == ".svg" else None
        results.atomic_savefig(fig, p, bbox_inches="tight", metadata=metadata)
    import matplotlib.pyplot as plt

    plt.close(fig)
    for callback in list(_listeners):
        callback(name)
    return paths


def plain(x, _pos=None) -> str:
    """0.005, 0.1, 2, 50, 700 instead of 10^-1 ...: tick labels a student reads at a glance."""
    if x <= 0:
        return ""
    return f"{x:g}"


def log_y(ax, bytes_axis: bool = False) -> None:
    """Log y axis with ticks at 1, 2, 5 x 10^k (1 x 10^k over more than four decades) and
    plain labels, or, for bytes, ticks at powers of two labelled in binary units (KiB,
    MiB, GiB)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_yscale("log", base=2 if bytes_axis else 10)
    if bytes_axis:
        binary_axis(ax.yaxis)
        return
    ax.yaxis.set_major_locator(_locator_classes()[1]())
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.yaxis.set_minor_formatter(NullFormatter())


def binary_axis(axis, most: int = 11) -> None:
    """A log axis of bytes (set_xscale/set_yscale("log", base=2) first): major ticks at
    powers of two, every 1, 2, 4, 5 or 10 doublings (so that the ticks fall on 1 KiB, 1 MiB,
    1 GiB where they can), at most `most` of them, labelled "64 MiB", "1 GiB"."""
    from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator

    axis.set_major_locator(BinaryLocator(most))
    axis.set_major_formatter(FuncFormatter(bytes_fmt))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


_LOCATORS: tuple | None = None


def _locator_classes():
    """(binary, decimal) tick locators for log axes; matplotlib is imported on first use."""
    global _LOCATORS
    if _LOCATORS is not None:
        return _LOCATORS
    import math

    from matplotlib.ticker import Locator

    class _BinaryLocator(Locator):
        """Ticks at 2^e for e a multiple of the smallest step in (1, 2, 4, 5, 10, 20) that
        leaves at most `most` ticks between the axis limits."""

        def __init__(self, most: int = 11):
            self.most = most

        def __call__(self):
            lo, hi = self.axis.get_view_interval()
            return self.tick_values(lo, hi)

        def tick_values(self, vmin, vmax):
            vmin, vmax = sorted((max(vmin, 1e-300), max(vmax, 1e-300)))
            lo, hi = math.ceil(math.log2(vmin) - 1e-9), math.floor(math.log2(vmax) + 1e-9)
            step = next((s for s in (1, 2, 4, 5, 10, 20) if (hi - lo) // s + 1 <= self.most), 40)
            first = lo + (-lo) % step
            return [2.0 ** e for e in range(first, hi + 1, step)]

    class _DecadeLocator(Locator):
        """Ticks at 1, 2, 5 x 10^k over at most four decades, at 10^k over more; on a range
        too narrow to hold two of those (one point per kernel, all within a factor of two:
        a set timed at one size), at evenly spaced round values (550, 600, 650), so that the
        axis still has labels to read."""

        def __call__(self):
            lo, hi = self.axis.get_view_interval()
            return self.tick_values(lo, hi)

        def tick_values(self, vmin, vmax):
            vmin, vmax = sorted((max(vmin, 1e-300), max(vmax, 1e-300)))
            lo, hi = math.floor(math.log10(vmin)), math.ceil(math.log10(vmax))
            subs = (1, 2, 5) if hi - lo <= 4 else (1,)
            ticks = [m * 10.0 ** e for e in range(lo, hi + 1) for m in subs]
            inside = [t for t in ticks if vmin * (1 - 1e-9) <= t <= vmax * (1 + 1e-9)]
            if len(inside) >= 2:
                return inside
            from matplotlib.ticker import MaxNLocator

            even = MaxNLocator(nbins=5, steps=[1, 2, 5, 10]).tick_values(vmin, vmax)
            even = [t for t in even if t > 0 and vmin * (1 - 1e-9) <= t <= vmax * (1 + 1e-9)]
            return even if len(even) >= 2 else inside

    _LOCATORS = (_BinaryLocator, _DecadeLocator)
    return _LOCATORS


def BinaryLocator(most: int = 11):
    """The locator of binary_axis (a matplotlib Locator)."""
    return _locator_classes()[0](most)


def bytes_fmt(x, _pos=None) -> str:
    """An axis label in binary units (bench/text.py: the one byte formatter)."""
    from bench.text import binary_bytes

    return binary_bytes(x) if x > 0 else ""


def legend_entries(axes) -> tuple[list, list[str]]:
    """(handles, labels) of every labelled line of several panels, each label once, in the
    order first drawn: one legend for a figure whose panels share their kernels."""
    seen: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def env_line(payload) -> str:
    e = payload.get("env", {}) or {}
    bits = [e.get("gpu") or "no GPU", f"torch {e.get('torch')}", f"triton {e.get('triton')}",
            f"CUDA {e.get('cuda_runtime')}", f"driver {e.get('driver')}",
            f"git {e.get('git_sha')}", e.get("date_utc", "")]
    note = (payload.get("meta") or {}).get("note")
    return "  |  ".join(str(b) for b in bits if b) + (f"\n{note}" if note else "")
