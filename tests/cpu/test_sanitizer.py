"""The attribution of compute-sanitizer's reports to kernels, by the marker lines the target
prints (tests/support/sanitize_target.py); the sanitizer itself runs in
tests/gpu/test_sanitizer.py; the poisoning of free memory that initcheck runs ask for."""
from __future__ import annotations

import pytest

from tests.support.sanitize_target import errors_by_kernel


def test_error_attribution():
    log = "\n".join(["== triton_copy 1000 fp32", "========= Invalid __global__ read of size 4",
                     "== cuda_copy 1000 fp32", "========= ERROR SUMMARY: 1 error"])
    assert errors_by_kernel(log) == {"triton_copy": 1}


def test_poisoning_fills_every_free_block_of_the_allocator_and_nothing_else(monkeypatch):
    """--poison-outputs (initcheck, which does not see TMA stores): every 'inactive' block of
    torch's caching allocator is filled with 0xFF through a zero-copy view of its address
    (__cuda_array_interface__), blocks in use are left alone, and the work is synchronised
    before and after."""
    import torch

    from bench import device

    snapshot = [{"blocks": [{"address": 4096, "size": 512, "state": "inactive"},
                            {"address": 4608, "size": 1024, "state": "active_allocated"}]},
                {"blocks": [{"address": 1 << 21, "size": 2048, "state": "inactive"},
                            {"address": 3 << 20, "size": 0, "state": "inactive"}]}]
    filled, calls = [], []

    class View:
        def __init__(self, interface):
            self.interface = interface

        def fill_(self, value):
            filled.append((self.interface["data"][0], self.interface["shape"][0], value))

    def as_tensor(obj, device):
        assert device == "cuda" and obj.__cuda_array_interface__["typestr"] == "|u1"
        return View(obj.__cuda_array_interface__)

    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: snapshot)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: calls.append("sync"))
    monkeypatch.setattr(torch, "as_tensor", as_tensor)
    device.poison_free_memory()
    assert filled == [(4096, 512, 255), (1 << 21, 2048, 255)]
    assert calls == ["sync", "sync"]
    from pathlib import Path

    gpu = Path(__file__).resolve().parents[1] / "gpu"   # initcheck asks for it
    text = (gpu / "test_sanitizer.py").read_text()
    assert 'if tool == "initcheck":' in text and 'cmd.append("--poison-outputs")' in text


def test_misaligned_inputs_start_one_element_into_their_storage():
    """sanitize_target's misaligned case: the same values, contiguous, off 16 bytes."""
    import torch

    from tests.support.sanitize_target import misaligned

    x, img = torch.randn(37, 1000), torch.randint(0, 256, (3, 31, 17), dtype=torch.uint8)
    mx, dim, mimg = misaligned((x, -1, img))
    assert dim == -1 and torch.equal(mx, x) and torch.equal(mimg, img)
    for t in (mx, mimg):
        assert t.is_contiguous() and t.storage_offset() == 1


def test_the_target_launches_each_tuning_candidate_once(monkeypatch):
    """Under the sanitizer the autotuners' do_bench (looked up when a candidate is timed)
    launches the candidate once, untimed; a candidate that fails still ranks last."""
    import triton.testing

    from tests.support import sanitize_target
    from triton_impl import _common

    monkeypatch.setattr(triton.testing, "do_bench", triton.testing.do_bench)  # restored after
    monkeypatch.setenv("TRITON_CACHE_AUTOTUNING", "1")
    sanitize_target.untimed_tuning()
    assert triton.testing.do_bench is sanitize_target.launch_once
    from triton import knobs

    assert not knobs.autotuning.cache    # no untimed result is written for later runs
    _prune, bench = _common.tuning_hooks("triton_autotuned", lambda cfg, elem: 0)
    launches = []
    assert bench(lambda: launches.append(1), (0.5, 0.2, 0.8)) == [1.0, 1.0, 1.0]
    assert launches == [1]

    def broken():
        raise RuntimeError("out of resources")

    with pytest.warns(UserWarning, match="a candidate failed and is skipped"):
        assert bench(broken, (0.5,)) == [float("inf")]


def test_racecheck_over_triton_keeps_every_edge_and_laps_every_ring():
    """racecheck's matmul shapes for the Triton kernels (RACECHECK_TRITON_MATMUL) keep the
    tile edges of the full set, stay under the autotuners' threshold (their cost: the
    comment beside them), and run every ring of stages round four times or more."""
    from bench import problems
    from tests.support import sanitize_target as st
    from triton_impl import _common, tiles

    problem = problems.get("matmul")
    small = problem.parse_shapes(st.RACECHECK_TRITON_MATMUL)
    full = problem.parse_shapes(st.SHAPES["matmul"])
    assert len(small) == len(full)
    assert all(s.M * s.N * s.K <= _common.SMALL_PROBLEM_FMAS for s in small)
    ring = max(c["num_stages"] * c["BLOCK_K"] for cs in tiles.AUTOTUNE_CONFIGS.values()
               for c in cs)
    assert max(s.K for s in small) >= 4 * ring
    for f, s in zip(full, small):     # only the long ones replaced
        assert s == f or f.M * f.N * f.K > _common.SMALL_PROBLEM_FMAS, (f, s)
