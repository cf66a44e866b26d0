"""What every Triton matmul wrapper does before and after its launch.

A wrapper does three things in order (as in the Triton tutorials): check, allocate, launch.
The checks live here so that every op rejects bad input with the same kind of message,
naming the op, the expectation and the actual value:

    triton_v3_smem_tiling: A and B must be float32, got float16 and float32

Ops are registered with ``torch.library.triton_op`` under the namespace ``cvt_triton``
(the CUDA ops own ``cvt``), so that ``torch.compile`` sees through them to the Triton
kernel, and with the backward of their kind (bindings/derivatives.py), so that autograd
differentiates through them. Registration is lazy: :func:`register_op` runs the first time
an op is asked for, never at import. While torch traces, launches go through
``torch.library.wrap_triton``, which is what lets ``torch.compile(fullgraph=True)`` trace
the op on the GPU; in eager mode they launch the kernel directly (see :func:`launch`).

Under the interpreter (TRITON_INTERPRET=1, CPU tensors) the registered ops work eagerly;
``torch.compile`` of them does not: its fake-tensor pass would run the interpreter on
tensors without data. The compile smoke tests therefore belong to the GPU tier.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading

import torch
import triton
import triton.language as tl

from bindings import derivatives
from bindings.precision import MATMUL, dtype_name, torch_dtype

NAMESPACE = "cvt_triton"

# Precision label -> dtype of A, B and C, for the labels a matmul takes (bindings/precision.py
# says what each label means).
DTYPES = {label: torch_dtype(label) for label in MATMUL}

# What tl.dot's input_precision must be for each label. fp32 must ask for "ieee"
# explicitly, because Triton's default for float32 tl.dot is TF32 on tensor cores.
# 16-bit inputs ignore the flag (they go to the tensor cores as they are).
DOT_INPUT_PRECISION = {"fp32": "ieee", "tf32": "tf32", "fp16": "tf32", "bf16": "tf32"}

MAX_GRID_YZ = 65535  # CUDA limit on gridDim.y and gridDim.z (gridDim.x allows 2^31 - 1)


@triton.jit
def tile_count(size, BLOCK: tl.constexpr):
    """cdiv(size, BLOCK) that cannot wrap. tl.cdiv computes (size + BLOCK - 1) // BLOCK, and
    for a 32-bit size within BLOCK of 2^31 the sum wraps negative."""
    return size // BLOCK + (size % BLOCK + BLOCK - 1) // BLOCK    # the remainder's tile: 0 or 1


# A loop `for k0 in range(0, K, BLOCK_K)` counts in 32 bits when K does, and its last step
# k0 + BLOCK_K wraps negative (the loop never ends) when K is within BLOCK_K of 2^31. The
# matmul kernels take K_WIDE = near_int32_limit(K) as a constexpr and then count in int64;
# the common path keeps the 32-bit counter, which the compiler pipelines best (counting
# tiles instead, `range(tile_count(K, BLOCK_K))`, cost triton_grouped 14% in fp16).
STEP_BOUND = 1024   # more than any BLOCK_K or chunk of the kernels here


def near_int32_limit(stop: int) -> bool:
    """True when a 32-bit loop counter stepping towards `stop` could pass 2^31 - 1."""
    return stop > 2**31 - 1 - STEP_BOUND


def interpreting() -> bool:
    """True when Triton runs kernels through its CPU interpreter."""
    return os.environ.get("TRITON_INTERPRET") == "1"


@contextlib.contextmanager
def named_errors(entry: str, chosen: str):
    """An error of the kernel an entry picked (matmul_auto), raised again with both names in
    front: "triton_auto picked triton_split_k; triton_split_k: A and B must be float32 ..."
    (bindings/auto.py does the same for cuda_auto)."""
    try:
        yield
    except (RuntimeError, ValueError, TypeError) as exc:
        try:
            again = type(exc)(f"{entry} picked {chosen}; {exc}")
        except Exception:              # an exception type that takes other arguments
            raise exc from None
        raise again from exc


def check_precision(op: str, precision: str, supported=tuple(DTYPES)) -> torch.dtype:
    if precision not in supported:
        raise ValueError(f"{op}: precision must be one of {', '.join(supported)}, got {precision!r}")
    return DTYPES[precision]


def check_device(op: str, *tensors: torch.Tensor, what: str = "A and B") -> None:
    """All tensors on one device: CUDA (the current one), or the CPU under the interpreter.
    `what` names the tensors in the messages ("A and B", "x", "x and y")."""
    devices = [t.device for t in tensors]
    if any(d != devices[0] for d in devices):
        raise ValueError(f"{op}: {what} must be on the same device, got "
                         f"{' and '.join(str(d) for d in devices)}")
    device = devices[0]
    if device.type == "cuda":
        if device.index is not None and device.index != torch.cuda.current_device():
            raise ValueError(f"{op}: tensors are on {device} but the current CUDA device is "
                             f"cuda:{torch.cuda.current_device()}; use `with torch.cuda.device(...)`")
        return
    if device.type == "cpu" and interpreting():
        return
    raise ValueError(f"{op}: {what} must be on a CUDA device (or on the CPU with "
                     f"TRITON_INTERPRET=1 set before Triton kernels are defined), got {device}")


def check_dtype(op: str, a: torch.Tensor, b: torch.Tensor, precision: str) -> None:
    want = DTYPES[precision]
    if a.dtype != want or b.dtype != want:
        got = [dtype_name(t.dtype) for t in (a, b)]
        label = "" if precision == "fp32" and op.startswith("triton_v") else f" (precision {precision})"
        raise TypeError(f"{op}: A and B must be {dtype_name(want)}{label}, got {got[0]} and {got[1]}")


def check_matmul_2d(op: str, a: torch.Tensor, b: torch.Tensor, precision: str = "fp32"):
    """The contract of the 2-D ops: rank 2, matching dtype, same device, inner dims equal.
    Returns (M, N, K)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"{op}: A and B must be torch.Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"{op}: A and B must be 2-D matrices, got {a.dim()}-D and {b.dim()}-D "
                         f"tensors")
    check_dtype(op, a, b, precision)
    check_device(op, a, b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{op}: inner dimensions must agree, got A {tuple(a.shape)} and "
                         f"B {tuple(b.shape)}")
    return a.shape[0], b.shape[1], a.shape[1]


def trivial_result(a: torch.Tensor, M: int, N: int, K: int, dtype=None):
    """The answer when there is nothing to compute, else None. An empty C is returned as is;
    K = 0 gives zeros (an empty sum). No grid of zero programs is ever launched."""
    dtype = dtype or a.dtype
    if M == 0 or N == 0:
        return torch.empty((M, N), dtype=dtype, device=a.device)
    if K == 0:
        return torch.zeros((M, N), dtype=dtype, device=a.device)
    return None


def check_grid(op: str, grid: tuple, what: str) -> None:
    """CUDA allows 2^31-1 blocks along x but only 65535 along y and z: say so clearly."""
    for axis, size in enumerate(grid[1:], start=1):
        if size > MAX_GRID_YZ:
            raise ValueError(f"{op}: {what} needs {size} programs along grid axis {axis}, more "
                             f"than the {MAX_GRID_YZ} CUDA allows")


def ladder_matmul(op: str, kernel, a: torch.Tensor, b: torch.Tensor, grid, *,
                  k_steps: bool = False, **meta):
    """The ladder twins' wrapper, after their own tile choice: check, the trivial answer,
    row-major inputs (the CUDA op's contract), C, launch. ``grid(M, N)`` gives the grid;
    its axis 1 must hold ``M`` programs' worth of rows, or ``N``'s for v1 (named in the
    error). ``meta`` is the kernel's constexprs and num_warps; num_stages is 1. A kernel
    whose k loop steps by a tile (``k_steps``) also gets K_WIDE (near_int32_limit)."""
    M, N, K = check_matmul_2d(op, a, b)
    if k_steps:
        meta["K_WIDE"] = near_int32_limit(K)
    trivial = trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty((M, N), dtype=torch.float32, device=a.device)
    g, axis1 = grid(M, N)
    check_grid(op, g, axis1)
    launch(kernel, g, a, b, c, M, N, K,
           a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
           num_stages=1, **meta)
    return c


def launch(kernel, grid, *args, **meta) -> None:
    """Launches a kernel. While torch traces (torch.compile, or the fake tensors with which
    a registered op is traced) the launch goes through torch.library.wrap_triton, which
    records the kernel in the graph. In plain eager mode the kernel is launched directly:
    wrap_triton outside a registered op dispatches through a higher-order op that copies an
    autotuned kernel into a fresh autotuner at every call, so a wrapper called directly
    (matmul_persistent.matmul(a, b) in a loop) would tune again at every call (~380 ms at
    4096^3 on the H100 instead of 0.45 ms). (Under the interpreter wrap_triton hands back
    the interpreted kernel unchanged.)"""
    if tracing(args):
        torch.library.wrap_triton(kernel)[grid](*args, **meta)
    else:
        kernel[grid](*args, **meta)


def tracing(args) -> bool:
    """True while torch traces rather than runs: torch.compile is compiling, a dispatch
    mode is active (fake tensors, proxies, schema checks), or an argument is a tensor
    subclass (a fake or functional tensor)."""
    if torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack() > 0:
        return True
    return any(isinstance(x, torch.Tensor) and type(x) not in (torch.Tensor, torch.nn.Parameter)
               for x in args)


def native_tf32_round(device: torch.device) -> bool:
    """True where a kernel may round float32 to TF32 with cvt.rn.tf32.f32 (PTX for sm_90
    and newer, one F2FP instruction on the H100); elsewhere (the interpreter, older GPUs)
    matmul_autotuned.round_to_tf32 does the same rounding in integer arithmetic."""
    if interpreting() or device.type != "cuda":
        return False
    props = cuda_properties(device)
    return (props.major, props.minor) >= (9, 0)


def cuda_properties(device: torch.device):
    """torch.cuda.get_device_properties of a CUDA device (index None: the current one),
    asked once per device: the wrappers read it at every call."""
    return _properties(device.index if device.index is not None else torch.cuda.current_device())


@functools.lru_cache(maxsize=None)
def _properties(index: int):
    return torch.cuda.get_device_properties(index)


# The SM count where there is no GPU to ask: under the interpreter, which runs the programs
# of a grid one after another on the CPU (so no count is the right one), and for CPU tensors.
# Grids sized by it stay small there: the persistent matmul runs 4 programs, each looping over
# several tiles as on a GPU; the memory-bound wrappers pick their wider tiles and fewer
# programs sooner. Only grid sizes follow it, never results' correctness.
INTERPRETER_SM_COUNT = 4


def sm_count(device: torch.device) -> int:
    """SMs of a CUDA device (multi_processor_count, asked once per device), for the wrappers
    that size their grid to fill the GPU; INTERPRETER_SM_COUNT under the interpreter or for
    a CPU device."""
    if interpreting() or device.type != "cuda":
        return INTERPRETER_SM_COUNT
    return cuda_properties(device).multi_processor_count


# Autotuning: below this many FMAs one candidate runs untimed (tuning cannot pay for itself).
SMALL_PROBLEM_FMAS = 2 ** 27


# Shared memory one block may opt in to on the H100 (232448 bytes): what the candidate lists
# of tiles.py and tiles_hopper.py were designed for, and the budget under the interpreter.
H100_SMEM_PER_BLOCK = 227 * 1024


def smem_per_block(device: torch.device) -> int:
    """Shared memory one block may use on `device` (the opt-in maximum: 227 KiB on the
    H100 and H200, 163 KiB on the A100, 99 KiB on the L4 and RTX 30xx/40xx), asked once per
    device; H100_SMEM_PER_BLOCK under the interpreter or where torch does not say."""
    if interpreting() or device.type != "cuda":
        return H100_SMEM_PER_BLOCK
    props = cuda_properties(device)
    return int(getattr(props, "shared_memory_per_block_optin", 0) or H100_SMEM_PER_BLOCK)


def tuning_hooks(op: str, smem_bytes):
    """(early_config_prune, do_bench) for triton.autotune, shared by the autotuned matmuls.

    prune   drops the candidates whose shared memory (smem_bytes(cfg, element bytes), cfg
            with num_stages) exceeds what a block may use on the GPU of the call
            (smem_per_block), and keeps only the first candidate for problems under
            SMALL_PROBLEM_FMAS (M N K, times BATCH for a kernel that multiplies a stack);
    bench   times one candidate briefly (10 ms warm-up, 40 ms of runs); a candidate that
            fails to compile or launch is reported and ranked last instead of stopping
            the tuning."""
    import warnings

    def prune(configs, named_args, **kwargs):
        a = named_args["a_ptr"]
        elem = a.element_size() if hasattr(a, "element_size") else 4
        limit = smem_per_block(a.device) if hasattr(a, "device") else H100_SMEM_PER_BLOCK
        fits = [c for c in configs
                if smem_bytes({**c.kwargs, "num_stages": c.num_stages}, elem) <= limit]
        fits = fits or list(configs)
        M, N, K = named_args["M"], named_args["N"], named_args["K"]
        if M * N * K * named_args.get("BATCH", 1) < SMALL_PROBLEM_FMAS:   # a stack: all of it
            return fits[:1]
        return fits

    def bench(kernel_call, quantiles):
        import triton.testing

        try:
            return triton.testing.do_bench(kernel_call, warmup=10, rep=40, quantiles=quantiles)
        except Exception as exc:  # noqa: BLE001 - a broken candidate must not stop the others
            warnings.warn(f"{op}: a candidate failed and is skipped: "
                          f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
                          stacklevel=2)
            return [float("inf")] * len(quantiles)

    return prune, bench


_lock = threading.Lock()
_ops: dict = {}


def register_op(name: str, impl, *, derivative: str | None, dispatch=None):
    """Registers ``impl`` as torch.ops.cvt_triton.<name> the first time it is asked for and
    returns the op. ``impl`` must carry type annotations (the schema is inferred from them)
    and must launch its kernels through :func:`launch`. ``derivative`` is the kind of its
    backward (bindings/derivatives.py: "matmul", "softmax", ...; None for an op without
    one), registered with it, so every op that has a derivative can be trained through;
    ``dispatch``, for an op that takes only some shapes ("dispatched_matmul"), is the
    product its backward runs."""
    with _lock:
        if name not in _ops:
            qualname = f"{NAMESPACE}::{name}"
            torch.library.triton_op(qualname, impl, mutates_args=())
            derivatives.register(qualname, derivative, dispatch)
            _ops[name] = getattr(getattr(torch.ops, NAMESPACE), name)
        return _ops[name]
