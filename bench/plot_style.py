"""What every figure shares: the matplotlib setup, saving (atomically, PNG and SVG), log
axes with plain labels, and the environment line (each family's plots.py)."""
from __future__ import annotations

from pathlib import Path

from bench import results


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
    return paths


def plain(x, _pos=None) -> str:
    """0.1, 2, 50, 700 instead of 10^-1 ...: tick labels a student reads at a glance."""
    if x <= 0:
        return ""
    return f"{x:g}" if x >= 0.01 else f"{x:.0e}"


def log_y(ax, bytes_axis: bool = False) -> None:
    """Log y axis with ticks at 1, 2, 5 x 10^k and plain labels (or kB/MB/GB)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,) if bytes_axis else (1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(bytes_fmt if bytes_axis else plain))
    ax.yaxis.set_minor_formatter(NullFormatter())


def bytes_fmt(x, _pos=None) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= scale:
            v = x / scale
            return f"{v:.0f} {unit}" if v >= 10 else f"{v:.3g} {unit}"
    return f"{x:.0f} B"


def env_line(payload) -> str:
    e = payload.get("env", {}) or {}
    bits = [e.get("gpu") or "no GPU", f"torch {e.get('torch')}", f"triton {e.get('triton')}",
            f"CUDA {e.get('cuda_runtime')}", f"driver {e.get('driver')}",
            f"git {e.get('git_sha')}", e.get("date_utc", "")]
    note = (payload.get("meta") or {}).get("note")
    return "  |  ".join(str(b) for b in bits if b) + (f"\n{note}" if note else "")
