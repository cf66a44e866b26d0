"""Planted bug: kept values not scaled by 1 / (1 - p)."""
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
    u0, u1, u2, u3 = tl.rand4x(seed, counters)                # one Philox call, four words
    w = word[None, :]
    u = tl.where(w == 0, u0[:, None], tl.where(w == 1, u1[:, None],
                 tl.where(w == 2, u2[:, None], u3[:, None])))
    p = tl.cast(p, tl.float32)
    scale = 1.0 / (1.0 - p)
    kept = tl.where(x <= 0.0, 0.0, x)
    tl.store(out_ptr + offsets, tl.where(u >= p, kept, 0.0).to(out_ptr.dtype.element_ty),
             mask=mask)


def relu_dropout(x: torch.Tensor, p: float = 0.5, seed: int = 13) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        relu_dropout_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, p, seed, BLOCK=BLOCK)
    return out
