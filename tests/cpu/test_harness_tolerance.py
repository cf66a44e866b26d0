"""Tolerances that can fail: a wrong element, an all-zero output, a dropped NaN, an unwritten
element all fail; a correct torch product passes. CPU only (torch on the CPU plays the kernel)."""
from __future__ import annotations

import math

import pytest
import torch

from bench.families.matmul.problems import matmul_error
from bench import check, problems
from bench.registry import Kernel

MM = problems.get("matmul")


def _kernel(fn, name="fake", precisions=("fp32", "tf32", "fp16", "bf16")):
    return Kernel(name=name, op="matmul", backend="torch", version="test", summary="test",
                  source="tests", precisions=precisions, loader=lambda p: fn, runs_on_cpu=True)


def _good(a, b):
    return (a.float() @ b.float()).to(a.dtype)


def _run(fn, shape="37x29x41", precision="fp32", mode="random"):
    return check.check_one(_kernel(fn), MM, MM.parse_shape(shape), precision, mode, 0, "cpu")


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_correct_product_passes(precision):
    r = _run(_good, precision=precision)
    assert r.status == "ok", r
    assert 0 <= r.error <= r.tolerance == 1


def test_one_wrong_element_fails():
    def one_off(a, b):
        c = _good(a, b)
        c[3, 4] += 1e-3 * c.abs().max()
        return c

    assert _run(one_off).status == "FAIL"


def test_all_zero_output_fails():
    assert _run(lambda a, b: torch.zeros(a.shape[0], b.shape[1])).status == "FAIL"


def test_unwritten_nan_element_fails():
    def hole(a, b):
        c = _good(a, b)
        c[-1, -1] = math.nan
        return c

    r = _run(hole)
    assert r.status == "FAIL" and math.isinf(r.error)


def test_wrong_shape_fails():
    assert _run(lambda a, b: _good(a, b)[:-1]).status == "FAIL"


def test_raising_kernel_is_an_error_not_a_crash():
    def boom(a, b):
        raise RuntimeError("matmul_test: kaboom")

    r = _run(boom)
    assert r.status == "ERROR" and "kaboom" in r.note


def test_missing_term_fails_in_exact_mode():
    def drops_last_k(a, b):
        return a[:, :-1] @ b[:-1, :]

    assert _run(drops_last_k, mode="exact").status == "FAIL"
    assert _run(_good, mode="exact").status == "ok"


def test_exact_mode_runs_wherever_float32_sums_are_exact():
    """Sums of K products of integers in [-3, 3] stay exact in float32 up to 9 K = 2^24; the
    output is then the float64 product rounded once, whatever the precision, so exact mode
    runs at real sizes in 16 bits too (values above 2048 round in float16)."""
    for precision in ("fp32", "tf32", "fp16", "bf16"):
        r = _run(_good, shape="8x8x300", precision=precision, mode="exact")
        assert r.status == "ok" and r.error == 0, r
    r = _run(_good, shape="3x2x1864136", precision="fp16", mode="exact")
    assert r.status == "skip" and "2^24" in r.note, r
    r = _run(_good, shape="3x2x1864135", precision="bf16", mode="exact")
    assert r.status == "ok" and r.error == 0, r


def test_exact_mode_compares_with_the_product_rounded_once():
    """A 16-bit kernel that rounds its partial sums (of 512 terms) to bfloat16 before adding
    them fails exact mode at K = 4096: bfloat16 keeps integers exact only up to 256."""
    def rounds_partials(a, b):
        parts = [(a[:, k:k + 512].float() @ b[k:k + 512].float()).to(a.dtype)
                 for k in range(0, a.shape[1], 512)]
        return torch.stack(parts).float().sum(0).to(a.dtype)

    assert _run(_good, shape="64x64x4096", precision="bf16", mode="exact").status == "ok"
    r = _run(rounds_partials, shape="64x64x4096", precision="bf16", mode="exact")
    assert r.status == "FAIL", r


def test_nan_and_inf_inputs_propagate():
    r = _run(_good, mode="nonfinite")
    assert r.status == "ok", r


def test_kernel_that_swallows_nan_is_reported():
    def clamps(a, b):
        return torch.nan_to_num(_good(a, b), nan=0.0, posinf=0.0, neginf=0.0)

    r = _run(clamps, mode="nonfinite")
    assert r.status == "FAIL" and math.isinf(r.error)


def test_nonfinite_inputs_are_placed():
    a, b = MM.inputs(MM.parse_shape("5x6x7"), "fp32", mode="nonfinite")
    assert torch.isnan(a).sum() == 1 and torch.isinf(b).sum() == 1
    a, b = MM.inputs(MM.parse_shape("5x6x0"), "fp32", mode="nonfinite")  # nowhere to put them
    assert a.numel() == 0


def test_the_bound_is_tight_enough_for_a_16_bit_product_to_fail_as_fp32():
    a, b = MM.inputs(MM.parse_shape("64x64x64"), "fp32")
    assert matmul_error((a.half() @ b.half()).float(), a, b, "fp32") > 1
    assert matmul_error(_good(a, b), a, b, "fp32") <= 1


def test_zero_size_shapes():
    for shape in ("0x5x7", "5x0x7", "5x7x0"):
        assert _run(_good, shape=shape).status == "ok"


def test_run_skips_gpu_kernels_and_unknown_ops_on_cpu():
    gpu_only = Kernel(name="gpu_only", op="matmul", backend="cuda", version="x", summary="",
                      source="", precisions=("fp32",), loader=lambda p: _good)
    other = Kernel(name="softmax_x", op="softmax_not_yet", backend="triton", version="x",
                   summary="", source="", precisions=("fp32",), loader=lambda p: _good,
                   runs_on_cpu=True)
    res = check.run([gpu_only, other, _kernel(_good)], shapes="3x4x5", precisions=["fp32"],
                    exact=True, nonfinite=True, device="cpu")
    by = {}
    for r in res:
        by.setdefault(r.kernel, []).append(r.status)
    assert set(by["gpu_only"]) == {"skip"}
    assert by["softmax_x"] == ["skip"]
    assert by["fake"] == ["ok", "ok", "ok"]


def test_interpreter_bf16_is_skipped_on_cpu():
    from bench import device

    k = Kernel(name="t", op="matmul", backend="triton", version="x", summary="", source="",
               precisions=("bf16",), loader=lambda p: _good, runs_on_cpu=True)
    ok, why = device.can_run(k, "cpu", "bf16")
    assert not ok and "bf16" in why


# --------------------------------------------------------------------------- poisoned outputs

def _lazy_matmul(a, b):
    """A wrong kernel: allocates C and writes every element but the last."""
    import torch

    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    flat = (a.double() @ b.double()).to(a.dtype).flatten()
    out.view(-1)[:-1] = flat[:-1]
    return out


def test_an_unwritten_element_fails_the_check(device):
    """The last element of C is never written; a freed block holding the right answer
    (the reference's, just computed on the same inputs) must not let it pass. On the CPU
    every empty tensor starts as NaN (tests/conftest.py, bench/device.py); on the GPU the
    harness poisons the allocator's block before the run."""
    from bench import check, problems
    from bench.registry import Kernel

    kernel = Kernel(name="lazy", op="matmul", backend="triton", version="-", summary="",
                    source="", precisions=("fp32",), loader=lambda p: _lazy_matmul,
                    runs_on_cpu=True)
    problem = problems.get("matmul")
    shape = problem.parse_shape("17x13x7")
    a, b = problem.inputs(shape, "fp32", device=device)
    right = (a.double() @ b.double()).float()          # the right answer, then freed
    del right
    r = check.check_one(kernel, problem, shape, "fp32", device=device)
    assert r.status == "FAIL" and math.isinf(r.error), r


def test_poisoned_wrappers_fail_a_lazy_kernel(device):
    """tests/support/checks.py's poisoned(): the right answer freed just before the call is not
    what the lazy kernel's output block holds."""
    import torch

    from tests.support.checks import poisoned

    a = torch.randn(33, 17, device=device)
    b = torch.randn(17, 29, device=device)
    good = (a.double() @ b.double()).float()
    del good
    out = poisoned(_lazy_matmul)(a, b)
    assert torch.isnan(out.view(-1)[-1]) and not torch.isnan(out.view(-1)[:-1]).any()
