"""Text formatting shared by the report's sections (bench/report.py and each family's
report.py) and the figures' axes (bench/plot_style.py).

Bytes are written in binary units (1 KiB = 1024 B, 1 MiB = 1024 KiB, ...), so that a 4096 x
4096 float32 matrix reads "64 MiB" and a 1 GiB buffer "1 GiB"; rates stay in decimal GB/s
(10^9 bytes per second), the unit bandwidths are quoted in by vendors and by ncu.
"""
from __future__ import annotations

import math

from bench.results import num

BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
# The mark and the footnote of a bandwidth above the copy bandwidth measured in the run.
ABOVE_COPY = "†"


def cube(shape: str) -> str:
    """4096x4096x4096 -> 4096³; any other shape as it is."""
    sides = shape.split("x")
    return f"{sides[0]}³" if len(sides) == 3 and len(set(sides)) == 1 else shape


def md_table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in cells]
    return "\n".join(out)


def f(x, digits: int = 2, pct: bool = False) -> str:
    x = num(x) if not isinstance(x, (int, float)) else x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if pct:
        return f"{x:.{digits}f}%"
    if isinstance(x, int) or (abs(x) >= 1e5 and float(x).is_integer()):
        return f"{int(x):,}"
    return f"{x:.{digits}f}"


def count(x) -> str:
    """A count of instructions, elements or conflicts: 1,048,576 (never 2409.00); "-" if none."""
    x = num(x)
    if math.isnan(x):
        return "-"
    return f"{round(x):,}"


def sci(x) -> str:
    """An error or a bound: 1.23e-07, "inf", or "-" for none."""
    x = num(x)
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.2e}"


def binary_bytes(x, digits: int = 3) -> str:
    """Bytes in binary units: 805306368 -> "768 MiB", 2**30 -> "1 GiB", 12 -> "12 B";
    `digits` significant digits (at least the integer part); "-" for none."""
    x = num(x)
    if math.isnan(x):
        return "-"
    if x < 0:
        return "-" + binary_bytes(-x, digits)
    exp = 0
    # next unit up once the value, as printed, would read 1024 (1023.9 MiB -> "1 GiB")
    while x >= 1023.5 and exp < len(BINARY_UNITS) - 1:
        x /= 1024
        exp += 1
    if exp == 0:
        return f"{x:.0f} B"
    text = f"{x:.{digits}g}"
    if "e" in text:                      # 1000 <= x < 1024 at 3 digits: write it whole
        text = f"{x:.0f}"
    return f"{text} {BINARY_UNITS[exp]}"


def gbps(x) -> str:
    """GB/s (10^9 B/s) for a table: whole numbers from 100 up, three significant digits below."""
    x = num(x)
    return "-" if math.isnan(x) else f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def above(x, ceiling) -> bool:
    """True if the bandwidth x is above the measured ceiling (both in GB/s)."""
    x, ceiling = num(x), num(ceiling)
    return not math.isnan(x) and not math.isnan(ceiling) and ceiling > 0 and x > ceiling


def gbps_flagged(x, ceiling) -> str:
    """gbps(x), marked with ABOVE_COPY when it is above the copy bandwidth `ceiling`."""
    return gbps(x) + (ABOVE_COPY if above(x, ceiling) else "")
