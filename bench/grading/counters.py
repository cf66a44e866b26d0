"""A lab's traffic tests on a GPU: the loads and stores Nsight Compute counted.

On a machine with a GPU and ncu the grader starts a second sandbox of the submission under
ncu (grade.py, Sandbox(prefix=command(...))). Each call of a traffic test runs once
unprofiled (Triton compiles, an autotuner tries its configurations) and once more inside
the NVTX range RANGE, after one marker kernel (torch.cuda._sleep), the same protocol as
`bench profile` (bench/_ncu_target.py): ncu collects counters for the launches in the
range alone, and the markers cut its list of kernels into one group per call. The report
is read when the sandbox has ended, and every call's output has been judged by then like
any other call's.

What is counted, per call:

    loads    bytes the global load instructions of every thread returned
             (smsp__sass_data_bytes_mem_global_op_ld), plus the bytes cp.async copied
             from global memory into shared memory (smsp__sass_data_bytes_mem_global_op_
             ldgsts: Triton's pipelined loops load this way; on the H200 lab 3's solution
             loads only so, 524,288 bytes at 128^3, as its model says), in elements of
             the inputs
    stores   bytes the global store instructions wrote (smsp__sass_data_bytes_mem_global_op_
             st), in elements of the output

The count is of requests, as the CPU's is (bench/counted.py, the CUDA emulator): what the
kernels asked for, before any cache; a masked-off lane asks for nothing in both. The DRAM
bytes, which no model of a lab bounds, are shown beside it (an element two blocks read is
two loads and, from L2, perhaps one DRAM read). A metric this ncu or GPU has no value of is
said, and the grader counts on the CPU instead.
"""
from __future__ import annotations

import math
from pathlib import Path

from bench._ncu_target import MARKER, RANGE   # `bench profile`'s range and marker kernel

METRICS = {
    "ld_bytes": "smsp__sass_data_bytes_mem_global_op_ld.sum",
    "ldgsts_bytes": "smsp__sass_data_bytes_mem_global_op_ldgsts.sum",
    "st_bytes": "smsp__sass_data_bytes_mem_global_op_st.sum",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
}


def command(workdir: Path) -> list[str] | None:
    """The ncu command a sandbox starts under (its report and log in workdir), or None
    where there is no ncu."""
    from bench.profile import find_ncu

    ncu = find_ncu()
    if ncu is None:
        return None
    return [ncu, "--target-processes", "all", "--clock-control", "none", "--nvtx",
            "--nvtx-include", f"{RANGE}/", "--metrics", ",".join(METRICS.values()),
            "--log-file", str(workdir / "ncu.log"), "-f", "-o", str(workdir / "traffic")]


def kernel_name(name: str) -> str:
    """'void add_kernel<float>(const float *, ...)' -> 'add_kernel'."""
    return name.split("(")[0].split("<")[0].split()[-1].split("::")[-1]


def calls(workdir: Path, timeout: float = 120) -> list[dict] | str:
    """Every profiled call's counts, in call order: {"kernels": names, "load_bytes",
    "store_bytes", "dram_read_bytes", "dram_write_bytes"}; or why there are none."""
    from bench.profile import find_ncu, permission_denied, report_rows, split_at_markers

    log_path, report = workdir / "ncu.log", workdir / "traffic.ncu-rep"
    log = log_path.read_text(errors="replace") if log_path.is_file() else ""
    if permission_denied(log):
        return "Nsight Compute may not read this GPU's counters here (ERR_NVGPUCTRPERM)"
    if not report.is_file():
        tail = " ".join(log.strip().splitlines()[-2:])[:300]
        return f"Nsight Compute wrote no report{': ' + tail if tail else ''}"
    out = []
    for group in split_at_markers(report_rows(find_ncu(), report, timeout)[0], MARKER):
        def total(key):
            return sum(r.get(METRICS[key], math.nan) for r in group)

        missing = [METRICS[k] for k in ("ld_bytes", "ldgsts_bytes", "st_bytes")
                   if math.isnan(total(k))]
        if group and missing:       # a count ncu has not here must not read as none
            return f"Nsight Compute has no value of {', '.join(missing)} on this GPU"

        out.append({"kernels": [kernel_name(r["Kernel Name"]) for r in group],
                    "load_bytes": total("ld_bytes") + total("ldgsts_bytes"),
                    "store_bytes": total("st_bytes"),
                    "dram_read_bytes": total("dram_read_bytes"),
                    "dram_write_bytes": total("dram_write_bytes")})
    return out
