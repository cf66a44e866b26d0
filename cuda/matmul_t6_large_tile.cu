// GPU matmul t6, the sixth tensor-core rung: t5 with a larger tile, 256 x 192, each consumer
// warpgroup holding 128 x 192 of C (Hopper, sm_90a).
//
//   idea      at 8192^3 the H100 runs t5 at its power limit (700 W, clocks 1.26-1.40 GHz),
//             so what the SMs pull through L2 per multiply-add costs clock. A block tile
//             BM x BN pulls BM*BK values of A and BK*BN of B for BM*BN*BK multiply-adds: per
//             multiply-add 1/BN + 1/(CLUSTER*BM) values from L2 (B multicast). t5's 128 x 256
//             in clusters of 2: 1/256 + 1/256 = 0.0078; 256 x 192: 1/192 + 1/512 = 0.0072,
//             8% less, and a third fewer tiles (fewer epilogues, fewer pipeline refills).
//             The tile is as large as the register file allows: a consumer warpgroup's
//             128 x 192 floats are 192 accumulators a thread (t5: 128), within the 232 that
//             setmaxnreg gives it.
//   change    from t5: BM 256 (each consumer two 64-row halves, wgmma m64n192k16 on each),
//             BN 192; 3 stages (57 KB a stage; t5: 4 of 48 KB); B's three boxes cannot be
//             shared out whole between a cluster's 2 blocks, so each block fetches a slice of
//             k rows of all three (BK / CLUSTER rows: 32-row boxes, the same 128-byte
//             swizzle, whose pattern repeats every 8 rows) and multicasts it.
//   banks     as t5.
//   schedule  t5's (cuda/stream_k.cuh) over t6's cluster tiles. H100, 66 clusters: 8192^3
//             is 16 x 43 = 688 cluster tiles, 10 full rounds and 28 tiles split in runs of
//             55 of their 128 k tiles; 4096^3 is 176: 2 rounds and 44 tiles in runs of 43
//             of 64.
//   traffic   M, N, K any (on this path: K % 8 == 0, N % 8 == 0); k padded to a multiple of
//             BK = 64 by TMA's zero fill.
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/(C*BM))  (multicast)
//               shared reads  by the tensor core: each consumer reads A's 128 x 64 and B's
//                             64 x 192 twice (once per half) per k tile
//               global stores M*N (TMA boxes, clipped at the matrix's edge)
//               multiply-adds ceil(M/(C*BM))*C * ceil(N/BN) * BM*BN * BK*ceil(K/BK):
//                             the padding of the last row or column of tiles is multiplied
//                             (8192 = 42.7 x 192: 0.8% more; 4096: 3.1%)
//             beside it, per helper part, 256 x 192 floats per block written and read once.
//   precond.  as t5.
//   params    BN, STAGES, CLUSTER, GROUP, MAX_SPLIT, MIN_RUN, MIN_GAIN = CVT_T6_*
//             (matmul_config.h); 384 threads (the producer keeps 40 registers, the consumers
//             get 232), shared memory STAGES * (256 + BN) * 64 * 2 + 2 * 2 * 64 * 64 * 2
//             bytes, one block per SM; a workspace of G * CLUSTER * 2 * 128 * BN floats and
//             as many flags, only when a tile is split.
//   run       python -m bench check --kernels cuda_t6* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "stream_k.cuh"

namespace cvt {

template <class T, int BN, int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t6_large_tile_kernel(const __grid_constant__ CUtensorMap a_map,
                            const __grid_constant__ CUtensorMap b_map,
                            T* C, int M, int N, int K,
                            StreamKSchedule schedule, float* partials, unsigned* flags) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 256, BK = 64, BOX = 64 * 64;      // a B box: 64 k rows x 64 values
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOXES = BN / 64, MY_ROWS = BK / CLUSTER;  // k rows of B this block fetches
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;
  constexpr int PART = 128 * BN;  // floats of one consumer warpgroup's partial tile
  static_assert(MY_ROWS % 8 == 0, "a block's slice of B keeps whole swizzle atoms (8 rows)");

  // Shared memory: the ring, then the barriers (as t5, without C's staging boxes).
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);
  uint64_t* const empty = full + STAGES;

  const int tid = threadIdx.x, group = tid / 128;  // 0: producer; 1, 2: consumers
  const unsigned rank = cluster_rank();
  init_stage_barriers<STAGES>(full, empty, CONSUMER_WARPS * CLUSTER);

  const int clusters = gridDim.x / CLUSTER, cluster = blockIdx.x / CLUSTER;
  const int tiles_n = static_cast<int>(ceil_div(N, BN)), tiles_m = static_cast<int>(ceil_div(M, CLUSTER * BM));
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {  // as t5
    int64_t row, col;
    grouped_tile<GROUP>(u, tiles_m, tiles_n, row, col);
    m0 = static_cast<int>(row * CLUSTER * BM + rank * BM);
    n0 = static_cast<int>(col * BN);
  };
  const auto for_each_work = [&](auto&& work) {  // as t5
    for_each_stream_k_work(cluster, clusters, k_tiles, schedule, work);
  };

  if (group == 0) {
    // ---------------------------------------------------------------- the producer
    warpgroup_registers_decrease<40>();
    if (tid == 0) {
      int s = 0;            // the ring's stage for the next k tile
      unsigned phase = 0;   // and the phase of its barriers (flips when the ring wraps)
      for_each_work([&](int64_t u, int kb, int ke) {
        int m0, n0;
        tile_origin(u, m0, n0);
        for (int t = kb; t < ke; ++t, s = s + 1 < STAGES ? s + 1 : (phase ^= 1, 0)) {
          mbarrier_wait(&empty[s], phase ^ 1);
          mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
          tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], t * BK, m0);
          // This block's k rows of every B box, into every block of the cluster.
          const int row = static_cast<int>(rank) * MY_ROWS;
#pragma unroll
          for (int box = 0; box < B_BOXES; ++box) {
            T* const dst = sB + s * B_STAGE + box * BOX + row * 64;
            if constexpr (CLUSTER == 1)
              tma_load_2d(dst, &b_map, &full[s], n0 + box * 64, t * BK);
            else
              tma_load_2d_multicast(dst, &b_map, &full[s], n0 + box * 64, t * BK + row,
                                    (1u << CLUSTER) - 1);
          }
        }
      });
    }
    __syncwarp();
  } else {
    // ---------------------------------------------------------------- the consumers
    warpgroup_registers_increase<232>();
    const int consumer = group - 1;
    const int lane = tid % 32, warp = (tid % 128) / 32, me = tid % 128;
    const int g = lane / 4, q = lane % 4;
    const bool leader = me == 0;
    const auto slot = [&](int64_t c) { return (c * CLUSTER + rank) * 2 + consumer; };
    int s = 0, last = 0;  // the ring's stage for the next k tile, the stage of the last one
    unsigned phase = 0;
    for_each_work([&](int64_t u, int kb, int ke) {
      int m0, n0;
      tile_origin(u, m0, n0);
      float d[2][BN / 2];  // the two 64-row halves of this consumer's 128 rows
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[h][i] = 0.0f;
      for (int t = kb; t < ke; ++t, last = s, s = s + 1 < STAGES ? s + 1 : (phase ^= 1, 0)) {
        mbarrier_wait(&full[s], phase);
        const T* const a = sA + s * A_STAGE + consumer * 128 * BK;
        const T* const bt = sB + s * B_STAGE;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const uint64_t b = wgmma_descriptor(bt + kk * 16 * 64, BOX * sizeof(T), 1024);
#pragma unroll
          for (int h = 0; h < 2; ++h)
            wgmma_m64nNk16<BN, T>(d[h], wgmma_descriptor(a + h * 64 * BK + kk * 16, 16, 1024), b);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (t > kb && lane == 0) release_stage<CLUSTER>(&empty[last]);
      }
      wgmma_wait<0>();
      if (lane == 0) release_stage<CLUSTER>(&empty[last]);

      if (kb > 0) {  // a helper part: as t5, both halves
        float4* const out = reinterpret_cast<float4*>(partials + slot(cluster) * PART);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
            out[(h * BN / 8 + j) * 128 + me] =
                make_float4(d[h][4 * j], d[h][4 * j + 1], d[h][4 * j + 2], d[h][4 * j + 3]);
        named_barrier(1 + consumer, 128);
        if (leader) flag_set_release(&flags[slot(cluster)], 1);
        return;
      }
      // The owner of a split tile adds the helpers' partials in the order of their runs.
      for (int64_t helper = cluster + 1, done = ke; done < k_tiles; ++helper) {
        if (leader) flag_wait_acquire(&flags[slot(helper)], 1);
        named_barrier(1 + consumer, 128);
        const float4* const in = reinterpret_cast<const float4*>(partials + slot(helper) * PART);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const float4 p = __ldcg(&in[(h * BN / 8 + j) * 128 + me]);
            d[h][4 * j] += p.x, d[h][4 * j + 1] += p.y;
            d[h][4 * j + 2] += p.z, d[h][4 * j + 3] += p.w;
          }
        done += schedule.run < k_tiles - done ? schedule.run : k_tiles - done;
      }

      // The epilogue: C from registers. d[h][4 j + 2 hh + e] is C(row0 + 64 h + 8 hh,
      // n0 + 8 j + 2 q + e): two adjacent columns, one 4-byte store; N % 8 == 0 on this
      // path, so col < N means col + 1 < N. Rows and columns are worked out here, per tile,
      // from an opaque value: left to itself the compiler computes the addresses once,
      // before the tile loop, and keeps them live through the k loop beside the 192
      // accumulators.
      int row0 = m0 + consumer * 128 + warp * 16 + g;
      asm volatile("" : "+r"(row0));  // opaque: nothing derived from it is hoisted
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int row = row0 + 64 * h + 8 * hh;
          if (row >= M) continue;
          T* const out = C + static_cast<int64_t>(row) * N;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const int col = n0 + 8 * j + 2 * q;
            if (col < N)
              *reinterpret_cast<unsigned*>(out + col) =
                  pack_pair<T>(d[h][4 * j + 2 * hh], d[h][4 * j + 2 * hh + 1]);
          }
        }
    });
  }
  cluster_sync();
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

// t5's schedule with t6's parameters.
static StreamKSchedule stream_k_schedule(int64_t tiles, int64_t clusters, int64_t k_tiles) {
  return stream_k_schedule(tiles, clusters, k_tiles, CVT_T6_MAX_SPLIT, CVT_T6_MIN_RUN,
                           CVT_T6_MIN_GAIN);
}

template <class T>
static cudaError_t launch_t6(const void* A, const void* B, void* C, int64_t M, int64_t N,
                             int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T6_BM, BK = CVT_T6_BK, BN = CVT_T6_BN, STAGES = CVT_T6_STAGES;
  constexpr int CLUSTER = CVT_T6_CLUSTER;
  static_assert(BN == 128 || BN == 192, "CVT_T6_BN: 192 accumulators a thread at most");
  static_assert(BK == 64 && BM == 256, "CVT_T6_BM, CVT_T6_BK: two consumers of 128 rows");
  static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "CVT_T6_CLUSTER");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) ||
      !tensor_map_16bit(&b_map, B, K, N, BK / CLUSTER, bf16))
    return cudaErrorInvalidValue;
  constexpr auto kernel = matmul_t6_large_tile_kernel<T, BN, STAGES, CLUSTER, CVT_T6_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 16;
  int clusters = 0;
  cudaError_t err = max_active_clusters<kernel>(CLUSTER, 384, smem, &clusters);
  if (err != cudaSuccess) return err;
  const int64_t k_tiles = ceil_div(K, BK);
  const StreamKSchedule schedule =
      stream_k_schedule(ceil_div(M, CLUSTER * BM) * ceil_div(N, BN), clusters, k_tiles);
  void* workspace = nullptr;
  float* partials = nullptr;
  unsigned* flags = nullptr;
  if (schedule.run < k_tiles) {
    const int64_t slots = static_cast<int64_t>(clusters) * CLUSTER * 2;
    err = stream_k_workspace(slots, static_cast<size_t>(slots) * 128 * BN * sizeof(float), stream,
                             &workspace, &flags, &partials);
  }
  if (err == cudaSuccess)
    err = launch_persistent_clusters<kernel>(CLUSTER, 384, smem, clusters, stream, a_map, b_map,
                                             static_cast<T*>(C), static_cast<int>(M),
                                             static_cast<int>(N),
                                             static_cast<int>(K), schedule, partials, flags);
  if (workspace != nullptr) {
    const cudaError_t freed = cudaFreeAsync(workspace, stream);
    if (err == cudaSuccess) err = freed;
  }
  return err;
}

cudaError_t launch_matmul_t6_large_tile(const void* A, const void* B, void* C, int64_t M,
                                        int64_t N, int64_t K, TensorCoreType type,
                                        cudaStream_t stream) {
  return launch_tma_rung(launch_t6<__nv_bfloat16>, launch_t6<__half>, A, B, C, M, N, K, type,
                         stream);  // see "precond."
}

}  // namespace cvt
