"""The memory-bound ops as harness Problems: vector add, copy, ReLU + dropout, softmax, RGB -> grey.

Each is a :class:`bench.problem_base.Problem` (inputs, a float64 reference, an error that can
fail, compulsory bytes), listed in :data:`MEMORY_PROBLEMS`, which the memory family
(bench/families/memory/__init__.py) brings to the harness under each op name. Shapes are
tensor shapes, "4096x32768" (softmax may add ":dim=0"); see models.TensorShape.

What "correct" means, per op (err must be <= the tolerance; a NaN where the reference is
finite, a finite value where it is NaN, a wrong shape or a wrong dtype give err = inf):

    vector_add   |out - (x + y)| / (|x| + |y|), reference in float64; bound: one rounding
                 to the output type plus one float32 rounding (2^-24)
    copy         |out - x| / |x|; bound 0 (bit for bit)
    relu_dropout each element must be 0 or relu(x) / (1 - p) (distance to the nearer one,
                 relative; bound as vector_add), AND among the elements with x > 0 the kept
                 fraction must be within 5 standard deviations of the binomial's 1 - p
                 (err = inf otherwise). This accepts any correct dropout (PyTorch's own
                 generator too) and rejects p-scaling mistakes, a constant mask or a missing
                 ReLU. A kernel that draws the suite's Philox stream (its record's
                 random_stream is PHILOX: both twins) must drop exactly the elements the
                 reference drops (philox_reference), element by element: a kernel that
                 zeroes its last partial block keeps the right rate but not the mask.
    softmax      |out - ref| / (|ref| + tiny), float64 reference; bound
                 2 u_out + (80 + 4 sqrt(n)) 2^-24: two roundings to the output type, plus
                 the exps and a sum of n terms in float32 (the matmul bound's sqrt(K)
                 growth); see SoftmaxProblem for why two
    rgb_to_grey  |out - (0.2989 R + 0.5870 G + 0.1140 B)| in grey levels; bound 0.5 + 2^-10
                 (rounded to the nearest level, float32 arithmetic)

Input modes: "random" (normal values; uint8 uniform for images), "exact" (integers in
[-3, 3]: add, copy and ReLU + dropout at p = 0.5 must then be exact; softmax and RGB -> grey
have no exact mode) and "nonfinite" (a NaN, a +inf and a -inf planted; softmax also gets a
row of -inf: the output must carry them where float64 PyTorch does; images have no NaN, so
their "nonfinite" inputs are the random ones).
"""
from __future__ import annotations

import math

from bench import problem_base
from bench.problem_base import REQUIRED
from bench.families.memory.models import TensorShape
from bindings import precision as prec
from bindings.precision import ACCUMULATOR_ROUNDOFF as F32
from bindings.precision import element_bytes, torch_dtype

MEMORY_PRECISIONS = prec.FLOATS
EXACT_RANGE = 3
DROPOUT_P = 0.5       # the default p of the notebook "Meet Triton" ...
DROPOUT_SEED = 13     # ... and its TRITON_SEED
KEEP_RATE_SIGMAS = 5.0
# The random stream of the suite's dropout twins (cuda/philox.cuh, Triton's tl.rand4x): a
# kernel record whose random_stream is this is checked mask for mask (ReluDropoutProblem).
PHILOX = "philox4x32-10"
GREY_WEIGHTS = (0.2989, 0.5870, 0.1140)


def _generator(device: str, seed: int):
    """A generator on the device the inputs live on: a 256 MB input made on the CPU and
    copied would cost seconds per timed row."""
    import torch

    return torch.Generator(device=device).manual_seed(seed)


def nonfinite_positions(numel: int) -> dict[str, int]:
    """Where "nonfinite" mode plants a NaN, a +inf and a -inf in a flat input."""
    if numel < 3:
        return {"nan": 0} if numel else {}
    return {"nan": numel // 3, "posinf": (2 * numel) // 3, "neginf": numel - 1}


def _nan_aware_error_map(out, ref, scale):
    """|out - ref| / scale per element; inf where the output is NaN or a non-finite value
    differs from the reference's; 0 where both are the same non-finite value."""
    import torch

    out = out.double()
    same_special = (torch.isnan(ref) & torch.isnan(out)) | (~torch.isfinite(ref) & (out == ref))
    diff = (out - ref).abs()
    err = diff / scale.clamp_min(torch.finfo(torch.float64).tiny)
    err = torch.where((scale == 0) & (diff == 0), torch.zeros_like(err), err)
    err = torch.where(torch.isnan(err) | torch.isinf(diff), torch.full_like(err, math.inf), err)
    return torch.where(same_special, torch.zeros_like(err), err)


def _nan_aware_error(out, ref, scale) -> float:
    """max |out - ref| / scale over elements where ref is finite; inf where NaN/inf differ."""
    import torch

    out = out.double()
    special = ~torch.isfinite(ref)
    # where the reference is NaN the output must be NaN; where it is +-inf, the same inf
    bad = special & ~((torch.isnan(ref) & torch.isnan(out)) | (out == ref))
    if bool(bad.any()):
        return math.inf
    fin = ~special
    if not bool(fin.any()):
        return 0.0
    o, r, s = out[fin], ref[fin], scale[fin]
    if bool(torch.isnan(o).any()) or bool(torch.isinf(o).any()):
        return math.inf
    diff = (o - r).abs()
    zero = s == 0
    err = torch.where(zero, torch.where(diff == 0, torch.zeros_like(diff),
                                        torch.full_like(diff, math.inf)),
                      diff / s.clamp_min(torch.finfo(torch.float64).tiny))
    return float(err.max())


class MemoryProblem(problem_base.Problem):
    """What the five memory-bound ops share: tensor shapes, float dtypes, device-side inputs."""

    precisions = MEMORY_PRECISIONS
    allow_dim = False
    inputs_count = 1
    # The shapes the source documents benchmark (the lecture notes, "A Practitioner's Guide
    # to Triton", the notebook "Meet Triton"; targets: at least as fast as PyTorch eager
    # there), and the >= 256 MB shapes of the bandwidth targets.
    source_shapes = ""
    target_shapes = ""
    quick_time_shapes = ""
    bandwidth_target = 0.90   # of the measured copy bandwidth, at target_shapes
    error_layout = "elements"  # a flat array in blocks (softmax: rows; images: H x W)

    def parse_shape(self, text: str) -> TensorShape:
        return TensorShape.parse(text, allow_dim=self.allow_dim)

    def size(self, shape: TensorShape) -> float:
        return float(shape.numel)

    def input_bytes(self, shape: TensorShape, precision: str) -> int:
        return shape.numel * element_bytes(precision)

    def output_nbytes(self, shape, precision):
        return shape.numel * element_bytes(precision)

    def useful_flops(self, shape) -> int:
        return 0  # judged by bandwidth: GB/s against the copy, not FLOP/s

    def compulsory_bytes(self, shape, precision):
        return (self.inputs_count + 1) * shape.numel * element_bytes(precision)

    def exact_note(self, shape, precision) -> str:
        """Why check skips the exact mode here (bench/check.py shows it)."""
        return f"{self.name} has no exact mode" if not self.exact_possible(shape, precision) \
            else ""

    def _tensor(self, shape, precision, mode, device, g):
        import torch

        dims = shape.dims
        dtype = torch_dtype(precision)
        if mode == "exact":
            t = torch.randint(-EXACT_RANGE, EXACT_RANGE + 1, dims, generator=g, device=device)
            return t.to(dtype)
        t = torch.randn(dims, generator=g, device=device, dtype=torch.float32)
        if mode == "nonfinite" and t.numel():
            flat = t.view(-1)
            for kind, i in nonfinite_positions(t.numel()).items():
                flat[i] = {"nan": math.nan, "posinf": math.inf, "neginf": -math.inf}[kind]
        return t.to(dtype)

    def inputs(self, shape, precision, seed=0, mode="random", device="cpu"):
        if mode not in problem_base.MODES:
            raise ValueError(f"{self.name}: mode must be one of {problem_base.MODES}, got {mode!r}")
        g = _generator(device, seed)
        return tuple(self._tensor(shape, precision, mode, device, g)
                     for _ in range(self.inputs_count))

    def _wrong_output(self, out, like_shape, dtype) -> bool:
        import torch

        return (not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(like_shape)
                or out.dtype != dtype)


class VectorAddProblem(MemoryProblem):
    """out = x + y (same shape, same dtype)."""

    name = "vector_add"
    arguments = (("x", REQUIRED), ("y", REQUIRED))
    shape_help = "a tensor shape, e.g. 1000003 or 1000x1000"
    inputs_count = 2
    check_shapes = {"cpu": "1,6,1000,4099,3x5x7",
                    "cuda": "1,6,127,1000,4099,65537,192311,1000003,1000x1000,7919x3"}
    time_shapes = {"cpu": "",
                   "cuda": "65536,192311,1048576,4194304,16777216,67108864"}
    quick_time_shapes = "192311,67108864"
    model_shapes = "192311,67108864"
    profile_shapes = "67108864"
    source_shapes = "192311"            # Figure 5 of the lecture notes: N = 192311
    target_shapes = "67108864"        # 2^26 float32 = 256 MiB per tensor

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        x, y = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return math.inf
        xd, yd = x.double(), y.double()
        return _nan_aware_error(out, xd + yd, xd.abs() + yd.abs())

    def tolerance(self, shape, precision):
        return prec.get(precision).output_roundoff + F32

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        x, y = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return None
        xd, yd = x.double(), y.double()
        return _nan_aware_error_map(out, xd + yd, xd.abs() + yd.abs())


class CopyProblem(MemoryProblem):
    """out = x, bit for bit."""

    name = "copy"
    arguments = (("x", REQUIRED),)
    shape_help = "a tensor shape, e.g. 1000003 or 1000x1000"
    # n > 1024 (the wrong copies' block) in every set: one program hides both bugs
    check_shapes = {"cpu": "1,6,1000,4099", "cuda": "1,6,127,1000,4099,65537,1000003,1000x1000"}
    time_shapes = {"cpu": "", "cuda": "6,65536,1048576,4194304,16777216,67108864"}
    quick_time_shapes = "6,67108864"
    model_shapes = "6,67108864"
    profile_shapes = "67108864"
    source_shapes = "6"                 # the Practitioner's Guide's copy: x = [1, 2, 3, 4, 5, 6]
    target_shapes = "67108864"

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        (x,) = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return math.inf
        xd = x.double()
        return _nan_aware_error(out, xd, xd.abs())

    def tolerance(self, shape, precision):
        return 0.0

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        (x,) = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return None
        xd = x.double()
        return _nan_aware_error_map(out, xd, xd.abs())


M32 = 0xFFFFFFFF


def _mulhilo(a: int, b):
    """(a * b) >> 32 and (a * b) mod 2^32 for a constant a < 2^32 and int64 tensor b < 2^32,
    without overflowing int64: b is split in 16-bit halves (each product < 2^48)."""
    t, u = a * (b & 0xFFFF), a * (b >> 16)
    return (u + (t >> 16)) >> 16, (((u & 0xFFFF) << 16) + t) & M32


def philox4x32_10(c0, c1, c2, c3, k0: int, k1: int):
    """Philox4x32-10 on int64 tensors holding 32-bit words (cuda/philox.cuh, Triton's
    philox_impl): ten rounds, the key bumped between them. Returns the four output words."""
    for _ in range(10):
        hi_b, lo_b = _mulhilo(0xCD9E8D57, c2)
        hi_a, lo_a = _mulhilo(0xD2511F53, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def philox_reference(numel: int, seed: int, device=None, start: int = 0):
    """The uniforms both twins draw for elements 0 .. numel-1 under `seed`, computed with
    int64 tensor arithmetic: Philox4x32-10 of counter (g mod 2^32, g >> 32, 0, 0), key
    (seed mod 2^32, seed >> 32), element 4g + j taking word j; then Triton's
    uint_to_uniform_float (int32 x < 0 -> -x - 1, times 4.6566127342e-10 in float32).
    Checked against Random123's known answers in tests/cpu/test_memory_models.py. `start` (a
    multiple of 4) is the index of the first element: the uniforms of a tensor's tail."""
    import torch

    if start % 4:
        raise ValueError(f"philox_reference: start must be a multiple of 4, got {start}")
    g = torch.arange((numel + 3) // 4, dtype=torch.int64, device=device) + start // 4
    zero = torch.zeros_like(g)
    words = philox4x32_10(g & M32, g >> 32, zero, zero, seed & M32, (seed >> 32) & M32)
    bits = torch.stack(words, dim=1).reshape(-1)[:numel]
    signed = torch.where(bits >= 2**31, bits - 2**32, bits)
    signed = torch.where(signed < 0, -signed - 1, signed)
    return signed.to(torch.float32) * torch.tensor(4.6566127342e-10, dtype=torch.float32,
                                                   device=device)


def relu_dropout_expected(x, p: float, seed: int, start: int = 0):
    """The exact output of both twins (float32 math, then the dtype's rounding); x may be the
    tail of a larger input that starts at element `start` (a multiple of 4)."""
    import torch

    u = philox_reference(x.numel(), seed, x.device, start).view(x.shape)
    f = x.float()
    relu = torch.where(f <= 0, torch.zeros_like(f), f)
    scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32, device=x.device)
    return torch.where(u >= torch.tensor(p, dtype=torch.float32), relu * scale,
                       torch.zeros_like(f)).to(x.dtype)


def keep_rate_z(kept: int, trials: int, p: float) -> float:
    """|kept - trials (1 - p)| in standard deviations of Binomial(trials, 1 - p)."""
    if trials == 0:
        return 0.0
    sd = math.sqrt(trials * p * (1 - p))
    dev = abs(kept - trials * (1 - p))
    return dev / sd if sd > 0 else (0.0 if dev == 0 else math.inf)


class ReluDropoutProblem(MemoryProblem):
    """out = keep ? relu(x) / (1 - p) : 0, inputs (x, p, seed) with p = 0.5 and seed 13, as
    in the notebook "Meet Triton"."""

    name = "relu_dropout"
    arguments = (("x", REQUIRED), ("p", DROPOUT_P), ("seed", DROPOUT_SEED))
    shape_help = "a tensor shape, e.g. 1000x1000 (the notebook \"Meet Triton\"'s)"
    check_shapes = {"cpu": "1,6,1000,4099,3x5x7", "cuda": "1,6,127,4099,65537,1000003,1000x1000"}
    time_shapes = {"cpu": "",
                   "cuda": "65536,1000x1000,4194304,16777216,67108864"}
    quick_time_shapes = "1000x1000,67108864"
    model_shapes = "1000x1000,67108864"
    profile_shapes = "67108864"
    source_shapes = "1000x1000"         # "Meet Triton": x = torch.rand(1000, 1000), fp32 and half
    target_shapes = "67108864"

    def inputs(self, shape, precision, seed=0, mode="random", device="cpu"):
        (x,) = super().inputs(shape, precision, seed, mode, device)
        return x, DROPOUT_P, DROPOUT_SEED

    def compulsory_bytes(self, shape, precision):
        return 2 * shape.numel * element_bytes(precision)

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        """Per element, the distance to 0 or to the kept value relu(x) / (1 - p), whichever
        is nearer, relative to the kept value; inf for a non-finite output of a finite input;
        for a NaN or inf input, 0 where the output is one its dropout may give, else inf.
        For a kernel that draws the suite's Philox stream (kernel.random_stream), inf too
        where an element with x > 0 is kept that the reference drops, or the other way."""
        import torch

        x, p, seed = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return None
        o, v = out.double(), self._kept_value(x, p)
        nan_v, inf_v = torch.isnan(v), torch.isinf(v)
        # a NaN kept is NaN, dropped 0 (or NaN: PyTorch multiplies by the mask); a +inf kept
        # is +inf, dropped 0 (PyTorch: inf * 0 = NaN)
        special_ok = torch.where(nan_v, torch.isnan(o) | (o == 0),
                                 (o == v) | (o == 0) | torch.isnan(o))
        dist = torch.minimum(o.abs(), (o - v).abs())          # to 0 or to the kept value
        err = dist / v.abs().clamp_min(torch.finfo(torch.float64).tiny)
        err = torch.where(dist == 0, torch.zeros_like(err), err)
        err = torch.where(torch.isfinite(o), err, torch.full_like(err, math.inf))
        if getattr(kernel, "random_stream", "") == PHILOX:    # the mask, element by element
            positive = torch.isfinite(v) & (v > 0)
            want = relu_dropout_expected(x, p, seed) != 0
            err = torch.where(positive & ((o != 0) != want), torch.full_like(err, math.inf), err)
        return torch.where(nan_v | inf_v, torch.where(special_ok, torch.zeros_like(err),
                                                      torch.full_like(err, math.inf)), err)

    @staticmethod
    def _kept_value(x, p):
        import torch

        xd = x.double()
        return torch.where(xd <= 0, torch.zeros_like(xd), xd) * (1.0 / (1.0 - p))

    def _keep_rate(self, out, inputs) -> tuple[int, int, float]:
        """Among the elements with a finite x > 0: how many were kept, of how many, and how
        far that is from 1 - p in standard deviations (keep_rate_z)."""
        import torch

        x, p, _seed = inputs
        v = self._kept_value(x, p)
        positive = torch.isfinite(v) & (v > 0)
        kept, trials = int(((out.double() != 0) & positive).sum()), int(positive.sum())
        return kept, trials, keep_rate_z(kept, trials, p)

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        err = self.error_map(out, inputs, mode, precision, kernel)
        if err is None:
            return math.inf
        worst = float(err.max()) if err.numel() else 0.0
        if worst == math.inf or self._keep_rate(out, inputs)[2] > KEEP_RATE_SIGMAS:
            return math.inf                                   # a wrong keep rate
        return worst

    def whole_output_error(self, out, inputs, mode="random", precision=None, kernel=None):
        kept, trials, z = self._keep_rate(out, inputs)
        if z <= KEEP_RATE_SIGMAS:
            return ""
        p = inputs[1]
        return (f"keeps {kept} of the {trials} positive inputs ({kept / trials:.3g}), "
                f"{z:.1f} standard deviations from 1 - p = {1 - p:g} (bound "
                f"{KEEP_RATE_SIGMAS:g})")

    def tolerance(self, shape, precision):
        return prec.get(precision).output_roundoff + F32


def _source_softmax_shapes() -> str:
    sizes = (100, 500, 1000, 2000, 3000)  # the benchmark of "Meet Triton": n x n, dims 0 and 1
    return ",".join(f"{n}x{n}:dim=0,{n}x{n}" for n in sizes)


class SoftmaxProblem(MemoryProblem):
    """softmax(x, dim) over any dimension: inputs (x, dim).

    Error: per element, |y - y64| / (|y64| + tiny), tiny the smallest normal number of the
    output dtype. Every output is judged relative to itself, so a kernel that flushes the
    small probabilities of a row to zero fails (measured against the row maximum instead,
    a float16 kernel zeroing every output below 5e-4 of its row's maximum, 76% of the
    elements at 64 x 1000, passed). Below tiny the output dtype has only subnormal steps,
    and the error becomes absolute in units of tiny: rounding to a subnormal costs at most
    half a step, 2^-25 / 2^-14 = u for float16, which stays inside the bound.

    Bound: two roundings to the output type (2u of its dtype: PyTorch's own CPU softmax
    over a dim other than the last is off by up to 1.27 u in float16, measured, more than
    the u that one rounding of a float32 result costs) plus float32 arithmetic: exp of
    x - max
    (its relative error grows with |x - max|, up to ~40 float32 ulps for the inputs drawn
    here: 3 * randn) and the sum of n terms (4 sqrt(n) ulps, one rounding per term on
    average in a tree) and the division.
    """

    name = "softmax"
    arguments = (("x", REQUIRED), ("dim", -1))
    shape_help = "a tensor shape with an optional reduced dim, e.g. 4096x32768 or 3000x3000:dim=0"
    allow_dim = True
    error_layout = "rows"     # a failed check names the wrong rows along dim (where_view)
    # rows past 32768 (2x100003: odd, the element paths; 3x393224: several clusters or
    # programs per row; 5x262144 and 3x65600: Triton's split in shared memory, lines of 256
    # and of 64) are refused by the row_sram kernels (Kernel.refuses), columns by the split
    # ones
    check_shapes = {"cpu": "1x1,3x5,7x33,5x200:dim=0,4x3x5:dim=1,2x1000,2x9000",
                    "cuda": "1x1,1x7,3x1000,257x33,100x100:dim=0,1000x1000,1000x1000:dim=0,"
                            "2x3x1001:dim=1,64x32768,7x20000:dim=0,2x100003,3x393224,"
                            "5x262144,3x65600"}
    time_shapes = {"cpu": "", "cuda": _source_softmax_shapes() + ",4096x32768,4096x393216"}
    quick_time_shapes = "1000x1000,3000x3000:dim=0,4096x32768"
    model_shapes = "3000x3000,4096x32768"
    profile_shapes = "4096x32768"
    source_shapes = _source_softmax_shapes()
    target_shapes = "4096x32768,4096x393216"   # 512 MiB and 6 GiB of float32 in, as much out
    bandwidth_target = 0.80

    def inputs(self, shape, precision, seed=0, mode="random", device="cpu"):
        import torch

        if mode not in problem_base.MODES:
            raise ValueError(f"softmax: mode must be one of {problem_base.MODES}, got {mode!r}")
        g = _generator(device, seed)
        if mode == "exact":
            raise ValueError("softmax has no exact mode (exp is not exact)")
        x = torch.randn(shape.dims, generator=g, device=device, dtype=torch.float32) * 3
        if mode == "nonfinite" and x.numel():
            # the rows along dim, as [rows, n]: a NaN in row 0, a +inf in row 1, -inf in the
            # first half of row 2 and all of row 3 (where the output must be NaN, as torch's)
            d = shape.reduced_dim
            rows = x.movedim(d, -1).contiguous()
            view = rows.view(-1, rows.shape[-1])
            r, n = view.shape
            view[0, n // 2] = math.nan
            view[min(1, r - 1), n - 1] = math.inf
            if r >= 3:
                view[2, : max(1, n // 2)] = -math.inf
            if r >= 4:
                view[3, :] = -math.inf
            x = rows.movedim(-1, d).contiguous()
        return x.to(torch_dtype(precision)), (-1 if shape.dim is None else shape.dim)

    def compulsory_bytes(self, shape, precision):
        return 2 * shape.numel * element_bytes(precision)

    def _blocks(self, out, x, dim):
        """(rows, the output's rows, their float64 softmax) row block by row block, rows
        along dim as [rows, n]: the float64 reference and its temporaries of a 4096 x 393216
        input would take ~70 GiB at once, beside the input and output."""
        import torch

        if x.dim() < 2:
            yield slice(None), out, torch.softmax(x.double(), dim)
            return
        d = dim % x.dim()
        x_rows = x.movedim(d, -1).flatten(0, -2)
        out_rows = out.movedim(d, -1).flatten(0, -2)
        block = max(1, SOFTMAX_ERROR_BLOCK // x_rows.shape[1])
        for r in range(0, x_rows.shape[0], block):
            yield (slice(r, r + block), out_rows[r:r + block],
                   torch.softmax(x_rows[r:r + block].double(), -1))

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        import torch

        x, dim = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return math.inf
        if x.numel() == 0:
            return 0.0
        tiny = torch.finfo(out.dtype).tiny
        worst = 0.0
        for _rows, out_block, ref in self._blocks(out, x, dim):
            worst = max(worst, _nan_aware_error(out_block, ref, ref.abs() + tiny))
            if worst == math.inf:
                break
        return worst

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        """error()'s measure per element, in the output's shape (its maximum is error())."""
        import torch

        x, dim = inputs
        if self._wrong_output(out, x.shape, x.dtype):
            return None
        tiny = torch.finfo(out.dtype).tiny
        err = torch.empty(self.where_view(x, inputs).shape, dtype=torch.float64,
                          device=x.device)
        if x.numel():
            for rows, out_block, ref in self._blocks(out, x, dim):
                err[rows] = _nan_aware_error_map(out_block, ref, ref.abs() + tiny).view(
                    err[rows].shape)
        if x.dim() < 2:
            return err.view(x.shape)
        d = dim % x.dim()
        return err.view(x.movedim(d, -1).shape).movedim(-1, d)

    def where_view(self, t, inputs):
        """[rows, n]: the rows along dim, as the kernels reduce them."""
        x, dim = inputs
        if t.dim() == 0:
            return t.reshape(1, 1)
        d = dim % t.dim()
        return t.movedim(d, -1).reshape(-1, t.shape[d])

    def tolerance(self, shape, precision):
        _outer, n, _inner = shape.around()
        return 2 * prec.get(precision).output_roundoff + (80 + 4 * math.sqrt(n)) * F32

    def exact_possible(self, shape, precision):
        return False


# Elements of one row block of SoftmaxProblem.error: 2^27, 1 GiB per float64 temporary.
SOFTMAX_ERROR_BLOCK = 1 << 27


class RgbToGreyProblem(MemoryProblem):
    """grey = round(0.2989 R + 0.5870 G + 0.1140 B) of a uint8 3 x H x W image."""

    name = "rgb_to_grey"
    arguments = (("image", REQUIRED),)
    shape_help = "3xHxW (or HxW), e.g. 3x1066x1600"
    precisions = ("u8",)
    check_shapes = {"cpu": "3x1x1,3x7x5,3x33x65", "cuda": "3x1x1,3x7x5,3x150x225,3x33x512,"
                                                          "3x1066x1600,3x9x4097"}
    time_shapes = {"cpu": "", "cuda": "3x150x225,3x1066x1600,3x2160x3840,3x8192x8192"}
    quick_time_shapes = "3x1066x1600,3x8192x8192"
    model_shapes = "3x1066x1600"
    profile_shapes = "3x8192x8192"
    # the puppy of "A Practitioner's Guide to Triton": resized, and as downloaded
    source_shapes = "3x150x225,3x1066x1600"
    target_shapes = ""

    def parse_shape(self, text):
        shape = TensorShape.parse(text)
        c, h, w = shape.image()
        if c != 3:
            raise ValueError(f"rgb_to_grey: an image is 3 x H x W (RGB), got {text!r}")
        return TensorShape((3, h, w))

    def input_bytes(self, shape, precision):
        return shape.numel

    def output_nbytes(self, shape, precision):
        _c, h, w = shape.image()
        return h * w

    def compulsory_bytes(self, shape, precision):
        _c, h, w = shape.image()
        return 4 * h * w

    def inputs(self, shape, precision, seed=0, mode="random", device="cpu"):
        import torch

        if mode not in problem_base.MODES:
            raise ValueError(f"rgb_to_grey: mode must be one of {problem_base.MODES}, got {mode!r}")
        g = _generator(device, seed)
        img = torch.randint(0, 256, shape.dims, generator=g, device=device, dtype=torch.int32)
        return (img.to(torch.uint8),)

    error_layout = "matrix"       # H x W, in tiles of BLOCK_H x BLOCK_W

    def error_map(self, out, inputs, mode="random", precision=None, kernel=None):
        """|out - grey| per pixel, in grey levels."""
        import torch

        (img,) = inputs
        if self._wrong_output(out, img.shape[1:], torch.uint8):
            return None
        f = img.double()
        v = GREY_WEIGHTS[0] * f[0] + GREY_WEIGHTS[1] * f[1] + GREY_WEIGHTS[2] * f[2]
        return (out.double() - v).abs()

    def error(self, out, inputs, mode="random", precision=None, kernel=None):
        err = self.error_map(out, inputs, mode, precision, kernel)
        if err is None:
            return math.inf
        return float(err.max()) if err.numel() else 0.0

    def tolerance(self, shape, precision):
        return 0.5 + 2.0**-10

    def exact_possible(self, shape, precision):
        return False


MEMORY_PROBLEMS = (VectorAddProblem(), CopyProblem(), ReluDropoutProblem(), SoftmaxProblem(),
                   RgbToGreyProblem())


def is_memory_op(op: str) -> bool:
    return any(p.name == op for p in MEMORY_PROBLEMS)


def problem(op: str):
    return next(p for p in MEMORY_PROBLEMS if p.name == op)


