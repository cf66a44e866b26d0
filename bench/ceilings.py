"""The ceilings a kernel is compared with, measured in the same run as the kernel.

A datasheet peak is not what a program can reach, and clocks, drivers and power limits
differ between machines and days. So each timing run measures its own ceilings:

- memory: the bandwidth of a large device-to-device copy (bytes read + bytes written,
  divided by the time), the most a streaming kernel can hope for;
- compute: cuBLAS at a large square size, at every precision (fp32 with TF32 off is the
  FFMA ceiling our ladder climbs towards; tf32/fp16/bf16 run on tensor cores).

The nominal fp32 peak (SMs x 128 FMA lanes x 2 flops x max clock) is recorded beside
them, only to show how far below it even cuBLAS stays.
"""
from __future__ import annotations

from bench import problems, registry
from bench.timing import Policy, time_launches

CEILING_SIZE = 4096          # cuBLAS ceilings at 4096^3 (DESIGN.md's reference numbers)
COPY_BYTES = 1 << 30         # 1 GiB copied: 20x the H100's L2, so it streams from DRAM
FP32_FMA_PER_SM_PER_CLOCK = 128  # Hopper (sm_90): 128 FP32 lanes per SM


def copy_bandwidth(flush, policy: Policy | None = None, nbytes: int = COPY_BYTES) -> dict:
    """Bytes read + written per second by dst.copy_(src) for `nbytes`-byte buffers."""
    import torch

    src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)  # first call outside timing
    t = time_launches(lambda: dst.copy_(src), flush, policy or Policy(min_reps=20))
    return {"copy_bytes": nbytes, "copy_ms": t.median_ms, "copy_iqr_ms": t.iqr_ms,
            "copy_gbps": 2 * nbytes / (t.median_ms * 1e-3) / 1e9}


def _reference_kernel(op: str = "matmul"):
    for k in registry.kernels():
        if k.op == op and k.backend == "cublas":
            return k
    return None


def cublas_tflops(flush, precisions=("fp32", "tf32", "fp16", "bf16"), size: int = CEILING_SIZE,
                  policy: Policy | None = None) -> dict:
    """TFLOP/s of cuBLAS at size^3 for each precision."""
    kernel = _reference_kernel()
    problem = problems.get("matmul")
    shape = problem.parse_shape(f"{size}x{size}x{size}")
    out = {}
    if kernel is None:
        return out
    for p in precisions:
        if p not in kernel.precisions:
            continue
        fn = kernel.runner(p)
        a, b = problem.inputs(shape, p, seed=0, device="cuda")
        fn(a, b)  # first call outside timing (cuBLAS picks its algorithm, loads its kernel)
        t = time_launches(lambda: fn(a, b), flush, policy)
        out[p] = problem.useful_flops(shape) / (t.median_ms * 1e-3) / 1e12
    return out


def nominal_fp32_tflops(env: dict) -> float | None:
    """SMs x 128 FMA lanes x 2 flops x max SM clock (needs pynvml for the clock)."""
    sms, mhz = env.get("sm_count"), env.get("sm_clock_max_mhz")
    if not sms or not mhz:
        return None
    return sms * FP32_FMA_PER_SM_PER_CLOCK * 2 * mhz * 1e6 / 1e12


def measure(flush, env: dict, precisions=("fp32", "tf32", "fp16", "bf16"),
            size: int = CEILING_SIZE, policy: Policy | None = None) -> dict:
    """All ceilings of this run, as stored in time.json's meta["ceilings"]."""
    c = copy_bandwidth(flush, policy)
    c["cublas_shape"] = f"{size}x{size}x{size}"
    c["cublas_tflops"] = cublas_tflops(flush, precisions, size, policy)
    c["fp32_nominal_peak_tflops"] = nominal_fp32_tflops(env)
    return c


def roof_tflops(ceilings: dict, precision: str, flops: float, nbytes: float) -> float | None:
    """What the measured roofline allows: min(compute ceiling, bandwidth x intensity)."""
    compute = (ceilings.get("cublas_tflops") or {}).get(precision)
    bw = ceilings.get("copy_gbps")
    if not compute or not bw or not flops or not nbytes:
        return None
    return min(compute, bw * 1e9 * flops / nbytes / 1e12)
