"""Planted bug: tl.rand per element: a fair mask, but not the suite's stream (word 0 of counter i, not word i % 4 of counter i // 4)."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton                                       # noqa: E402
import triton.language as tl                        # noqa: E402

BLOCK = 1024          # elements per program: BLOCK // 4 Philox counters


@triton.jit
def relu_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    counters = pid * (BLOCK // 4) + tl.arange(0, BLOCK // 4)
    word = tl.arange(0, 4)
    offsets = counters[:, None] * 4 + word[None, :]           # element 4c + w
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.rand(seed, offsets)                                # one Philox call per element
    p = tl.cast(p, tl.float32)
    scale = 1.0 / (1.0 - p)
    kept = tl.where(x <= 0.0, 0.0, x) * scale
    tl.store(out_ptr + offsets, tl.where(u >= p, kept, 0.0).to(out_ptr.dtype.element_ty),
             mask=mask)


def relu_dropout(x: torch.Tensor, p: float = 0.5, seed: int = 13) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        relu_dropout_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, p, seed, BLOCK=BLOCK)
    return out
