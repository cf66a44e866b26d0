"""Correctness: every selected kernel x shape x precision against the float64 reference.

The same function backs `python -m bench check` and the pytest tiers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from bench import device as dev
from bench.models import MatmulShape
from bench.problems import (MatmulCase, exact_mode_possible, input_dtype, matmul_error,
                            matmul_tolerance)


@dataclass
class CheckResult:
    kernel: str
    shape: str
    precision: str
    mode: str          # "random" or "exact"
    error: float       # largest relative error (see bench/problems.py)
    tolerance: float
    status: str        # "ok", "FAIL", "ERROR" or "skip"
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("FAIL", "ERROR")


def check_matmul(kernel, case: MatmulCase, device: str) -> CheckResult:
    shape, precision = case.shape, case.precision
    mode = "exact" if case.exact else "random"
    tol = 0.0 if case.exact else matmul_tolerance(precision, shape.K)
    row = dict(kernel=kernel.name, shape=str(shape), precision=precision, mode=mode,
               tolerance=tol)
    ok, why = dev.can_run(kernel, device)
    if not ok:
        return CheckResult(error=math.nan, status="skip", note=why, **row)
    if case.exact and not exact_mode_possible(precision, shape.K):
        return CheckResult(error=math.nan, status="skip",
                           note=f"K={shape.K} too long for exact {precision}", **row)
    try:
        fn = kernel.runner(precision)
        a, b = case.inputs(device)
        out_bytes = shape.M * shape.N * input_dtype(precision).itemsize
        dev.poison_output_memory(out_bytes, device)
        out = fn(a, b)
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
        err = matmul_error(out, a, b)
    except Exception as exc:  # a kernel that raises on valid input is a failure, not a crash
        return CheckResult(error=math.nan, status="ERROR",
                           note=f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}", **row)
    passed = err == 0.0 if case.exact else err <= tol
    return CheckResult(error=err, status="ok" if passed else "FAIL", **row)


def run(kernels, shapes: list[MatmulShape], precisions: list[str] | None = None,
        exact: bool = False, seed: int = 0, device: str | None = None) -> list[CheckResult]:
    """Checks every kernel on every shape, at every precision it supports (or those asked)."""
    device = device or dev.setup()
    results = []
    for kernel in kernels:
        for precision in kernel.precisions:
            if precisions and precision not in precisions:
                continue
            for shape in shapes:
                for mode_exact in ([False, True] if exact else [False]):
                    case = MatmulCase(shape, precision, exact=mode_exact, seed=seed)
                    results.append(check_matmul(kernel, case, device))
    return results
