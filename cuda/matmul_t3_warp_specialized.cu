// GPU matmul t3, the third tensor-core rung: the whole warp-specialized kernel, t2.4 with
// its epilogue through shared memory and a TMA store (Hopper, sm_90a). t2.1 to t2.4 add
// t3's other ideas to t2 one at a time: warp specialization, the register split
// (setmaxnreg), a persistent grid, clusters sharing B by multicast.
//
//   idea      t2.4's consumers store C from registers: each thread writes pairs of values
//             (4 bytes) scattered over 16 rows, 8 KiB per warp through the LSU, while the
//             tensor core idles. A TMA store writes a whole 64 x 64 box of C from shared
//             memory in one instruction of one thread, clipped at the matrix's edge and
//             asynchronous: the warps fill a staging box in shared memory (fast, no
//             conflicts in the 128-byte swizzle) and go on to the next box while TMA
//             drains the last. With two staging boxes per consumer, filling one overlaps
//             the store of the other.
//   change    from t2.4: the epilogue stages 64 x 64 boxes of C in the 128-byte swizzle and
//             stores them with TMA (two boxes per consumer in flight; a named barrier per
//             consumer warpgroup around each fill, fence.proxy.async before the store);
//             C is described by a third tensor map. Everything else is t2.4's: warpgroup 0
//             produces, warpgroups 1 and 2 consume, empty barriers arrived on by each
//             consumer warp in every block of the cluster, a persistent grid of clusters
//             along m that share B by multicast, tiles in v6's grouped order.
//   banks     as t2; the staging writes (a warp: 8 rows x 4 pairs of one 8-column piece)
//             land in 8 different 16-byte pieces of 8 different rows: no conflict.
//   traffic   M, N, K any (on this path: K % 8 == 0, N % 8 == 0); BM = 128, k padded to a
//             multiple of BK = 64 by TMA's zero fill; clusters of C blocks cover C*BM rows.
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/(C*BM))  (multicast: one L2
//                             read per cluster, written into C blocks' shared memory)
//               shared reads  as t2: ~ N^3/BN + N^3/64 values by the tensor core
//               shared writes the tiles (M*K*ceil(N/BN) + N*K*ceil(M/BM)) and C (M*N) once
//               global stores M*N (TMA boxes, clipped at the matrix's edge)
//               multiply-adds ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//   precond.  as t2 (the same TMA path, staged into padded buffers where compute-bound,
//             else t1's kernel; K = 0 zeros), and C 16-byte aligned.
//   params    BN, STAGES, CLUSTER, GROUP = CVT_T3_* (matmul_config.h); 384 threads (the
//             producer keeps 40 registers, the consumers get 232), shared memory
//             STAGES * (128 + BN) * 64 * 2 + 2 * 2 * 64 * 64 * 2 bytes, one block per SM.
//   run       python -m bench check --kernels cuda_t3* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <class T, int BN, int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t3_warp_specialized_kernel(const __grid_constant__ CUtensorMap a_map,
                                  const __grid_constant__ CUtensorMap b_map,
                                  const __grid_constant__ CUtensorMap c_map, int M, int N,
                                  int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64, BOX = 64 * 64;      // a TMA box: 64 rows x 64 values
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOXES = BN / 64, MY_BOXES = B_BOXES / CLUSTER;
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;
  static_assert(B_BOXES % CLUSTER == 0, "each block of a cluster fetches whole B boxes");

  // Shared memory: the ring (as t2), then per consumer two staging boxes of C, then the
  // barriers: full[s] (the producer's arrival + STAGE_BYTES of copies) and empty[s] (one
  // arrival per consumer warp of every block in the cluster).
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  T* const sC = sB + STAGES * B_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sC + 2 * 2 * BOX);
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
          // Stage s is free once every consumer warp of the cluster has read its last use
          // (a fresh barrier passes the wait for parity 1: the ring starts empty).
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
    T* const staging = sC + consumer * 2 * BOX;
    const bool leader = tid % 128 == 0;
    int64_t it = 0;
    int stored = 0;  // boxes of C this consumer has stored (which staging box is next)
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

      // The epilogue, one 64 x 64 box of C at a time through two staging boxes: wait until
      // the store issued from this staging box two boxes ago has read it, fill it (value
      // (r, c) at byte r * 128 + ((c / 8) ^ (r % 8)) * 16 + (c % 8) * 2: the 128-byte
      // swizzle the C map expects), make the writes visible to TMA, store.
#pragma unroll
      for (int box = 0; box < BN / 64; ++box, ++stored) {
        T* const out = staging + (stored % 2) * BOX;
        if (leader) tma_store_wait_read<1>();
        named_barrier(1 + consumer, 128);
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = warp * 16 + g + 8 * h, c = j * 8 + 2 * q;
            const int jj = box * 8 + j;  // the 8-column piece of the warpgroup's tile
            *reinterpret_cast<unsigned*>(&out[r * 64 + ((j ^ (r % 8)) * 8) + c % 8]) =
                pack_pair<T>(d[4 * jj + 2 * h], d[4 * jj + 2 * h + 1]);
          }
        fence_proxy_async_shared();
        named_barrier(1 + consumer, 128);
        if (leader) {
          tma_store_2d(&c_map, out, n0 + box * 64, m0 + consumer * 64);
          tma_store_commit();
        }
      }
    }
    if (leader) tma_store_wait_all();
  }
  cluster_sync();  // no block leaves while another may still signal its barriers
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T>
static cudaError_t launch_t3(const void* A, const void* B, void* C, int64_t M, int64_t N,
                             int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T3_BM, BK = CVT_T3_BK, BN = CVT_T3_BN, STAGES = CVT_T3_STAGES;
  constexpr int CLUSTER = CVT_T3_CLUSTER;
  static_assert(BN == 128 || BN == 256, "CVT_T3_BN: the wgmma shapes of cuda/hopper.cuh");
  static_assert(BK == 64, "CVT_T3_BK: one 128-byte swizzle row of k per tile");
  static_assert(BM == 128, "CVT_T3_BM: the kernel is written for two consumer warpgroups of 64 rows");
  static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "CVT_T3_CLUSTER");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map, c_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) ||
      !tensor_map_16bit(&b_map, B, K, N, BK, bf16) ||
      !tensor_map_16bit(&c_map, C, M, N, 64, bf16))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  constexpr auto kernel = matmul_t3_warp_specialized_kernel<T, BN, STAGES, CLUSTER, CVT_T3_GROUP>;
  constexpr int smem = 1024 + (STAGES * (BM * BK + BK * BN) + 2 * 2 * 64 * 64) * 2 + STAGES * 16;
  return launch_persistent_clusters<kernel>(CLUSTER, 384, smem,
                                            ceil_div(M, CLUSTER * BM) * ceil_div(N, BN), stream,
                                            a_map, b_map, c_map, static_cast<int>(M),
                                            static_cast<int>(N), static_cast<int>(K));
}

cudaError_t launch_matmul_t3_warp_specialized(const void* A, const void* B, void* C, int64_t M,
                                              int64_t N, int64_t K, TensorCoreType type,
                                              cudaStream_t stream) {
  return launch_tma_rung(launch_t3<__nv_bfloat16>, launch_t3<__half>, A, B, C, M, N, K, type,
                         stream);  // see "precond."
}

}  // namespace cvt
