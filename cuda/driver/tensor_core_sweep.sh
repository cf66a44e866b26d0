#!/usr/bin/env bash
# Tile sweep of the tensor-core rungs next to cuBLAS, on the GPU, in one command:
#
#   bash cuda/driver/tensor_core_sweep.sh OUT_DIR              (about 3 minutes on the H100)
#   CVT_SWEEP_ONLY="0 3" bash cuda/driver/tensor_core_sweep.sh OUT_DIR   (candidates 0 and 3)
#
# 1. builds one driver per candidate: the rung's file compiled with its parameters of
#    cuda/matmul_config.h overridden by -D, linked with cuBLAS (-DCVT_WITH_CUBLAS -lcublas;
#    without a cuBLAS to link, the kernels alone), in parallel; the ptxas report of each goes
#    to OUT_DIR/build_<i>.log. The 16-bit rungs (t1-t3, t5) run in tensor_core_driver, the tf32
#    rung (t4) in matmul_driver, which checks it with TF32's bound beside cuBLAS at tf32;
# 2. checks every candidate at odd shapes on both paths (K and N multiples of 8, or of 4 for
#    t4: the TMA or 16-byte path; odd K or N, and --misalign: the fall-back path), in bf16
#    and fp16 (t4: tf32); a wrong candidate stops the sweep;
# 3. times every candidate at 4096^3 and 8192^3 in bf16 (t4: tf32; median of 15 launches, L2
#    flushed before each) next to cuBLAS at the same precision, timed in the same process on
#    the same inputs.
#
# One line per candidate in OUT_DIR/tensor_core_sweep.txt: registers and spills, TFLOP/s and
# x cuBLAS at 4096^3 and 8192^3. Full output: OUT_DIR/checks.log and OUT_DIR/timing.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/tensor_core_sweep}
mkdir -p "$out"
arch=${CVT_ARCH:-sm_90a}   # t2 and t3: wgmma and TMA need the arch-specific target
NVCC=(nvcc -O3 -std=c++17 "-arch=$arch" -Icuda)

# rung | -D overrides (empty: the defaults of matmul_config.h)
candidates=(
  "t1_mma_sync|"
  "t1_mma_sync|-DCVT_T1_BN=256"
  "t1_mma_sync|-DCVT_T1_STAGES=3"
  "t1_mma_sync|-DCVT_T1_BK=64 -DCVT_T1_STAGES=3"
  "t1_mma_sync|-DCVT_T1_BK=64 -DCVT_T1_STAGES=2"
  "t1_mma_sync|-DCVT_T1_GROUP=16"
  "t1_mma_sync|-DCVT_T1_BM=64 -DCVT_T1_WM=32"
  "t1_mma_sync|-DCVT_T1_BN=256 -DCVT_T1_BK=64 -DCVT_T1_STAGES=3"
  "t1_mma_sync|-DCVT_T1_BN=128 -DCVT_T1_WN=32"
  "t2_wgmma_tma|"
  "t2_wgmma_tma|-DCVT_T2_BN=128"
  "t2_wgmma_tma|-DCVT_T2_BN=128 -DCVT_T2_STAGES=6"
  "t2_wgmma_tma|-DCVT_T2_STAGES=3"
  "t3_warp_specialized|"
  "t3_warp_specialized|-DCVT_T3_CLUSTER=1"
  "t3_warp_specialized|-DCVT_T3_STAGES=3"
  "t3_warp_specialized|-DCVT_T3_GROUP=16"
  "t3_warp_specialized|-DCVT_T3_BN=128 -DCVT_T3_STAGES=6"
  "t3_warp_specialized|-DCVT_T3_CLUSTER=4 -DCVT_T3_BN=256"
  "t5_stream_k|"
  "t5_stream_k|-DCVT_T5_MIN_GAIN=0"
  "t4_tf32|"
  "t4_tf32|-DCVT_T4_CLUSTER=1"
  "t4_tf32|-DCVT_T4_STAGES=3"
  "t4_tf32|-DCVT_T4_GROUP=16"
)
tf32() { [ "${1#t4_}" != "$1" ]; }   # the tf32 rungs run in matmul_driver

cublas=(-DCVT_WITH_CUBLAS -lcublas)
if ! echo 'int main(){}' | "${NVCC[@]}" -x cu - -lcublas -o "$out/.probe" 2>/dev/null; then
  echo "tensor_core_sweep: no cuBLAS to link here; timing the kernels alone"
  cublas=()
fi
chosen=${CVT_SWEEP_ONLY:-$(seq 0 $((${#candidates[@]} - 1)))}
for i in $chosen; do
  IFS="|" read -r rung defines <<< "${candidates[$i]}"
  # the 16-bit rungs with t4's fall-back (v7) so that every matmul_t*.cu links; t4 with the
  # whole ladder, which matmul_driver lists
  if tf32 "$rung"; then sources=(cuda/driver/matmul_driver.cu cuda/matmul_*.cu)
  else sources=(cuda/driver/tensor_core_driver.cu cuda/matmul_t*.cu cuda/matmul_v7_lean_fetch.cu); fi
  # shellcheck disable=SC2086
  "${NVCC[@]}" -Xptxas=-v $defines "${cublas[@]}" "${sources[@]}" -o "$out/driver_$i" \
    > "$out/build_$i.log" 2>&1 &
done
wait
for i in $chosen; do
  [ -x "$out/driver_$i" ] || { echo "candidate $i did not build:"; tail -5 "$out/build_$i.log"; exit 1; }
done

: > "$out/checks.log"
for i in $chosen; do
  IFS="|" read -r rung defines <<< "${candidates[$i]}"
  types=(bf16 fp16); tf32 "$rung" && types=("")   # matmul_driver takes no type
  for t in "${types[@]}"; do
    # shellcheck disable=SC2086
    "$out/driver_$i" "$rung" $t 1 8 8 136 264 40 257 520 96 130 257 40 129 264 37 100 264 40 \
      520 1032 1000 520 1028 36 2056 4104 520 64 64 4104 --reps 0 >> "$out/checks.log" \
      && "$out/driver_$i" "$rung" $t 136 264 40 --reps 0 --misalign >> "$out/checks.log" \
      || { echo "candidate $i ($defines) is WRONG:"; tail -5 "$out/checks.log"; exit 1; }
  done
done

timing=()
[ ${#cublas[@]} -gt 0 ] && timing=(--cublas)
: > "$out/timing.log"
{
  printf "%-3s %-50s %5s %6s  %8s %7s  %8s %7s\n" "#" "candidate" "regs" "spills" \
    "TF 4096" "x cuBLAS" "TF 8192" "x cuBLAS"
  for i in $chosen; do
    IFS="|" read -r rung defines <<< "${candidates[$i]}"
    # ptxas's report of this candidate's own kernels (the build holds every rung): the most
    # registers and spill bytes among the entry functions named matmul_<rung>_kernel
    regs=$(awk -v k="matmul_${rung}_kernel" '/Compiling entry function/ {mine = index($0, k) > 0}
      mine && match($0, /Used [0-9]+ registers/) {print substr($0, RSTART + 5, RLENGTH - 15)}' \
      "$out/build_$i.log" | sort -n | tail -1)
    spills=$(awk -v k="matmul_${rung}_kernel" '/Compiling entry function/ {mine = index($0, k) > 0}
      mine && match($0, /[0-9]+ bytes spill stores/) {print substr($0, RSTART, RLENGTH - 19)}' \
      "$out/build_$i.log" | sort -n | tail -1)
    row=()
    t=bf16; tf32 "$rung" && t=""
    for n in 4096 8192; do
      # shellcheck disable=SC2086
      line=$("$out/driver_$i" "$rung" $t "$n" "$n" "$n" --reps 15 "${timing[@]}" | tee -a "$out/timing.log")
      row+=("$(echo "$line" | grep -oE "[0-9.]+ TFLOP/s" | head -1 | grep -oE "^[0-9.]+")")
      row+=("$(echo "$line" | grep -oE "x[0-9.]+$" || echo -)")
    done
    printf "%-3s %-50s %5s %6s  %8s %7s  %8s %7s\n" "$i" "$rung ${defines:-(defaults)}" \
      "$regs" "$spills" "${row[@]}"
  done
} | tee "$out/tensor_core_sweep.txt"
