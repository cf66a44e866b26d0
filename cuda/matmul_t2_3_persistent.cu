// GPU matmul t2.3, the third of t3's ideas: a persistent grid. t2.2's kernel, but each
// block stays resident and walks tiles of C instead of computing one (Hopper, sm_90a).
//
//   idea      with one block per tile, each block pays its prologue (barriers, the first
//             STAGES - 1 copies in flight before the first wgmma) and its epilogue (64 x BN
//             values per consumer stored from registers while the tensor core idles) alone,
//             and a new block can start only where an old one has left. A persistent grid
//             launches as many blocks as fit at once (one per SM here) and each walks the
//             tiles u = blockIdx.x, blockIdx.x + gridDim.x, ... in the grouped order. Since
//             the ring of stages outlives a tile, the producer fetches the next tile's first
//             k tiles while the consumers are still storing the last one.
//   change    from t2.2: a loop over tiles around the k loop; the ring's counter `it` runs
//             over all the block's k tiles (its stage and phase: it % STAGES and
//             (it / STAGES) & 1), and each consumer warp releases the last stage of every
//             tile; the grid is launch_persistent_clusters' with clusters of one block.
//             Kept: t2's tiles, barriers and register split as t2.2, t2's epilogue from
//             registers. Not yet: clusters and multicast (t2.4), a TMA store (t3).
//   banks     as t2.
//   traffic   as t2 (the same tiles, each computed once).
//   precond.  as t2.
//   params    BN, STAGES, GROUP = CVT_T2_* (matmul_config.h); BM = 128, BK = 64; 384
//             threads, shared memory as t2.1, one block per SM.
//   run       python -m bench check --kernels cuda_t2.3* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <class T, int BN, int STAGES, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t2_3_persistent_kernel(const __grid_constant__ CUtensorMap a_map,
                              const __grid_constant__ CUtensorMap b_map, T* __restrict__ C,
                              int M, int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64;
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOX = BK * 64;                        // one TMA box of B: 64 k x 64 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;

  extern __shared__ unsigned char smem_raw[];  // as t2.2
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);
  uint64_t* const empty = full + STAGES;

  // The tiles of C in t2's grouped order; this block takes u = blockIdx.x, + gridDim.x, ...
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, BM);
  const int64_t tiles = tiles_m * tiles_n;
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {
    int64_t row, col;
    grouped_tile<GROUP>(u, tiles_m, tiles_n, row, col);
    m0 = static_cast<int>(row * BM);
    n0 = static_cast<int>(col * BN);
  };

  const int tid = threadIdx.x, group = tid / 128;  // 0: producer; 1, 2: consumers
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  if (group == 0) {
    // ---------------------------------------------------------------- the producer
    warpgroup_registers_decrease<40>();
    if (tid == 0) {
      int64_t it = 0;  // k tiles fetched so far, over all of this block's tiles
      for (int64_t u = blockIdx.x; u < tiles; u += gridDim.x) {
        int m0, n0;
        tile_origin(u, m0, n0);
        for (int t = 0; t < k_tiles; ++t, ++it) {
          const int s = static_cast<int>(it % STAGES);
          mbarrier_wait(&empty[s], static_cast<unsigned>((it / STAGES) & 1) ^ 1);
          mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
          tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], t * BK, m0);
#pragma unroll
          for (int box = 0; box < BN / 64; ++box)
            tma_load_2d(sB + s * B_STAGE + box * B_BOX, &b_map, &full[s], n0 + box * 64, t * BK);
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- the consumers
    warpgroup_registers_increase<232>();
    const int consumer = group - 1;  // rows 64 * consumer .. of the block tile
    const int lane = tid % 32, warp = (tid % 128) / 32;
    const int g = lane / 4, q = lane % 4;
    int64_t it = 0;
    for (int64_t u = blockIdx.x; u < tiles; u += gridDim.x) {
      int m0, n0;
      tile_origin(u, m0, n0);
      float d[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
      for (int t = 0; t < k_tiles; ++t, ++it) {
        const int s = static_cast<int>(it % STAGES);
        mbarrier_wait(&full[s], static_cast<unsigned>((it / STAGES) & 1));
        const T* const a = sA + s * A_STAGE + consumer * 64 * BK;
        const T* const bt = sB + s * B_STAGE;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          wgmma_m64nNk16<BN, T>(d, wgmma_descriptor(a + kk * 16, 16, 1024),
                                wgmma_descriptor(bt + kk * 16 * 64, B_BOX * sizeof(T), 1024));
        wgmma_commit();
        wgmma_wait<1>();  // k tile it - 1's group is done: release its stage
        if (t > 0 && lane == 0) mbarrier_arrive(&empty[static_cast<int>((it - 1) % STAGES)]);
      }
      wgmma_wait<0>();
      if (lane == 0) mbarrier_arrive(&empty[static_cast<int>((it - 1) % STAGES)]);

      // t2's epilogue; meanwhile the producer is already fetching the next tile.
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t row = m0 + consumer * 64 + warp * 16 + g + 8 * h;
          const int64_t col = n0 + j * 8 + 2 * q;
          if (row < M && col < N)
            *reinterpret_cast<unsigned*>(&C[row * N + col]) =
                pack_pair<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
        }
    }
  }
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T>
static cudaError_t launch_t2_3(const void* A, const void* B, void* C, int64_t M, int64_t N,
                               int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T2_BM, BK = CVT_T2_BK, BN = CVT_T2_BN, STAGES = CVT_T2_STAGES;
  static_assert(BN == 128 || BN == 256, "CVT_T2_BN: the wgmma shapes of cuda/hopper.cuh");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) || !tensor_map_16bit(&b_map, B, K, N, BK, bf16))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  constexpr auto kernel = matmul_t2_3_persistent_kernel<T, BN, STAGES, CVT_T2_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 16;
  return launch_persistent_clusters<kernel>(1, 384, smem, ceil_div(M, BM) * ceil_div(N, BN),
                                            stream, a_map, b_map, static_cast<T*>(C),
                                            static_cast<int>(M), static_cast<int>(N),
                                            static_cast<int>(K));
}

cudaError_t launch_matmul_t2_3_persistent(const void* A, const void* B, void* C, int64_t M,
                                          int64_t N, int64_t K, TensorCoreType type,
                                          cudaStream_t stream) {
  return launch_tma_rung(launch_t2_3<__nv_bfloat16>, launch_t2_3<__half>, A, B, C, M, N, K,
                         type, stream);  // see "precond."
}

}  // namespace cvt
