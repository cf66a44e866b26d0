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
not a tier: a marker of its own (pytest.ini); `make test` leaves it out, `make test-all`
runs it. tests/INDEX.md lists the tests of each kernel.

A tier this machine cannot run (the GPU tier without a GPU; the interpreter tier on a GPU
machine) is one skipped item per test function, naming how many cases it has; its other
cases are deselected (`--collect-only` still lists every case). Cases that no machine can
run (a kernel at a precision or a shape it refuses by design) are not parametrized at all.

A CPU test marked `same_everywhere` (nvcc's compile checks, the labs graded through the
interpreter and the CUDA emulator) comes out the same on every machine: it is fast-tier
where there is no GPU (CI: the only test of that path) and slow-tier on a GPU machine, whose
GPU tier runs the same kernels natively (`costs_more_here`; docs/harness.md says what that
saves).

Every GPU test has a time limit (pytest-timeout's `timeout` marker, added here unless the
test sets its own): GPU_TIMEOUT seconds, GPU_SLOW_TIMEOUT for a `slow` one, so a kernel
that never ends (a 32-bit loop counter past 2^31, a deadlocked barrier) fails its test
instead of hanging the run. Without pytest-timeout installed the marker does nothing (the
header says so).

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
GPU_TIMEOUT = 240          # seconds, a GPU test of the fast tier (compiles included)
GPU_SLOW_TIMEOUT = 900     # a slow one: compute-sanitizer over a group of kernels, 2^31 offsets
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


def pytest_report_header(config):
    if HAS_GPU and not config.pluginmanager.hasplugin("timeout"):
        return ("pytest-timeout is not installed: the GPU tests run without their time limits "
                "(tests/conftest.py; `pip install pytest-timeout`)")
    return None


@pytest.hookimpl(tryfirst=True)     # before -m deselects by the markers added here
def pytest_collection_modifyitems(config, items):
    not_here = {"gpu": "" if HAS_GPU else "needs a CUDA GPU",
                "interpreter": "" if not HAS_GPU and not _numpy_too_new() else
                "Triton interpreter tests run on CPU machines (here a GPU runs them natively, "
                "or numpy >= 2.4 breaks the interpreter)"}
    for item in items:
        folder = tier(item.path)
        if folder != "cpu":
            item.add_marker(folder)
        if costs_more_here(item, HAS_GPU):
            item.add_marker(pytest.mark.slow)
        if folder == "gpu" and item.get_closest_marker("timeout") is None:
            slow = item.get_closest_marker("slow") is not None
            item.add_marker(pytest.mark.timeout(GPU_SLOW_TIMEOUT if slow else GPU_TIMEOUT))
        if folder == "gpu" and HAS_GPU:
            why = _kernel_cannot_run(item)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
    _skip_tiers_not_here(config, items, not_here)


def costs_more_here(item, has_gpu: bool) -> bool:
    """A `same_everywhere` test on a GPU machine: the slow tier there (module header)."""
    return has_gpu and item.get_closest_marker("same_everywhere") is not None


def _skip_tiers_not_here(config, items, not_here: dict) -> None:
    """The tests of a tier this machine cannot run (not_here: tier -> why, "" if it can):
    each test function's first case skipped with the reason and the number of its cases,
    the other cases deselected; under --collect-only every case listed, skipped."""
    whole: dict[str, list] = {}
    for item in items:
        if not_here.get(tier(item.path)):
            whole.setdefault(item.nodeid.split("[")[0], []).append(item)
    for same in whole.values():
        reason = not_here[tier(same[0].path)]
        if config.option.collectonly:
            for item in same:
                item.add_marker(pytest.mark.skip(reason=reason))
            continue
        if len(same) > 1:
            reason += f" ({len(same)} cases of this test)"
        same[0].add_marker(pytest.mark.skip(reason=reason))
    dropped = set() if config.option.collectonly else {
        id(item) for same in whole.values() for item in same[1:]}
    if dropped:
        config.hook.pytest_deselected(items=[i for i in items if id(i) in dropped])
        items[:] = [i for i in items if id(i) not in dropped]


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
