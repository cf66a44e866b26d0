"""cuda_auto: one CUDA matmul that picks, per shape and precision, which of this suite's
CUDA kernels runs the product. The ladder stays one idea per rung; the choice lives here.

The rule (`choose`), from the shape suite's measurements (docs/performance/shapes.md):

    M or N <= 16 (skinny)   matmul_skinny: reads the big operand once (FFMA; float32
                            arithmetic at tf32), except on Hopper in 16 bits where M or N
                            is 9 to 16: there its 16 FFMAs per 2-byte value bind it, and
                            split_k's tensor cores run faster (H200, 16 x 8192 x 8192 bf16:
                            0.069 ms against 0.100); and at tf32 where N is 9 to 16 (the
                            N-small kernel at R = 16 stages as many values of B as it reads
                            of A): split_k_tf32 or t4 (H200, 8192 x 16 x 8192: 0.084 ms
                            against 0.342)
    fp32                    split_k_fp32 where it splits (splits(..., "fp32") > 1: v7's
                            128 x 256 tiles leave SMs idle): H200, ms against v8's, 512 x 512
                            x 16384 0.189 against 0.386, 128 x 128 x 131072 0.201 against
                            3.166 (docs/performance/shapes_probe.py). Else v8: v7 where the
                            tiles fill the GPU, k split over a cluster where they do not
                            (sm_90; v7 elsewhere)
    tf32                    split_k_tf32 where it splits (splits(..., "tf32") > 1: t4's 256 x
                            128 tiles leave at least half the SMs idle), else t4 (Hopper;
                            staged where unaligned); v7 off Hopper. (v8's FFMA split is no
                            faster at few tiles: H200, 512 x 512 x 16384, 0.39 ms against
                            t4's 0.30.)
    fp16, bf16              split_k where t5's tiles fit the product badly: M or N <= 128
                            (t5's clusters are 256 x 256: half of each idle), or too few of
                            them to keep half the SMs busy (2 ceil(M/256) ceil(N/256) <=
                            SMs / 2). Its 128 x 128 tiles are four times as many, and it
                            shares each tile's k loop out over as many blocks as fill the GPU
                            (splits()). H200 bf16, ms against t5's: 128 x 128 x 131072 0.043
                            against 0.310, 128 x 14336 x 4096 0.044 against 0.051, 16 x 8192
                            x 8192 0.069 against 0.072 (docs/performance/shapes_probe.py).
                            Else t5 (Hopper: stream-K evens out the last round; staged where
                            unaligned); t1 off Hopper

`choose` is plain Python on sizes, so `bench list` and `bench model` show the choice without
a GPU (for the H100's 132 SMs unless told), and every timed row records it.
"""
from __future__ import annotations

import contextlib

SKINNY_HOPPER_ROWS = 8   # on Hopper, fp16 and bf16 (either side) and tf32 (N): the
                         # skinny path to this many rows, tensor cores past it (elsewhere
                         # CVT_SKINNY_MAX_R, 16: cuda/matmul_config.h)
H100_SMS = 132           # the SM count assumed where no GPU is asked (bench model, list)


def choose(M: int, N: int, K: int, precision: str, sms: int = H100_SMS,
           hopper: bool = True) -> str:
    """The op (of bindings.ops()) that cuda_auto runs for an M x N x K product."""
    from bindings import config

    skinny = config.params()["SKINNY_MAX_R"]
    if hopper and precision in ("fp16", "bf16"):
        small = min(M, N) <= SKINNY_HOPPER_ROWS
    elif hopper and precision == "tf32":     # N is the kernel's small side where N <= 16
        small = N <= SKINNY_HOPPER_ROWS if N <= skinny else M <= skinny
    else:
        small = min(M, N) <= skinny
    if small:
        return "matmul_skinny"
    if precision == "fp32":
        if splits(M, N, K, sms, "fp32") > 1:
            return "matmul_split_k_fp32"
        return "matmul_v8_split_k" if hopper else "matmul_v7_lean_fetch"
    if precision == "tf32":
        if not hopper:
            return "matmul_v7_lean_fetch"
        return "matmul_split_k_tf32" if splits(M, N, K, sms, "tf32") > 1 else "matmul_t4_tf32"
    if not hopper:
        return "matmul_t1_mma_sync"
    t5_blocks = 2 * -(-M // 256) * -(-N // 256)       # t5's clusters: 2 blocks of 128 x 256
    if min(M, N) <= 128 or t5_blocks <= sms // 2:
        return "matmul_split_k"
    return "matmul_t5_stream_k"


def splits(M: int, N: int, K: int, sms: int = H100_SMS, precision: str = "bf16") -> int:
    """How many ways split_k (fp16, bf16), split_k_tf32 (tf32) or split_k_fp32 (fp32) shares
    out the k loop of an M x N x K product on a GPU of `sms` SMs (one block each):
    cuda/split_k.cuh's split_count, repeated (on the sizes the kernel sees: K and N rounded
    up to 16 bytes where the op stages them for TMA; split_k_fp32 takes them as they are)."""
    from bindings import config

    p = config.params()
    name, nbytes = {"tf32": ("SPLIT_K_TF32", 4), "fp32": ("SPLIT_K_FP32", 4)}.get(
        precision, ("SPLIT_K", 2))
    if precision != "fp32":
        per_16 = 16 // nbytes
        K, N = -(-K // per_16) * per_16, -(-N // per_16) * per_16
    bn, per_sm = split_k_fp32_tile(N) if precision == "fp32" else (p[f"{name}_BN"], 1)
    bm = p[f"{name}_BM"]
    if name == "SPLIT_K" and M <= p["SPLIT_K_SHORT_BM"]:   # its 64-row tile, two blocks per SM
        bm, per_sm = p["SPLIT_K_SHORT_BM"], p["SPLIT_K_SHORT_BLOCKS"]
    tiles = -(-M // bm) * -(-N // bn)
    k_tiles = -(-K // p[f"{name}_BK"])
    by_bytes = (M * K + K * N + M * N) * nbytes // (M * N * 4) if M * N else 0
    count = min(sms * per_sm // max(tiles, 1), k_tiles // p[f"{name}_MIN_RUN"], by_bytes)
    if count < 1:
        return 1
    return -(-k_tiles // -(-k_tiles // count))


def split_k_fp32_tile(N: int) -> tuple[int, int]:
    """(BN, blocks per SM) of split_k_fp32's tile for C of N columns (cuda/matmul_split_k_fp32.cu,
    "tiles"): v7's 256-wide tile, one block per SM; or the narrow one where N fits in it, half
    the warps, two blocks per SM (CVT_SPLIT_K_FP32_NARROW_BLOCKS: its registers, checked by
    tests/cpu/test_ffma_rungs.py, allow two)."""
    from bindings import config

    p = config.params()
    if N <= p["SPLIT_K_FP32_NARROW_BN"]:
        return p["SPLIT_K_FP32_NARROW_BN"], p["SPLIT_K_FP32_NARROW_BLOCKS"]
    return p["SPLIT_K_FP32_BN"], 1


def kernel_name(op_name: str) -> str:
    """The registry name of an op's kernel: matmul_t5_stream_k -> cuda_t5_stream_k."""
    return "cuda_" + op_name.removeprefix("matmul_").replace("v1_5", "v1.5")


def _device_facts(device) -> tuple[int, bool]:
    import torch

    props = torch.cuda.get_device_properties(device)
    return props.multi_processor_count, (props.major, props.minor) == (9, 0)


def current_facts() -> tuple[int, bool]:
    """(SMs, is Hopper) of the current GPU; the H100's without one (bench model, list)."""
    import torch

    if not torch.cuda.is_available():
        return H100_SMS, True
    return _device_facts(torch.cuda.current_device())


# The names torch's C++ checks give dtypes (the ops' own messages say "got Half and Float").
_CXX_NAMES = {"float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
              "float64": "Double"}


@contextlib.contextmanager
def named_errors(entry: str, chosen: str):
    """An error of the kernel an entry picked, raised again with both names in front:
    "cuda_auto picked matmul_skinny; matmul_skinny: A and B must be CUDA tensors ..."."""
    try:
        yield
    except (RuntimeError, ValueError, TypeError) as exc:
        try:
            again = type(exc)(f"{entry} picked {chosen}; {exc}")
        except Exception:              # an exception type that takes other arguments
            raise exc from None
        raise again from exc


def matmul(a, b, precision: str):
    """C = A @ B by the op `choose` picks on this GPU (float32 in and out at fp32 and tf32,
    float16 at fp16, bfloat16 at bf16); the op checks the rest of its input as usual, and
    its errors name both it and cuda_auto. The ops must be loaded (bindings.ops(): the
    registry's loader does it); the backward of matmul_skinny calls this too, and this
    module imports nothing of bindings, so that the derivatives need no import cycle."""
    import torch

    from bindings import precision as prec

    if precision not in prec.MATMUL:
        raise ValueError(f"cuda_auto: precision must be one of {', '.join(prec.MATMUL)}, "
                         f"got {precision!r}")
    if not all(isinstance(t, torch.Tensor) for t in (a, b)):
        raise TypeError(f"cuda_auto: A and B must be torch.Tensors, got {type(a).__name__} "
                        f"and {type(b).__name__}")
    dtype = prec.torch_dtype(precision)
    if not a.dtype == b.dtype == dtype:
        want = prec.dtype_name(dtype)
        got = [_CXX_NAMES.get(prec.dtype_name(t.dtype), str(t.dtype)) for t in (a, b)]
        raise RuntimeError(f"cuda_auto: A and B must be {want}, got {got[0]} and {got[1]} "
                           f"(precision {precision})")
    M, K = a.shape if a.dim() == 2 else (0, 0)
    N = b.shape[-1] if b.dim() == 2 else 0
    sms, hopper = _device_facts(a.device) if a.is_cuda else (H100_SMS, True)
    op = choose(M, N, K, precision, sms, hopper)
    with named_errors("cuda_auto", op):
        return getattr(torch.ops.cvt, op)(a, b)
