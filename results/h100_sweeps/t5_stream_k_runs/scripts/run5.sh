#!/usr/bin/env bash
# t5 final: build, GPU tests of t5 (+ the tensor-core sanitizer tests), harness timing with alternating rounds,
# sustained rounds, counters at 4096^3 and 8192^3
mkdir -p $OUT/r5
export CVT_GIT_SHA=$SHA
make build > $OUT/r5/build.log 2>&1 || { tail -30 $OUT/r5/build.log; exit 1; }
timeout 240 python -m pytest -p no:cacheprovider tests/gpu/test_tensor_core_rungs.py tests/gpu/test_matmul_cuda.py -k "t5 or compute_sanitizer_clean" -q -rf > $OUT/r5/pytest.log 2>&1; echo "pytest rc $?"; tail -4 $OUT/r5/pytest.log
timeout 150 python -m bench time --alternate 3 --kernels cuda_t3_warp_specialized,cuda_t5_stream_k,triton_persistent --precision bf16,fp16 --shapes 4096x4096x4096,8192x8192x8192 --out $OUT/r5/time > $OUT/r5/time.log 2>&1; echo "time rc $?"
timeout 90 python -m bench profile --kernels cuda_t5_stream_k,cuda_t3_warp_specialized --precision bf16 --shapes 4096x4096x4096,8192x8192x8192 --out $OUT/r5/profile > $OUT/r5/profile.log 2>&1; echo "profile rc $?"
grep -iE "target|PASS|FAIL" $OUT/r5/profile.log | head -8
SECONDS_=1 EXTRA="t5=cuda/matmul_t5_stream_k.cu:-DEXP_T5" VARIANTS="t3" ROUNDS=3 SECONDS=1.0 CONFIGS="8192x8192x8192:bf16,8192x8192x8192:fp16,4096x4096x4096:bf16" \
  timeout 150 python results/h100_sweeps/t5_stream_k_runs/scripts/sustained_rounds.py $OUT/r5 2>&1 | grep -v "^check" > $OUT/r5/sustained.log; grep sustained $OUT/r5/sustained.log
python - <<'PY'
import csv, os
for r in csv.DictReader(open(os.environ["OUT"] + "/r5/time/time.csv")):
    print(r["kernel"][:24].ljust(24), r["shape"], r["precision"], r["tflops"][:6], "ref%", r["pct_reference"][:6], "db%", r["dobench_pct_reference"][:6], "alt%", r["alternating_pct_reference"][:6])
PY
cd $OUT && tar czf r5.tgz r5
