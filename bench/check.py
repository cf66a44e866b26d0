"""Correctness: every selected kernel x shape x precision against the float64 reference.

The same functions back `python -m bench check`, the report and the pytest tiers. What
"correct" means for an op (inputs, reference, error, tolerance) lives in its Problem
(bench/families/<family>/); this file only runs kernels and compares.

Each run:
  1. makes the inputs (random, exact small integers, or with a NaN and an inf),
  2. fills the memory block the output will land in with NaN ("poisons" it), so an
     element the kernel forgets to write is NaN and fails instead of passing by luck
     (on the CPU: every empty tensor made during the run starts as NaN),
  3. runs the kernel once and waits for it (errors of the launch surface here),
  4. measures the largest relative error and compares it with the bound.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from bench import device as dev
from bench import problems, registry


@dataclass
class CheckResult:
    kernel: str
    shape: str
    precision: str
    mode: str          # "random", "exact" or "nonfinite" (see the op's Problem: bench/families/<family>/)
    error: float       # largest relative error (see the op's Problem: bench/families/<family>/)
    tolerance: float
    status: str        # "ok", "FAIL", "ERROR" or "skip"
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("FAIL", "ERROR")

    def as_dict(self) -> dict:
        return asdict(self)


def check_one(kernel, problem, shape, precision: str, mode: str = "random", seed: int = 0,
              device: str = "cpu") -> CheckResult:
    """Runs `kernel` once on `shape` and compares with the problem's reference."""
    tol = 0.0 if mode == "exact" else problem.tolerance(shape, precision)
    row = dict(kernel=kernel.name, shape=str(shape), precision=precision, mode=mode,
               tolerance=tol)
    ok, why = dev.can_run(kernel, device, precision)
    if not ok:
        return CheckResult(error=math.nan, status="skip", note=why, **row)
    if mode == "exact" and not problem.exact_possible(shape, precision):
        return CheckResult(error=math.nan, status="skip", note=problem.exact_note(shape, precision),
                           **row)
    try:
        fn = kernel.runner(precision)
        inputs = problem.inputs(shape, precision, seed=seed, mode=mode, device=device)
        poisoned = dev.poison_output_memory(problem.output_nbytes(shape, precision), device)
        with dev.quiet_interpreter(device), dev.poisoned_cpu_allocations():
            out = fn(*inputs)
            dev.synchronize(device)
            landed = dev.output_was_poisoned(out, poisoned, device)
        err = problem.error(out, inputs, mode=mode, precision=precision, kernel=kernel)
    except Exception as exc:  # a kernel that raises on valid input is a failure, not a crash
        first = (str(exc).splitlines() or [""])[0][:160]
        return CheckResult(error=math.nan, status="ERROR",
                           note=f"{type(exc).__name__}: {first}", **row)
    passed = err == 0.0 if mode == "exact" else err <= tol
    # library references (cuBLAS, PyTorch) allocate inside the library, out of reach
    if passed and not landed and kernel.backend not in registry.REFERENCE_BACKENDS:
        return CheckResult(error=err, status="ERROR", note=NOT_POISONED, **row)
    if passed:
        return CheckResult(error=err, status="ok", **row)
    return CheckResult(error=err, status="FAIL",
                       note=diagnose(problem, out, inputs, mode, tol, precision, kernel), **row)


# A pass proves nothing when an element the kernel never wrote could hold a right answer.
NOT_POISONED = ("its output was not in the memory poisoned before the run (allocate it with "
                "torch.empty/empty_like, which the check fills with NaN first), so an element "
                "it never wrote could hold an earlier right answer: the pass is not counted")
# ---------------------------------------------------------------------------------------
# Where a failed check fails
# ---------------------------------------------------------------------------------------

TILE_SIZES = (256, 128, 64, 32, 16, 8)     # block sizes a kernel's edge may sit at


def _spans(indices: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9' (at most four spans, then '...')."""
    spans, start = [], None
    for i, v in enumerate(indices):
        if start is None:
            start = v
        if i + 1 == len(indices) or indices[i + 1] != v + 1:
            spans.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ", ".join(spans[:4]) + (", ..." if len(spans) > 4 else "")


def _axis_pattern(bad_lines: list[int], length: int, what: str) -> str | None:
    """What the wrong rows (or columns) have in common: a tail past a tile edge, a stride."""
    if not bad_lines:
        return None
    first, count = bad_lines[0], len(bad_lines)
    if bad_lines == list(range(first, length)):             # a tail
        if first == length - 1:
            return f"the last {what} ({first})"
        edge = next((t for t in TILE_SIZES if first % t == 0 and first > 0), None)
        where = f" ({first}-{length - 1})" + (
            f": they start at {first}, a multiple of {edge}, where a partial tile begins"
            if edge else "")
        return f"the last {count} {what}s{where}"
    for t in TILE_SIZES:                                     # every t-th line
        rest = {i % t for i in bad_lines}
        if len(rest) == 1 and count >= 2 and count >= length // t - 1:
            return f"every {what} with index % {t} == {rest.pop()} (a tile edge inside)"
    return f"{what}s {_spans(bad_lines)}"


def where_wrong(err, tol, out) -> str:
    """One line that says where the output is wrong: how many elements, the first index,
    and the pattern when there is one (like torch.testing.assert_close's mismatch report)."""
    import torch

    bad = ~(err <= tol)                                      # NaN errors count as wrong
    count, total = int(bad.sum()), bad.numel()
    if count == 0:
        return ""
    flat = int(bad.reshape(-1).nonzero()[0])
    first = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), bad.shape))         if bad.dim() > 1 else (flat,)
    parts = [f"{count} of {total} elements wrong ({100 * count / total:.3g}%), first at "
             f"{list(first) if len(first) > 1 else first[0]}"]
    out = out.detach()
    nan = torch.isnan(out.double()) & bad
    if int(nan.sum()) == count:
        parts.append("all NaN: never written (outputs start as NaN)")
    elif int(nan.sum()):
        parts.append(f"{int(nan.sum())} of them NaN (never written?)")
    if bad.dim() == 2 and count < total:
        rows = bad.any(dim=1).nonzero().flatten().tolist()
        cols = bad.any(dim=0).nonzero().flatten().tolist()
        whole_rows = bool(bad[rows].all()) if rows else False
        whole_cols = bool(bad[:, cols].all()) if cols else False
        if whole_rows:
            parts.append(f"whole rows: {_axis_pattern(rows, bad.shape[0], 'row')}")
        elif whole_cols:
            parts.append(f"whole columns: {_axis_pattern(cols, bad.shape[1], 'column')}")
        else:
            for lines, n, what in ((rows, bad.shape[0], "row"), (cols, bad.shape[1], "column")):
                if len(lines) < n:
                    parts.append(f"in {_axis_pattern(lines, n, what)}")
    elif count == total:
        parts.append("every element")
    return "; ".join(parts)


def diagnose(problem, out, inputs, mode: str, tol: float, precision: str | None = None,
             kernel=None) -> str:
    """where_wrong() from the problem's error map, or a note that the op cannot say."""
    import torch

    if not isinstance(out, torch.Tensor):
        return f"the kernel returned {type(out).__name__}, not a tensor"
    try:
        err = problem.error_map(out, inputs, mode=mode, precision=precision, kernel=kernel)
    except Exception:            # a diagnosis must never hide the failure itself
        err = None
    if err is None:
        expected = getattr(inputs[0], "shape", None)
        return (f"output shape {tuple(out.shape)}, dtype {out.dtype}" +
                (f" (inputs {tuple(expected)})" if expected is not None else ""))
    return where_wrong(err, 0.0 if mode == "exact" else tol, out)


def _shapes_for(problem, shapes, device: str) -> list:
    """Shapes as objects of this problem: parsed from text, or the problem's defaults."""
    if shapes is None or isinstance(shapes, (str, dict)):
        return problems.shapes_for(problem, shapes, problem.check_shapes[device])
    return [problem.parse_shape(s) if isinstance(s, str) else s for s in shapes]


def plan(kernels, shapes=None, precisions: list[str] | None = None,
         modes=("random",), device: str = "cpu") -> list:
    """The work of a check, in order: (kernel, problem, shape, precision, mode) for each
    run, or a CheckResult already decided (a kernel whose op has no Problem, shapes that do
    not fit its op), so that the results keep the order of the kernels."""
    work: list = []
    for kernel in kernels:
        if not problems.known(kernel.op):
            work.append(CheckResult(kernel.name, "-", "-", "-", math.nan, math.nan, "skip",
                                    f"no Problem for op {kernel.op!r} in any family (bench/families/)"))
            continue
        problem = problems.get(kernel.op)
        try:
            kshapes = _shapes_for(problem, shapes, device)
        except ValueError as exc:
            work.append(CheckResult(kernel.name, str(shapes), "-", "-", math.nan, math.nan,
                                    "skip", f"shapes do not fit op {kernel.op}: {exc}"))
            continue
        if kshapes is None:           # a per-op --shapes that does not name this op
            continue
        for precision in kernel.precisions:
            if precisions and precision not in precisions:
                continue
            for shape in kshapes:
                why = kernel.refusal(shape)
                for mode in modes:
                    work.append(CheckResult(kernel.name, str(shape), precision, mode, math.nan,
                                            math.nan, "skip", why) if why else
                                (kernel, problem, shape, precision, mode))
    return work


def will_run(kernel, problem, shape, precision: str, mode: str, device: str) -> bool:
    """Whether check_one would run the kernel (rather than skip it at once)."""
    return dev.can_run(kernel, device, precision)[0] and (
        mode != "exact" or problem.exact_possible(shape, precision))


def run(kernels, shapes=None, precisions: list[str] | None = None,
        exact: bool = False, seed: int = 0, device: str | None = None,
        nonfinite: bool = False, progress=None, show_progress: bool = False
        ) -> list[CheckResult]:
    """Checks every kernel on every shape, at every precision it supports (or those asked).

    shapes: None (each problem's defaults for this device), a comma-separated string, or
    a list of shape objects/strings. `exact` and `nonfinite` add those modes to "random".
    Kernels whose op has no Problem are reported as skipped, not dropped silently.
    progress(result), if given, is called after every run; show_progress draws the runs
    that can run here as they go, on stderr (bench/terminal.py).
    """
    from bench import terminal

    device = device or dev.setup()
    modes = ["random"] + (["exact"] if exact else []) + (["nonfinite"] if nonfinite else [])
    work = plan(kernels, shapes, precisions, modes, device)
    runs = [isinstance(w, tuple) and will_run(*w, device) for w in work]
    results = []
    with terminal.Progress(sum(runs), "check", unit="runs", enabled=show_progress) as bar:
        for w, runs_here in zip(work, runs):
            if isinstance(w, CheckResult):
                results.append(w)
                continue
            kernel, problem, shape, precision, mode = w
            if runs_here:
                bar.start(f"{kernel.name} {shape} {precision} {mode}")
            r = check_one(kernel, problem, shape, precision, mode, seed, device)
            if runs_here:
                bar.advance()
            if progress:
                progress(r)
            results.append(r)
    return results


def general_reason(note: str) -> str:
    """A skip reason without its shapes: "shape 64x64x64 too large for exact bf16" and
    "shape 127x129x31 too large for exact bf16" are one reason."""
    return re.sub(r"\b\d+(?:x\d+)*(?::dim=-?\d+)?\b", "…", note or "no reason given")


def skipped_by_reason(rows) -> list[tuple[str, list[str], int]]:
    """The skipped runs of a check (CheckResults or their dicts) grouped by reason:
    (reason, the kernels in order, how many runs), the most frequent reason first."""
    groups: dict[str, tuple[list[str], list[int]]] = {}
    for r in rows:
        r = r if isinstance(r, dict) else r.as_dict()
        if r["status"] != "skip":
            continue
        kernels, runs = groups.setdefault(general_reason(r.get("note")), ([], [0]))
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        runs[0] += 1
    return sorted(((why, k, n[0]) for why, (k, n) in groups.items()), key=lambda g: -g[2])
