"""CPU tier: the two entries that pick a kernel per shape (bindings/auto.py for cuda_auto,
triton_impl/matmul_auto.py for triton_auto): their rules at the suite's kinds of shape, the
choice each registry row records, and cuda_auto's own checks and error messages, with the
CUDA ops replaced by stand-ins (the GPU tier runs the real ones: tests/gpu/
test_shape_paths.py)."""
from __future__ import annotations

import pytest
import torch

from bench import registry
from bench.families.matmul.models import MatmulShape
from bindings import auto
from triton_impl import matmul_auto

H100 = dict(sms=132, hopper=True)


@pytest.mark.parametrize("shape,precision,op", [
    ((3, 8192, 8192), "bf16", "matmul_skinny"),        # skinny: reads B once
    ((16, 8192, 8192), "fp32", "matmul_skinny"),       # 16 rows: FFMA keeps up in fp32 ...
    ((16, 8192, 8192), "bf16", "matmul_split_k"),      # ... not in 16 bits: tensor cores
    ((128, 128, 131072), "bf16", "matmul_split_k"),    # one tile: its k loop shared out
    ((1000, 1000, 4099), "fp16", "matmul_split_k"),    # t5: 16 clusters of 66
    ((1000, 4096, 4096), "bf16", "matmul_t5_stream_k"),  # t5: 64 clusters
    ((128, 14336, 4096), "bf16", "matmul_split_k"),    # t5's 256-row clusters half idle
    ((8192, 100, 8192), "fp16", "matmul_split_k"),     # ... or its 256 columns
    ((8192, 1, 8192), "tf32", "matmul_skinny"),
    ((16, 8192, 8192), "tf32", "matmul_skinny"),       # M small: the cols kernel at R = 16
    ((8192, 16, 8192), "tf32", "matmul_split_k_tf32"),  # N small at R = 16: tensor cores
    ((8192, 16, 8192), "fp32", "matmul_skinny"),       # (nothing faster in fp32)
    ((4096, 4096, 4097), "bf16", "matmul_t5_stream_k"),  # unaligned: t5 stages
    ((4096, 4096, 4097), "tf32", "matmul_t4_tf32"),
    ((256, 256, 524288), "tf32", "matmul_split_k_tf32"),  # one cluster of t4's: split k
    ((1000, 4096, 4096), "tf32", "matmul_t4_tf32"),
    ((1000, 1000, 4099), "fp32", "matmul_split_k_fp32"),  # 32 of v7's tiles: split k
    ((128, 128, 131072), "fp32", "matmul_split_k_fp32"),
    ((4096, 4096, 4096), "fp32", "matmul_v8_split_k"),    # the tiles fill the GPU
    ((0, 5, 7), "fp16", "matmul_skinny"),
])
def test_cuda_auto_rules(shape, precision, op):
    assert auto.choose(*shape, precision, **H100) == op


@pytest.mark.parametrize("shape,splits", [
    ((128, 128, 131072), 128),    # 1 tile, 2048 k tiles: every SM (128 = 2048 / 16)
    ((1000, 1000, 4099), 2),      # 64 tiles (K staged to 4104: 65 k tiles, runs of 33)
    ((1024, 1024, 1024), 1),      # the partials would outweigh the operands
    ((512, 512, 16384), 8),
    ((128, 128, 200), 1),         # 4 k tiles: too few to share
    ((16, 8192, 8192), 4),        # the 64-row tile, two blocks per SM: 264 / 64 tiles
    ((64, 4096, 14336), 8),       # 32 tiles of 64 x 128: 264 / 32
    ((65, 4096, 14336), 4),       # 64 tiles of 128 x 128 (two rows of them), one block per SM
])
def test_split_k_splits_repeat_the_launchers_rule(shape, splits):
    assert auto.splits(*shape, sms=132) == splits


def test_split_k_fp32_splits_on_v7s_tiles():
    # 1 tile of the narrow 128 x 128, two blocks per SM: 264 splits, evened to 256
    assert auto.splits(128, 128, 131072, 132, "fp32") == 256
    assert auto.splits(128, 129, 131072, 132, "fp32") == 131    # 1 tile of v7's 128 x 256
    assert auto.splits(1000, 1000, 4099, 132, "fp32") == 4      # 32 tiles; K as it is
    assert auto.splits(4096, 4096, 4096, 132, "fp32") == 1


def test_split_k_tf32_splits_on_its_own_tiles():
    assert auto.splits(256, 256, 524288, 132, "tf32") == 66     # 2 tiles of 256 x 128
    assert auto.splits(1000, 1000, 4099, 132, "tf32") == 4      # K staged to 4100
    assert auto.splits(4096, 4096, 4096, 132, "tf32") == 1


def test_cuda_auto_off_hopper_runs_the_portable_rungs():
    off = dict(sms=108, hopper=False)
    assert auto.choose(4096, 4096, 4096, "bf16", **off) == "matmul_t1_mma_sync"
    assert auto.choose(4096, 4096, 4096, "tf32", **off) == "matmul_v7_lean_fetch"
    assert auto.choose(4096, 4096, 4096, "fp32", **off) == "matmul_v7_lean_fetch"
    assert auto.choose(512, 512, 16384, "fp32", **off) == "matmul_split_k_fp32"  # no Hopper need
    assert auto.choose(16, 4096, 4096, "bf16", **off) == "matmul_skinny"


@pytest.mark.parametrize("shape,precision,module", [
    ((3, 8192, 8192), "bf16", "matmul_split_k"),
    ((8192, 16, 8192), "fp32", "matmul_skinny"),       # fp32: FMAs, not tl.dot's FFMA
    ((3, 8192, 8192), "fp32", "matmul_split_k"),       # M small: split_k's tl.dot was faster
    ((2048, 1, 1048576), "fp32", "matmul_skinny"),
    ((1, 4096, 4096), "fp32", "matmul_skinny"),        # M = 1: B read along its rows
    ((1, 4096, 4096), "bf16", "matmul_split_k"),
    ((128, 128256, 4096), "tf32", "matmul_autotuned"),   # tf32, 128 rows: autotuned's wgmma
    ((129, 14336, 4096), "tf32", "matmul_persistent"),
    ((128, 14336, 4096), "bf16", "matmul_persistent"),
    ((128, 4096, 4096), "tf32", "matmul_split_k"),     # 32 tiles, K = 4096: few tiles first
    ((16, 16, 8192), "fp32", "matmul_split_k"),
    ((8192, 16, 8192), "tf32", "matmul_split_k"),      # tf32: tensor cores
    ((17, 8192, 8192), "fp32", "matmul_autotuned"),    # one past the skinny side
    ((128, 128, 131072), "tf32", "matmul_split_k"),    # 1 tile: split the k loop
    ((1000, 1000, 4099), "bf16", "matmul_persistent"),  # 64 tiles: enough for persistent
    ((1000, 1000, 1000), "bf16", "matmul_persistent"),
    ((4096, 4096, 4096), "fp32", "matmul_autotuned"),
])
def test_triton_auto_rules(shape, precision, module):
    assert matmul_auto.choose(*shape, precision, **H100) == module


@pytest.mark.parametrize("shape,module,padded", [
    ((4096, 4097, 4096), "matmul_autotuned", (4112, 4096)),   # N up to 16: cols % N vectorizes
    ((4096, 4100, 4096), "matmul_autotuned", (4112, 4096)),   # 16-byte aligned, not 16 elements
    ((4096, 4096, 4097), "matmul_autotuned", (4096, 4112)),   # K up to 16: A's rows aligned
    ((4096, 4096, 4096), "matmul_autotuned", (4096, 4096)),
    ((1000, 1000, 1000), "matmul_autotuned", (1000, 1000)),   # under 2^30 multiply-adds
    ((4097, 4097, 4097), "matmul_persistent", (4097, 4097)),  # its own staging
])
def test_triton_auto_pads_only_the_autotuned_kernel_where_compute_bound(shape, module, padded):
    assert matmul_auto.padded_sizes(*shape, module) == padded


def test_rows_record_the_choice():
    cuda, triton = registry.get("cuda_auto"), registry.get("triton_auto")
    assert cuda.choice(MatmulShape(3, 8192, 8192), "bf16") == "cuda_skinny"
    assert cuda.choice(MatmulShape(4096, 4096, 4096), "bf16") == "cuda_t5_stream_k"
    assert triton.choice(MatmulShape(3, 8192, 8192), "bf16") == "triton_split_k"
    assert registry.get("cuda_v7_lean_fetch").choice(MatmulShape(1, 1, 1)) == ""
    # the traffic of an entry is the chosen kernel's
    s = MatmulShape(4096, 4096, 4096)
    assert cuda.traffic(s, "bf16") == registry.get("cuda_t5_stream_k").traffic(s, "bf16")


class _StandIn:
    """torch.ops.cvt with every op a stand-in that records its call, or raises like a
    TORCH_CHECK of the real op."""

    def __init__(self, fail: str = ""):
        self.calls, self.fail = [], fail

    def __getattr__(self, op):
        def run(a, b):
            self.calls.append(op)
            if self.fail:
                raise RuntimeError(f"{op}: {self.fail}")
            return a.double() @ b.double()
        return run


def test_cuda_auto_checks_the_precisions_dtype_first(monkeypatch):
    ops = _StandIn()
    monkeypatch.setattr(torch.ops, "cvt", ops, raising=False)
    with pytest.raises(RuntimeError, match=r"cuda_auto: A and B must be float32, got Half and "
                                           r"Float \(precision fp32\)"):
        auto.matmul(torch.ones(4, 4).half(), torch.ones(4, 4), "fp32")
    with pytest.raises(RuntimeError, match="must be bfloat16, got Float and Float"):
        auto.matmul(torch.ones(4, 4), torch.ones(4, 4), "bf16")
    with pytest.raises(ValueError, match="precision must be one of fp32, tf32, fp16, bf16"):
        auto.matmul(torch.ones(4, 4), torch.ones(4, 4), "fp64")
    with pytest.raises(TypeError, match="cuda_auto: A and B must be torch.Tensors, got list"):
        auto.matmul([[1.0]], torch.ones(1, 1), "fp32")
    assert ops.calls == []                      # nothing ran


def test_cuda_auto_names_itself_and_its_pick_in_the_ops_errors(monkeypatch):
    monkeypatch.setattr(torch.ops, "cvt", _StandIn("A and B must be CUDA tensors, got cpu"),
                        raising=False)
    with pytest.raises(RuntimeError, match=r"^cuda_auto picked matmul_skinny; matmul_skinny: "
                                           r"A and B must be CUDA tensors, got cpu"):
        auto.matmul(torch.ones(4, 4), torch.ones(4, 4), "fp32")


def test_cuda_auto_runs_the_pick(monkeypatch):
    ops = _StandIn()
    monkeypatch.setattr(torch.ops, "cvt", ops, raising=False)
    a, b = torch.randn(3, 40), torch.randn(40, 20)
    assert torch.equal(auto.matmul(a, b, "tf32"), a.double() @ b.double())
    assert ops.calls == ["matmul_skinny"]


def test_split_k_fp32s_narrow_tile_fits_its_blocks_per_sm():
    """NARROW_BLOCKS (bindings/auto.py counts splits with it; the launcher asks the GPU) of
    the narrow tile fit on an SM: by registers whatever ptxas uses (at most 255 a thread),
    and by shared memory on the H100 and H200 (228 KiB an SM, 1 KiB of it per block)."""
    from bindings import config

    p = config.params()
    threads = (p["SPLIT_K_FP32_BM"] // p["SPLIT_K_FP32_WM"]) * (
        p["SPLIT_K_FP32_NARROW_BN"] // p["SPLIT_K_FP32_WN"]) * 32
    blocks = p["SPLIT_K_FP32_NARROW_BLOCKS"]
    assert blocks * threads * 256 <= 65536
    bk, bm, bn = p["SPLIT_K_FP32_BK"], p["SPLIT_K_FP32_BM"], p["SPLIT_K_FP32_NARROW_BN"]
    smem = p["SPLIT_K_FP32_STAGES"] * (bk * (bm + 4) + bk * bn) * 4
    assert blocks * (smem + 1024) <= 228 * 1024


def test_split_k_short_tile_counts_half_the_padded_multiply_adds():
    """cuda_split_k's model at M <= 64 is t2's count on a 64-row tile: the same loads, half
    the multiply-adds of the 128-row tile (cuda/matmul_split_k.cu, "short")."""
    from bench import registry
    from bench.families.matmul.models import MatmulShape

    kernel = registry.get("cuda_split_k")
    p = dict(kernel.params(), precision="bf16")
    short = kernel.model(MatmulShape(16, 8192, 8192), p)
    tall = kernel.model(MatmulShape(65, 8192, 8192), p)
    assert p["SHORT_BM"] == 64
    assert short.fma * 2 == tall.fma      # one row of 64-row tiles against one of 128
    assert short.global_loads == tall.global_loads - 49 * 8192 * 64   # A's 49 rows more


def test_triton_split_k_fills_whole_rounds_where_tiles_are_few():
    """triton_split_k's splits (triton_impl/matmul_split_k.py, "splits"): the few-tile tile
    rounds slots / tiles down, as cuda_split_k does, so that no program waits for a second
    round; the skinny tile rounds up."""
    from triton_impl import matmul_split_k as sk

    # 512 x 512 x 16384 in bf16: 32 tiles of 64 x 128, 256 k tiles of 64, 2 x 132 slots
    assert sk.splits_for(32, 256, 132, 10**9, 2, whole_rounds=True) == (8, 32)
    assert sk.splits_for(32, 256, 132, 10**9, 2) == (9, 29)                 # 288 programs
    # 256 x 256 x 65536 in fp32: 16 tiles of 64 x 64: 16 splits (256 programs), not 17
    assert sk.splits_for(16, 2048, 132, 10**9, 2, whole_rounds=True)[0] == 16
    # more tiles than slots: one split either way
    assert sk.splits_for(300, 64, 132, 10**9, 2, whole_rounds=True) == (1, 64)
    # 16 x 8192 x 8192, the skinny tile: 128 tiles of 16 x 64 -> 3 splits of 22 k tiles
    assert sk.splits_for(128, 64, 132, 10**9, 2) == (3, 22)
