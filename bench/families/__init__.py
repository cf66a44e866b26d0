"""Op families: what the harness knows about an op comes from its family, through one interface.

A family (the matmul; the memory-bound ops) is a package in this folder whose __init__.py
exposes ``FAMILY``, an instance of :class:`Family`. It brings

    problems()         one bench.problem_base.Problem per op: shapes, inputs, the float64
                       reference, the error and the tolerance, useful flops, compulsory bytes
    groups()           named kernel groups for --kernels ("@ladder")
    ceilings(...)      the limits its ops are judged against, measured on the device, and
                       ceiling_rows() that show them in the report
    report_sections()  its sections of report.md, from the result files
    summary_lines()    its headline numbers, for the summary that opens report.md
    figures()          its figures, from the result files, and caption() for each
    readme_tables()    the tables `python -m bench readme-table` prints for docs/kernels.md

Its kernels are records in a module of bench/catalog/ (``records()``), and its traffic models
are functions those records point to. The harness (check, time, model, profile, plot,
report) finds the families here and calls only this interface: adding a family touches no
harness module (docs/DESIGN.md, "Add an op family").
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Callable


class Family:
    """One op family, as the harness sees it. Subclasses override what they have."""

    name = ""

    def problems(self) -> list:
        raise NotImplementedError

    def groups(self) -> dict[str, Callable]:
        """Named kernel groups: name -> predicate on a registry.Kernel."""
        return {}

    def ceilings(self, flush, env: dict, policy, ops: set[str]) -> dict:
        """Measured limits for the ops in `ops` (a subset of this family's), merged into the
        ceilings of a time run (time.json meta["ceilings"])."""
        return {}

    def ceiling_rows(self, ceilings: dict) -> list[list[str]]:
        """Rows (what, value, how) of the report's ceilings table for what ceilings() measured."""
        return []

    def report_sections(self, results: dict[str, dict]) -> list[str]:
        """Markdown sections of report.md; results maps a result kind ("check", "time",
        "model", "profile") to its payload, for the kinds the result set has."""
        return []

    def summary_lines(self, results: dict[str, dict]) -> list[str]:
        """Its headline numbers for the summary at the top of report.md: a few markdown
        lines (each starts with "- "), from the same payloads as report_sections."""
        return []

    def figures(self, results: dict[str, dict], out_dir) -> dict[str, list[Path]]:
        """Figures drawn from the result files: name -> files written (PNG, then SVG)."""
        return {}

    def caption(self, name: str) -> str | None:
        """What one of its figures shows (report.md prints it under the figure)."""
        return None

    def readme_tables(self) -> list[str]:
        return []


_families: list[Family] | None = None


def families() -> list[Family]:
    """Every family in this folder, in name order (matmul first: it defines the ceilings
    the others are shown against)."""
    global _families
    if _families is None:
        found = []
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            family = getattr(module, "FAMILY", None)
            if not isinstance(family, Family):
                raise RuntimeError(f"bench/families/{info.name}: exposes no FAMILY "
                                   f"(a bench.families.Family)")
            found.append(family)
        _families = found
    return list(_families)


def of_op(op: str) -> Family:
    for family in families():
        if any(p.name == op for p in family.problems()):
            return family
    raise KeyError(f"families: no family has an op named {op!r}")
