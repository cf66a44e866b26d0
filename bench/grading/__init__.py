"""Course labs and their autograder (docs/labs.md).

    cvt-bench lab list                          the labs: number, title, backend, points
    cvt-bench lab start N DIR                   copies lab N's README.md and starters (starter.py,
                                                and starter.cu where the lab has a CUDA
                                                variant) to DIR
    cvt-bench lab check N                       the instructor's check: the solution scores
                                                full marks (hidden tests too), the starter 0,
                                                every planted bug (bugs.toml) loses the tests
                                                it should with its phrase
    cvt-bench grade N FILE [FILE ...] [--hidden SPEC] [--out DIR] [--gradebook CSV]
                                                grades each file; a table per file on stdout,
                                                results.json (Gradescope) and junit.xml in
                                                DIR/<file stem>/ (DIR alone for one file), a
                                                gradebook CSV of every file

The grader (grade.py) owns inputs, reference and verdict; each submission runs in its own
process (sandbox.py), watched for torch ops and foreign kernels (guard.py).

Exit status of `grade`: 0 every file scored full marks, 1 some test lost points, 2 bad
arguments (before anything is graded).
"""
from __future__ import annotations

from pathlib import Path


def cmd_lab(args) -> int:
    from bench.grading import labs

    if args.lab_command == "list":
        for lab in labs.all_labs():
            points = sum(t.points for t in lab.tests)
            print(f"{lab.number:>2}  {lab.title}  [{' and '.join(lab.backends)}, "
                  f"{len(lab.tests)} tests, {points:g} points; {lab.folder.name}]")
        return 0
    lab = labs.get(args.number)
    if args.lab_command == "check":
        return _check_lab(lab)
    for path in labs.start(lab, Path(args.dir)):
        print(f"wrote {path}")
    for backend in lab.backends:
        starter = Path(args.dir) / lab.starter(backend).name
        print(f"next ({backend}): edit {starter}, then "
              f"`cvt-bench grade {lab.number} {starter}`")
    return 0


def _check_lab(lab) -> int:
    """Grades the solution, the starter and every planted bug of `lab`; a line each, and
    whether it behaves as bugs.toml says (exit 1 when one does not)."""
    import tempfile

    from bench import device as dev
    from bench.grading import grade, labs

    hidden_file = lab.instructor / "hidden.toml"
    hidden = labs.hidden_tests(hidden_file) if hidden_file.is_file() else None
    problems = []

    def one(label, path, ok) -> None:
        graded = grade.grade(lab, path, hidden)
        failed = {t.name: t.output for t in graded.tests if t.status == "failed"}
        why = ok(graded, failed)
        print(f"{label:<24} {graded.score:g}/{graded.max_score:g}  "
              f"{'ok' if not why else 'NOT AS DECLARED: ' + why}", flush=True)
        if why:
            problems.append(label)

    for backend in lab.backends:
        label = "" if backend == lab.backend else f" ({backend})"
        one("solution" + label, lab.solution(backend),
            lambda g, failed: f"fails {sorted(failed)}" if failed else "")
        one("starter" + label, lab.starter(backend),
            lambda g, failed: f"scores {g.score:g}" if g.score else "")
    device = "cuda" if dev.has_gpu() else "cpu"
    with tempfile.TemporaryDirectory() as tmp:
        for bug in labs.bugs(lab):
            path = Path(tmp) / f"{bug.name}{bug.suffix}"
            path.write_text(bug.source(lab))

            def behaves(g, failed, bug=bug):
                fails = bug.fails_on(device)    # a GPU may count a traffic bug away
                missed = [t for t in fails if t not in failed]
                if missed:
                    return f"passes {missed}"
                quiet = [t for t in fails if bug.says not in failed[t]]
                return f"{quiet} do not say {bug.says!r}" if quiet else ""
            one(f"bug {bug.name}", path, behaves)
    return 1 if problems else 0


def cmd_grade(args) -> int:
    from bench.grading import grade, labs, outputs

    lab = labs.get(args.number)
    hidden = labs.hidden_tests(Path(args.hidden)) if args.hidden else None
    files = [Path(f) for f in args.files]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise labs.LabError(f"no such file: {', '.join(missing)}")
    for f in files:                   # a .cu for a lab without a CUDA variant, a .txt ...
        lab.backend_of(f)
    if args.gradebook and Path(args.gradebook).exists() and not args.force:
        raise labs.LabError(f"{args.gradebook} exists: --force replaces it")
    all_graded = []
    for f in files:
        graded = grade.grade(lab, f, hidden, timeout=args.timeout,
                             count_on_cpu=args.count_on_cpu)
        all_graded.append(graded)
        print(outputs.table(graded), flush=True)
        if args.out:
            out = Path(args.out) if len(files) == 1 else Path(args.out) / f.stem
            for path in outputs.write(graded, out):
                print(f"wrote {path}")
        print()
    if args.gradebook:
        print(f"wrote {outputs.gradebook(all_graded, Path(args.gradebook))}")
    return 0 if all(g.score == g.max_score for g in all_graded) else 1


def add_commands(sub, common) -> None:
    s = sub.add_parser("lab", parents=[common], help="the course labs: list, start")
    lab_sub = s.add_subparsers(dest="lab_command", required=True)
    lab_sub.add_parser("list", help="every lab")
    ck = lab_sub.add_parser("check", help="grade lab N's solution, starter and planted bugs")
    ck.add_argument("number", help="the lab's number (or its slug)")
    st = lab_sub.add_parser("start", help="copy lab N's starter and README into DIR")
    st.add_argument("number", help="the lab's number (or its slug)")
    st.add_argument("dir", help="the folder to copy into (made if missing)")
    s.set_defaults(func=cmd_lab)

    g = sub.add_parser("grade", parents=[common], help="grade submissions of a lab")
    g.add_argument("number", help="the lab's number (or its slug)")
    g.add_argument("files", nargs="+", help="the submitted files (each graded on its own)")
    g.add_argument("--hidden", default=None, metavar="SPEC",
                   help="the instructor's tests (a hidden.toml), graded after the visible ones")
    g.add_argument("--out", default=None, metavar="DIR",
                   help="results.json (Gradescope) and junit.xml, per file")
    g.add_argument("--gradebook", default=None, metavar="CSV",
                   help="one row per file: score, max, each test's points")
    g.add_argument("--timeout", type=float, default=None,
                   help="seconds a call may take before it is stopped (default: the lab's)")
    g.add_argument("--force", action="store_true", help="replace an existing gradebook")
    g.add_argument("--count-on-cpu", action="store_true",
                   help="count traffic on the CPU (the source's loads) even where a GPU and "
                        "Nsight Compute would count the compiled kernel's")
    g.set_defaults(func=cmd_grade)
