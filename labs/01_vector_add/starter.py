"""Lab 1: vector add. out = x + y, element by element, for any length n.

Fill in the TODOs, then grade it:

    cvt-bench grade 1 starter.py

Run it yourself first (it imports and runs as given; the output is wrong until you finish):

    python starter.py

Read first: the lecture notes' Figure 5 (the `_add` kernel), and, in this suite,
triton_impl/vector_add.py (the same kernel with 16-byte vectors; do not call it here).
"""
import os

import torch

if not torch.cuda.is_available():                   # no GPU: Triton's interpreter runs the
    os.environ.setdefault("TRITON_INTERPRET", "1")  # kernel on the CPU (set before the import)
import triton                                       # noqa: E402
import triton.language as tl                        # noqa: E402

BLOCK = 1024          # elements per program


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)      # TODO 1: the BLOCK elements program `pid` owns
    mask = offsets < 0                 # TODO 2: keep the last program inside the arrays
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x, mask=mask)   # TODO 3: store the sum


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    grid = (1,)                        # TODO 4: one program per BLOCK elements (none for n = 0)
    vector_add_kernel[grid](x, y, out, n, BLOCK=BLOCK)
    return out


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(5000, device=device)
    y = torch.randn(5000, device=device)
    print("max error:", (vector_add(x, y) - (x + y)).abs().max().item())
