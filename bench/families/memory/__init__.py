"""The memory-bound family: vector add, copy, ReLU + dropout, softmax and RGB -> grey, each in
CUDA and Triton beside PyTorch eager (and torch.compile), judged by bandwidth against the
copy bandwidth measured in the same run.

    problems.py   what "correct" means per op: inputs, the float64 reference, the error bound
    models.py     closed-form bytes per kernel (every pass counted)
    report.py     its sections of report.md: bandwidth, the targets, DRAM against the model
    plots.py      its figures: bandwidth versus bytes per op, the targets

Kernel records: bench/catalog/memory_bound.py.
"""
from __future__ import annotations

from bench.families import Family
from bench.families.memory.problems import MEMORY_PROBLEMS


class MemoryFamily(Family):
    name = "memory"

    def problems(self):
        return list(MEMORY_PROBLEMS)

    def groups(self):
        ops = {p.name for p in MEMORY_PROBLEMS}
        return {"memory": lambda k: k.op in ops}

    def report_sections(self, results):
        from bench.families.memory import report

        out = []
        if "time" in results:
            out += [report.section_time(results["time"]), report.section_targets(results["time"])]
        if "profile" in results:
            out.append(report.section_profile(results["profile"]))
        return out

    def summary_lines(self, results):
        from bench.families.memory import report

        return report.summary_lines(results)

    def figures(self, results, out_dir):
        from bench.families.memory import plots

        return plots.all_figures(results["time"], out_dir) if "time" in results else {}

    def caption(self, name):
        from bench.families.memory import plots

        return plots.caption(name)

    def readme_tables(self):
        from bench.families.memory import report

        return [report.readme_table()]


FAMILY = MemoryFamily()
