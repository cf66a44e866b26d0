// GPU matmul t2, the second tensor-core rung: warpgroup wgmma reading shared memory that
// TMA filled, synchronised with mbarriers (Hopper, sm_90a).
//
//   idea      t1 spends 2.4 warp instructions per mma feeding the tensor core: every
//             operand goes through registers (ldmatrix), each warp issues its own 16 x 8
//             pieces, every thread copies its share of each tile. Hopper moves both jobs
//             off the threads. wgmma lets a warpgroup (4 warps) multiply a 64 x BN x 16
//             piece in ONE instruction whose operands the tensor core reads straight from
//             shared memory through two descriptors (cuda/hopper.cuh). TMA copies a whole
//             2-D box from global to shared memory in one instruction of one thread,
//             swizzled on the way and zero-filled outside the matrix; the copy counts its
//             bytes on an mbarrier, and the warpgroups wait on the barrier's phase.
//   change    from t1: TMA instead of cp.async (thread 0 issues each stage's 1 + BN/64
//             box copies); wgmma m64nBNk16 instead of ldmatrix + mma.sync (per 64-deep
//             k tile each of the 2 warpgroups issues 4 wgmma as one group, and keeps one
//             group running while it waits for the next tile); shared memory in TMA's
//             128-byte swizzle, which wgmma reads through its descriptors; a stage is free
//             again after wgmma_wait<1> and one block barrier. Kept: the ring of stages
//             and the grouped block order. Not yet (t3): a producer warpgroup of its own,
//             a persistent grid, clusters, a TMA store.
//   banks     TMA writes and wgmma reads the 128-byte swizzle (piece p of row r at
//             p ^ (r % 8)) without conflicts; the epilogue stores C from registers.
//   traffic   M, N, K any (on this path: K % 8 == 0, N % 8 == 0); block tile BM x BN,
//             k padded to a multiple of BK by TMA's zero fill.
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (TMA boxes: one
//                             instruction per box, no per-value instruction)
//               shared reads  by the tensor core: per k16 step each warpgroup reads its
//                             64 x 16 of A and the whole 16 x BN of B:
//                             ceil(M/BM)*ceil(N/BN) * (BM + (BM/64)*BN) * 16*ceil(K/16)
//                             values ~ N^3/BN + N^3/64
//               global stores M*N
//               multiply-adds ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//   precond.  A, B, C fp16 or bf16 (all the same), row-major contiguous; float32
//             accumulation, output rounded to nearest. This kernel runs when TMA can
//             describe A and B: pointers 16-byte aligned, K and N multiples of 8, K >= 1.
//             Where they are not, the op stages A and B into zero-padded, aligned buffers
//             (K and N rounded up to 8; C's first N columns copied out) when the product is
//             compute-bound, 2MNK >= 64 FLOP per compulsory byte (bindings/matmul_ops.cpp,
//             "Staging for the TMA rungs"), and runs this kernel on them; below that the
//             launcher runs t1's kernel, which takes any input; K = 0 writes zeros. Tiles of C <= 2^31 - 1
//             (one block each on grid x: cudaErrorInvalidConfiguration past it). Needs compute
//             capability 9.0 and a build for sm_90a (cudaErrorNotSupported otherwise).
//   params    BN, STAGES, GROUP = CVT_T2_* (matmul_config.h); BM = 128 (2 warpgroups of
//             64 rows) and BK = 64 (one 128-byte swizzle row) are fixed. With the defaults
//             256 threads, STAGES * (BM + BN) * BK * 2 bytes of shared memory, one block
//             per SM.
//   run       python -m bench check --kernels cuda_t2* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <class T, int BN, int STAGES, int GROUP>
__global__ void __launch_bounds__(256, 1)
matmul_t2_wgmma_tma_kernel(const __grid_constant__ CUtensorMap a_map,
                           const __grid_constant__ CUtensorMap b_map, T* __restrict__ C, int M,
                           int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64;
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOX = BK * 64;                        // one TMA box of B: 64 k x 64 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);

  // The ring: STAGES tiles of A (sA[s][m][k], rows of 128 bytes), then STAGES tiles of B,
  // each BN/64 boxes sB[s][box][k][64 n]; the swizzle repeats every 1024 bytes, so each
  // tile starts on a 1024-byte boundary. full[s] completes when stage s has landed.
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);

  // v6's grouped order on a 1-D grid (as t1).
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, BM);
  const int64_t b = blockIdx.x;
  const int64_t first = b / (GROUP * tiles_n) * GROUP;
  const int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
  const int m0 = static_cast<int>((first + (b % (GROUP * tiles_n)) % rows) * BM);
  const int n0 = static_cast<int>((b % (GROUP * tiles_n)) / rows * BN);

  const int tid = threadIdx.x, group = tid / 128;  // warpgroup 0: rows 0-63, 1: rows 64-127
  const int tiles = static_cast<int>(ceil_div(K, BK));

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s], 1);  // thread 0's arrival
    mbarrier_init_fence();
  }
  __syncthreads();

  // Thread 0 copies k tile t into stage t % STAGES: A's BM x 64 box, B's BN/64 boxes.
  const auto fetch = [&](int t) {
    const int s = t % STAGES;
    mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
    tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], t * BK, m0);
#pragma unroll
    for (int box = 0; box < BN / 64; ++box)
      tma_load_2d(sB + s * B_STAGE + box * B_BOX, &b_map, &full[s], n0 + box * 64, t * BK);
  };
  if (tid == 0)
    for (int t = 0; t < STAGES - 1 && t < tiles; ++t) fetch(t);

  float d[BN / 2] = {};  // this warpgroup's 64 x BN of C (layout: wgmma_m64nNk16)
  for (int t = 0; t < tiles; ++t) {
    const int s = t % STAGES;
    mbarrier_wait(&full[s], (t / STAGES) & 1);
    // A: this warpgroup's 64 rows; k16 step kk starts 32 bytes further into each row.
    // B: k16 step kk starts 16 k-rows (2048 bytes) further; the next 64 n are a box away.
    const T* const a = sA + s * A_STAGE + group * 64 * BK;
    const T* const bt = sB + s * B_STAGE;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      wgmma_m64nNk16<BN, T>(d, wgmma_descriptor(a + kk * 16, 16, 1024),
                            wgmma_descriptor(bt + kk * 16 * 64, B_BOX * sizeof(T), 1024));
    wgmma_commit();
    wgmma_wait<1>();  // tile t - 1's group has finished reading its stage ...
    __syncthreads();  // ... in both warpgroups: stage (t - 1) % STAGES is free
    if (tid == 0 && t + STAGES - 1 < tiles) fetch(t + STAGES - 1);
  }
  wgmma_wait<0>();

  // Thread (warp w, lane 4 g + q) of the warpgroup holds rows 16 w + g and 16 w + g + 8,
  // columns 8 j + 2 q and 8 j + 2 q + 1, in d[4 j .. 4 j + 3]. N % 8 == 0: a pair is
  // inside C or outside it, and 4-byte aligned.
  const int lane = tid % 32, warp = (tid % 128) / 32;
  const int g = lane / 4, q = lane % 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = m0 + group * 64 + warp * 16 + g + 8 * h;
      const int64_t col = n0 + j * 8 + 2 * q;
      if (row < M && col < N)
        *reinterpret_cast<unsigned*>(&C[row * N + col]) =
            pack_pair<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T>
static cudaError_t launch_t2(const void* A, const void* B, void* C, int64_t M, int64_t N,
                             int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T2_BM, BK = CVT_T2_BK, BN = CVT_T2_BN, STAGES = CVT_T2_STAGES;
  static_assert(BN == 128 || BN == 256, "CVT_T2_BN: the wgmma shapes of cuda/hopper.cuh");
  static_assert(BK == 64, "CVT_T2_BK: one 128-byte swizzle row of k per tile");
  static_assert(BM == 128, "CVT_T2_BM: the kernel is written for two warpgroups of 64 rows");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) || !tensor_map_16bit(&b_map, B, K, N, BK, bf16))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  const auto kernel = matmul_t2_wgmma_tma_kernel<T, BN, STAGES, CVT_T2_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 8;
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  const int64_t blocks = ceil_div(M, BM) * ceil_div(N, BN);
  if (blocks > kMaxGridX) return cudaErrorInvalidConfiguration;  // one block per tile, on x
  kernel<<<static_cast<unsigned>(blocks), 256, smem, stream>>>(
      a_map, b_map, static_cast<T*>(C), static_cast<int>(M), static_cast<int>(N),
      static_cast<int>(K));
  return cudaGetLastError();
}

cudaError_t launch_matmul_t2_wgmma_tma(const void* A, const void* B, void* C, int64_t M,
                                       int64_t N, int64_t K, TensorCoreType type,
                                       cudaStream_t stream) {
  return launch_tma_rung(launch_t2<__nv_bfloat16>, launch_t2<__half>, A, B, C, M, N, K, type,
                         stream);  // see "precond."
}

}  // namespace cvt
