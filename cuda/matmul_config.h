// The versions of the matmul ladder and their tile parameters: the single source of truth.
//
// Every value is a compile-time constant. bindings/config.py reads this file (it is its
// one Python reader) for the traffic models, the Triton twins and the fake kernels, so
// change a value here and the kernel, its twin and its model follow. Each value can be
// overridden on the compiler command line (-DCVT_V3_L=64 ...), which is how the standalone
// driver sweeps candidates on the GPU: cuda/driver/tile_sweep.sh builds one driver per
// candidate that way (CMake takes the same overrides: -DCVT_TILE_DEFINES="CVT_V3_L=64").
//
// Defaults were chosen by measuring candidates on the H100 (docs/performance/ladder.md,
// "Tile sweep: how the defaults were chosen").
// v3 keeps S = 8: S = 16 ran as fast (31.5 vs 31.2 TFLOP/s at 4096^3) but its wider
// cooperative fetch needs more than the 128 registers a thread may use, and spills.
#pragma once

// The versions, in ladder order: one X(version) each, the one list of them. X(v3_smem_tiling)
// is the torch op cvt::matmul_v3_smem_tiling, its launcher cvt::launch_matmul_v3_smem_tiling
// and its kernel file cuda/matmul_v3_smem_tiling.cu. The list is expanded by cuda/launchers.h
// (the launchers' declarations), bindings/matmul_ops.cpp (the ops' schemas, wrappers and
// registrations) and cuda/driver/matmul_driver.cu (its table: `matmul_driver v3_smem_tiling`),
// and parsed by bindings/config.py (MATMUL_OPS). X(split_k_fp32) is a path beside the rungs
// with the same contract: v7's k loop shared out over the whole grid for products of few tiles
// (cuda/matmul_split_k_fp32.cu), as X(split_k) beside the tensor-core rungs.
#define CVT_MATMUL_OPS(X)  \
  X(v1_naive)              \
  X(v1_coalesced)          \
  X(v1_5_thread_tiling)    \
  X(v2_register_tiling)    \
  X(v3_smem_tiling)        \
  X(v4_vectorized)         \
  X(v5_warptiling)         \
  X(v6_pipelined)          \
  X(v7_lean_fetch)         \
  X(v8_split_k)            \
  X(split_k_fp32)

// The tensor-core rungs (fp16 and bf16 in and out, float32 accumulation): the same roles as
// CVT_MATMUL_OPS for ops whose launcher takes untyped pointers and the element type
// (cvt::TensorCoreMatmulLauncher, cuda/launchers.h). X(t1_mma_sync) is the op
// cvt::matmul_t1_mma_sync and cuda/matmul_t1_mma_sync.cu; bindings/config.py parses the list
// (TENSOR_CORE_OPS). X(split_k) is a path beside the rungs with the same contract: the k loop
// shared out over the grid for products of few tiles (cuda/matmul_split_k.cu).
#define CVT_TENSOR_CORE_OPS(X) \
  X(t1_mma_sync)               \
  X(t2_wgmma_tma)              \
  X(t2_1_producer_consumer)    \
  X(t2_2_register_split)       \
  X(t2_3_persistent)           \
  X(t2_4_multicast)            \
  X(t3_warp_specialized)       \
  X(t5_stream_k)               \
  X(split_k)

// The tensor-core rungs at tf32: float32 in and out, each a MatmulLauncher (the FFMA
// ladder's contract) that multiplies on tensor cores. X(t4_tf32) is the op cvt::matmul_t4_tf32
// and cuda/matmul_t4_tf32.cu; bindings/config.py parses the list (TF32_OPS). X(split_k_tf32)
// is a path beside the rungs with the same contract (cuda/matmul_split_k_tf32.cu).
#define CVT_TF32_OPS(X) \
  X(t4_tf32)              \
  X(split_k_tf32)

// The TMA rungs (t2 to t5) stage unaligned operands into padded buffers where the product
// has at least this many FLOPs per compulsory byte (bindings/matmul_ops.cpp says why). Fixed
// here, as the split_k and skinny values below: no sweep overrides them, and the models and
// cuda_auto read them from this file (bindings/config.py).
#define CVT_STAGE_MIN_FLOPS_PER_BYTE 64

// Paths beside the ladder: not rungs of it (no traffic model), ops a dispatcher
// calls for the shapes each is for. X(skinny) is the op cvt::matmul_skinny (M <= 16 or
// N <= 16; float32, float16 or bfloat16), its launcher cvt::launch_matmul_skinny
// (cvt::SkinnyMatmulLauncher, cuda/launchers.h) and its kernel file cuda/matmul_skinny.cu;
// bindings/config.py parses the list (SKINNY_OPS).
#define CVT_SKINNY_OPS(X) \
  X(skinny)

// v1 naive and v1 coalesced: a square block of CVT_V1_BLOCK x CVT_V1_BLOCK threads.
#ifndef CVT_V1_BLOCK
#define CVT_V1_BLOCK 32
#endif

// v1.5 thread tiling: each thread computes a V x V block of C; blocks of T x T threads.
#ifndef CVT_V1_5_V
#define CVT_V1_5_V 4
#endif
#ifndef CVT_V1_5_T
#define CVT_V1_5_T 16
#endif

// v2 register tiling: V x V accumulators per thread; blocks of T x T threads.
#ifndef CVT_V2_V
#define CVT_V2_V 4
#endif
#ifndef CVT_V2_T
#define CVT_V2_T 16
#endif

// v3 shared-memory + register tiling: a block computes an L x L tile of C, stages
// S x L tiles of A and B in shared memory, and each of its (L/V)^2 threads computes V x V.
#ifndef CVT_V3_L
#define CVT_V3_L 128
#endif
#ifndef CVT_V3_S
#define CVT_V3_S 8
#endif
#ifndef CVT_V3_V
#define CVT_V3_V 8
#endif

// Past the lecture: the FFMA rungs (docs/performance/ffma_rungs.md has the napkin math of
// each; cuda/driver/ffma_sweep.sh measures candidates next to cuBLAS).

// v4 vectorized: v3's tiles with 128-bit loads and stores and a conflict-free layout.
#ifndef CVT_V4_L
#define CVT_V4_L 128
#endif
#ifndef CVT_V4_S
#define CVT_V4_S 8
#endif
#ifndef CVT_V4_V
#define CVT_V4_V 8
#endif

// v5 warptiling: BM x BN block tile, BK deep; WM x WN warp tiles; TM x TN per thread.
#ifndef CVT_V5_BM
#define CVT_V5_BM 128
#endif
#ifndef CVT_V5_BN
#define CVT_V5_BN 128
#endif
#ifndef CVT_V5_BK
#define CVT_V5_BK 8
#endif
#ifndef CVT_V5_WM
#define CVT_V5_WM 32
#endif
#ifndef CVT_V5_WN
#define CVT_V5_WN 64
#endif
#ifndef CVT_V5_TM
#define CVT_V5_TM 8
#endif
#ifndef CVT_V5_TN
#define CVT_V5_TN 8
#endif

// v6 pipelined: STAGES shared-memory buffers filled by cp.async, and GROUP block rows per
// group of the L2-friendly block order. Tiles chosen by the FFMA sweep
// (cuda/driver/ffma_sweep.sh, docs/performance/ffma_rungs.md): 128 x 256 x 16 block tiles,
// 64 x 64 warp tiles, 8 x 16 outputs per thread, 3 stages.
#ifndef CVT_V6_BM
#define CVT_V6_BM 128
#endif
#ifndef CVT_V6_BN
#define CVT_V6_BN 256
#endif
#ifndef CVT_V6_BK
#define CVT_V6_BK 16
#endif
#ifndef CVT_V6_WM
#define CVT_V6_WM 64
#endif
#ifndef CVT_V6_WN
#define CVT_V6_WN 64
#endif
#ifndef CVT_V6_TM
#define CVT_V6_TM 8
#endif
#ifndef CVT_V6_TN
#define CVT_V6_TN 16
#endif
#ifndef CVT_V6_STAGES
#define CVT_V6_STAGES 3
#endif
#ifndef CVT_V6_GROUP
#define CVT_V6_GROUP 8
#endif

// v7 lean fetch: v6 with a mask-free fetch of interior tiles. The sweep's best tiles
// (cuda/driver/ffma_sweep.sh) are v6's.
#ifndef CVT_V7_BM
#define CVT_V7_BM 128
#endif
#ifndef CVT_V7_BN
#define CVT_V7_BN 256
#endif
#ifndef CVT_V7_BK
#define CVT_V7_BK 16
#endif
#ifndef CVT_V7_WM
#define CVT_V7_WM 64
#endif
#ifndef CVT_V7_WN
#define CVT_V7_WN 64
#endif
#ifndef CVT_V7_TM
#define CVT_V7_TM 8
#endif
#ifndef CVT_V7_TN
#define CVT_V7_TN 16
#endif
#ifndef CVT_V7_STAGES
#define CVT_V7_STAGES 3
#endif
#ifndef CVT_V7_GROUP
#define CVT_V7_GROUP 8
#endif

// v8 split K: v7's tiles; a tile's k loop split over up to MAX_SPLITS blocks of a cluster
// (8: the portable cluster size) when the tiles leave SMs idle, each split at least
// MIN_SPLIT_TILES k tiles deep (4: 64 values of k, so the pipeline's prologue and the
// reduction stay small beside a split's loop).
#ifndef CVT_V8_BM
#define CVT_V8_BM 128
#endif
#ifndef CVT_V8_BN
#define CVT_V8_BN 256
#endif
#ifndef CVT_V8_BK
#define CVT_V8_BK 16
#endif
#ifndef CVT_V8_WM
#define CVT_V8_WM 64
#endif
#ifndef CVT_V8_WN
#define CVT_V8_WN 64
#endif
#ifndef CVT_V8_TM
#define CVT_V8_TM 8
#endif
#ifndef CVT_V8_TN
#define CVT_V8_TN 16
#endif
#ifndef CVT_V8_STAGES
#define CVT_V8_STAGES 3
#endif
#ifndef CVT_V8_GROUP
#define CVT_V8_GROUP 8
#endif
#ifndef CVT_V8_MAX_SPLITS
#define CVT_V8_MAX_SPLITS 8
#endif
#ifndef CVT_V8_MIN_SPLIT_TILES
#define CVT_V8_MIN_SPLIT_TILES 4
#endif

// split_k_fp32, the fp32 path for few tiles (cuda/matmul_split_k_fp32.cu): v7's tile and ring,
// the k tiles of every tile shared out over grid z in runs of at least MIN_RUN k tiles, the
// float32 partials summed by split_k.cuh's kernels. Plain defines, as split_k's.
#define CVT_SPLIT_K_FP32_BM 128
#define CVT_SPLIT_K_FP32_BN 256
#define CVT_SPLIT_K_FP32_BK 16
#define CVT_SPLIT_K_FP32_WM 64
#define CVT_SPLIT_K_FP32_WN 64
#define CVT_SPLIT_K_FP32_TM 8
#define CVT_SPLIT_K_FP32_TN 16
#define CVT_SPLIT_K_FP32_STAGES 3
#define CVT_SPLIT_K_FP32_MIN_RUN 4
// Where C has at most NARROW_BN columns the tile is NARROW_BN wide (the same warp tile, half
// the warps), and NARROW_BLOCKS of it fit on an SM (its registers; bindings/auto.py counts
// with them, tests/cpu/test_ffma_rungs.py checks them).
#define CVT_SPLIT_K_FP32_NARROW_BN 128
#define CVT_SPLIT_K_FP32_NARROW_BLOCKS 2

// t1 mma.sync: a 128 x 128 block tile of 4 warps, each a 64 x 64 piece (4 x 8 mma tiles of
// 16 x 8, 128 float accumulators per thread), k tiles of 32 in a ring of 4 cp.async stages
// (64 KiB of shared memory; two blocks per SM), v6's grouped block order. Chosen by
// cuda/driver/tensor_core_sweep.sh (docs/performance/tensor_cores.md).
#ifndef CVT_T1_BM
#define CVT_T1_BM 128
#endif
#ifndef CVT_T1_BN
#define CVT_T1_BN 128
#endif
#ifndef CVT_T1_BK
#define CVT_T1_BK 32
#endif
#ifndef CVT_T1_WM
#define CVT_T1_WM 64
#endif
#ifndef CVT_T1_WN
#define CVT_T1_WN 64
#endif
#ifndef CVT_T1_STAGES
#define CVT_T1_STAGES 4
#endif
#ifndef CVT_T1_GROUP
#define CVT_T1_GROUP 8
#endif

// t2 wgmma + TMA: a 128 x CVT_T2_BN block tile of 2 warpgroups (64 rows each, one
// m64nBNk16 wgmma per 16 of k), k tiles of 64 in a ring of CVT_T2_STAGES TMA stages
// (STAGES * (128 + BN) * 64 * 2 bytes of shared memory), v6's grouped block order.
// BM and BK are not choices: two warpgroups of 64 rows (wgmma's m64), and k tiles of one
// 128-byte swizzle row; they are here for the models.
#define CVT_T2_BM 128
#define CVT_T2_BK 64
#ifndef CVT_T2_BN
#define CVT_T2_BN 256
#endif
#ifndef CVT_T2_STAGES
#define CVT_T2_STAGES 4
#endif
#ifndef CVT_T2_GROUP
#define CVT_T2_GROUP 8
#endif

// t3 warp-specialized, persistent: a producer warpgroup (TMA) and 2 consumer warpgroups
// (wgmma, 64 x CVT_T3_BN each) per block; clusters of CVT_T3_CLUSTER blocks along m share
// each B tile by TMA multicast; a persistent grid walks the tiles in v6's grouped order
// (CVT_T3_GROUP rows of clusters); the epilogue stores C through shared memory with TMA.
// BM and BK: two consumer warpgroups of 64 rows, k tiles of 64, as t2 (fixed).
#define CVT_T3_BM 128
#define CVT_T3_BK 64
#ifndef CVT_T3_BN
#define CVT_T3_BN 256
#endif
#ifndef CVT_T3_STAGES
#define CVT_T3_STAGES 4
#endif
#ifndef CVT_T3_CLUSTER
#define CVT_T3_CLUSTER 2
#endif
#ifndef CVT_T3_GROUP
#define CVT_T3_GROUP 8
#endif

// t5 stream-K: t3's kernel and tiles; the persistent grid's last, partial round of tiles is
// spread along k in equal runs, one per cluster (runs of at least k_tiles / CVT_T5_MAX_SPLIT
// and CVT_T5_MIN_RUN k tiles), where that shortens the last round by at least
// CVT_T5_MIN_GAIN k tiles; helpers hand partial sums to the tile's owner through
// global memory.
#define CVT_T5_BM 128
#define CVT_T5_BK 64
#ifndef CVT_T5_BN
#define CVT_T5_BN 256
#endif
#ifndef CVT_T5_STAGES
#define CVT_T5_STAGES 4
#endif
#ifndef CVT_T5_CLUSTER
#define CVT_T5_CLUSTER 2
#endif
#ifndef CVT_T5_GROUP
#define CVT_T5_GROUP 8
#endif
#ifndef CVT_T5_MAX_SPLIT
#define CVT_T5_MAX_SPLIT 4
#endif
#ifndef CVT_T5_MIN_RUN
#define CVT_T5_MIN_RUN 4
#endif
#ifndef CVT_T5_MIN_GAIN
#define CVT_T5_MIN_GAIN 16
#endif

// split_k, the path for few tiles: t2's 128 x CVT_SPLIT_K_BN block tile and ring of
// CVT_SPLIT_K_STAGES TMA stages, the k tiles of every tile shared out over grid y in runs
// of at least CVT_SPLIT_K_MIN_RUN k tiles (cuda/matmul_split_k.cu, "splits"), the float32
// partial tiles summed in split order by a second kernel. BM and BK are t2's (fixed).
#define CVT_SPLIT_K_BM 128
// where M <= SHORT_BM: a SHORT_BM x BN tile, one warpgroup, SHORT_BLOCKS blocks per SM
#define CVT_SPLIT_K_SHORT_BM 64
#define CVT_SPLIT_K_SHORT_BLOCKS 2
#define CVT_SPLIT_K_BK 64
#define CVT_SPLIT_K_BN 128
#define CVT_SPLIT_K_STAGES 4
#define CVT_SPLIT_K_MIN_RUN 4

// split_k_tf32, the path for few tiles at tf32: t4's 256 x 128 block tile and C^T = B^T A^T
// on t2's loop (no producer warpgroup, no cluster), a ring of CVT_SPLIT_K_TF32_STAGES TMA
// stages, the k tiles shared out over grid y in runs of at least CVT_SPLIT_K_TF32_MIN_RUN
// (cuda/matmul_split_k_tf32.cu). BM, BN, BK are t4's (fixed).
#define CVT_SPLIT_K_TF32_BM 256
#define CVT_SPLIT_K_TF32_BN 128
#define CVT_SPLIT_K_TF32_BK 32
#define CVT_SPLIT_K_TF32_STAGES 4
#define CVT_SPLIT_K_TF32_MIN_RUN 8

// t4 tf32: t3's machinery on float32 inputs, computing C^T = B^T A^T (wgmma reads 32-bit
// operands from shared memory only K-major, so B^T comes from registers): a block tile of
// 256 rows of C (the wgmma's n) by 128 columns (2 consumer warpgroups of 64), k tiles of 32
// floats (one 128-byte row), clusters of CVT_T4_CLUSTER blocks along n sharing each A tile by
// TMA multicast, a persistent grid in grouped order (CVT_T4_GROUP). BM, BN, BK fixed.
#define CVT_T4_BM 256
#define CVT_T4_BN 128
#define CVT_T4_BK 32
#ifndef CVT_T4_STAGES
#define CVT_T4_STAGES 4
#endif
#ifndef CVT_T4_CLUSTER
#define CVT_T4_CLUSTER 2
#endif
#ifndef CVT_T4_GROUP
#define CVT_T4_GROUP 8
#endif

// skinny (a path beside the ladder, cuda/matmul_skinny.cu): blocks of THREADS threads; M
// small: each thread 16 bytes of consecutive columns of B, A staged KC values of k at a time;
// N small: each warp ROWS_PER_WARP rows of A, its lanes along k. The small dimension padded to
// the next of 1, 2, 4, 8, 16 (MAX_R). K split so that the grid has about BLOCKS_PER_SM blocks
// per SM, at most MAX_SPLITS splits, and the partial sums' round trip at most
// 1/PARTIAL_SHARE of the big operand's bytes.
#define CVT_SKINNY_THREADS 128
#define CVT_SKINNY_KC 64
#define CVT_SKINNY_MAX_R 16
#define CVT_SKINNY_ROWS_PER_WARP 4
#define CVT_SKINNY_BLOCKS_PER_SM 8
#define CVT_SKINNY_PARTIAL_SHARE 4
#define CVT_SKINNY_MAX_SPLITS 256
