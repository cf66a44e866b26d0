"""Lab 5: softmax over the last dim, first with the row held whole, then online.

Rows up to MAX_ROW_BLOCK elements fit in one block: read the row once, subtract its maximum,
exponentiate, divide by the sum, write (2 n sizeof(T) bytes in all). Longer rows do not fit:
the online softmax walks a row in chunks, keeping a running maximum and a running sum that
it rescales by exp(old max - new max) whenever the maximum grows, then writes in a second
pass (3 n sizeof(T) bytes: two reads, one write) - where a naive version reads three times.

Fill in the TODOs, then grade it:

    cvt-bench grade 5 starter.py

Read first: the lecture notes on softmax (the row in SRAM, and the online normaliser of
Milakov and Gimelshein), and this suite's triton_impl/softmax.py (do not call it here).
"""
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
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    # TODO 1: subtract the row's maximum, exponentiate, divide by the sum of the exponentials
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """A row longer than a block: one pass keeps a running maximum and a running sum per
    lane (the sum rescaled whenever the maximum grows), a second pass writes; two reads."""
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    cols = tl.arange(0, BLOCK)
    # TODO 2: the first pass, over chunks of BLOCK: a running maximum m and a running sum s
    #         per lane; when the maximum grows, rescale s by exp(old m - new m)
    # TODO 3: combine the lanes' (m, s) into the row's maximum and sum
    # TODO 4: the second pass: write exp(x - max) / sum
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=0.0)
        tl.store(out_ptr + base + offs, x, mask=offs < n_cols)


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
