#!/usr/bin/env bash
mkdir -p $OUT/exp2
CONFIGS="8192x8192x8192:bf16,8448x8192x8192:bf16,8192x8192x8192:fp16,8448x8192x8192:fp16" VARIANTS="t3,serp" ROUNDS=4 \
  timeout 400 python results/h100_sweeps/t5_stream_k_runs/scripts/sustained_rounds.py $OUT/exp2 2>&1 | grep -v "^check" | tee $OUT/exp2/energy.log
