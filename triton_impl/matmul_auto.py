"""triton_auto: one Triton matmul that picks, per shape and precision, which of this
suite's Triton matmuls runs the product. The kernels stay one idea each; the choice lives
here.

The rule (`choose`), from the shape suite's measurements (docs/performance/shapes.md):

    fp32, N <= 16 < M, or M = 1    matmul_skinny: the big operand streamed once through
                                   FMAs (tl.dot in fp32 is FFMA from shared memory, its
                                   transposed operand read along k). H200, fp32, against
                                   triton_split_k's 15-20% of the copy bandwidth: 8192 x 1
                                   x 8192 at 82%, 8192 x 16 x 8192 48%. M = 1 (a row of
                                   A, B read along its rows), per call in a CUDA graph:
                                   1 x 4096 x 4096 0.021 ms against split_k's 0.030,
                                   1 x 4096 x 14336 0.058 against 0.087. At M = 3 to 16
                                   split_k stays: 3 x 8192 x 8192 ran 0.133 ms on
                                   matmul_skinny, 0.093 on split_k; 16 x 4096 x 4096 0.051
                                   against 0.030 (graph)
    M or N <= 16 (skinny), or      matmul_split_k: the k loop shared out over programs
    128 x 128 tiles for under a    (skinny: 16-row tiles that read the big operand once)
    quarter of the SMs, K >= 4096  (H200, bf16, 1000 x 1000 x 4099: 64 tiles, where the
                                   persistent kernel took 0.151 ms and split-K 0.195;
                                   512 x 512 x 16384: 16 tiles, 0.131 against 0.100)
    fp32                           matmul_autotuned (tl.dot in FFMA, "ieee")
    tf32, M <= 128                 matmul_autotuned (C^T = B^T A^T: its wgmma takes A
                                   from shared memory): H200, 128 x 128256 x 4096 0.82 ms
                                   against the persistent kernel's 1.15, 128 x 14336 x
                                   4096 0.12 against 0.14
    tf32, fp16, bf16               matmul_persistent on Hopper (TMA, wgmma, one program
                                   per SM); matmul_autotuned elsewhere

`choose` is plain Python on sizes, so `bench model` shows the choice without running
anything (on a machine without a GPU: what the interpreter runs), and every timed row
records it.

Padding (`padded_sizes`): matmul_autotuned wraps its tile's columns around (cols % N), and
Triton proves such a run of columns contiguous, so that B's loads become 16-byte
vectors, only where N is a multiple of 16; A's rows start 16-byte aligned only where K is.
The H200 ran triton_autotuned fp32 at 4096 x 4097 x 4096, 4096 x 4098 x 4096 and
4096 x 4100 x 4096 all at about 0.39x cuBLAS, against 0.85x at the unaligned-K shapes
(results/sweeps/h200_shape_paths): N = 4100 is 16-byte aligned in fp32 but not a multiple
of 16, so it is the proof, not the alignment, that costs. So where the product is
compute-bound (at least 2^30 multiply-adds, Inductor's pad_mm rule of thumb), triton_auto
copies A and B into zero-padded buffers with N and K rounded up to 16, runs the kernel on
them and copies C's N columns out; the copies (the operands' and C's bytes, read and
written once) are timed with the product.
"""
from __future__ import annotations

import importlib

FEW_TILE = 128           # the tile by which "few tiles" is counted
FEW_TILES_SHARE = 4      # split-K where the tiles * this < SMs
FEW_TILES_MIN_K = 4096   # split-K pays only for a long k loop
FEW_ROWS_TF32 = 128      # tf32 with at most this many rows: matmul_autotuned
PAD_TO = 16              # N and K rounded up to this for matmul_autotuned (header)
PAD_MIN_MACS = 1 << 30   # and only where the product is compute-bound


def choose(M: int, N: int, K: int, precision: str, sms: int, hopper: bool) -> str:
    """The module of triton_impl whose matmul triton_auto runs for an M x N x K product."""
    from triton_impl.tiles import SKINNY_MAX_R, SPLIT_K_SKINNY

    tiles = -(-M // FEW_TILE) * -(-N // FEW_TILE)
    if precision == "fp32" and (N <= SKINNY_MAX_R < M or M == 1):
        return "matmul_skinny"
    if min(M, N) <= SPLIT_K_SKINNY or (tiles * FEW_TILES_SHARE < sms and K >= FEW_TILES_MIN_K):
        return "matmul_split_k"
    if precision == "fp32" or not hopper or (precision == "tf32" and M <= FEW_ROWS_TF32):
        return "matmul_autotuned"
    return "matmul_persistent"


def padded_sizes(M: int, N: int, K: int, module: str) -> tuple[int, int]:
    """(N, K) as `module` runs them: rounded up to PAD_TO for matmul_autotuned where the
    product is compute-bound, else as they are."""
    if module != "matmul_autotuned" or M * N * K < PAD_MIN_MACS:
        return N, K
    return -(-N // PAD_TO) * PAD_TO, -(-K // PAD_TO) * PAD_TO


def kernel_name(module: str) -> str:
    """The registry name of a module's kernel: matmul_split_k -> triton_split_k."""
    return "triton_" + module.removeprefix("matmul_")


def current_facts() -> tuple[int, bool]:
    """(SMs, is Hopper) of the current GPU; the interpreter's without one."""
    import torch

    from triton_impl import _common

    if not torch.cuda.is_available():
        return _common.INTERPRETER_SM_COUNT, False
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.multi_processor_count, props.major == 9


def matmul(a, b, precision: str):
    """C = A @ B by the matmul `choose` picks on this GPU (each checks its input as usual;
    each is a registered op with a backward, so autograd differentiates through the pick)."""
    from triton_impl import _common

    M, K = a.shape if a.dim() == 2 else (0, 0)
    N = b.shape[-1] if b.dim() == 2 else 0
    sms = _common.sm_count(a.device)
    hopper = a.is_cuda and _common.cuda_properties(a.device).major == 9
    name = choose(M, N, K, precision, sms, hopper)
    module = importlib.import_module(f"triton_impl.{name}")
    n_pad, k_pad = padded_sizes(M, N, K, name)
    with _common.named_errors("triton_auto", kernel_name(name)):
        if (n_pad, k_pad) != (N, K):
            import torch.nn.functional as F

            _common.check_matmul_2d(module.NAME, a, b, precision)    # before any copy
            a = F.pad(a, (0, k_pad - K))                   # zero columns: M x k_pad
            b = F.pad(b, (0, n_pad - N, 0, k_pad - K))     # zero rows and columns
        c = module.op()(a, b, precision)      # the registered op: its backward comes along
    return c[:, :N].contiguous() if n_pad != N else c
