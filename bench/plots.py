"""`python -m bench plot`: every op family's figures, drawn from a result set's files.

The figures themselves belong to the families (bench/families/<family>/plots.py); this
module asks each family for the figures its data allows and for their captions. Nothing
here runs a kernel.
"""
from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

from bench import families, results


def all_figures(result_dir, out_dir, progress: bool = False) -> dict[str, list[Path]]:
    """Every figure the result set has data for; returns figure name -> files.
    progress: a line on stderr as each figure is written (drawing a GPU set's dozen
    figures takes tens of seconds on a laptop)."""
    from bench import model_table, plot_style

    # model bytes at each row's own precision, as in report.md (bench/model_table.py)
    s = model_table.at_row_precision(results.load_set(result_dir))
    made: dict[str, list[Path]] = {}
    t0 = time.monotonic()

    def written(name: str) -> None:
        print(f"[figures] {name} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)

    with plot_style.announce(written) if progress else contextlib.nullcontext():
        for family in families.families():
            made.update(family.figures(s, out_dir))
    return {k: v for k, v in made.items() if v}


def caption(name: str) -> str:
    for family in families.families():
        text = family.caption(name)
        if text:
            return text
    return ""
