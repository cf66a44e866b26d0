"""Test tiers (see DESIGN.md, "Tests, in tiers").

- CPU tier: everything not marked `gpu`. Triton kernels run through the interpreter
  (marker `interpreter`), which needs numpy < 2.4; where numpy is newer (the GPU machine)
  those tests are skipped because the GPU tier runs the same kernels natively.
- GPU tier: marker `gpu`, skipped without CUDA.

The Triton interpreter must be switched on before any Triton kernel is defined, so this
file sets TRITON_INTERPRET=1 on machines without a GPU before the tests import anything.
"""
from __future__ import annotations

import os

import pytest
import torch

HAS_GPU = torch.cuda.is_available()
if not HAS_GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _numpy_too_new() -> bool:
    import numpy

    major, minor = (int(x) for x in numpy.__version__.split(".")[:2])
    return (major, minor) >= (2, 4)


def pytest_configure(config):
    """On a machine without a GPU the interpreter tier is the only test of the Triton
    kernels: it must run, not skip. numpy >= 2.4 breaks Triton 3.6's interpreter, so stop
    with the reason (the Makefile's .venv pins numpy < 2.4) unless told explicitly."""
    if HAS_GPU or not _numpy_too_new() or os.environ.get("CVT_SKIP_INTERPRETER") == "1":
        return
    import numpy

    raise pytest.UsageError(
        f"numpy {numpy.__version__} breaks the Triton interpreter (needs numpy < 2.4), and "
        f"without a GPU the interpreter tier is the only test of the Triton kernels. Run "
        f"`make test` (it makes .venv from requirements-cpu.txt, numpy < 2.4), or "
        f"`pip install 'numpy<2.4'`; CVT_SKIP_INTERPRETER=1 skips that tier on purpose.")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    skip_interp = pytest.mark.skip(
        reason="Triton interpreter tests run on CPU machines (here a GPU runs them natively, "
        "or numpy >= 2.4 breaks the interpreter)")
    interp_ok = not HAS_GPU and not _numpy_too_new()
    for item in items:
        if "gpu" in item.keywords and not HAS_GPU:
            item.add_marker(skip_gpu)
        if "interpreter" in item.keywords and not interp_ok:
            item.add_marker(skip_interp)


@pytest.fixture(scope="session", autouse=True)
def poisoned_outputs_on_the_cpu():
    """CPU tier: every torch.empty / empty_like / empty_strided CPU tensor starts as NaN
    (bench/device.py), so an output element a Triton kernel forgets to write fails any
    test that checks it, whatever memory the CPU allocator hands back. (The GPU tier
    poisons the caching allocator's block before each run instead: tests/checks.py.)"""
    if HAS_GPU:
        yield
        return
    from bench.device import poisoned_cpu_allocations

    with poisoned_cpu_allocations():
        yield


@pytest.fixture(scope="session")
def device() -> str:
    """"cuda" on the GPU machine, "cpu" elsewhere (Triton through its interpreter)."""
    return "cuda" if HAS_GPU else "cpu"
