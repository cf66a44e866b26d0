#!/usr/bin/env bash
# t6 with C stored from registers and 4 stages (t6_registers_epilogue.patch on top): GPU tests of t6, the four sanitizers over t6,
# harness timing with alternating sustained rounds (t5, t6 beside cuBLAS), counters at 4096^3 and 8192^3, sustained rounds
# with energy and clocks (scripts/sustained_rounds.py).
set -u
export PYTHONUNBUFFERED=1 CVT_GIT_SHA=${SHA:-unknown}
R=$OUT/r3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee $R/gpu.csv
t0=$SECONDS
make build > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"; grep -A2 "t6_large_tile_kernel" $R/build.log | grep -E "spill|registers" | head -4
( for tool in memcheck racecheck synccheck initcheck; do
    extra=""; [ $tool = initcheck ] && extra=--poison-outputs
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 --print-limit 20 \
      python -m tests.support.sanitize_target --kernels 'cuda_t6*' $extra > $R/sanitizer_$tool.log 2>&1
    echo "sanitizer $tool rc=$? $(grep -h 'ERROR SUMMARY' $R/sanitizer_$tool.log | sort | uniq -c | tr '\n' ' ')"
  done ) > $R/sanitizers.txt 2>&1 &
P=$!
timeout 240 python -m pytest -p no:cacheprovider tests/gpu/test_tensor_core_rungs.py tests/gpu/test_matmul_cuda.py tests/gpu/test_autograd.py -k "t6" -q -rfE -n 6 > $R/pytest.log 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)" $R/pytest.log | head; tail -1 $R/pytest.log
wait $P; cat $R/sanitizers.txt
timeout 170 python -m bench time --alternate 3 --kernels cuda_t5_stream_k,cuda_t6_large_tile --precision bf16,fp16 --shapes 4096x4096x4096,8192x8192x8192 --out $R/time > $R/time.log 2>&1; echo "time rc=$?"
timeout 100 python -m bench profile --kernels cuda_t6_large_tile,cuda_t5_stream_k --precision bf16 --shapes 4096x4096x4096,8192x8192x8192 --out $R/profile > $R/profile.log 2>&1; echo "profile rc=$?"
grep -iE "target|PASS|FAIL" $R/profile.log | head -8
EXTRA="t5=cuda/matmul_t5_stream_k.cu:-DEXP_T5;t6=cuda/matmul_t6_large_tile.cu:-DEXP_T6" VARIANTS="t3" ROUNDS=3 SECONDS=1.0 \
  CONFIGS="8192x8192x8192:bf16,8192x8192x8192:fp16,4096x4096x4096:bf16" \
  timeout 120 python results/h100_sweeps/t6_large_tile_runs/scripts/sustained_rounds.py $R 2>&1 | grep -v "^check" > $R/sustained.log
grep -E "sustained|DIFFERENT|Error|error" $R/sustained.log | cut -c1-220
python - <<'PY'
import csv, os
for r in csv.DictReader(open(os.environ["OUT"] + "/r3/time/time.csv")):
    print(r["kernel"][:24].ljust(24), r["shape"], r["precision"], r["tflops"][:6], "ref%", r["pct_reference"][:6], "db%", r["dobench_pct_reference"][:6], "alt%", r["alternating_pct_reference"][:6])
PY
(cd $OUT && tar czf r3.tgz r3 && rm -rf r3)
CVT_SWEEP_ONLY="19 21 22 23 24" timeout 220 bash cuda/driver/tensor_core_sweep.sh /tmp/tc_sweep > $OUT/r3_sweep.log 2>&1; echo "sweep rc=$?"
cp /tmp/tc_sweep/tensor_core_sweep.txt $OUT/r3_sweep.txt 2>/dev/null; cat $OUT/r3_sweep.txt
