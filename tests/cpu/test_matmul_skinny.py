"""The skinny path beside the ladder: cuda/matmul_skinny.cu, the op cvt::matmul_skinny.

CPU tier: every instantiation (float32, float16, bfloat16; M small and N small; R = 1 ... 16;
vector and scalar loads) builds for sm_90 without a spill (tests/cpu/test_cuda_build.py);
in the slow tier (`make test-slow`, which CI runs after `make test`) the kernels run on the
CPU emulator (bench/cuda_emulator/runner_skinny.cpp) in the
three types at odd shapes, element by element against a float64 reference of the same
inputs: both kernels (M small: threads along B's columns; N small: C^T = B^T A^T, warps
along A's rows, lanes along k, summed by warp shuffles), M or N of 1, 3, 9 and 16, K of 0, 1
and up to one chunk (one split), K deep enough for 2 to 8 splits (the workspace and the
ordered reduction), a warp's rows in part, N or K not a multiple of the vector width and
pointers off alignment (the scalar loads); the launcher refuses a product with neither side small and a workspace
smaller than it asked for; the fake kernel checks what the op checks.
"""
from __future__ import annotations

import re

import pytest

from bindings import config
from tests.support import emulated

# (M, N, K, offset): offset elements shift A, B and C off their aligned allocations
# One chunk of k (64 values where M is small; 256 in float32 and 512 in 16 bits where N is
# small), so one split in every type.
ONE_SPLIT = [
    # M small (the cols kernel): N a multiple of 16 bytes' worth (vector loads) or not (scalar)
    (1, 700, 60, 0), (3, 515, 50, 0), (16, 1024, 63, 0), (16, 512, 64, 1), (1, 9, 1, 0),
    # N small (the rows kernel, C^T = B^T A^T): K a multiple of 16 bytes' worth or not, the
    # last warp's rows in part, and a block with one row
    (700, 1, 64, 0), (130, 3, 250, 0), (129, 16, 200, 0), (5, 16, 1, 0), (300, 3, 65, 1),
    # ... B staged I values at a time where N is a multiple of I: N = 2 (I = 2), N = 12 (I =
    # 4, R = 16: the fourth group of 4 is padding, zeros)
    (40, 2, 100, 0), (70, 12, 250, 0),
    # both small (N small is taken), and K = 0 (zeros)
    (3, 3, 63, 0), (16, 16, 64, 0), (3, 3, 0, 0), (1, 600, 0, 0),
]
# K deep enough to split in every type (see the header's "splits")
# (few blocks each: the emulator runs a thread per CUDA thread)
SPLITS = [(16, 16, 1100, 0), (2, 600, 700, 1), (3, 260, 1111, 0), (1, 700, 65, 0),
          (3, 515, 300, 0), (130, 3, 600, 0), (33, 16, 1030, 1), (64, 8, 2000, 0)]


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    return emulated.build(tmp_path_factory.mktemp("skinny"), "runner_skinny.cpp",
                          "skinny_kernels.inc")


def _rows(out: str) -> list[re.Match]:
    return list(re.finditer(r"skinny (\w+) +(\d+) x +(\d+) x +(\d+) offset (\d+) "
                            r"workspace (\d+) +(\w+)", out))


@pytest.mark.slow     # 30 s on a 2-core machine, three minutes beside the GPU tier's tests
def test_one_split_on_the_emulator(runner):
    out = emulated.run_built(runner, ONE_SPLIT)
    rows = _rows(out)
    assert len(rows) == 3 * len(ONE_SPLIT) and all(r.group(7) == "ok" for r in rows), out
    assert {r.group(1) for r in rows} == {"fp32", "fp16", "bf16"}
    assert all(r.group(6) == "0" for r in rows), "one split needs no workspace"


@pytest.mark.slow
def test_split_k_on_the_emulator(runner):
    """K deep enough to split: each split's partial tile goes through the workspace, and
    the reduction sums them in order (a reduction that skips a split fails here). Slow tier
    (~40 s on 2 cores), with the ladder's emulator runs."""
    out = emulated.run_built(runner, SPLITS)
    rows = _rows(out)
    assert len(rows) == 3 * len(SPLITS) and all(r.group(7) == "ok" for r in rows), out
    for r in rows:
        m, n = int(r.group(2)), int(r.group(3))
        rows_, cn = (n, m) if n <= 16 else (m, n)
        floats = int(r.group(6))
        assert floats % (rows_ * cn) == 0 and floats // (rows_ * cn) >= 2, r.group(0)


# --------------------------------------------------------------------------- the fake

@pytest.fixture
def fake_cuda():
    """Fake CUDA tensors on a CPU-only machine (what torch.compile traces with)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        yield lambda *shape: torch.empty(*shape, device="cuda")


def test_fake_checks_what_the_op_checks(fake_cuda):
    import torch

    from bindings import _fake as fk

    (op,) = config.SKINNY_OPS
    fake = fk._skinny_fake(op)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        out = fake(fake_cuda(5, 7).to(dtype), fake_cuda(7, 300).to(dtype))
        assert out.shape == (5, 300) and out.dtype == dtype
        assert fake(fake_cuda(300, 7).to(dtype), fake_cuda(7, 16).to(dtype)).shape == (300, 16)
    with pytest.raises(Exception, match=f"{op}: needs M <= 16 or N <= 16, got M = 17 and N = 20"):
        fake(fake_cuda(17, 7), fake_cuda(7, 20))
    with pytest.raises(Exception, match=f"{op}: A and B must both be float32, both float16 or "
                                        "both bfloat16, got torch.float16 and torch.float32"):
        fake(fake_cuda(5, 7).half(), fake_cuda(7, 3))
    with pytest.raises(Exception, match="got torch.float64 and torch.float64"):
        fake(fake_cuda(5, 7).double(), fake_cuda(7, 3).double())
    with pytest.raises(Exception, match=f"{op}: inner dimensions must agree"):
        fake(fake_cuda(5, 7), fake_cuda(6, 3))
    with pytest.raises(Exception, match=f"{op}: A and B must be CUDA tensors, got cpu"):
        fake(torch.empty(2, 2), torch.empty(2, 2))

