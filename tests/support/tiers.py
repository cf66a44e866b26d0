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
