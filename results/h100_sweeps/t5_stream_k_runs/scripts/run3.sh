#!/usr/bin/env bash
# t5 first run: build, checks at many shapes (both paths), sanitizers, sustained timing beside t3 and cuBLAS
mkdir -p $OUT/r3
D=$OUT/r3/tcd
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda -Xptxas=-v -DCVT_WITH_CUBLAS cuda/driver/tensor_core_driver.cu cuda/matmul_t*.cu cuda/matmul_v7_lean_fetch.cu -lcublas -o /tmp/tcd > $OUT/r3/build.log 2>&1 || { tail -20 $OUT/r3/build.log; exit 1; }
S="1 8 8 136 264 40 257 520 96 130 257 40 129 264 37 100 264 40 520 1032 1000 520 1028 36 2056 4104 520 64 64 4104 256 512 2048 640 768 512 256 256 8192 1000 1000 1000 1024 1024 1024 2048 2048 2048 4096 4096 4096 8192 8192 8192 264 65536 4096 8 8 65536 16 16 16 4104 2056 1032 129 136 24 8200 8200 72"
for t in bf16 fp16; do
  timeout 120 /tmp/tcd t5_stream_k $t $S --reps 0 >> $OUT/r3/checks.log 2>&1; echo "checks t5 $t rc $?"
  timeout 60 /tmp/tcd t5_stream_k $t 136 264 40 --reps 0 --misalign >> $OUT/r3/checks.log 2>&1; echo "misalign t5 $t rc $?"
done
grep -c " ok" $OUT/r3/checks.log; grep -v " ok" $OUT/r3/checks.log | head -20
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/tcd t5_stream_k bf16 256 512 2048 640 768 512 136 264 40 --reps 0 > $OUT/r3/san_$tool.log 2>&1; echo "$tool rc $? $(grep -c 'ERROR SUMMARY: 0' $OUT/r3/san_$tool.log)"
  tail -2 $OUT/r3/san_$tool.log
done
timeout 100 /tmp/tcd t5_stream_k bf16 4096 4096 4096 8192 8192 8192 --reps 15 --cublas | tee -a $OUT/r3/driver_timing.log
timeout 100 /tmp/tcd t3_warp_specialized bf16 4096 4096 4096 8192 8192 8192 --reps 15 --cublas | tee -a $OUT/r3/driver_timing.log
EXTRA="t5=cuda/matmul_t5_stream_k.cu:-DEXP_T5" VARIANTS="t3" ROUNDS=4 CONFIGS="8192x8192x8192:bf16,8192x8192x8192:fp16,4096x4096x4096:bf16,4096x4096x4096:fp16,2048x2048x2048:bf16" \
  timeout 300 python results/h100_sweeps/t5_stream_k_runs/scripts/sustained_rounds.py $OUT/r3 2>&1 | grep -v "^check" | tee $OUT/r3/energy.log
cd $OUT && tar czf r3.tgz r3
