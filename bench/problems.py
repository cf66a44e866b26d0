"""What "correct" means for each op: inputs, a float64 reference, and a tolerance that can fail.

Every op of the suite is one :class:`Problem`, found by :func:`get` under the name that
registry records carry in ``Kernel.op``. The harness (check, time, model, profile, report)
only talks to this interface, so a new op (vector add, softmax, ...) plugs in by adding a
``Problem`` subclass to :data:`PROBLEMS`; no harness code changes.

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

from bench import problems_memory
from bench.models import MatmulShape
from bench.problem_base import MODES, Problem  # noqa: F401 (problems.Problem, problems.MODES)

UNIT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}
OUTPUT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-24, "fp16": 2.0**-11, "bf16": 2.0**-8}
ACCUMULATOR_ROUNDOFF = 2.0**-24
EXACT_RANGE = 3  # exact mode draws integers in [-3, 3]
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "u8": 1}


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
        return shape.M * shape.N * ELEMENT_BYTES[precision]

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

    def exact_possible(self, shape, precision):
        return exact_mode_possible(precision, shape.K)

    def useful_flops(self, shape):
        return 2 * shape.M * shape.N * shape.K

    def compulsory_bytes(self, shape, precision):
        s, e = shape, ELEMENT_BYTES[precision]
        return (s.M * s.K + s.K * s.N + s.M * s.N) * e


# Keyed by Kernel.op. A new op adds its Problem here (and nothing else in the harness): the
# matmul, then the memory-bound ops (vector add, copy, ReLU + dropout, softmax, RGB -> grey).
PROBLEMS: dict[str, Problem] = {p.name: p for p in (MatmulProblem(),
                                                    *problems_memory.MEMORY_PROBLEMS)}


def get(op: str) -> Problem:
    try:
        return PROBLEMS[op]
    except KeyError:
        raise KeyError(f"problems: no Problem registered for op {op!r}; "
                       f"known: {', '.join(sorted(PROBLEMS))}") from None


def parse_shapes_spec(text: str | None):
    """The --shapes argument of every subcommand: None (each op's defaults), one list for
    every op ("1024x1024x1024"), or per op as "op=shapes;op=shapes"
    ("copy=67108864;softmax=4096x32768,3000x3000:dim=0"), returned as a dict op -> text.
    ValueError names the part that is wrong."""
    if not text or "=" not in text.split(";")[0].split(",")[0].split(":")[0]:
        return text or None
    out = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        op, sep, shapes = part.partition("=")
        if not sep or not known(op.strip()):
            raise ValueError(f"--shapes: expected op=shapes[;op=shapes], with op one of "
                             f"{', '.join(sorted(PROBLEMS))}; got {part!r}")
        out[op.strip()] = shapes.strip()
    return out


def shapes_for(problem, spec, default: str | None):
    """The shapes of `problem` under a parsed --shapes spec: a list of shape objects, or
    None when a per-op spec does not name this op (the op is left out). `default` is the
    op's own text when spec is None. ValueError if the text does not parse for this op."""
    if isinstance(spec, dict):
        if problem.name not in spec:
            return None
        spec = spec[problem.name]
    return problem.parse_shapes(spec or default or "")


def known(op: str) -> bool:
    return op in PROBLEMS
