#!/usr/bin/env bash
# Tile-parameter sweep of the ladder on the GPU: builds one standalone driver per
# candidate (the parameters of cuda/matmul_config.h overridden with -D), runs the
# version it concerns at 2048^3 and 4096^3 and prints the median TFLOP/s of each.
# The defaults in cuda/matmul_config.h were chosen from this table
# (docs/performance/ladder.md, "Tile sweep: how the defaults were chosen").
# The FFMA rungs (v4-v7) have their own sweep, timed next to cuBLAS: cuda/driver/ffma_sweep.sh.
#
#   bash cuda/driver/tile_sweep.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/tile_sweep}
mkdir -p "$out"

# version | -D overrides
candidates=(
  "v1_5_thread_tiling|-DCVT_V1_5_V=2"
  "v1_5_thread_tiling|-DCVT_V1_5_V=4"
  "v2_register_tiling|-DCVT_V2_V=2"
  "v2_register_tiling|-DCVT_V2_V=4"
  "v2_register_tiling|-DCVT_V2_V=8"
  "v3_smem_tiling|-DCVT_V3_L=64 -DCVT_V3_S=8 -DCVT_V3_V=4"
  "v3_smem_tiling|-DCVT_V3_L=64 -DCVT_V3_S=16 -DCVT_V3_V=4"
  "v3_smem_tiling|-DCVT_V3_L=64 -DCVT_V3_S=8 -DCVT_V3_V=8"
  "v3_smem_tiling|-DCVT_V3_L=128 -DCVT_V3_S=8 -DCVT_V3_V=4"
  "v3_smem_tiling|-DCVT_V3_L=128 -DCVT_V3_S=8 -DCVT_V3_V=8"
  "v3_smem_tiling|-DCVT_V3_L=128 -DCVT_V3_S=16 -DCVT_V3_V=8"
  "v3_smem_tiling|-DCVT_V3_L=128 -DCVT_V3_S=32 -DCVT_V3_V=8"
)

build_one() {
  local i=$1 defs=$2
  nvcc -O3 -std=c++17 -arch=sm_90 -Icuda $defs cuda/*.cu cuda/driver/matmul_driver.cu \
       -o "$out/driver_$i" 2> "$out/build_$i.log"
}
export -f build_one; export out
for i in "${!candidates[@]}"; do
  echo "$i|${candidates[$i]#*|}"
done | xargs -P "$(nproc)" -I{} bash -c 'IFS="|" read -r i d <<< "{}"; build_one "$i" "$d"'

printf "%-20s %-40s %12s %12s\n" version overrides "2048^3 TF/s" "4096^3 TF/s"
for i in "${!candidates[@]}"; do
  version=${candidates[$i]%%|*}; defs=${candidates[$i]#*|}
  row=()
  for n in 2048 4096; do
    line=$("$out/driver_$i" "$version" $n $n $n --reps 15 | tee -a "$out/runs.log")
    case "$line" in *WRONG*) echo "WRONG RESULT: $version $defs: $line"; exit 1;; esac
    row+=("$(grep -oE '[0-9.]+ TFLOP/s' <<< "$line" | cut -d' ' -f1)")
  done
  printf "%-20s %-40s %12s %12s\n" "$version" "$defs" "${row[0]}" "${row[1]}"
done | tee "$out/sweep.txt"
