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
from dataclasses import asdict, dataclass

from bench import device as dev
from bench import problems


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
        dev.poison_output_memory(problem.output_nbytes(shape, precision), device)
        with dev.quiet_interpreter(device), dev.poisoned_cpu_allocations():
            out = fn(*inputs)
            dev.synchronize(device)
        err = problem.error(out, inputs, mode=mode)
    except Exception as exc:  # a kernel that raises on valid input is a failure, not a crash
        first = (str(exc).splitlines() or [""])[0][:160]
        return CheckResult(error=math.nan, status="ERROR",
                           note=f"{type(exc).__name__}: {first}", **row)
    passed = err == 0.0 if mode == "exact" else err <= tol
    return CheckResult(error=err, status="ok" if passed else "FAIL", **row)


def _shapes_for(problem, shapes, device: str) -> list:
    """Shapes as objects of this problem: parsed from text, or the problem's defaults."""
    if shapes is None or isinstance(shapes, (str, dict)):
        return problems.shapes_for(problem, shapes, problem.check_shapes[device])
    return [problem.parse_shape(s) if isinstance(s, str) else s for s in shapes]


def run(kernels, shapes=None, precisions: list[str] | None = None,
        exact: bool = False, seed: int = 0, device: str | None = None,
        nonfinite: bool = False, progress=None) -> list[CheckResult]:
    """Checks every kernel on every shape, at every precision it supports (or those asked).

    shapes: None (each problem's defaults for this device), a comma-separated string, or
    a list of shape objects/strings. `exact` and `nonfinite` add those modes to "random".
    Kernels whose op has no Problem are reported as skipped, not dropped silently.
    """
    device = device or dev.setup()
    modes = ["random"] + (["exact"] if exact else []) + (["nonfinite"] if nonfinite else [])
    results = []
    for kernel in kernels:
        if not problems.known(kernel.op):
            results.append(CheckResult(kernel.name, "-", "-", "-", math.nan, math.nan, "skip",
                                       f"no Problem for op {kernel.op!r} in any family (bench/families/)"))
            continue
        problem = problems.get(kernel.op)
        try:
            kshapes = _shapes_for(problem, shapes, device)
        except ValueError as exc:
            results.append(CheckResult(kernel.name, str(shapes), "-", "-", math.nan, math.nan,
                                       "skip", f"shapes do not fit op {kernel.op}: {exc}"))
            continue
        if kshapes is None:           # a per-op --shapes that does not name this op
            continue
        for precision in kernel.precisions:
            if precisions and precision not in precisions:
                continue
            for shape in kshapes:
                for mode in modes:
                    r = check_one(kernel, problem, shape, precision, mode, seed, device)
                    if progress:
                        progress(r)
                    results.append(r)
    return results
