"""The ceilings a kernel is compared with, measured in the same run as the kernel.

A datasheet peak is not what a program can reach, and clocks, drivers and power limits
differ between machines and days. So each timing run measures its own ceilings:

- memory: the bandwidth of a large device-to-device copy (bytes read + bytes written,
  divided by the time), the most a streaming kernel can hope for;
- compute: each op family measures its own (the matmul family: cuBLAS at a large square
  size, at every precision, stored as "cublas_tflops"; bench/families/matmul/__init__.py).

roof_tflops combines the two into the roofline a kernel is shown against.
"""
from __future__ import annotations

from bench.timing import Policy, time_launches

COPY_BYTES = 1 << 30         # 1 GiB copied: 20x the H100's L2, so it streams from DRAM


def copy_bandwidth(flush, policy: Policy | None = None, nbytes: int = COPY_BYTES) -> dict:
    """Bytes read + written per second by dst.copy_(src) for `nbytes`-byte buffers."""
    import torch

    src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)  # first call outside timing
    t = time_launches(lambda: dst.copy_(src), flush, policy or Policy(min_reps=20))
    return {"copy_bytes": nbytes, "copy_ms": t.median_ms, "copy_iqr_ms": t.iqr_ms,
            "copy_gbps": 2 * nbytes / (t.median_ms * 1e-3) / 1e9}


def measure(flush, env: dict, ops: set[str] = frozenset(), policy: Policy | None = None) -> dict:
    """All ceilings of this run, as stored in time.json's meta["ceilings"]: the copy
    bandwidth, and the limits of each op family whose ops are in `ops` (the matmul family:
    cuBLAS at every precision, bench/families/matmul)."""
    from bench import families

    c = copy_bandwidth(flush, policy)
    for family in families.families():
        mine = {p.name for p in family.problems()} & set(ops)
        if mine:
            c.update(family.ceilings(flush, env, policy, mine))
    return c


def roof_tflops(ceilings: dict, precision: str, flops: float, nbytes: float) -> float | None:
    """What the measured roofline allows: min(compute ceiling, bandwidth x intensity)."""
    compute = (ceilings.get("cublas_tflops") or {}).get(precision)
    bw = ceilings.get("copy_gbps")
    if not compute or not bw or not flops or not nbytes:
        return None
    return min(compute, bw * 1e9 * flops / nbytes / 1e12)
