"""What "correct" means for a matmul: inputs, a float64 reference, and a tolerance that can fail.

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

Three input modes exist for every problem:

    random     random normal values; error must stay under the tolerance
    exact      small integers; the result must be exact (error 0)
    nonfinite  random values with one NaN in A and one +inf in B; the row of C fed by the
               NaN and the column fed by the inf must come out non-finite (a kernel that
               drops or clamps them hides bad data), every other element as in "random"
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from bench.families.matmul.models import MatmulShape, lecture_formula
from bench.problem_base import MODES, REQUIRED, Problem
from bindings import precision as prec

EXACT_RANGE = 3  # exact mode draws integers in [-3, 3]


def matmul_tolerance(precision: str, K: int) -> float:
    p = prec.get(precision)
    return (4 * p.input_roundoff + 4 * math.sqrt(max(K, 1)) * prec.ACCUMULATOR_ROUNDOFF
            + p.output_roundoff)


def exact_mode_possible(precision: str, K: int) -> bool:
    """True if every partial sum of K products of integers in [-3, 3] is exact in the
    accumulator and the result is exact in the output type (integers up to 1/u are)."""
    largest = K * EXACT_RANGE * EXACT_RANGE
    return largest <= 1 / prec.get(precision).output_roundoff


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
        dtype = prec.torch_dtype(self.precision)

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


def matmul_error_map(out, a, b):
    """err_ij for every element (see module doc), NaN -> inf; None if the shape is wrong."""
    import torch

    if tuple(out.shape) != (a.shape[0], b.shape[1]):
        return None
    ref, mag = matmul_reference(a, b)
    o = out.double()
    err = (o - ref).abs() / mag.clamp_min(torch.finfo(torch.float64).tiny)
    err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
    # where every term is exactly zero, any non-zero output is wrong
    err = torch.where((mag == 0) & (o != 0), torch.full_like(err, math.inf), err)
    err = torch.where((mag == 0) & (o == 0), torch.zeros_like(err), err)
    return err


def matmul_error(out, a, b) -> float:
    """Largest err_ij (see module doc); inf if the output has the wrong shape; NaN -> inf."""
    err = matmul_error_map(out, a, b)
    if err is None:
        return math.inf
    if err.numel() == 0:
        return 0.0
    return float(err.max())


class MatmulProblem(Problem):
    """C = A @ B with A (M x K) and B (K x N), row-major; shapes written MxNxK."""

    name = "matmul"
    arguments = (("a", REQUIRED), ("b", REQUIRED))
    shape_help = "MxNxK, e.g. 1000x999x37"
    check_shapes = {
        # The interpreter runs one Triton program after another in Python: a 64x64x64
        # product with 16x16 tiles is already ~16 programs x 4 k-steps, so stay small.
        "cpu": "1x1x1,17x13x7,33x31x19",
        "cuda": "1x1x1,17x13x7,64x64x64,127x129x31,256x256x256,1000x999x37",
    }
    time_shapes = {
        "cpu": "",  # interpreter timings mean nothing; `bench time` needs a GPU
        "cuda": "256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096",
    }
    model_shapes = "1024x1024x1024,4096x4096x4096"
    profile_shapes = "1024x1024x1024"
    quick_time_shapes = "256x256x256,1024x1024x1024"
    # The CUDA ladder's counter target: thread-issued global loads (instructions x the
    # elements each moves, the model's load_width; cp.async copies by instructions x the
    # model's copy_width where it has one, else by their bytes) within 2%
    # of the model and the FFMA count equal to the model's (M*N*K at tile multiples).
    ISSUED_TOLERANCE = 0.02

    def parse_shape(self, text: str) -> MatmulShape:
        return MatmulShape.parse(text)

    def size(self, shape: MatmulShape) -> float:
        # N for square products; the geometric mean of M, N, K otherwise
        return round((shape.M * shape.N * shape.K) ** (1 / 3), 6)

    def inputs(self, shape, precision, seed=0, mode="random", device="cpu"):
        if mode not in MODES:
            raise ValueError(f"matmul: mode must be one of {MODES}, got {mode!r}")
        a, b = MatmulCase(shape, precision, exact=mode == "exact", seed=seed).inputs(device)
        if mode == "nonfinite" and a.numel() and b.numel():
            i, k = self._nan_at(shape)
            k2, j = self._inf_at(shape)
            a[i, k] = math.nan
            b[k2, j] = math.inf
        return a, b

    @staticmethod
    def _nan_at(s: MatmulShape) -> tuple[int, int]:
        return s.M // 2, s.K // 3          # A[i, k] = NaN  ->  row i of C is NaN

    @staticmethod
    def _inf_at(s: MatmulShape) -> tuple[int, int]:
        return (2 * s.K) // 3, s.N - 1     # B[k, j] = inf  ->  column j of C is +-inf or NaN

    def output_nbytes(self, shape, precision):
        return shape.M * shape.N * prec.element_bytes(precision)

    def error(self, out, inputs, mode="random"):
        import torch

        a, b = inputs
        if mode != "nonfinite":
            return matmul_error(out, a, b)
        if tuple(out.shape) != (a.shape[0], b.shape[1]):
            return math.inf
        if out.numel() == 0:
            return 0.0
        rows = torch.isnan(a).any(dim=1).nonzero()
        cols = torch.isinf(b).any(dim=0).nonzero()
        if len(rows) == 0 or len(cols) == 0:  # K == 0: nowhere to put the special values
            return matmul_error(out, a, b)
        i, j = int(rows[0]), int(cols[0])
        bad = torch.zeros(out.shape, dtype=torch.bool, device=out.device)
        bad[i, :] = True
        bad[:, j] = True
        if bool(torch.isfinite(out[bad]).any()):
            return math.inf  # the NaN or the inf did not reach every element it feeds
        # every other element must be as good as in "random" mode: compare with the
        # reference of the same product with the special values zeroed
        a0 = torch.nan_to_num(a, nan=0.0, posinf=0.0)
        b0 = torch.nan_to_num(b, nan=0.0, posinf=0.0)
        err = matmul_error_map(out, a0, b0)
        err = torch.where(bad, torch.zeros_like(err), err)
        return float(err.max())

    def tolerance(self, shape, precision):
        return matmul_tolerance(precision, shape.K)

    def error_map(self, out, inputs, mode="random"):
        if mode == "nonfinite":
            return None
        a, b = inputs
        return matmul_error_map(out, a, b)

    def exact_possible(self, shape, precision):
        return exact_mode_possible(precision, shape.K)

    def useful_flops(self, shape):
        return 2 * shape.M * shape.N * shape.K

    def compulsory_bytes(self, shape, precision):
        s, e = shape, prec.element_bytes(precision)
        return (s.M * s.K + s.K * s.N + s.M * s.N) * e

    def lecture_value(self, kernel, shape, params):
        """The lecture formula's count for a square product of a ladder version whose
        parameters the formula names (None otherwise)."""
        if not (shape.M == shape.N == shape.K):
            return None
        try:
            return lecture_formula(kernel.version, shape.M, params)
        except (KeyError, TypeError):
            return None

    def profile_target(self, kernel, levels, model):
        if kernel.backend != "cuda" or model is None:
            return "-"
        issued = levels["issued_elements"] / model.global_loads if model.global_loads else math.nan
        ok_loads = abs(issued - 1) <= self.ISSUED_TOLERANCE
        # the tensor-core rungs multiply on the tensor pipe: their tensor-pipe instructions
        # times the model's multiply-adds each must be the model's padded M*N*K; FFMA rungs
        # (and t4 off its TMA path, v7's kernel): FFMAs
        work = levels.get("mma_fma", math.nan) if getattr(model, "tensor_pipe", False) \
            else levels["ffma"]
        return "PASS" if ok_loads and work == model.fma else "FAIL"
