#!/usr/bin/env bash
# t5 second run: epoch flags (no memset), split only where it shortens the last round by >= MIN_GAIN k tiles
mkdir -p $OUT/r4
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda -Xptxas=-v -DCVT_WITH_CUBLAS cuda/driver/tensor_core_driver.cu cuda/matmul_t*.cu cuda/matmul_v7_lean_fetch.cu -lcublas -o /tmp/tcd > $OUT/r4/build.log 2>&1 &
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda -DCVT_WITH_CUBLAS -DCVT_T5_MIN_GAIN=0 cuda/driver/tensor_core_driver.cu cuda/matmul_t*.cu cuda/matmul_v7_lean_fetch.cu -lcublas -o /tmp/tcd0 > $OUT/r4/build0.log 2>&1 &
wait
S="1 8 8 136 264 40 257 520 96 130 257 40 129 264 37 520 1032 1000 2056 4104 520 64 64 4104 256 512 2048 640 768 512 256 256 8192 1000 1000 1000 1024 1024 1024 4096 4096 4096 8192 8192 8192 264 65536 4096 8 8 65536 4104 2056 1032 8200 8200 72 3000 3000 3000"
for d in tcd tcd0; do for t in bf16 fp16; do
  timeout 120 /tmp/$d t5_stream_k $t $S --reps 0 >> $OUT/r4/checks.log 2>&1; echo "checks $d t5 $t rc $?"
done; done
timeout 60 /tmp/tcd t5_stream_k bf16 136 264 40 --reps 0 --misalign >> $OUT/r4/checks.log 2>&1; echo "misalign rc $?"
grep -c " ok" $OUT/r4/checks.log; grep -v " ok" $OUT/r4/checks.log | head
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/tcd t5_stream_k bf16 256 512 2048 640 768 512 1024 1024 1024 --reps 0 > $OUT/r4/san_$tool.log 2>&1; echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r4/san_$tool.log)"
done
for d in tcd tcd0; do timeout 100 /tmp/$d t5_stream_k bf16 1024 1024 1024 4096 4096 4096 8192 8192 8192 --reps 15 --cublas | tee -a $OUT/r4/driver_timing.log; done
timeout 100 /tmp/tcd t3_warp_specialized bf16 1024 1024 1024 4096 4096 4096 8192 8192 8192 --reps 15 --cublas | tee -a $OUT/r4/driver_timing.log
EXTRA="t5=cuda/matmul_t5_stream_k.cu:-DEXP_T5;t5g0=cuda/matmul_t5_stream_k.cu:-DEXP_T5 -DCVT_T5_MIN_GAIN=0" VARIANTS="t3" ROUNDS=3 CONFIGS="8192x8192x8192:bf16,8192x8192x8192:fp16,4096x4096x4096:bf16,1024x1024x1024:bf16" \
  timeout 300 python results/h100_sweeps/t5_stream_k_runs/scripts/sustained_rounds.py $OUT/r4 2>&1 | grep -v "^check" | tee $OUT/r4/energy.log
cd $OUT && tar czf r4.tgz r4
