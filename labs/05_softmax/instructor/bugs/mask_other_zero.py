"""Planted bug: masked lanes load 0, not -inf: exp(0 - max) joins the sum wherever a row is not a power of 2 long."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton                                       # noqa: E402
import triton.language as tl                        # noqa: E402

MAX_ROW_BLOCK = 4096     # rows up to this long are held whole (read once); longer: online
CHUNK = 1024             # elements per step of the online loop


@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """The row in registers: one read, one write."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """A row longer than a block: one pass keeps a running maximum and a running sum per
    lane (the sum rescaled whenever the maximum grows), a second pass writes; two reads."""
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new
    row_max = tl.max(m, 0)
    total = tl.sum(s * tl.exp(m - row_max), 0)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(out_ptr + base + offs, tl.exp(x - row_max) / total, mask=offs < n_cols)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if dim not in (-1, x.dim() - 1):
        raise ValueError(f"softmax: this lab's kernel reduces the last dim, got dim = {dim}")
    out = torch.empty_like(x)
    n_cols = x.shape[-1] if x.dim() else 1
    rows = x.numel() // n_cols if n_cols else 0
    if rows == 0 or n_cols == 0:
        return out
    if n_cols <= MAX_ROW_BLOCK:
        softmax_row_kernel[(rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    else:
        softmax_online_kernel[(rows,)](x, out, n_cols, BLOCK=CHUNK)
    return out
