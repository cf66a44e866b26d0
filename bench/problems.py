"""What "correct" means for each op: inputs, a float64 reference, and a tolerance that can fail.

Matmul error is measured element by element against the float64 product, relative to
the magnitude of the terms that made the element:

    err_ij = |C_ij - ref_ij| / sum_k |A_ik * B_kj|

This is independent of cancellation (a near-zero C_ij with large terms is not "hard"),
and the bound below follows the floating-point error model:

    err <= 4 * u_in  +  4 * sqrt(K) * u_acc  +  u_out

u_in is the unit roundoff of the inputs as the hardware multiplies them (fp32 2^-24,
tf32 and fp16 2^-11, bf16 2^-8), u_acc that of the float32 accumulator (2^-24), u_out
that of the output type. A wrong index, a missing tile or an unwritten (NaN) element
gives err of order 1 and fails. A single missing term of a very long K can hide under
the bound; the exact mode catches it: small integers whose every partial sum is exact
in float32 must give err == 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from bench.models import MatmulShape

UNIT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}
OUTPUT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-24, "fp16": 2.0**-11, "bf16": 2.0**-8}
ACCUMULATOR_ROUNDOFF = 2.0**-24
EXACT_RANGE = 3  # exact mode draws integers in [-3, 3]


def input_dtype(precision: str):
    import torch

    return {"fp32": torch.float32, "tf32": torch.float32,
            "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def matmul_tolerance(precision: str, K: int) -> float:
    return (4 * UNIT_ROUNDOFF[precision] + 4 * math.sqrt(max(K, 1)) * ACCUMULATOR_ROUNDOFF
            + OUTPUT_ROUNDOFF[precision])


def exact_mode_possible(precision: str, K: int) -> bool:
    """True if every partial sum of K products of integers in [-3, 3] is exact in the
    accumulator and the result is exact in the output type."""
    largest = K * EXACT_RANGE * EXACT_RANGE
    limit = {"fp32": 2**24, "tf32": 2**24, "fp16": 2**11, "bf16": 2**8}[precision]
    return largest <= limit


@dataclass
class MatmulCase:
    shape: MatmulShape
    precision: str
    exact: bool = False
    seed: int = 0
    transposed: tuple[bool, bool] = (False, False)  # non-contiguous inputs (views of .T)

    def inputs(self, device):
        """A (M x K) and B (K x N) in the precision's input dtype, random or small integers."""
        import torch

        M, N, K = self.shape.M, self.shape.N, self.shape.K
        g = torch.Generator(device="cpu").manual_seed(self.seed)
        dtype = input_dtype(self.precision)

        def draw(rows, cols, transpose):
            size = (cols, rows) if transpose else (rows, cols)
            if self.exact:
                t = torch.randint(-EXACT_RANGE, EXACT_RANGE + 1, size, generator=g).float()
            else:
                t = torch.randn(size, generator=g)
            t = t.to(dtype=dtype, device=device)
            return t.T if transpose else t  # a transposed view: same values, strides swapped

        return draw(M, K, self.transposed[0]), draw(K, N, self.transposed[1])


def matmul_reference(a, b):
    """float64 product and the per-element magnitude sum_k |a_ik b_kj| (on a's device)."""
    a64, b64 = a.double(), b.double()
    return a64 @ b64, a64.abs() @ b64.abs()


def matmul_error(out, a, b) -> float:
    """Largest err_ij (see module doc); inf if the output has the wrong shape; NaN -> inf."""
    import torch

    if tuple(out.shape) != (a.shape[0], b.shape[1]):
        return math.inf
    if out.numel() == 0:
        return 0.0
    ref, mag = matmul_reference(a, b)
    err = (out.double() - ref).abs() / mag.clamp_min(torch.finfo(torch.float64).tiny)
    err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
    # where every term is exactly zero, any non-zero output is wrong
    err = torch.where((mag == 0) & (out.double() != 0), torch.full_like(err, math.inf), err)
    err = torch.where((mag == 0) & (out.double() == 0), torch.zeros_like(err), err)
    return float(err.max())
