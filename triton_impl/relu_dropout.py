"""Triton twin of cuda/relu_dropout.cu: fused ReLU + dropout, out = keep ? max(x, 0) / (1 - p) : 0.

  idea      the first kernel of the notebook "Meet Triton" ("Example 1"): one read of x, one
            write of the output, the random numbers computed in registers by tl.rand from
            (seed, offset), so nothing random is stored. PyTorch eager runs it as two
            kernels and a mask: 4 n sizeof(T) + n bytes instead of 2 n sizeof(T).
  change    from the kernel of "Meet Triton", four things, each for a reason:
            - tl.rand4x(seed, g) instead of tl.rand(seed, offset): one Philox call makes four
              32-bit words; tl.rand keeps one and throws three away. Here element 4g + j
              takes word j of call g, so a program views its BLOCK elements as a
              [BLOCK // 4, 4] tile (row g, column j) and picks word j with tl.where: a
              quarter of the Philox work, and the same bits as the CUDA twin, which gives
              each thread whole groups of four (cuda/philox.cuh): both drop the same
              elements for a seed, bit for bit.
            - keep = u >= p, where "Meet Triton" has u > p: with p = 0 nothing is dropped, not
              even an element whose u is exactly 0, so p = 0 is ReLU exactly.
            - ReLU as tl.where(x <= 0, 0, x): NaN stays NaN, as torch.relu ("Meet Triton"'s
              `res > 0 and ...` turns NaN into 0).
            - x * scale with scale = 1 / (1 - p) rounded once on the host, as the CUDA twin;
              the x / (1 - p) of "Meet Triton" differs by at most one rounding.
  mapping   CUDA block of 256 threads, 4 groups    one program: BLOCK = 4096 elements,
            of 4 elements each                     num_warps = 8; tile [1024, 4]
            (cuda/memory_config.h, CVT_DROP_*: read through triton_impl/tiles.py)
  traffic   reads n, writes n elements: compulsory = model = 2 n sizeof(T) bytes.
  precond.  float32 / float16 / bfloat16, any n >= 0, p in [0, 1), seed an int >= 0 (one
            seed, one mask); made contiguous by the wrapper. The [.., 4] tile moves 4
            elements per access: 16 bytes of float32, 8 of 16-bit types.
  run       python -m bench check --kernels '*relu_dropout' --shapes 1000x1000
            python -m bench time --kernels '*relu_dropout' --shapes 1000x1000 --precision fp32,fp16
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

NAME = "triton_relu_dropout"


@triton.jit
def relu_dropout_kernel(
    x_ptr, out_ptr,                           # pointers: x, out (n elements each)
    n,                                        # size
    p, scale,                                 # drop probability, 1 / (1 - p)
    seed,                                     # Philox key (64-bit)
    BLOCK: tl.constexpr,                      # elements per program, a multiple of 4
):
    GROUPS: tl.constexpr = BLOCK // 4
    # float32, as an eager launch passes Python floats. Under torch.compile, Inductor hands
    # them over in another precision: on the H100, 401 of 3015 outputs of a compiled run
    # were 1 ulp away from the eager run until these two casts were added.
    p = tl.cast(p, tl.float32)
    scale = tl.cast(scale, tl.float32)
    pid = tl.program_id(0).to(tl.int64)
    group = pid * GROUPS + tl.arange(0, GROUPS)        # Philox counters of this program
    lane = tl.arange(0, 4)
    offsets = group[:, None] * 4 + lane[None, :]       # [GROUPS, 4]: element 4g + j
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)

    r0, r1, r2, r3 = tl.rand4x(seed, group)            # four uniforms per counter
    j = lane[None, :]
    u = tl.where(j == 0, r0[:, None], tl.where(j == 1, r1[:, None],
                 tl.where(j == 2, r2[:, None], r3[:, None])))

    relu = tl.where(x <= 0.0, 0.0, x)                  # NaN <= 0 is false: NaN stays NaN
    out = tl.where(u >= p, relu * scale, 0.0)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


def check_args(op: str, p, seed):
    """p a number in [0, 1), seed an int in [0, 2^63) (symbolic ones under torch.compile too)."""
    if isinstance(p, bool) or not isinstance(p, (int, float, torch.SymFloat, torch.SymInt)):
        raise TypeError(f"{op}: p must be a float, got {type(p).__name__}")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{op}: p must be in [0, 1), got {p}")
    if isinstance(seed, bool) or not isinstance(seed, (int, torch.SymInt)):
        raise TypeError(f"{op}: seed must be an int, got {type(seed).__name__}")
    if not 0 <= seed < 2**63:
        raise ValueError(f"{op}: seed must be >= 0, got {seed}")
    return p, seed


def params() -> dict[str, int]:
    """The CUDA block (cuda/memory_config.h): BLOCK = threads x groups x 4 elements, num_warps."""
    return tiles.relu_dropout()


def relu_dropout(x: torch.Tensor, p: float = 0.5, seed: int = 13) -> torch.Tensor:
    """Fused ReLU + dropout (the defaults of the notebook "Meet Triton": p = 0.5,
    TRITON_SEED = 13)."""
    _memory.check_float(NAME, x)
    p, seed = check_args(NAME, p, seed)
    _memory.check_device(NAME, x)
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    p = float(p)
    scale = 1.0 / (1.0 - p)  # rounded to float32 at the launch, as in the CUDA launcher
    cuda_block = params()
    block = cuda_block["BLOCK"]
    _common.launch(relu_dropout_kernel, (_memory.launch_blocks(n, block),), x, out, n, p, scale,
                   seed, BLOCK=block, num_warps=cuda_block["num_warps"])
    return out


def relu_dropout_bug_tail_zeroed(x: torch.Tensor, p: float = 0.5, seed: int = 13) -> torch.Tensor:
    """DELIBERATELY WRONG: the fused kernel with its last partial block written as zeros,
    as if every element there had been dropped. Zero is a valid dropout output and the keep
    rate barely moves, so only a check of the mask element by element catches it
    (bench/families/memory/problems.py, ReluDropoutProblem: random_stream)."""
    out = relu_dropout(x, p, seed)
    n, block = out.numel(), params()["BLOCK"]
    if n % block:
        out.view(-1)[n // block * block:] = 0
    return out


def _op_impl(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    return relu_dropout(x, p, seed)


def op():
    """torch.ops.cvt_triton.relu_dropout(x, p, seed) (registered on first call)."""
    return _common.register_op("relu_dropout", _op_impl, derivative="relu_dropout")
