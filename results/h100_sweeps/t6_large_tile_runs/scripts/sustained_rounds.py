"""Sustained rounds: each kernel runs back to back for ~1 s (no L2 flush, the steady state of a
training loop), kernels alternating round by round; per kernel the median TFLOP/s, x cuBLAS
(ratio of the medians; the per-round ratios beside it), energy per GEMM (NVML total energy), SM clock and power.
Run from the repository root: python results/h100_sweeps/t6_large_tile_runs/scripts/sustained_rounds.py OUT
(environment: VARIANTS, EXTRA, CONFIGS, ROUNDS, SECONDS; see the run*.sh beside it)."""
import ctypes, os, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
import torch

OUT = sys.argv[1]
ROUNDS = int(os.environ.get("ROUNDS", "4"))
SECONDS = float(os.environ.get("SECONDS", "1.2"))
ALL = {
    "t3": "", "serp": "-DCVT_T3_SERP=1", "g16": "-DCVT_T3_GROUP=16",
    "g16serp": "-DCVT_T3_GROUP=16 -DCVT_T3_SERP=1", "c4": "-DCVT_T3_CLUSTER=4",
    "g4": "-DCVT_T3_GROUP=4",
}
VARIANTS = {k: ALL[k] for k in os.environ.get("VARIANTS", ",".join(ALL)).split(",") if k}
CONFIGS = [(tuple(int(x) for x in c.split(":")[0].split("x")), {"bf16": torch.bfloat16, "fp16": torch.float16}[c.split(":")[1]])
           for c in os.environ.get("CONFIGS", "8192x8192x8192:bf16,8192x8192x8192:fp16,4096x4096x4096:bf16").split(",")]
EXTRA = os.environ.get("EXTRA", "")  # name=file:defines;...


HERE = os.path.dirname(os.path.abspath(__file__))
SERPENTINE = "/tmp/t3_serpentine.cu"   # t3 with CVT_T3_SERP: t3_serpentine.patch applied


def build(name, defines, src=SERPENTINE):
    so = f"/tmp/exp_{name}.so"
    cmd = (f"nvcc -O3 -std=c++17 -arch=sm_90a -Icuda -Xcompiler -fPIC -shared -Xptxas=-v {defines} "
           f"{HERE}/shim.cu {src} cuda/matmul_t1_mma_sync.cu -o {so}")
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    open(f"{OUT}/build_{name}.log", "w").write(cmd + "\n" + r.stdout + r.stderr)
    if r.returncode:
        print("BUILD FAILED", name, r.stderr[-2000:]); sys.exit(1)
    return so


subprocess.run(f"patch -s -o {SERPENTINE} cuda/matmul_t3_warp_specialized.cu "
               f"< {HERE}/t3_serpentine.patch", shell=True, check=True)
jobs = dict((k, (v, SERPENTINE)) for k, v in VARIANTS.items())
for item in filter(None, EXTRA.split(";")):
    name, rest = item.split("=", 1)
    src, defines = rest.split(":", 1)
    jobs[name] = (defines, src)
with ThreadPoolExecutor(16) as ex:
    sos = dict(zip(jobs, ex.map(lambda kv: build(kv[0], *kv[1]), jobs.items())))

nvml = ctypes.CDLL("libnvidia-ml.so.1")
nvml.nvmlInit_v2()
h = ctypes.c_void_p()
nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
def energy_mj():
    e = ctypes.c_ulonglong(); nvml.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)); return e.value
def clock():
    c = ctypes.c_uint(); nvml.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(c)); return c.value
def power():
    p = ctypes.c_uint(); nvml.nvmlDeviceGetPowerUsage(h, ctypes.byref(p)); return p.value / 1000
lim = ctypes.c_uint(); nvml.nvmlDeviceGetEnforcedPowerLimit(h, ctypes.byref(lim))
print(torch.cuda.get_device_name(), "power limit", lim.value / 1000, "W", flush=True)

def kernel_fn(so, a, b, c, bf16):
    lib = ctypes.CDLL(so)
    lib.exp_t3.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong] * 3 + [ctypes.c_int, ctypes.c_void_p]
    M, K = a.shape; N = b.shape[1]
    def fn():
        s = torch.cuda.current_stream().cuda_stream
        err = lib.exp_t3(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K, bf16, s)
        assert err == 0, err
    return fn

def sustained(fn, flops):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    s.record(); fn(); e.record(); e.synchronize()
    n = max(10, int(SECONDS * 1e3 / s.elapsed_time(e)))
    time.sleep(0.05)
    e0 = energy_mj(); clocks, watts = [], []
    s.record()
    for _ in range(n): fn()
    e.record()
    while not e.query():
        clocks.append(clock()); watts.append(power()); time.sleep(0.01)
    e.synchronize(); e1 = energy_mj()
    ms = s.elapsed_time(e) / n
    return dict(tf=flops / ms / 1e9, ms=ms, j=(e1 - e0) / 1e3 / n,
                mhz=statistics.median(clocks) if clocks else 0, w=statistics.median(watts) if watts else 0)

try:
    import triton.testing as tt
except Exception:
    tt = None
rows = []
for ((M, N, K), dt) in CONFIGS:
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dt); b = torch.randn(K, N, device="cuda", dtype=dt)
    c = torch.empty(M, N, device="cuda", dtype=dt)
    bf = int(dt == torch.bfloat16)
    ref = (a.double() @ b.double())
    fns = {"cublas": lambda: torch.matmul(a, b, out=c)}
    for name, so in sos.items():
        fns[name] = kernel_fn(so, a, b, c, bf)
    for name, fn in fns.items():  # check every variant, and that a second run gives the same bits
        c.fill_(float("nan")); fn(); torch.cuda.synchronize()
        first = c.clone(); c.fill_(float("nan")); fn(); torch.cuda.synchronize()
        same = torch.equal(first.view(torch.int16), c.view(torch.int16))
        print(f"repeat {name}: {'same bits' if same else 'DIFFERENT BITS'}", flush=True)
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        print(f"check {name} {dt} {M}x{N}x{K}: max err/max|ref| {err:.2e}", flush=True)
        assert err < 1e-2, (name, err)
    del ref
    flops = 2 * M * N * K
    res = {k: [] for k in fns}
    db = {k: [] for k in fns}
    names = list(fns)
    for r in range(ROUNDS):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            res[name].append(sustained(fns[name], flops))
            if tt is not None:
                db[name].append(flops / tt.do_bench(fns[name], warmup=25, rep=100) / 1e9)
    base = statistics.median(x["tf"] for x in res["cublas"])
    bj = statistics.median(x["j"] for x in res["cublas"])
    bdb = statistics.median(db["cublas"]) if db["cublas"] else 0
    for name in names:
        med = lambda key: statistics.median(x[key] for x in res[name])
        line = (f"{str(dt)[6:]:9} {M}x{N}x{K} {name:10} sustained {med('tf'):6.1f} TF x{med('tf')/base:.3f}  "
                f"{med('j')*1e3:7.2f} mJ/GEMM x{med('j')/bj:.3f}  {med('mhz'):5.0f} MHz {med('w'):5.0f} W")
        if db[name]:
            d = statistics.median(db[name]); line += f"  do_bench {d:6.1f} TF x{d/bdb:.3f}"
        line += "  per round x: " + " ".join(f"{x['tf']/y['tf']:.3f}" for x, y in zip(res[name], res["cublas"]))
        print(line, flush=True); rows.append(line)
    del a, b, c
    torch.cuda.empty_cache()
open(f"{OUT}/energy_table.txt", "w").write("\n".join(rows) + "\n")
