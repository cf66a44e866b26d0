"""`python -m bench profile`: what the hardware moved, level by level, next to the model.

Nsight Compute (ncu) runs bench/_ncu_target.py in a process of its own and collects the
counters of the table in docs/DESIGN.md, "Memory traffic, level by level" for each kernel x
shape x precision: for the
one launch of each inside the NVTX range "cvt_measure" (warm-ups, compilation and
autotuning happen before it and are not counted). A launch may be several CUDA kernels:
their counters are summed. By default all launches go through ONE ncu process (a marker
kernel before each launch says where one item ends and the next begins): a process per
kernel cost ~14 s of Python, torch and CUDA start-up each, which put the default report
over its 10-minute budget on the H100. An item that fails in the batch is profiled again
alone. The report file (.ncu-rep; batch.ncu-rep for the batch) is kept: open it in the
Nsight Compute GUI to see the source-level view.

Levels, from what the threads ask for down to what HBM delivers (see docs/DESIGN.md,
"Memory traffic, level by level"):

    model     the closed-form count of global loads issued by threads (bench/families/matmul/models.py)
    issued    thread-level global load instructions x the elements each moves (the
              model's load_width: 4 for float4 loads), + async copies global->shared by
              their bytes; equals the model. Also their bytes, counted by the hardware
              (a 16-byte load is one instruction but four floats)
    L1        bytes requested from L1 (sectors x 32 B): a warp's scattered loads cost a
              whole 32-byte sector each; coalesced ones share sectors
    L2        bytes L1 fetched from L2 (sectors x 32 B): L1 hits no longer count
    DRAM      bytes read from (and written to) HBM: L2 hits no longer count
    shared    bytes loaded from shared memory, wavefronts, bank conflicts
    work      FFMA instructions executed by threads (= M*N*K for an FFMA matmul)

ncu rejects the whole run if one metric name is unknown to it, and names differ across
versions and GPUs; so the metric list is filtered with `ncu --query-metrics` first, and
a name ncu still rejects is dropped and the run retried. Dropped names are reported.
Counters are collected with `--clock-control none` (the clocks stay as they are) and are
never mixed with the timing runs: ncu replays each kernel many times, and by default it
flushes the caches before each replay, so DRAM bytes are those of a cold launch (the same
condition as the timing runs, which flush L2 before every launch).
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
import subprocess
import sys
import time as _time
from pathlib import Path

from bench import problems
from bench.results import num
from bindings import precision as prec

# (ncu metric, short name used in result files). Optional ones may be missing on some
# ncu versions; the profile still runs without them.
METRICS = (
    ("smsp__inst_executed_op_global_ld.sum", "ld_warp_inst"),
    ("smsp__sass_thread_inst_executed_op_global_ld.sum", "ld_thread_inst"),
    ("smsp__sass_data_bytes_mem_global_op_ld.sum", "ld_data_bytes"),
    ("smsp__inst_executed_op_ldgsts.sum", "ldgsts_warp_inst"),
    ("sm__sass_data_bytes_mem_shared_op_ldgsts.sum", "ldgsts_bytes"),
    ("smsp__sass_thread_inst_executed_op_global_st.sum", "st_thread_inst"),
    ("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1_bytes"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1_sectors"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1_requests"),
    ("l1tex__t_bytes_pipe_lsu_mem_global_op_ldgsts.sum", "l1_ldgsts_bytes"),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "l2_read_sectors"),
    # bytes L2 sent to the SMs' L1TEX, TMA copies included (a TMA multicast is counted in
    # every block it reaches): the loads of a kernel that loads through TMA only
    ("l1tex__m_xbar2l1tex_read_bytes.sum", "xbar2l1tex_read_bytes"),
    ("lts__t_bytes.sum", "l2_all_bytes"),
    ("dram__bytes_read.sum", "dram_read_bytes"),
    ("dram__bytes_write.sum", "dram_write_bytes"),
    ("sm__sass_data_bytes_mem_shared_op_ld.sum", "shared_ld_bytes"),
    ("sm__sass_data_bytes_mem_shared_op_ldsm.sum", "shared_ldsm_bytes"),
    ("smsp__sass_thread_inst_executed_op_shared_ld.sum", "shared_ld_thread_inst"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_wavefronts"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared_bank_conflicts"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "ffma"),
    # the tensor-core rungs' work: warp-level mma.sync instructions (HMMA), and how busy
    # the tensor pipe was while the SMs were active
    ("sm__inst_executed_pipe_tensor_op_hmma.sum", "hmma_warp_inst"),
    ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor_active_pct"),
    ("gpu__time_duration.sum", "ncu_time_ns"),
    # what the compiler made of the kernel (the "same tile algorithm, two languages" table):
    # warp instructions issued, and the launch's registers, shared memory and block size
    ("smsp__inst_executed.sum", "warp_inst"),
    ("launch__registers_per_thread", "registers"),
    ("launch__shared_mem_per_block_static", "smem_static_bytes"),
    ("launch__shared_mem_per_block_dynamic", "smem_dynamic_bytes"),
    ("launch__block_size", "block_threads"),
)
# Properties of a launch, not counts: a launch of several CUDA kernels gets the largest
# (its heaviest kernel's registers and shared memory), never the sum.
LAUNCH_PROPERTY = "launch__"
# Names docs/DESIGN.md ("Memory traffic, level by level") lists as verified on our H100:
# never dropped on the word of
# --query-metrics (whose listing format may change); only a rejection by ncu drops them.
VERIFIED = {
    "smsp__inst_executed_op_global_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__sass_data_bytes_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "gpu__time_duration.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    # `ncu --query-metrics` does not list the launch__ properties, yet ncu collects them
    "launch__registers_per_thread", "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic", "launch__block_size",
}
SECTOR = 32          # bytes per L1/L2 sector
MMA_M16N8K16 = 16 * 8 * 16   # multiply-adds of one mma.sync.m16n8k16 (t1's HMMA)


# ---------------------------------------------------------------------------------------
# ncu discovery and the CSV it prints
# ---------------------------------------------------------------------------------------

def find_cuda_tool(name: str) -> str | None:
    """A CUDA toolkit program (ncu, compute-sanitizer) on PATH, else in the usual CUDA
    install folders, else None."""
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", name)):
            return os.path.join(root, "bin", name)
    return None


def find_ncu() -> str | None:
    return find_cuda_tool("ncu")


def known_metrics(ncu: str) -> set[str] | None:
    """Base names ncu knows on this GPU (`ncu --query-metrics`), or None if it cannot say."""
    try:
        out = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True,
                             timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = set(re.findall(r"^([a-z0-9]+__[A-Za-z0-9_]+)", out, re.M))
    return names if len(names) > 50 else None  # a short list means we misread the output


def base_name(metric: str) -> str:
    """'dram__bytes_read.sum' -> 'dram__bytes_read' (the rollup suffix is not listed)."""
    return metric.split(".", 1)[0]


_SCALE = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TIME = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def unit_scale(unit: str) -> float:
    """Factor to base units (bytes, sectors, instructions, nanoseconds): 'Mbyte' -> 1e6."""
    unit = (unit or "").strip()
    if unit in _TIME:
        return _TIME[unit]
    m = re.fullmatch(r"([KMGT]?)(byte|sector|inst|request|warp|thread|cycle)s?", unit)
    if m:
        return _SCALE[m.group(1)]
    return 1.0


def _number(text: str) -> float:
    text = (text or "").strip().replace(",", "")
    if text in ("", "n/a", "N/A", "nan"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def parse_ncu_csv(text: str) -> list[dict]:
    """Rows of `ncu --csv --page raw`: one dict per profiled CUDA kernel.

    The output starts with the header line ("ID","Process ID",...,"Kernel Name",...,
    metric names); the next line may hold units (its ID cell is empty); values may carry
    thousands separators. Metric values are returned as floats in base units under
    their full ncu names; "Kernel Name" is kept as text.
    """
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = table[0], table[1:]
    units = [""] * len(header)
    if body and body[0] and body[0][0] == "":
        units, body = body[0], body[1:]
    rows = []
    for cells in body:
        if not cells or len(cells) < len(header):
            continue
        row = {"Kernel Name": cells[header.index("Kernel Name")] if "Kernel Name" in header
               else ""}
        for i, name in enumerate(header):
            if "__" in name:
                row[name] = _number(cells[i]) * unit_scale(units[i])
        rows.append(row)
    return rows


def sum_kernels(rows: list[dict]) -> dict:
    """Counters of a launch made of several CUDA kernels: the sum of each metric (the
    largest value of a launch property: registers, shared memory, block size)."""
    total: dict = {}
    for r in rows:
        for k, v in r.items():
            if k == "Kernel Name":
                continue
            if math.isnan(v):
                total.setdefault(k, math.nan)
            elif k.startswith(LAUNCH_PROPERTY):
                total[k] = max(v, _nz(total.get(k, 0.0)))
            else:
                total[k] = (0.0 if math.isnan(total.get(k, 0.0)) else total.get(k, 0.0)) + v
    total["kernels"] = ";".join(dict.fromkeys(r["Kernel Name"] for r in rows))
    total["launches"] = len(rows)
    return total


# ---------------------------------------------------------------------------------------
# Running ncu
# ---------------------------------------------------------------------------------------

def _rejected(output: str, metrics: list[str]) -> list[str]:
    """Metric names an ncu error message complains about."""
    errors = "\n".join(l for l in output.splitlines() if "ERROR" in l or "rror" in l)
    # whole names only: "..._op_ld" must not match inside "..._op_ldsm"
    return [m for m in metrics
            if re.search(rf"(?<![\w]){re.escape(base_name(m))}(?![\w])", errors)]


class CounterPermissionError(RuntimeError):
    """ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM)."""


PERMISSION_HELP = (
    "Nsight Compute may not read the GPU's performance counters on this machine "
    "(ERR_NVGPUCTRPERM: the driver restricts them to administrators). Ask an administrator "
    "to allow counter access for all users (NVIDIA driver option "
    "NVreg_RestrictProfilingToAdminUsers=0, then reload the driver or reboot), or to run "
    "`python -m bench profile` for you with administrator rights. Timings and models do "
    "not need counters: `python -m bench time` and `python -m bench model` still work.")


def permission_denied(log: str) -> bool:
    return "ERR_NVGPUCTRPERM" in log


def report_rows(ncu: str, report: Path, timeout: float) -> tuple[list[dict], str]:
    """The kernel rows of an ncu report file, in launch order (parse_ncu_csv), and the tail
    of what ncu printed reading it."""
    imp = subprocess.run([ncu, "-i", str(report), "--csv", "--page", "raw",
                          "--print-units", "base"], capture_output=True, text=True,
                         timeout=timeout)
    return parse_ncu_csv(imp.stdout), imp.stdout[-2000:] + imp.stderr[-2000:]


def _ncu(ncu: str, target: list[str], metrics: list[str], report_base: Path,
         timeout: int) -> tuple[list[dict] | None, list[str], str]:
    """Runs `python -m bench._ncu_target TARGET...` under ncu; returns (the kernel rows of
    the NVTX range in launch order, or None; metrics dropped; log text)."""
    dropped: list[str] = []
    log = ""
    metrics = list(metrics)
    for _attempt in range(4):
        cmd = [ncu, "--target-processes", "all", "--clock-control", "none",
               "--nvtx", "--nvtx-include", "cvt_measure/",
               "--metrics", ",".join(metrics), "-f", "-o", str(report_base),
               sys.executable, "-m", "bench._ncu_target", *target]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        log = proc.stdout + proc.stderr
        if permission_denied(log):
            raise CounterPermissionError(PERMISSION_HELP)
        rep = Path(str(report_base) + ".ncu-rep")
        if proc.returncode == 0 and rep.exists():
            rows, said = report_rows(ncu, rep, timeout)
            if not rows:
                return None, dropped, log + said + \
                    "\nno kernel was profiled inside the NVTX range cvt_measure"
            return rows, dropped, log
        bad = _rejected(log, metrics)
        if not bad:
            return None, dropped, log
        dropped.extend(bad)
        metrics = [m for m in metrics if m not in bad]
    return None, dropped, log


def run_ncu(ncu: str, kernel: str, shape: str, precision: str, metrics: list[str],
            report_base: Path, timeout: int = 300) -> tuple[dict | None, list[str], str]:
    """Profiles one launch in its own process; returns (summed counters or None, metrics
    dropped, log text)."""
    rows, dropped, log = _ncu(ncu, ["--kernel", kernel, "--shape", shape, "--precision", precision],
                              metrics, report_base, timeout)
    return (sum_kernels(rows) if rows else None), dropped, log


def split_at_markers(rows: list[dict], marker: str = "spin_kernel") -> list[list[dict]]:
    """The kernel rows of a batch, in launch order -> one group per measured item: every
    item's launch is preceded by one marker kernel (bench/_ncu_target.py)."""
    groups: list[list[dict]] = []
    for r in rows:
        if marker in r.get("Kernel Name", ""):
            groups.append([])
        elif groups:
            groups[-1].append(r)
    return groups


def item_status(log: str) -> dict[int, str]:
    """'CVT_ITEM 3 ok' / 'CVT_ITEM 4 error: ...' lines of a batch -> {3: 'ok', 4: 'error: ...'}."""
    return {int(m.group(1)): m.group(2).strip()
            for m in re.finditer(r"^CVT_ITEM (\d+) (.*)$", log, re.M)}


def run_batch(ncu: str, items: list[tuple[str, str, str]], metrics: list[str], report_base: Path,
              timeout: int) -> tuple[list[dict | None], list[str], str]:
    """Profiles every (kernel, shape, precision) in ONE process. Returns (summed counters
    per item, None where the item failed or the batch could not be split; dropped; log)."""
    import json

    spec = Path(str(report_base) + ".json")
    spec.write_text(json.dumps([list(i) for i in items]))
    rows, dropped, log = _ncu(ncu, ["--batch", str(spec)], metrics, report_base, timeout)
    status = item_status(log)
    groups = split_at_markers(rows or [])
    if len(groups) != len(items):
        return [None] * len(items), dropped, log + (
            f"\nbatch: {len(groups)} marker groups for {len(items)} items" if rows else "")
    return [sum_kernels(g) if g and status.get(i) == "ok" else None
            for i, g in enumerate(groups)], dropped, log


# ---------------------------------------------------------------------------------------
# Levels and the comparison with the model
# ---------------------------------------------------------------------------------------

def _get(c: dict, short: str) -> float:
    for full, s in METRICS:
        if s == short:
            return num(c.get(full))
    raise KeyError(short)


def _nz(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def levels(counters: dict, elem_bytes: int, load_width: int = 1,
           copy_width: float = 0.0, tma: bool = False, mma_macs: int = MMA_M16N8K16) -> dict:
    """The traffic levels (elements and bytes) from summed counters. load_width: elements
    one of the kernel's load instructions moves (its model's; 4 for float4 loads);
    copy_width: elements one of its cp.async copies moves on average (its model's; 0 when
    the model does not know its copies, which are then counted by their bytes); tma: the
    kernel loads only through TMA (its model's), so its loads are the bytes L2 sends to the
    SMs; mma_macs: multiply-adds of one counted tensor-pipe instruction (its model's)."""
    c = counters
    ld_thread = _get(c, "ld_thread_inst")
    note = []
    if math.isnan(ld_thread) and not math.isnan(_get(c, "ld_warp_inst")):
        ld_thread = _get(c, "ld_warp_inst") * 32  # assumes every lane of every warp loads
        note.append("issued = warp instructions x 32 (thread-level metric unavailable)")
    ldgsts_bytes = _nz(_get(c, "ldgsts_bytes"))
    ldgsts_warp = _get(c, "ldgsts_warp_inst")
    if copy_width and not math.isnan(ldgsts_warp):
        # cp.async by instructions: the byte metric above reports about half of what v6's
        # copies move (docs/performance/ladder.md), the warp-instruction count is exact;
        # every lane of a warp copies at tile multiples (masked copies are not issued).
        copied_elements = ldgsts_warp * 32 * copy_width
        note.append("cp.async copies = warp instructions x 32 lanes x the model's copy width")
    else:
        copied_elements = ldgsts_bytes / elem_bytes
    # Issued ELEMENTS: thread-level load instructions count one per element for scalar
    # loads, which is how the lecture's ladder loads, and load_width per instruction for
    # vector loads (the FFMA rungs' float4s: instructions x 4 must meet the model, so a
    # load the compiler split into scalars shows up as 4x); async copies (cp.async, what
    # Triton's pipelined loops and cuda v6 use) are not load instructions: add them, by
    # instructions where the model knows their widths, else by their bytes.
    issued_elements = ld_thread * load_width + copied_elements \
        if not math.isnan(ld_thread) else math.nan
    data_bytes = _get(c, "ld_data_bytes")
    issued_bytes = (data_bytes + copied_elements * elem_bytes) if not math.isnan(data_bytes) \
        else issued_elements * elem_bytes
    if tma:
        # TMA: no load instruction moves the tiles (one thread issues a copy per box), so
        # the loads are what L2 sent to the SMs
        issued_bytes = _get(c, "xbar2l1tex_read_bytes")
        issued_elements = issued_bytes / elem_bytes
        note.append("TMA: issued = bytes L2 sent to the SMs (l1tex__m_xbar2l1tex_read_bytes)")
    l1 = _get(c, "l1_bytes")
    if math.isnan(l1):
        l1 = _get(c, "l1_sectors") * SECTOR
    l1 += _nz(_get(c, "l1_ldgsts_bytes"))
    shared_bytes = _get(c, "shared_ld_bytes")
    shared_total = _nz(shared_bytes) + _nz(_get(c, "shared_ldsm_bytes"))
    return dict(
        issued_elements=issued_elements,
        issued_bytes=issued_bytes,
        l1_bytes=l1,
        l1_requests=_get(c, "l1_requests"),
        l2_bytes=_get(c, "l2_read_sectors") * SECTOR,
        l2_all_bytes=_get(c, "l2_all_bytes"),
        dram_read_bytes=_get(c, "dram_read_bytes"),
        dram_write_bytes=_get(c, "dram_write_bytes"),
        shared_bytes=shared_total if not math.isnan(shared_bytes) else math.nan,
        shared_elements=shared_total / elem_bytes if not math.isnan(shared_bytes) else math.nan,
        shared_wavefronts=_get(c, "shared_wavefronts"),
        shared_bank_conflicts=_get(c, "shared_bank_conflicts"),
        ffma=_get(c, "ffma"),
        mma_fma=_get(c, "hmma_warp_inst") * mma_macs,
        tensor_active_pct=_get(c, "tensor_active_pct"),
        ncu_time_ms=_get(c, "ncu_time_ns") / 1e6,
        level_note="; ".join(note),
    )


def _ratio(a: float, b) -> float:
    if b is None or math.isnan(a) or not b:
        return math.nan
    return a / b


def compare(kernel, problem, lv: dict, model) -> dict:
    """Model columns, measured/model ratios and the PASS/FAIL of the op's counter target
    (problem.profile_target: the CUDA ladder's issued loads within 2% of the model and its
    FFMA count equal to the model's). Kernels without a target get the same ratios and "-"
    (the report explains where they depart)."""
    out: dict = {}
    if model is None:
        out.update(model_global_loads=None, model_global_load_bytes=None,
                   model_shared_loads=None, model_fma=None, ratio_issued=math.nan,
                   ratio_shared=math.nan, ratio_ffma=math.nan, target="-")
        return out
    out.update(model_global_loads=model.global_loads,
               model_global_load_bytes=model.global_load_bytes,
               model_shared_loads=model.shared_loads, model_fma=model.fma,
               compulsory_bytes=model.compulsory_bytes)
    out["ratio_issued"] = _ratio(lv["issued_elements"], model.global_loads)
    out["ratio_shared"] = _ratio(lv["shared_elements"], model.shared_loads)
    out["ratio_ffma"] = _ratio(lv["ffma"], model.fma)
    out["ratio_mma"] = _ratio(lv.get("mma_fma", math.nan), model.fma)
    out["ratio_dram_compulsory"] = _ratio(_nz(lv["dram_read_bytes"]) + _nz(lv["dram_write_bytes"]),
                                         model.compulsory_bytes)
    out["target"] = problem.profile_target(kernel, lv, model)
    return out


def run(kernels, shapes_text: str | None, precisions: list[str] | None, out_dir,
        ncu: str | None = None, progress=True, checkpoint=None,
        batch: bool = True) -> tuple[list[dict], dict]:
    """Profiles every kernel x shape x precision. Returns (rows, meta).

    batch=True: all launches in one ncu process first (run_batch); an item that fails
    there, or every item if the batch cannot be split by its markers, is profiled again in
    its own process. batch=False: one process per item from the start.

    checkpoint(rows, meta), if given, is called after every kernel: the caller writes the
    rows so far, so a run cut short (a time limit, a hung kernel) keeps what it measured.
    """
    ncu = ncu or find_ncu()
    if ncu is None:
        raise FileNotFoundError("ncu (Nsight Compute) is not on PATH nor in /usr/local/cuda/bin")
    out_dir = Path(out_dir)
    rep_dir = out_dir / "ncu"
    rep_dir.mkdir(parents=True, exist_ok=True)
    names = [m for m, _ in METRICS]
    known = known_metrics(ncu)
    dropped = [m for m in names if known is not None and m not in VERIFIED
               and base_name(m) not in known]
    names = [m for m in names if m not in dropped]

    from bench import device as dev

    work = []
    for k in kernels:
        if not problems.known(k.op) or not dev.can_run(k, "cuda")[0]:
            continue                  # no Problem, or a GPU older than the kernel needs
        problem = problems.get(k.op)
        try:
            shapes = problems.shapes_for(problem, shapes_text, problem.profile_shapes)
        except ValueError:
            if isinstance(shapes_text, dict):
                raise
            continue                  # one text for every op: it does not fit this one
        for shape in shapes or []:
            if k.refusal(shape):
                continue              # a shape the kernel does not take (Kernel.refuses)
            for p in k.precisions:
                if precisions and p not in precisions:
                    continue
                if not precisions and p != k.precisions[0]:
                    continue  # by default: each kernel at its first (main) precision
                work.append((k, problem, shape, p))

    def drop(more: list[str]) -> None:  # names ncu rejected: not asked for again
        nonlocal names
        dropped.extend([m for m in dict.fromkeys(more) if m not in dropped])
        names = [m for m in names if m not in dropped]

    rows = []
    t0 = _time.monotonic()
    batched: list = [None] * len(work)
    if batch and len(work) > 1:
        if progress:
            print(f"[profile] {len(work)} launches in one ncu process (silent until it "
                  f"ends, at most {120 + 30 * len(work)} s) ...", file=sys.stderr, flush=True)
        try:
            batched, more_dropped, _log = run_batch(
                ncu, [(k.name, str(shape), p) for k, _, shape, p in work], names,
                rep_dir / "batch", timeout=120 + 30 * len(work))
        except (subprocess.TimeoutExpired, OSError):
            batched, more_dropped = [None] * len(work), []
        drop(more_dropped)
    from bench import terminal

    bar = terminal.Progress(len(work), "profile", unit="kernels", enabled=progress)
    for i, (k, problem, shape, p) in enumerate(work, 1):
        bar.start(f"{k.name} {shape} {p}")
        counters, log = batched[i - 1], ""
        if counters is None:  # not batched, or failed there: its own process
            base = rep_dir / f"{k.name}_{shape}_{p}"
            try:
                counters, more_dropped, log = run_ncu(ncu, k.name, str(shape), p, names, base)
            except subprocess.TimeoutExpired:
                counters, more_dropped, log = None, [], "ncu timed out"
            except OSError as e:
                counters, more_dropped, log = None, [], f"ncu could not run: {e}"
            drop(more_dropped)
        elem = prec.element_bytes(p)
        row = dict(kernel=k.name, backend=k.backend, version=k.version, op=k.op,
                   twin=k.twin or "", shape=str(shape), size=problem.size(shape),
                   precision=p, elem_bytes=elem, mnk=problem.useful_flops(shape) // 2)
        if k.chooses is not None:
            row["choice"] = k.choice(shape, p)    # what a dispatching entry ran, as in time rows
        if counters is None:
            tail = " | ".join(l for l in log.strip().splitlines()[-3:])
            row.update(status="ERROR", note=tail[:300])
            text = f"ERROR: {tail[:200]}"
        else:
            row["ncu_kernels"] = counters.get("kernels", "")
            row["ncu_launches"] = counters.get("launches", 0)
            for full, short in METRICS:
                row[short] = counters.get(full)
            model = problem.traffic(k, shape, p)
            lv = levels(counters, elem, getattr(model, "load_width", 1),
                        getattr(model, "copy_width", 0.0), getattr(model, "tma", False),
                        getattr(model, "mma_macs", MMA_M16N8K16))
            row.update(lv)
            row.update(compare(k, problem, lv, model))
            row.update(status="ok", note=row.pop("level_note"))
            text = f"issued/model {row['ratio_issued']:.4f}  {row['target']}"
        rows.append(row)
        if checkpoint is not None:
            checkpoint(rows, {"ncu": ncu, "metrics": names, "dropped_metrics": dropped,
                              "seconds": round(_time.monotonic() - t0, 1), "partial": i < len(work)})
        bar.advance()
        bar.log(f"{k.name} {shape} {p}: {text}")
    bar.close()
    meta = {"ncu": ncu, "metrics": names, "dropped_metrics": dropped,
            "seconds": round(_time.monotonic() - t0, 1)}
    return rows, meta
