"""The assertions shared by the matmul test files: correctness against the float64
reference (see bench/families/matmul/problems.py for the error measure and its bound), TF32 rounding
bit by bit (triton_impl.matmul_autotuned.round_to_tf32), and poisoned runs.

Poisoned runs: a GPU test that checks a kernel's output must not let the caching allocator
hand the kernel memory that already holds the answer (a previous run's, a twin's, the
reference's): a kernel that writes nothing would then pass. `poisoned(fn)` fills the block
the output will land in, and every other free block of the allocator, with NaN before every
call; `poisoned_runner(kernel, precision)` is a registry kernel's runner so wrapped. Every
GPU test that checks what a kernel wrote calls the kernel through one of them (or through
bench.check, which poisons the same way). The CPU tier poisons every empty tensor instead:
tests/conftest.py."""
import functools

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from bench import problems
from bench.device import poison_output_memory
from bench.families.matmul.problems import matmul_error
from triton_impl.matmul_autotuned import round_to_tf32


def float32_precision(kernel) -> str:
    """A precision with float32 inputs: fp32, or tf32 for kernels without fp32
    (triton_persistent: TMA + wgmma has no FFMA path)."""
    return "fp32" if "fp32" in kernel.precisions else "tf32"


def matmul_output_nbytes(a, b, *args, **kwargs) -> int:
    """Bytes of C = A @ B (C has A's dtype; batch dimensions broadcast)."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return int(np.prod(batch, dtype=np.int64)) * a.shape[-2] * b.shape[-1] * a.element_size()


def same_nbytes(x, *args, **kwargs) -> int:
    """Bytes of an output shaped and typed like the first argument (element-wise, softmax)."""
    return x.numel() * x.element_size()


def grey_nbytes(img, *args, **kwargs) -> int:
    """Bytes of the grey image of a 3 x H x W uint8 image."""
    return img.numel() // 3


def output_nbytes(op: str):
    """How the output of a kernel of `op` is sized from its arguments (poisoned's nbytes)."""
    return {"matmul": matmul_output_nbytes, "rgb_to_grey": grey_nbytes}.get(op, same_nbytes)


def poisoned(fn, nbytes=matmul_output_nbytes):
    """fn, poisoning its output's allocator block before every call: a block of the
    output's size is made (or found) and, with every other free block of the caching
    allocator, filled with NaN (bench.device), so the output lands on NaN even where the
    wrapper allocates something else (a contiguous copy, a workspace) before it."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        poison_output_memory(nbytes(*args, **kwargs), args[0].device.type)
        return fn(*args, **kwargs)
    return run


def poisoned_runner(kernel, precision: str):
    """kernel.runner(precision), poisoned (above) before every call."""
    return poisoned(kernel.runner(precision), output_nbytes(kernel.op))


def assert_correct(out, a, b, precision: str, exact: bool) -> None:
    """exact: the output must be the float64 product rounded once (small-integer inputs);
    else every element within its bound (bench/families/matmul/problems.py)."""
    err = matmul_error(out, a, b, precision, "exact" if exact else "random")
    if exact:
        assert err == 0.0, f"exact mode: {err:.3g} bounds from the product rounded once"
    else:
        assert err <= 1, f"error {err:.3g} times its bound"


def shape_text(op: str, inputs) -> str:
    """The shape of an op's inputs as its Problem parses it ("7x33", "50x50:dim=0")."""
    x = inputs[0]
    text = "x".join(map(str, x.shape))
    if op == "softmax":
        dim = inputs[1] % x.dim()
        text += "" if dim == x.dim() - 1 else f":dim={dim}"
    return text


def assert_matches_float64(op: str, out, inputs, precision: str) -> None:
    """out against the op's float64 reference, within its bound: matmul by matmul_error
    (bench/families/matmul/problems.py), the memory-bound ops by their
    Problem's error and tolerance at the inputs' shape (bench/families/memory/problems.py).
    The check beside every comparison of a kernel with its twin or with eager PyTorch."""
    if op == "matmul":
        assert_correct(out, *inputs, precision, False)
        return
    problem = problems.get(op)
    err = problem.error(out, inputs, precision=precision)
    bound = problem.tolerance(problem.parse_shape(shape_text(op, inputs)), precision)
    assert err <= bound, f"{op}: error {err:.3e} > bound {bound:.3e} against float64"


# --------------------------------------------------------------------------- TF32 rounding

# B values and their TF32 roundings (to nearest, ties to even): 1 + 2^-11 is a tie above
# the even 1 (down), 1 + 3*2^-11 a tie above the odd 1 + 2^-10 (up); off-tie values go to
# the nearer neighbour; a TF32 value is kept.
TF32_TIES = [(1 + 2**-11, 1.0), (1 + 3 * 2**-11, 1 + 2**-9), (1 + 2**-11 + 2**-20, 1 + 2**-10),
             (1 + 2**-12, 1.0), (-(1 + 3 * 2**-11), -(1 + 2**-9)), (1.5, 1.5)]


def tf32_reference(x):
    """float32 -> the nearest TF32 (10 mantissa bits, fp32's exponent range), ties to even,
    computed in float64 without any bit trick: the value is rounded to a multiple of its
    TF32 quantum (2^(e-10) for x in [2^e, 2^(e+1)), at least 2^-136, TF32's smallest
    subnormal) with numpy's round-half-to-even. Overflow gives inf; NaN stays NaN."""
    with np.errstate(invalid="ignore"):                 # signalling NaNs among the inputs
        x64 = x.cpu().numpy().astype(np.float64)
    out = x64.copy()
    finite = np.isfinite(x64) & (x64 != 0)
    _, e = np.frexp(x64[finite])                      # x = m * 2^e, 0.5 <= |m| < 1
    quantum = np.ldexp(1.0, np.maximum(e - 11, -136))
    out[finite] = np.round(x64[finite] / quantum) * quantum
    with np.errstate(over="ignore"):
        return torch.from_numpy(out.astype(np.float32))


def tf32_rounding_inputs():
    """Bit patterns that exercise every branch: ties (to even, both ways, both signs),
    values just off a tie, the largest floats (rounding up overflows to inf), subnormals,
    zeros, infinities, NaNs with payloads in the dropped and kept bits, and random bits."""
    special = [0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF, 0xBF801000, 0xBF803000,
               0x7F7FFFFF, 0x7F7FF000, 0x7F7FE000, 0xFF7FFFFF, 0x00000001, 0x00001000,
               0x00003000, 0x007FFFFF, 0x80001001, 0x00000000, 0x80000000, 0x7F800000,
               0xFF800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0xFFC00001, 0x3FC00000]
    g = torch.Generator().manual_seed(0)
    random = torch.randint(0, 2**32, (4096,), generator=g, dtype=torch.int64)
    bits = torch.cat([torch.tensor(special, dtype=torch.int64), random])
    bits = torch.where(bits >= 2**31, bits - 2**32, bits)          # two's complement
    return bits.to(torch.int32).view(torch.float32)


def assert_tf32_rounded(got, x) -> None:
    """got == tf32_reference(x) bit for bit, except that any NaN may come back as any NaN."""
    x, got, want = x.cpu(), got.cpu(), tf32_reference(x)
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan), "NaN in and NaN out must match"
    bad = (got.view(torch.int32) != want.view(torch.int32)) & ~nan
    if bad.any():
        i = int(bad.nonzero()[0])
        hex_bits = lambda t: f"{t.view(torch.int32)[i].item() & 0xFFFFFFFF:#010x}"  # noqa: E731
        raise AssertionError(f"{int(bad.sum())} values rounded wrongly, first: input "
                             f"{hex_bits(x)} -> {hex_bits(got)}, want {hex_bits(want)}")


@triton.jit
def _round_to_tf32_kernel(x_ptr, y_ptr, n, NATIVE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, round_to_tf32(x, NATIVE), mask=offs < n)


def round_to_tf32_on(x, native: bool):
    """round_to_tf32 applied to a 1-D float32 tensor by a one-line kernel."""
    y = torch.empty_like(x)
    block = 1024
    _round_to_tf32_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), NATIVE=native,
                                                             BLOCK=block)
    return y


# --------------------------------------------------------------------------- wrong kernels

def wrong_kernel_cases(device: str) -> list:
    """pytest params (kernel, precision) of every deliberately wrong kernel ("_bug_") at every
    precision it claims that `device` runs (bench/device.py: the interpreter has no bf16)."""
    from bench import device as dev
    from bench import registry

    return [pytest.param(k, p, id=f"{k.name}-{p}") for k in registry.select("*_bug_*")
            for p in k.precisions if dev.can_run(k, device, p)[0]]


def assert_fails_its_default_check(kernel, precision: str, device: str) -> None:
    """`bench check` of a wrong kernel on the device's default check shapes: some run FAILs
    (by the bound, not by raising: no run may be an ERROR)."""
    from bench import check

    results = check.run([kernel], precisions=[precision], device=device)
    assert [r for r in results if r.status == "FAIL"], \
        [(r.shape, r.status, r.error) for r in results]
    assert not [r for r in results if r.status == "ERROR"], results


def softmax_rows(shape, dtype=torch.float32, seed=0) -> torch.Tensor:
    """Rows for a softmax test: normal values times 3 (maxima well above the rest)."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 3).to(dtype)


def softmax_error(y, x, precision: str) -> tuple[float, float]:
    """(error, tolerance) of a softmax over x's last dimension, as the harness judges it."""
    from bench.families.memory.models import TensorShape

    problem = problems.get("softmax")
    return (problem.error(y, (x, -1)),
            problem.tolerance(TensorShape(tuple(x.shape)), precision))
