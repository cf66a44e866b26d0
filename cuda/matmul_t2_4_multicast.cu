// GPU matmul t2.4, the fourth of t3's ideas: clusters that share B by TMA multicast. t2.3's
// persistent kernel, its blocks grouped in clusters along m (Hopper, sm_90a).
//
//   idea      the blocks of one column of tiles all read the same B tile: in t2.3 each
//             fetches it from L2 on its own. Blocks of a thread-block cluster run at once on
//             SMs of one GPC and can write each other's shared memory and signal each
//             other's mbarriers. Put CVT_T3_CLUSTER blocks that need the same B tile (the
//             tiles below each other along m) in a cluster: each block fetches 1/CLUSTER of
//             B's boxes, and TMA multicast writes every box into the shared memory of every
//             block of the cluster, completing bytes on each block's own full barrier. B's
//             reads from L2 drop by CLUSTER. The price: a stage is free only when the
//             consumers of every block of the cluster have read it (each consumer warp
//             arrives on the empty barrier of each block), and no block may leave while
//             another can still signal its barriers.
//   change    from t2.3: a cluster launch of CLUSTER blocks; cluster tile u covers CLUSTER *
//             BM rows (block `rank` takes rows m0 + rank * BM) and the grid walks cluster
//             tiles; the producer copies its MY_BOXES of B with multicast; each consumer
//             warp releases a stage in every block of the cluster (release_stage), the
//             barriers are set up before the cluster meets (init_stage_barriers), and the
//             block leaves through a cluster barrier. Kept: t2's tile shape and epilogue
//             from registers. Not yet: a TMA store (t3).
//   banks     as t2.
//   traffic   global loads A: M*K*ceil(N/BN), B: N*K*ceil(M/(C*BM)) read from L2 (multicast:
//             one L2 read per cluster, written into C blocks' shared memory); shared reads
//             as t2; global stores M*N; multiply-adds of every block of a cluster, also one
//             wholly below M (its A is zeros).
//   precond.  as t2.
//   params    BN, STAGES, CLUSTER, GROUP = CVT_T3_* (matmul_config.h: t3's, the same tile
//             and ring as t2's); 384 threads, shared memory as t2.1, one block per SM.
//   run       python -m bench check --kernels cuda_t2.4* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <class T, int BN, int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t2_4_multicast_kernel(const __grid_constant__ CUtensorMap a_map,
                             const __grid_constant__ CUtensorMap b_map, T* __restrict__ C,
                             int M, int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64, BOX = 64 * 64;      // a TMA box: 64 rows x 64 values
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOXES = BN / 64, MY_BOXES = B_BOXES / CLUSTER;
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;
  static_assert(B_BOXES % CLUSTER == 0, "each block of a cluster fetches whole B boxes");

  // The ring (as t2), then the barriers: full[s] (the producer's arrival + STAGE_BYTES of
  // copies, its own and its cluster's multicasts) and empty[s] (one arrival per consumer
  // warp of every block in the cluster).
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);
  uint64_t* const empty = full + STAGES;

  const int tid = threadIdx.x, group = tid / 128;  // 0: producer; 1, 2: consumers
  const unsigned rank = cluster_rank();
  init_stage_barriers<STAGES>(full, empty, CONSUMER_WARPS * CLUSTER);  // then the cluster meets

  // The tiles of this cluster: cluster tile u covers C*BM rows and BN columns, in v6's
  // grouped order; block `rank` of the cluster takes rows m0 + rank * BM.
  const int64_t clusters = gridDim.x / CLUSTER, cluster = blockIdx.x / CLUSTER;
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, CLUSTER * BM);
  const int64_t tiles = tiles_m * tiles_n;
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {
    int64_t row, col;
    grouped_tile<GROUP>(u, tiles_m, tiles_n, row, col);
    m0 = static_cast<int>(row * CLUSTER * BM + rank * BM);
    n0 = static_cast<int>(col * BN);
  };

  if (group == 0) {
    // ---------------------------------------------------------------- the producer
    warpgroup_registers_decrease<40>();
    if (tid == 0) {
      int64_t it = 0;  // k tiles fetched so far, over all of this block's tiles
      for (int64_t u = cluster; u < tiles; u += clusters) {
        int m0, n0;
        tile_origin(u, m0, n0);
        for (int t = 0; t < k_tiles; ++t, ++it) {
          const int s = static_cast<int>(it % STAGES);
          // Stage s is free once every consumer warp of the cluster has read its last use.
          mbarrier_wait(&empty[s], static_cast<unsigned>((it / STAGES) & 1) ^ 1);
          mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
          tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], t * BK, m0);
#pragma unroll
          for (int i = 0; i < MY_BOXES; ++i) {
            const int box = static_cast<int>(rank) * MY_BOXES + i;
            if constexpr (CLUSTER == 1)
              tma_load_2d(sB + s * B_STAGE + box * BOX, &b_map, &full[s], n0 + box * 64, t * BK);
            else
              tma_load_2d_multicast(sB + s * B_STAGE + box * BOX, &b_map, &full[s],
                                    n0 + box * 64, t * BK, (1u << CLUSTER) - 1);
          }
        }
      }
    }
    __syncwarp();  // warp 0 whole again before the cluster barrier below (.aligned)
  } else {
    // ---------------------------------------------------------------- the consumers
    warpgroup_registers_increase<232>();
    const int consumer = group - 1;  // rows 64 * consumer .. of the block tile
    const int lane = tid % 32, warp = (tid % 128) / 32;
    const int g = lane / 4, q = lane % 4;
    int64_t it = 0;
    for (int64_t u = cluster; u < tiles; u += clusters) {
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
                                wgmma_descriptor(bt + kk * 16 * 64, BOX * sizeof(T), 1024));
        wgmma_commit();
        wgmma_wait<1>();  // k tile it - 1's group is done: release its stage everywhere
        if (t > 0 && lane == 0)
          release_stage<CLUSTER>(&empty[static_cast<int>((it - 1) % STAGES)]);
      }
      wgmma_wait<0>();
      if (lane == 0) release_stage<CLUSTER>(&empty[static_cast<int>((it - 1) % STAGES)]);

      // t2's epilogue from registers (a block wholly below M stores nothing).
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
  cluster_sync();  // no block leaves while another may still signal its barriers
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T>
static cudaError_t launch_t2_4(const void* A, const void* B, void* C, int64_t M, int64_t N,
                               int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T3_BM, BK = CVT_T3_BK, BN = CVT_T3_BN, STAGES = CVT_T3_STAGES;
  constexpr int CLUSTER = CVT_T3_CLUSTER;
  static_assert(BN == 128 || BN == 256, "CVT_T3_BN: the wgmma shapes of cuda/hopper.cuh");
  static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "CVT_T3_CLUSTER");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) || !tensor_map_16bit(&b_map, B, K, N, BK, bf16))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  constexpr auto kernel = matmul_t2_4_multicast_kernel<T, BN, STAGES, CLUSTER, CVT_T3_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 16;
  return launch_persistent_clusters<kernel>(CLUSTER, 384, smem,
                                            ceil_div(M, CLUSTER * BM) * ceil_div(N, BN), stream,
                                            a_map, b_map, static_cast<T*>(C),
                                            static_cast<int>(M), static_cast<int>(N),
                                            static_cast<int>(K));
}

cudaError_t launch_matmul_t2_4_multicast(const void* A, const void* B, void* C, int64_t M,
                                         int64_t N, int64_t K, TensorCoreType type,
                                         cudaStream_t stream) {
  return launch_tma_rung(launch_t2_4<__nv_bfloat16>, launch_t2_4<__half>, A, B, C, M, N, K,
                         type, stream);  // see "precond."
}

}  // namespace cvt
