"""What "correct" means for a matmul: inputs, a float64 reference, and a bound that can fail.

The reference is what the precision promises: the product in float64 of the inputs as the
precision rounds them. fp32, fp16 and bf16 multiply the stored values (a product of two
16-bit values is exact in float32); tf32 cuts each float32 operand to TF32 (10 mantissa
bits) first, and the suite's kernels do it two ways, to nearest (cvt.rn.tf32.f32) or by
truncation (the tensor core reading float32 from shared memory ignores the low 13 bits),
per operand, while the Triton interpreter does not cut at all. So a tf32 kernel is
compared with each of the nine references {kept, nearest, truncated} for A x the same for
B, and each output element with the one it is nearest to: a lost K tile or a wrong index
moves an element far from all nine.

Every output element has its own bound, in the floating-point error model:

    |C_ij - ref_ij|  <=  u_out |ref_ij| + eta_out + (1 + u_out) c sqrt(K) u_acc sum_k |a_ik b_kj|

u_out is the unit roundoff of the output type (the float32 accumulator rounded once to
fp16 or bf16; 2^-24 for float32), eta_out half its smallest subnormal step (what rounding
near zero may cost), u_acc = 2^-24 that of the float32 accumulator, and sqrt(K) u_acc
sum |a b| the probabilistic bound of a K-term float32 inner product (Higham and Mary,
"A New Approach to Probabilistic Rounding Error Analysis", 2019). c = BOUND_C = 4:
docs/harness.md ("The matmul bound") gives the reasons and the measured margins. No term
is charged for the inputs: the reference already holds them as the kernel multiplies them.

The error of an element is |C_ij - ref_ij| divided by its bound, so the check's error is in
units of the bound: at most 1 passes. A wrong index, a missing tile or an unwritten (NaN)
element is many bounds away (a lost 64-wide K tile at K = 16385 is ~100 bounds, one output
in a hundred set to zero ~1000).

Three input modes exist for every problem:

    random     random normal values; every element within its bound
    exact      small integers in [-3, 3]: every partial sum is an integer below 2^24, exact
               in float32 whatever the order, so the output must equal the float64 product
               rounded once to the output type (ref.to(dtype)), bit for bit, for any K up to
               2^24 / 9 (1,864,135), at every precision
    nonfinite  random values with one NaN in A and one +inf in B; the row of C fed by the
               NaN and the column fed by the inf must come out non-finite (a kernel that
               drops or clamps them hides bad data), every other element as in "random"
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

from bench.families.matmul import suite
from bench.families.matmul.models import MatmulShape, lecture_formula
from bench.problem_base import MODES, REQUIRED, Problem
from bindings import precision as prec

EXACT_RANGE = 3  # exact mode draws integers in [-3, 3]
BOUND_C = 4      # c of the bound (module doc; docs/harness.md, "The matmul bound")
# How a kernel may hold an operand at each precision: as stored, or cut to TF32 to nearest
# or by truncation (tf32 only; module doc).
ROUNDINGS = {"tf32": ("kept", "nearest", "truncated")}
EXACT_LIMIT = 2**24    # integers up to 2^24 are exact in float32


def exact_mode_possible(precision: str, K: int) -> bool:
    """True if every partial sum of K products of integers in [-3, 3] is an integer of at
    most 2^24, exact in the float32 accumulator in any order (the output is then the
    float64 product rounded once; the precision does not matter)."""
    prec.get(precision)
    return K * EXACT_RANGE * EXACT_RANGE <= EXACT_LIMIT


def precision_of(out, precision: str | None) -> str:
    """The precision a check judges `out` at: the one given, else its dtype's (float32 is
    fp32: a tf32 result must say so)."""
    if precision is not None:
        prec.get(precision)
        return precision
    label = prec.label_of(out.dtype)
    if label not in prec.MATMUL:
        raise ValueError(f"matmul: no precision for an output of dtype "
                         f"{prec.dtype_name(out.dtype)}")
    return label


def tf32_rounded(x, how: str):
    """float32 x cut to TF32: "nearest" (ties to even, as cvt.rn.tf32.f32; the largest
    floats round up to inf) or "truncated" (the low 13 mantissa bits dropped); "kept"
    returns x. NaN and inf stay as they are. Any device, any strides."""
    import torch

    if how == "kept":
        return x
    bits = x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    if how == "nearest":
        bits = bits + 0xFFF + ((bits >> 13) & 1)
    elif how != "truncated":
        raise ValueError(f"tf32_rounded: how must be kept, nearest or truncated, got {how!r}")
    bits = bits & 0xFFFFE000
    cut = torch.where(bits >= 2**31, bits - 2**32, bits).to(torch.int32).view(torch.float32)
    return torch.where(torch.isfinite(x), cut, x)


@dataclass
class MatmulCase:
    shape: MatmulShape
    precision: str
    exact: bool = False
    seed: int = 0
    transposed: tuple[bool, bool] = (False, False)  # non-contiguous inputs (views of .T)

    def inputs(self, device):
        """A (M x K) and B (K x N) in the precision's input dtype, random or small integers:
        new tensors on every call (a caller may write into them), cast from the float32
        values `draws` keeps."""
        dtype = prec.torch_dtype(self.precision)

        def cast(t, transpose):
            t = t.to(dtype=dtype, device=device, copy=True)
            return t.T if transpose else t  # a transposed view: same values, strides swapped

        a, b = self.draws()
        return cast(a, self.transposed[0]), cast(b, self.transposed[1])

    def draws(self):
        """The float32 values of A and B as drawn (each as its transpose where `transposed`
        says), on the CPU from the seed: the same on every machine. The last shape's are kept, so
        that its precisions and kernels do not draw them again (2^31 values of the shape
        suite's matrix-vector product take about 20 s to draw). Read-only: inputs() copies."""
        import torch

        M, N, K = self.shape.M, self.shape.N, self.shape.K
        key = (M, N, K, self.seed, self.exact, self.transposed)
        if _DRAWN.get("key") == key:
            return _DRAWN["tensors"]
        _DRAWN.clear()   # the old ones go before the new ones are drawn
        g = torch.Generator(device="cpu").manual_seed(self.seed)

        def draw(rows, cols, transpose):
            size = (cols, rows) if transpose else (rows, cols)
            if self.exact:
                return torch.randint(-EXACT_RANGE, EXACT_RANGE + 1, size, generator=g).float()
            return torch.randn(size, generator=g)

        tensors = draw(M, K, self.transposed[0]), draw(K, N, self.transposed[1])
        _DRAWN.update(key=key, tensors=tensors)
        return tensors


_DRAWN: dict = {}   # MatmulCase.draws: the last shape's values (key, tensors)


BLOCK_ELEMENTS = 2**24   # the check's float64 temporaries: a block of C's rows at a time


def row_blocks(M: int, N: int) -> list[slice]:
    """C's rows in blocks of about BLOCK_ELEMENTS elements (at least a row each; one empty
    block where M is 0): the check judges one block at a time, so its float64 temporaries
    stay near 128 MiB each at any shape (a 32768 x 32768 output would take tens of GiB at
    once)."""
    step = max(1, BLOCK_ELEMENTS // max(N, 1))
    return [slice(i, min(i + step, M)) for i in range(0, M, step)] or [slice(0, 0)]


def matmul_reference(a, b, rows: slice = slice(None), b64=None):
    """float64 product of A's rows `rows` (all by default) and B, and the per-element
    magnitude sum_k |a_ik b_kj| (on a's device); b64: a function that gives B and |B| in
    float64, for a caller that keeps them across blocks. Within kept_reference() the last
    pair's blocks are kept with the pair itself: a hit is the same two tensors, and a write
    into either changes its version, so a hit is the same values."""
    # the pair itself, and its writes so far (inference tensors count none: never kept)
    keep = "on" in _REFERENCE and not (a.is_inference() or b.is_inference())
    key = (id(a), id(b), a._version, b._version) if keep else None
    block = rows.indices(a.shape[0])[:2]
    if keep and _REFERENCE.get("key") == key and block in _REFERENCE["blocks"]:
        return _REFERENCE["blocks"][block]
    b_64, b_abs = b64() if b64 is not None else (b.double(), b.double().abs())
    a64 = a[rows].double()
    ref = a64 @ b_64, a64.abs() @ b_abs
    if keep:
        if _REFERENCE.get("key") != key:
            # a and b are kept with their key, so their ids cannot be reused meanwhile
            _REFERENCE.update(a=a, b=b, key=key, blocks={})
        _REFERENCE["blocks"][block] = ref
    return ref


_REFERENCE: dict = {}   # within kept_reference(): "on"; the last pair a, b, key, blocks of ref


@contextlib.contextmanager
def kept_reference():
    """matmul_reference computes each pair's product once within it (MatmulProblem.judging:
    the check after timing judges the last timed output and a poisoned rerun, on the same
    inputs); the kept product goes when it ends."""
    _REFERENCE.clear()
    _REFERENCE["on"] = True
    try:
        yield
    finally:
        _REFERENCE.clear()


def rounded_references(a, b, precision: str, b_held=None):
    """The float64 products, besides matmul_reference's of the stored values, that a kernel
    at this precision may be compared with (module doc): none, except for tf32 the other
    eight of A and B each kept, cut to TF32 to nearest, or truncated. Made one at a time;
    b_held(how): B so cut, in float64, for a caller that keeps it across blocks of A."""
    held = b_held or (lambda how: tf32_rounded(b, how).double())
    roundings = ROUNDINGS.get(precision, ("kept",))
    for ha in roundings:
        others = [hb for hb in roundings if (ha, hb) != ("kept", "kept")]
        if others:
            a_cut = tf32_rounded(a, ha).double()
            for hb in others:
                yield a_cut @ held(hb)


def matmul_bound(ref, mag, K: int, precision: str):
    """The bound of every element (module doc), from the reference and the magnitudes."""
    p = prec.get(precision)
    u_out = p.output_roundoff
    eta = _half_smallest_subnormal(p.torch_dtype())
    acc = (1 + u_out) * BOUND_C * math.sqrt(max(K, 1)) * prec.ACCUMULATOR_ROUNDOFF
    return u_out * ref.abs() + eta + acc * mag


def _half_smallest_subnormal(dtype) -> float:
    """Half the step of the dtype's subnormals: its smallest normal times its epsilon, over 2
    (2^-150 in float32, 2^-25 in float16, 2^-134 in bfloat16)."""
    import torch

    info = torch.finfo(dtype)
    return info.tiny * info.eps / 2


def _error_blocks(out, a, b, precision: str | None, mode: str):
    """Each block of C's rows (row_blocks) with its elements' errors in units of their
    bounds (module doc; NaN -> inf), one block at a time. Exact mode: 0 where the element
    equals the float64 product rounded once to the output type, its distance in bounds
    elsewhere (at least 1). tf32 in random mode: the distance to the nearest of the nine
    references."""
    import torch

    precision = precision_of(out, precision)
    forms: dict = {}   # B in float64 as a kernel may hold it, and |B|: made once, when needed

    def held(how):
        if how not in forms:
            forms[how] = tf32_rounded(b, how).double() if how != "abs" else held("kept").abs()
        return forms[how]

    for rows in row_blocks(out.shape[0], out.shape[1]):
        o = out[rows].double()
        ref, mag = matmul_reference(a, b, rows, lambda: (held("kept"), held("abs")))
        bound = matmul_bound(ref, mag, a.shape[1], precision)
        if mode == "exact":
            rounded = ref.to(out.dtype).double()
            same = (o == rounded) | (torch.isnan(o) & torch.isnan(rounded))
            dist = (o - rounded).abs() / bound
            err = torch.where(same, torch.zeros_like(dist), torch.clamp(dist, min=1.0))
        else:
            diff = (o - ref).abs()
            for r in rounded_references(a[rows], b, precision, held):   # tf32's other eight
                diff = torch.minimum(diff, (o - r).abs())
            err = diff / bound
        yield rows, torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)


def matmul_error_map(out, a, b, precision: str | None = None, mode: str = "random"):
    """Every element's error in units of its bound (_error_blocks); None if the shape is
    wrong."""
    import torch

    if tuple(out.shape) != (a.shape[0], b.shape[1]):
        return None
    return torch.cat([err for _rows, err in _error_blocks(out, a, b, precision, mode)])


def matmul_error(out, a, b, precision: str | None = None, mode: str = "random") -> float:
    """Largest element error in units of its bound (module doc): at most 1 passes; inf if
    the output has the wrong shape or a NaN. One block of rows at a time (row_blocks)."""
    if tuple(out.shape) != (a.shape[0], b.shape[1]):
        return math.inf
    worst = 0.0
    for _rows, err in _error_blocks(out, a, b, precision, mode):
        if err.numel():
            worst = max(worst, float(err.max()))
    return worst


class MatmulProblem(Problem):
    """C = A @ B with A (M x K) and B (K x N), row-major; shapes written MxNxK."""

    name = "matmul"
    arguments = (("a", REQUIRED), ("b", REQUIRED))
    shape_help = "MxNxK, e.g. 1000x999x37"
    check_shapes = {
        # The interpreter runs one Triton program after another in Python: a 64x64x64
        # product with 16x16 tiles is already ~16 programs x 4 k-steps, so stay small.
        # Between them the shapes of each device put N in both halves of a 64-column tile
        # (N % 64: 1-31 and 33-63), K on one and on several K tiles, and more than a
        # hundred outputs (the deliberately wrong matmuls: triton_impl/matmul_bugs.py).
        "cpu": "1x1x1,17x13x7,33x31x19,9x111x21",
        "cuda": "1x1x1,17x13x7,64x64x64,127x129x31,256x256x256,1000x999x37",
    }
    time_shapes = {
        "cpu": "",  # interpreter timings mean nothing; `bench time` needs a GPU
        "cuda": "256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096",
    }
    model_shapes = "1024x1024x1024,4096x4096x4096"
    # the shape suite (suite.py): --suite shapes, or one category: --suite shapes:skinny
    suites = {suite.NAME: suite.text(),
              **{f"{suite.NAME}:{c}": suite.text(c) for c in suite.CATEGORIES}}
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

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        import torch

        a, b = inputs
        if mode != "nonfinite":
            return matmul_error(out, a, b, precision, mode)
        if tuple(out.shape) != (a.shape[0], b.shape[1]):
            return math.inf
        if out.numel() == 0:
            return 0.0
        rows = torch.isnan(a).any(dim=1).nonzero()
        cols = torch.isinf(b).any(dim=0).nonzero()
        if len(rows) == 0 or len(cols) == 0:  # K == 0: nowhere to put the special values
            return matmul_error(out, a, b, precision)
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
        err = matmul_error_map(out, a0, b0, precision)
        err = torch.where(bad, torch.zeros_like(err), err)
        return float(err.max())

    def tolerance(self, shape, precision):
        return 1.0        # errors are in units of each element's own bound (module doc)

    def judging(self):
        return kept_reference()

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        if mode == "nonfinite":
            return None
        a, b = inputs
        return matmul_error_map(out, a, b, precision, mode)

    def exact_possible(self, shape, precision):
        return exact_mode_possible(precision, shape.K)

    def exact_note(self, shape, precision):
        return (f"K = {shape.K}: sums of {shape.K} products of integers in [-{EXACT_RANGE}, "
                f"{EXACT_RANGE}] can pass 2^24, where float32 stops being exact")

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
