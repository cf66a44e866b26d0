"""Stacks of matrices for triton_batched's TMA paths (tests/gpu/test_matmul_batched_gluon.py at
tf32, tests/gpu/test_matmul_batched_tma16.py at fp16 and bf16): the shapes both run, the
inputs TMA cannot read, operands in rows padded with NaN, the error over a whole
(broadcast) stack, and moving a strided view to the GPU with its strides and offset."""
from __future__ import annotations

import torch

from bench.families.matmul.problems import matmul_error
from triton_impl._memory import padded16

# (A shape, B shape): K and N multiples of 8, so 16-byte rows at 16 and 32 bits
STACK_CASES = [
    ((4096, 4096), (4096, 4096)),                    # batch 1, 2-D
    ((1, 300, 256), (1, 256, 200)),                  # batch 1, 3-D
    ((8, 512, 1024), (8, 1024, 256)),                # several products
    ((3, 129, 136), (3, 136, 264)),
    ((300, 64), (5, 64, 128)),                       # A broadcast (2-D)
    ((5, 300, 64), (64, 128)),                       # B broadcast (2-D)
    ((5, 300, 64), (1, 64, 128)),                    # B broadcast (batch 1)
    ((2, 1, 65, 72), (3, 72, 40)),                   # two batch dims: a launch per A entry
    ((2, 1, 3, 1, 2, 17, 24), (1, 4, 3, 2, 1, 24, 8)),
]

# name: (A, B) in float32 on the CPU that TMA cannot read as they are
UNREADABLE = {
    "K odd": lambda: (torch.randn(2, 64, 17), torch.randn(2, 17, 32)),
    "N odd": lambda: (torch.randn(2, 64, 32), torch.randn(2, 32, 33)),
    "column-major A": lambda: (torch.randn(2, 32, 64).mT, torch.randn(2, 32, 48)),
    "base off 16 bytes": lambda: (torch.randn(2, 64, 33)[..., 1:], torch.randn(2, 32, 48)),
    "batch stride off 16 bytes": lambda: (torch.randn(2 * 64 * 32 + 1)
                                          .as_strided((2, 64, 32), (64 * 32 + 1, 32, 1)),
                                          torch.randn(2, 32, 48)),
    "rows broadcast (stride 0)": lambda: (torch.randn(2, 1, 32).expand(2, 64, 32),
                                          torch.randn(2, 32, 48)),
}


def aligned(*shape, dtype=torch.float32, gen=None, exact=False, device="cuda"):
    """A tensor of `shape` whose rows start 16 bytes apart at least: a view of a buffer
    whose last dimension is padded to a multiple of 16 bytes, the padding NaN (a kernel that
    reads past a row poisons its result). exact: integers from -3 to 3, else randn."""
    *lead, cols = shape
    buf = torch.full((*lead, padded16(cols, dtype.itemsize)), float("nan"), dtype=dtype)
    if exact:
        buf[..., :cols] = torch.randint(-3, 4, shape, generator=gen).to(dtype)
    else:
        buf[..., :cols] = torch.randn(*shape, generator=gen).to(dtype)
    return buf.to(device)[..., :cols]


def stack_error(out, a, b, precision: str) -> float:
    """The largest matmul_error (in units of each element's bound: at most 1 passes) over
    every product of the (broadcast) stack, each against its float64 reference."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    assert out.shape == (*batch, a.shape[-2], b.shape[-1]), (out.shape, a.shape, b.shape)
    ae = a.expand(*batch, *a.shape[-2:]).reshape(-1, *a.shape[-2:])
    be = b.expand(*batch, *b.shape[-2:]).reshape(-1, *b.shape[-2:])
    oe = out.reshape(-1, *out.shape[-2:])
    return max((matmul_error(o, x, y, precision) for o, x, y in zip(oe, ae, be)), default=0.0)


def moved(pair, dtype=torch.float32):
    """CPU float32 tensors as CUDA tensors of `dtype` with the same strides and offsets (a
    copy of each storage, converted: a cast of a view would not keep them)."""
    out = []
    for t in pair:
        storage = torch.empty(t.untyped_storage().nbytes() // 4, device="cuda", dtype=dtype)
        storage.copy_(torch.as_strided(t, (storage.numel(),), (1,), 0))
        out.append(storage.as_strided(t.shape, t.stride(), t.storage_offset()))
    return out
