#!/usr/bin/env bash
# Tile sweep of the FFMA rungs (v4 vectorized, v5 warptiling, v6 pipelined, v7 lean fetch)
# next to cuBLAS, on the GPU, in one command:
#
#   bash cuda/driver/ffma_sweep.sh OUT_DIR            (about 5 minutes on the H100)
#   CVT_SWEEP_ONLY="0 7" bash cuda/driver/ffma_sweep.sh OUT_DIR    (candidates 0 and 7 only)
#
# 1. builds one standalone driver per candidate: the rung's file compiled with its
#    parameters of cuda/matmul_config.h overridden by -D, linked with the other kernels
#    built once with their defaults, and with cuBLAS (-DCVT_WITH_CUBLAS -lcublas; without
#    a cuBLAS to link, it says so and times the kernels alone). Builds run in parallel;
#    the ptxas report of each goes to OUT_DIR/build_<i>.log;
# 2. checks every candidate at odd shapes, on both paths: aligned inputs whose K and N are
#    multiples of 4 (the 128-bit path), odd K or N (the scalar path), and --misalign (A, B,
#    C one float off 16 bytes: the scalar path at shapes that would take the 128-bit one).
#    The driver poisons C and compares with a float64 CPU reference; a wrong candidate
#    stops the sweep;
# 3. times every candidate at 4096^3 and 8192^3 (median of 15 launches, L2 flushed before
#    each) next to cuBLAS fp32 (TF32 off) timed in the same process on the same inputs.
#
# One line per candidate, written to OUT_DIR/ffma_sweep.txt: registers and spills of its
# 128-bit kernel, TFLOP/s at 4096^3 and 8192^3, and x cuBLAS at each. Full driver output:
# OUT_DIR/checks.log and OUT_DIR/timing.log. The defaults in cuda/matmul_config.h are the
# best rows of this table (docs/performance/ffma_rungs.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/ffma_sweep}
mkdir -p "$out"
arch=${CVT_ARCH:-sm_90}
NVCC=(nvcc -O3 -std=c++17 "-arch=$arch" -Icuda)

# rung | -D overrides (empty: the defaults of matmul_config.h)
candidates=(
  "v4_vectorized|"
  "v4_vectorized|-DCVT_V4_S=16"
  "v4_vectorized|-DCVT_V4_L=64 -DCVT_V4_V=4 -DCVT_V4_S=16"
  "v5_warptiling|"
  "v5_warptiling|-DCVT_V5_BK=16"
  "v5_warptiling|-DCVT_V5_WM=64 -DCVT_V5_WN=32"
  "v5_warptiling|-DCVT_V5_BN=256 -DCVT_V5_WM=64 -DCVT_V5_WN=64 -DCVT_V5_TM=16"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8 -DCVT_V6_STAGES=2"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8 -DCVT_V6_STAGES=4"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8 -DCVT_V6_GROUP=1"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8 -DCVT_V6_GROUP=16"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=16 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=16 -DCVT_V6_WM=32 -DCVT_V6_WN=64 -DCVT_V6_TM=8 -DCVT_V6_TN=8 -DCVT_V6_STAGES=4"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=64 -DCVT_V6_WN=32 -DCVT_V6_TM=8 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=64 -DCVT_V6_WN=64 -DCVT_V6_TM=16 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=256 -DCVT_V6_BK=8 -DCVT_V6_WM=64 -DCVT_V6_WN=64 -DCVT_V6_TM=16 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=128 -DCVT_V6_BN=256 -DCVT_V6_BK=8 -DCVT_V6_WM=64 -DCVT_V6_WN=64 -DCVT_V6_TM=16 -DCVT_V6_TN=8 -DCVT_V6_STAGES=4"
  "v6_pipelined|-DCVT_V6_TM=16 -DCVT_V6_TN=8"
  "v6_pipelined|-DCVT_V6_BM=256 -DCVT_V6_BN=128 -DCVT_V6_BK=8 -DCVT_V6_WM=64 -DCVT_V6_WN=64 -DCVT_V6_TM=16 -DCVT_V6_TN=8"
  "v6_pipelined|"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8 -DCVT_V7_BK=8"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8 -DCVT_V7_BK=32"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8 -DCVT_V7_BK=32 -DCVT_V7_STAGES=2"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8 -DCVT_V7_STAGES=4"
  "v7_lean_fetch|-DCVT_V7_TM=16 -DCVT_V7_TN=8 -DCVT_V7_BN=128"
  "v7_lean_fetch|"
  "v7_lean_fetch|-DCVT_V7_BM=256 -DCVT_V7_BN=128"
  "v7_lean_fetch|-DCVT_V7_STAGES=4"
  "v7_lean_fetch|-DCVT_V7_BK=32 -DCVT_V7_STAGES=2"
  "v7_lean_fetch|-DCVT_V7_BK=32 -DCVT_V7_STAGES=4"
  "v7_lean_fetch|-DCVT_V7_BK=32 -DCVT_V7_STAGES=2 -DCVT_V7_BN=128"
  "v7_lean_fetch|-DCVT_V7_BK=32 -DCVT_V7_STAGES=2 -DCVT_V7_GROUP=16"
  "v7_lean_fetch|-DCVT_V7_BK=32 -DCVT_V7_STAGES=2 -DCVT_V7_BM=256 -DCVT_V7_BN=128"
)

if [ -n "${CVT_SWEEP_ONLY:-}" ]; then
  picked=()
  for i in $CVT_SWEEP_ONLY; do picked+=("${candidates[$i]}"); done
  candidates=("${picked[@]}")
fi

# --- 1. builds ---------------------------------------------------------------------------
t0=$SECONDS
cublas=(-DCVT_WITH_CUBLAS)
link_cublas=(-lcublas)
probe="$out/probe_cublas.cu"
printf '#include <cublas_v2.h>\nint main() { cublasHandle_t h; return cublasCreate(&h); }\n' > "$probe"
if ! "${NVCC[@]}" "$probe" -lcublas -o "$out/probe_cublas" > "$out/probe_cublas.log" 2>&1; then
  echo "ffma_sweep: no cuBLAS to link (see $out/probe_cublas.log): timing the kernels alone"
  cublas=(); link_cublas=()
fi
objs="$out/obj"
mkdir -p "$objs"
export out objs arch
build_default() {  # one kernel file (or the driver) with the defaults
  local src=$1 name; name=$(basename "${src%.cu}")
  nvcc -O3 -std=c++17 "-arch=$arch" -Icuda $2 -c "$src" -o "$objs/$name.o" > "$objs/$name.log" 2>&1
}
export -f build_default
{ for f in cuda/matmul_*.cu; do echo "$f|"; done; echo "cuda/driver/matmul_driver.cu|${cublas[*]}"; } \
  | xargs -P "$(nproc)" -I{} bash -c 'IFS="|" read -r f d <<< "{}"; build_default "$f" "$d"' \
  || { echo "ffma_sweep: a default build failed (logs in $objs)"; exit 1; }

build_candidate() {  # candidate i: its rung with overrides + every other default object
  local i=$1 rung=$2 defs=$3 others
  others=$(ls "$objs"/matmul_*.o | grep -v -e "/matmul_${rung}.o$" -e "/matmul_driver.o$")
  nvcc -O3 -std=c++17 "-arch=$arch" -Icuda -Xptxas -v $defs -c "cuda/matmul_${rung}.cu" \
       -o "$out/cand_$i.o" > "$out/build_$i.log" 2>&1 &&
  nvcc "-arch=$arch" "$out/cand_$i.o" $others "$objs/matmul_driver.o" $4 -o "$out/driver_$i" \
       >> "$out/build_$i.log" 2>&1
}
export -f build_candidate
for i in "${!candidates[@]}"; do
  echo "$i|${candidates[$i]}|${link_cublas[*]}"
done | xargs -P "$(nproc)" -I{} bash -c 'IFS="|" read -r i r d l <<< "{}"; build_candidate "$i" "$r" "$d" "$l"' \
  || { echo "ffma_sweep: a candidate failed to build (see $out/build_*.log)"; exit 1; }
echo "ffma_sweep: built ${#candidates[@]} candidates in $((SECONDS - t0)) s"

# registers and spills of the 128-bit instantiation (template argument W = 4, last)
resources() {
  awk '/Compiling entry function/ { want = ($0 ~ /Li4EEEvPKf/) }
       want && /spill stores/ { split($0, a, " "); spill = a[5] "+" a[9] }
       want && /Used [0-9]+ registers/ { match($0, /Used [0-9]+/); regs = substr($0, RSTART + 5, RLENGTH - 5) }
       END { printf "%s regs, spill %s B", regs, spill }' "$1"
}

# --- 2. correctness at odd shapes, both paths ----------------------------------------------
scalar_shapes="1 1 1  17 13 7  127 129 31  1000 999 37  4097 4095 33"
vector_shapes="1 4 4  131 132 36  1000 1000 40  4097 4092 36  128 128 8"
: > "$out/checks.log"
for i in "${!candidates[@]}"; do
  rung=${candidates[$i]%%|*}
  for run in "$scalar_shapes" "$vector_shapes" "$vector_shapes --misalign"; do
    if ! "$out/driver_$i" "$rung" $run --reps 0 >> "$out/checks.log" 2>&1; then
      echo "WRONG RESULT: candidate $i (${candidates[$i]}) at: $run (see $out/checks.log)"
      exit 1
    fi
  done
done
echo "ffma_sweep: every candidate right at odd shapes, both paths ($((SECONDS - t0)) s)"

# --- 3. timing next to cuBLAS ---------------------------------------------------------------
cublas_flag=(); [ ${#cublas[@]} -gt 0 ] && cublas_flag=(--cublas)
: > "$out/timing.log"
{
  printf "%-3s %-14s %-62s %-26s %9s %9s %8s %9s %9s %8s\n" "#" rung overrides "128-bit kernel" \
         "4096 TF/s" "cuBLAS" "x cuBLAS" "8192 TF/s" "cuBLAS" "x cuBLAS"
  for i in "${!candidates[@]}"; do
    rung=${candidates[$i]%%|*}; defs=${candidates[$i]#*|}
    lines=$("$out/driver_$i" "$rung" 4096 4096 4096 8192 8192 8192 --reps 15 "${cublas_flag[@]}" \
            | tee -a "$out/timing.log")
    case "$lines" in *WRONG*) echo "WRONG RESULT: candidate $i ($rung $defs)"; exit 1;; esac
    row=()
    while read -r line; do
      tf=$(grep -oE '[0-9.]+ TFLOP/s \(fp32\)' <<< "$line" | cut -d' ' -f1)
      cb=$(grep -oE 'cublas +[0-9.]+' <<< "$line" | awk '{print $2}')
      x=$(grep -oE 'x[0-9.]+$' <<< "$line" | tr -d x)
      row+=("$tf" "${cb:--}" "${x:--}")
    done <<< "$lines"
    printf "%-3s %-14s %-62s %-26s %9s %9s %8s %9s %9s %8s\n" "$i" "$rung" "${defs:-(defaults)}" \
           "$(resources "$out/build_$i.log")" "${row[@]}"
  done
} | tee "$out/ffma_sweep.txt"
echo "ffma_sweep: done in $((SECONDS - t0)) s; table in $out/ffma_sweep.txt"
