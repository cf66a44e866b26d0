#!/usr/bin/env bash
# The split softmax's variants at 4096 x 393216 next to a device-to-device copy, on the GPU,
# in one command (about a minute on the H100, builds included):
#
#   bash cuda/driver/softmax_split_sweep.sh OUT_DIR
#
# 1. builds cuda/driver/softmax_split_driver.cu once per variant of cuda/softmax_split.cu's
#    macros (in parallel; ptxas reports in OUT_DIR/build_<name>.log):
#      lean0       CVT_SPLIT_LEAN=0 and the synchronisation below off: __expf (ex2.approx
#                  with its subnormal fix-up) and maxima element by element, as before the
#                  instruction diet
#      sync0       the diet (ex2.approx.ftz, the output's argument raised by 64, 16-bit
#                  maxima as pairs) without the two changes below
#      relaxed     sync0 with CVT_SPLIT_RELAXED_ARRIVE=1: version 3's cluster barriers
#                  arrived at without release semantics, thread 0 fencing its pair
#      pairs       sync0 with CVT_SPLIT_PAIR_REDUCE=1: one block reduction of (max, sum)
#                  pairs per row instead of two
#      default     both (the default)
#      t1024       the default with 1024-thread blocks, two per SM (__launch_bounds__(1024, 2))
# 2. runs each at 4096 x 393216 in float32, float16 and bfloat16: the refill form with
#    clusters of 8 and 16 (16-bit: 4 and 8), version 3 with its automatic cluster (C = -1:
#    16 in float32, 8 in 16-bit) and with the sizes around it (float32 8; 16-bit 4 and 16),
#    every variant checked on two rows against float64 before it is timed;
# 3. writes the driver's lines to OUT_DIR/softmax_split_sweep.txt (checks apart, in
#    OUT_DIR/softmax_split_checks.txt). Read in docs/performance/debts/NOTES.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/softmax_split_sweep}
mkdir -p "$out"
arch=${CVT_ARCH:-sm_90a}
declare -A FLAGS=(
  [lean0]="-DCVT_SPLIT_LEAN=0 -DCVT_SPLIT_RELAXED_ARRIVE=0 -DCVT_SPLIT_PAIR_REDUCE=0"
  [sync0]="-DCVT_SPLIT_RELAXED_ARRIVE=0 -DCVT_SPLIT_PAIR_REDUCE=0"
  [relaxed]="-DCVT_SPLIT_PAIR_REDUCE=0"
  [pairs]="-DCVT_SPLIT_RELAXED_ARRIVE=0"
  [default]=""
  [t1024]="-DCVT_SPLIT_THREADS=1024 -DCVT_SPLIT_MIN_BLOCKS=2"
)
for name in "${!FLAGS[@]}"; do
  # shellcheck disable=SC2086  # FLAGS: several -D words
  nvcc -O3 -std=c++17 "-arch=$arch" -Icuda ${FLAGS[$name]} -Xptxas -v \
    cuda/driver/softmax_split_driver.cu -o "$out/driver_$name" > "$out/build_$name.log" 2>&1 &
done
wait
raw=$out/raw.txt
: > "$raw"
for name in lean0 sync0 relaxed pairs default t1024; do
  "$out/driver_$name" fp32 4096 393216 10 8,16,-1,-8 "$name" >> "$raw"
  "$out/driver_$name" fp16 4096 393216 10 4,8,-1,-4,-16 "$name" >> "$raw"
  "$out/driver_$name" bf16 4096 393216 10 4,8,-1,-4,-16 "$name" >> "$raw"
done
grep "^check" "$raw" > "$out/softmax_split_checks.txt"
grep -v "^check" "$raw" > "$out/softmax_split_sweep.txt"
cat "$out/softmax_split_sweep.txt"
