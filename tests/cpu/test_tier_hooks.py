"""CPU tier: the collection hook of tests/conftest.py on stand-in items (the machine faked):
every GPU test gets a time limit (its own, if it sets one; the slow tier's, if slow), and a
tier this machine cannot run is one skipped item per test function, the rest deselected."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest

TESTS = Path(conftest.__file__).parent


class Item:
    """What the hook reads of a collected test."""

    def __init__(self, path: str, name: str, *marks):
        self.path = TESTS / path
        self.nodeid = f"tests/{path}::{name}"
        self.marks = list(marks)

    def get_closest_marker(self, name):
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, mark):
        mark = getattr(pytest.mark, mark) if isinstance(mark, str) else mark
        self.marks.append(getattr(mark, "mark", mark))


def _collect(monkeypatch, items, gpu: bool, collect_only: bool = False):
    monkeypatch.setattr(conftest, "HAS_GPU", gpu)
    monkeypatch.setattr(conftest, "_kernel_cannot_run", lambda item: "")
    deselected = []
    config = SimpleNamespace(option=SimpleNamespace(collectonly=collect_only),
                             hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    conftest.pytest_collection_modifyitems(config, items)
    return deselected


def _items():
    return [Item("gpu/test_a.py", f"test_sweep[{i}]") for i in range(5)] + [
        Item("gpu/test_a.py", "test_slow", pytest.mark.slow.mark),
        Item("gpu/test_a.py", "test_own_limit", pytest.mark.timeout(30).mark),
        Item("cpu/test_b.py", "test_cpu")]


def test_every_gpu_test_has_a_time_limit(monkeypatch):
    items = _items()
    assert _collect(monkeypatch, items, gpu=True) == []
    limits = {i.nodeid.split("::")[1]: i.get_closest_marker("timeout") for i in items}
    assert limits["test_sweep[0]"].args == (conftest.GPU_TIMEOUT,)
    assert limits["test_slow"].args == (conftest.GPU_SLOW_TIMEOUT,)
    assert limits["test_own_limit"].args == (30,)
    assert limits["test_cpu"] is None
    assert not any(i.get_closest_marker("skip") for i in items)


def test_a_tier_this_machine_cannot_run_is_one_skip_per_test(monkeypatch):
    items = _items()
    deselected = _collect(monkeypatch, items, gpu=False)
    assert [i.nodeid for i in deselected] == [f"tests/gpu/test_a.py::test_sweep[{i}]"
                                              for i in range(1, 5)]
    reasons = {i.nodeid: getattr(i.get_closest_marker("skip"), "kwargs", {}).get("reason")
               for i in items}
    assert reasons == {"tests/gpu/test_a.py::test_sweep[0]": "needs a CUDA GPU (5 cases of this test)",
                       "tests/gpu/test_a.py::test_slow": "needs a CUDA GPU",
                       "tests/gpu/test_a.py::test_own_limit": "needs a CUDA GPU",
                       "tests/cpu/test_b.py::test_cpu": None}


def test_collect_only_lists_every_case(monkeypatch):
    """tests/support/index.py reads the ids of every case from --collect-only."""
    items = _items()
    assert _collect(monkeypatch, items, gpu=False, collect_only=True) == []
    assert len(items) == 8 and all(i.get_closest_marker("skip") for i in items[:7])


@pytest.mark.parametrize("gpu", [False, True])
def test_a_same_everywhere_test_is_slow_only_beside_a_gpu(monkeypatch, gpu):
    """nvcc's compile checks and the labs graded on the CPU: fast-tier without a GPU (CI's
    only test of them), slow-tier on a GPU machine; a CPU test without the mark is neither."""
    marked = Item("cpu/test_labs.py", "test_grade", pytest.mark.same_everywhere.mark)
    plain = Item("cpu/test_layout.py", "test_layout")
    _collect(monkeypatch, [marked, plain], gpu=gpu)
    assert (marked.get_closest_marker("slow") is not None) == gpu
    assert plain.get_closest_marker("slow") is None
