"""What a grading run writes: the table on stdout, Gradescope's results.json, JUnit XML, and a
gradebook CSV for many submissions. Every file is written whole or not at all
(bench.results.atomic_write_text)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

from bench.results import atomic_write_text
from bench.text import md_table


def table(graded) -> str:
    rows = [[t.name, t.status, f"{t.score:g}/{t.points:g}", t.output.splitlines()[0][:60]]
            for t in graded.tests]
    head = (f"lab {graded.lab.number} ({graded.lab.slug}): {Path(graded.submission).name}: "
            f"{graded.score:g}/{graded.max_score:g}")
    notes = [f"- {t.name}: {t.output}" for t in graded.tests if t.status == "failed"]
    return "\n".join([head, "", md_table(["test", "status", "points", "why"], rows),
                      *(["", "failed:", *notes] if notes else [])])


def gradescope(graded) -> dict:
    """Gradescope's autograder results.json: score, and per test name, score, max_score,
    output, visibility, status. A test not run here (a speed test on a machine without a
    GPU) counts for nothing either way: max_score 0, no status, and its output says so."""
    def entry(t) -> dict:
        if t.status == "not run":
            return {"name": t.name, "score": 0, "max_score": 0, "visibility": t.visibility,
                    "output": f"not run ({t.output}): counts for nothing here"}
        return {"name": t.name, "score": t.score, "max_score": t.points, "output": t.output,
                "visibility": t.visibility,
                "status": "passed" if t.status == "passed" else "failed"}

    return {
        "score": graded.score,
        "output": f"lab {graded.lab.number}: {graded.score:g}/{graded.max_score:g}",
        "tests": [entry(t) for t in graded.tests],
    }


def junit(graded) -> str:
    failures = sum(t.status == "failed" for t in graded.tests)
    skipped = sum(t.status == "not run" for t in graded.tests)
    lines = [f'<testsuite name={quoteattr(f"lab {graded.lab.number} {graded.lab.slug}")} '
             f'tests="{len(graded.tests)}" failures="{failures}" skipped="{skipped}">']
    for t in graded.tests:
        lines.append(f"  <testcase classname={quoteattr(Path(graded.submission).name)} "
                     f"name={quoteattr(t.name)}>")
        if t.status == "failed":
            lines.append(f"    <failure message={quoteattr(t.output.splitlines()[0])}>"
                         f"</failure>")
        elif t.status == "not run":
            lines.append(f"    <skipped message={quoteattr(t.output.splitlines()[0])}/>")
        lines.append("  </testcase>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"


def write(graded, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [(out_dir / "results.json", json.dumps(gradescope(graded), indent=1) + "\n"),
             (out_dir / "junit.xml", junit(graded))]
    for path, text in files:
        atomic_write_text(path, text)
    return [p for p, _ in files]


def gradebook(all_graded, path: Path) -> Path:
    """One row per submission: its file, score, max and each test's points. The columns are
    every test any file took, in order; a test a file did not take (the other variant's, a
    .py file's half-precision test beside a .cu file) is an empty cell, not a 0."""
    names: list[str] = []
    for g in all_graded:
        names += [t.name for t in g.tests if t.name not in names]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", "score", "max_score", *names])
    for g in all_graded:
        by = {t.name: t.score for t in g.tests}
        w.writerow([Path(g.submission).name, f"{g.score:g}", f"{g.max_score:g}",
                    *(f"{by[n]:g}" if n in by else "" for n in names)])
    atomic_write_text(path, buf.getvalue())
    return path
