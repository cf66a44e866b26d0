#!/usr/bin/env bash
# The GPU counterpart of .ci/run, for a machine with an NVIDIA GPU (the H100 we measure
# on): the README's test command, then the measurements, with every log under $OUT.
#
#   OUT=/tmp/out bash .ci/gpu.sh [ladder|full]
#     ladder  build, GPU tier of the CUDA ladder, tile sweep, ladder vs cuBLAS
#     full    make test (everything), then make report into $OUT/report
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
# The GPU copy of the tree has no .git: pass the commit as CVT_GIT_SHA=... to label results.
OUT=${OUT:-build/gpu_out}
mkdir -p "$OUT"
stage=${1:-full}

python3 -c "import torch; print('torch', torch.__version__, 'cxx11 abi', torch._C._GLIBCXX_USE_CXX11_ABI)"
echo '#include <string>' | ${CXX:-g++} -x c++ -E -dM - 2>/dev/null | grep -m1 _GLIBCXX_USE_CXX11_ABI || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$OUT/gpu.csv" 2>&1
cat "$OUT/gpu.csv"

case "$stage" in
ladder)
  (time make build) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  grep -E "Compiling entry|Used [0-9]+ registers|spill" "$OUT/build.log" > "$OUT/ptxas.txt" || true
  timeout 240 python3 -m pytest tests/gpu/test_matmul_cuda.py tests/cpu/test_cuda_build.py \
    tests/cpu/test_layout.py -n 8 -q -p no:cacheprovider 2>&1 | tee "$OUT/pytest_ladder.log" | tail -25
  timeout 150 bash cuda/driver/tile_sweep.sh build/sweep > "$OUT/sweep.log" 2>&1; tail -14 "$OUT/sweep.log"
  timeout 120 python3 - <<'PY' 2>&1 | tee "$OUT/ladder_vs_cublas.txt"
import torch, bindings
ops = bindings.ops()
torch.backends.cuda.matmul.allow_tf32 = False
flush = torch.empty(int(2 * torch.cuda.get_device_properties(0).L2_cache_size), dtype=torch.uint8, device="cuda")
def median_ms(f, reps):
    f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]
names = ["matmul_v1_naive", "matmul_v1_coalesced", "matmul_v1_5_thread_tiling",
         "matmul_v2_register_tiling", "matmul_v3_smem_tiling"]
print(f"{'kernel':28s} {'n':>5s} {'ms':>9s} {'TFLOP/s':>8s} {'x cuBLAS':>8s}")
for n in (1024, 2048, 4096):
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    ref = median_ms(lambda: torch.matmul(a, b), 30)
    tf = lambda ms: 2 * n**3 / ms / 1e9
    print(f"{'cublas_fp32':28s} {n:5d} {ref:9.3f} {tf(ref):8.2f} {1:8.2f}")
    for name in names:
        reps = 5 if (n == 4096 and "v1" in name) else 20
        ms = median_ms(lambda: getattr(ops, name)(a, b), reps)
        print(f"{name:28s} {n:5d} {ms:9.3f} {tf(ms):8.2f} {ref / ms:8.2f}")
PY
  ;;
harness)
  # Smoke of the harness's GPU paths on a few kernels, each bounded in time.
  (time make build) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  timeout 120 python3 -m bench check --exact --nonfinite --kernels "${KERNELS:-cuda_*,cublas,triton_*}" \
    --out "$OUT/check" > "$OUT/check.log" 2>&1; echo "check rc=$?"; tail -5 "$OUT/check.log"
  timeout 150 python3 -m bench time --kernels 'cuda_v1_coalesced,cuda_v3*,triton_v3*' \
    --shapes 1024x1024x1024,2048x2048x2048 --out "$OUT/time" > "$OUT/time.log" 2>&1
  echo "time rc=$?"; tail -15 "$OUT/time.log"
  timeout 150 python3 -m bench profile --kernels 'cuda_v1_naive,cuda_v3*,triton_v3*' \
    --shapes 1024x1024x1024 --out "$OUT/profile" > "$OUT/profile.log" 2>&1
  echo "profile rc=$?"; tail -15 "$OUT/profile.log"
  ;;
results-time)
  # The committed H100 result set, part 1: correctness of every kernel, then timings with
  # the ceilings measured in the same run. Part 2 (results-profile) adds the counters.
  (time make build) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  timeout 200 python3 -m bench check --exact --nonfinite --out "$OUT/h100" > "$OUT/check.log" 2>&1
  echo "check rc=$?"; tail -3 "$OUT/check.log"
  timeout 330 python3 -m bench time --out "$OUT/h100" > "$OUT/time.log" 2>&1
  echo "time rc=$?"; tail -40 "$OUT/time.log"
  ;;
results-profile)
  (time make build) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  timeout 300 python3 -m bench profile --out "$OUT/h100" > "$OUT/profile.log" 2>&1
  echo "profile rc=$?"; tail -25 "$OUT/profile.log"
  timeout 150 python3 -m bench profile --kernels 'cuda_v1_coalesced,cuda_v1.5*,cuda_v2*,cuda_v3*,triton_v*' \
    --shapes 4096x4096x4096 --out "$OUT/h100" --append > "$OUT/profile4096.log" 2>&1
  echo "profile 4096 rc=$?"; tail -12 "$OUT/profile4096.log"
  timeout 100 python3 -m bench profile --kernels cuda_v1_naive --shapes 4096x4096x4096 \
    --out "$OUT/h100" --append > "$OUT/profile4096_naive.log" 2>&1
  echo "profile 4096 naive rc=$?"; tail -4 "$OUT/profile4096_naive.log"
  ;;
tiers)
  # The README's test command with every tier (slow included), then a summary of the
  # tests that matter most for the GPU: offsets past 2^31, sanitizer, fuzz, timing.
  (time make build) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  timeout 560 make test PYTEST_ARGS="-q -p no:cacheprovider -rfEs --durations=25 --junitxml=$OUT/junit.xml" \
    > "$OUT/pytest.log" 2>&1; echo "make test rc=$?"
  grep -E "passed|failed" "$OUT/pytest.log" | tail -3
  grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -40
  ;;
full)
  make test PYTEST_ARGS="-q -p no:cacheprovider" 2>&1 | tee "$OUT/pytest.log" | tail -30
  make report OUT="$OUT/report" 2>&1 | tee "$OUT/report.log" | tail -40
  ;;
esac

# Everything under $OUT in one archive (the device returns at most 8 files).
# (Nsight Compute report files are left out: large, binary, and remade by `bench profile`.)
tar -czf /tmp/gpu_logs.tgz --exclude='*.ncu-rep' --exclude='logs.tgz' -C "$OUT" . 2>/dev/null \
  && mv /tmp/gpu_logs.tgz "$OUT/logs.tgz"
