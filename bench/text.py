"""Text formatting shared by the report's sections (bench/report.py and each family's report.py)."""
from __future__ import annotations

import math

from bench.results import num


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


def sci(x) -> str:
    """An error or a bound: 1.23e-07, "inf", or "-" for none."""
    x = num(x)
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.2e}"


def human_bytes(x) -> str:
    x = num(x)
    if math.isnan(x):
        return "-"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.0f} B"
