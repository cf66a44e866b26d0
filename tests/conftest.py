"""Test tiers, one per folder (see docs/DESIGN.md, "Tests, in tiers"):

- tests/cpu/: every machine, with or without a GPU; no Triton kernel runs through the
  interpreter here.
- tests/interpreter/: Triton kernels through TRITON_INTERPRET=1 on a machine without a GPU.
  The interpreter needs numpy < 2.4; where numpy is newer, or where a GPU runs the same
  kernels natively (the GPU tier), these tests are skipped.
- tests/gpu/: needs a CUDA GPU, skipped without one.
- tests/support/: helpers and data shared by the folders, no tests.

The folder is the only place a tier is written: every test gets the marker of its folder
(`interpreter`, `gpu`) here, so `-m gpu` and `-m "not gpu"` select tiers. `slow` is a cost,
not a tier: a marker of its own (pytest.ini). tests/INDEX.md lists the tests of each kernel.

The Triton interpreter must be switched on before any Triton kernel is defined, so this
file sets TRITON_INTERPRET=1 on machines without a GPU before the tests import anything.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

HAS_GPU = torch.cuda.is_available()
TESTS = Path(__file__).resolve().parent
TIERS = ("cpu", "interpreter", "gpu")
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


def tier(path) -> str:
    """The tier of a test file: the folder of tests/ it sits in."""
    parts = Path(path).resolve().relative_to(TESTS).parts
    if len(parts) < 2 or parts[0] not in TIERS:
        raise pytest.UsageError(
            f"{path}: a test file goes in tests/cpu/, tests/interpreter/ or tests/gpu/ "
            f"(its folder is its tier: tests/conftest.py)")
    return parts[0]


@pytest.hookimpl(tryfirst=True)     # before -m deselects by the markers added here
def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    skip_interp = pytest.mark.skip(
        reason="Triton interpreter tests run on CPU machines (here a GPU runs them natively, "
        "or numpy >= 2.4 breaks the interpreter)")
    interp_ok = not HAS_GPU and not _numpy_too_new()
    for item in items:
        folder = tier(item.path)
        if folder != "cpu":
            item.add_marker(folder)
        if folder == "gpu" and not HAS_GPU:
            item.add_marker(skip_gpu)
        if folder == "interpreter" and not interp_ok:
            item.add_marker(skip_interp)
        if folder == "gpu" and HAS_GPU:
            why = _kernel_cannot_run(item)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))


def _kernel_cannot_run(item) -> str:
    """Why this GPU cannot run a kernel the test is about ("" if it can): a registry kernel
    among the test's parameters, or the kernel a file names as NEEDS_KERNEL (the
    Hopper-only triton_persistent's tests on an A100 or an L4)."""
    from bench import device, registry

    kernels = [v for v in getattr(getattr(item, "callspec", None), "params", {}).values()
               if isinstance(v, registry.Kernel)]
    needs = getattr(item.module, "NEEDS_KERNEL", None) if hasattr(item, "module") else None
    if needs:
        kernels.append(registry.get(needs))
    for k in kernels:
        runs, why = device.can_run(k, "cuda")
        if not runs:
            return f"{k.name}: {why}"
    return ""


@pytest.fixture(scope="session", autouse=True)
def poisoned_outputs_on_the_cpu():
    """CPU tier: every torch.empty / empty_like / empty_strided CPU tensor starts as NaN
    (bench/device.py), so an output element a Triton kernel forgets to write fails any
    test that checks it, whatever memory the CPU allocator hands back. (The GPU tier
    poisons the caching allocator's block before each run instead: tests/support/checks.py.)"""
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


@pytest.fixture
def plugin_env(monkeypatch):
    """No plugin kernels to start with (CVT_PLUGINS empty), and CVT_PLUGINS and the
    registry's cache restored after the test (bench/plugins.py)."""
    from bench import plugins, registry

    monkeypatch.setenv(plugins.ENV, "")
    registry.forget()
    yield monkeypatch
    registry.forget()
