"""Which cases of a parametrized GPU test run in the fast tier (`make test`) and which only
in `make test-all` (the `slow` marker): for tests whose every case costs a compile (an
Inductor graph, a CUDA extension) and checks the same registration, one case per kind runs
in the fast tier and the rest are slow."""
from __future__ import annotations

import pytest


def one_fast_per_kind(kernels, kind) -> list:
    """pytest params of kernels, each with its name as id: the first kernel of each
    kind(kernel) fast, the others marked slow."""
    seen = set()
    params = []
    for k in kernels:
        first = kind(k) not in seen
        seen.add(kind(k))
        params.append(pytest.param(k, id=k.name, marks=() if first else pytest.mark.slow))
    return params


def kernel_precision_params(cases, prefix: str = "") -> list:
    """pytest params of (kernel, precision[, more]) cases, with ids "<prefix>name-precision";
    the entries that pick a kernel per shape (cuda_auto, triton_auto: Kernel.chooses) marked
    slow, since every kernel they pick is tested in the fast tier under its own name, and
    their picks at the shape suite's shapes by tests/gpu/test_shape_paths.py."""
    return [pytest.param(*case, id=f"{prefix}{case[0].name}-{case[1]}",
                         marks=pytest.mark.slow if case[0].chooses is not None else ())
            for case in cases]
