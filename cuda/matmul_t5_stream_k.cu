// GPU matmul t5, the fifth tensor-core rung: t3 with a stream-K last wave, so that every
// SM of the persistent grid finishes at the same time (Hopper, sm_90a).
//
//   idea      t3's persistent grid deals whole tiles round robin. At 8192^3 its 1024 tiles
//             of clusters (2 blocks, 256 x 256 of C) go to 66 clusters: 15 full rounds and
//             a 16th of 34 tiles, during which 32 clusters have nothing to do: 3% of the
//             run with half the GPU idle. t5 deals the full rounds as t3 does and spreads
//             the last, partial round along k: the k tiles of the leftover tiles, laid end
//             to end, are cut into one equal run per cluster ("stream-K", Osama et al.,
//             2023). A run may start in the middle of one tile and end in the middle of the
//             next, so a tile can be shared by up to MAX_SPLIT + 1 clusters. The cluster whose run holds the
//             tile's first k tile owns it: the others write their partial sums (float32, in
//             the accumulators' own layout) to a workspace in global memory and raise a flag;
//             the owner waits for the flags in order, adds the partials and stores C. A
//             helper's part is always the first of its run and a helper never waits, so no
//             one waits on a waiter, and most partials are ready before their owner asks.
//   change    from t3: the work of a cluster is a list of (tile, first k tile, end k tile)
//             that the producer and the consumers walk alike (for_each_work); the
//             consumers' k loop runs over that range; after it a helper stores its partial
//             and sets its flag, an owner of a split tile adds the partials before its
//             epilogue. The grid is always as many clusters as fit (t3: no more than there
//             are tiles), so small products are split along k too. The launcher computes
//             the schedule (stream_k_schedule) and takes the workspace and flags from a
//             stream-ordered memory pool.
//   banks     as t3 (the partials go to global memory in 16-byte pieces, thread by thread:
//             whole 128-byte lines per warp, no shared memory).
//   schedule  G clusters, T cluster tiles, k_tiles = ceil(K / 64): tiles 0 .. T - T%G - 1
//             whole, round robin (as t3); the remaining T%G tiles' k tiles (S of them) in
//             runs of P = max(ceil(S / G), ceil(k_tiles / MAX_SPLIT), MIN_RUN) k tiles,
//             cluster c taking [c*P, (c+1)*P), unless P > k_tiles - MIN_GAIN: then the last
//             round shrinks too little to pay for the hand-over, and P = k_tiles (no tile
//             split, no workspace: t5 is t3 with a grid of every cluster that fits).
//             MIN_GAIN = 16 is measured (H100, bf16): a hand-over costs about 11 us, the time
//             of 15 k tiles at 4096^3, where splitting every time (runs of 57 of 64 k tiles)
//             ran 3% slower than t3, and at 1024^3 (16 tiles in runs of 4 on 64 clusters
//             instead of 16) 20% slower. H100, 66 clusters: 8192^3 splits its last 34 tiles
//             in runs of 66 of their 128 k tiles; 4096^3 and 1024^3 split nothing.
//   traffic   as t3, k tile for k tile (a split tile's k tiles are fetched once, by the
//             cluster that multiplies them); beside it, per helper part, 128 x BN floats
//             per block written and read once (H100 8192^3: 32 helper parts, 17 MB each way,
//             beside 13 GB that L2 sends to the SMs).
//   precond.  as t3 (K % 8 == 0, N % 8 == 0, 16-byte aligned A, B, C for TMA; else staged
//             into padded buffers where compute-bound, as t2, or t1's kernel; K = 0 zeros). The owner waits for helpers of higher cluster index, so
//             the grid must be resident at once: it is sized by the occupancy query, as the
//             persistent grids of t3 and t4 are.
//   params    BN, STAGES, CLUSTER, GROUP, MAX_SPLIT, MIN_RUN, MIN_GAIN = CVT_T5_*
//             (matmul_config.h); 384 threads, t3's shared memory; a workspace of
//             G * CLUSTER * 2 * 64 * BN floats and as many flags (H100: 17 MB), only when a
//             tile is split.
//   run       python -m bench check --kernels cuda_t5* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

// Who does what: tiles [0, whole) dealt round robin; then runs of `run` k tiles over the
// `split_k_tiles` k tiles of the remaining tiles, one run per cluster.
struct StreamKSchedule {
  int64_t whole;          // tiles taken whole, T - T % G
  int64_t split_k_tiles;  // k tiles of the remaining T % G tiles, end to end
  int64_t run;            // k tiles per cluster's run (k_tiles: nothing split)
};

template <class T, int BN, int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t5_stream_k_kernel(const __grid_constant__ CUtensorMap a_map,
                          const __grid_constant__ CUtensorMap b_map,
                          const __grid_constant__ CUtensorMap c_map, int M, int N, int K,
                          StreamKSchedule schedule, float* partials, unsigned* flags) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64, BOX = 64 * 64;      // a TMA box: 64 rows x 64 values
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOXES = BN / 64, MY_BOXES = B_BOXES / CLUSTER;
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;
  constexpr int PART = 64 * BN;  // floats of one consumer warpgroup's partial tile
  static_assert(B_BOXES % CLUSTER == 0, "each block of a cluster fetches whole B boxes");

  // Shared memory and barriers: as t3.
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  T* const sC = sB + STAGES * B_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sC + 2 * 2 * BOX);
  uint64_t* const empty = full + STAGES;

  const int tid = threadIdx.x, group = tid / 128;  // 0: producer; 1, 2: consumers
  const unsigned rank = cluster_rank();
  init_stage_barriers<STAGES>(full, empty, CONSUMER_WARPS * CLUSTER);

  const int64_t clusters = gridDim.x / CLUSTER, cluster = blockIdx.x / CLUSTER;
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, CLUSTER * BM);
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {  // as t3
    int64_t row, col;
    grouped_tile<GROUP>(u, tiles_m, tiles_n, row, col);
    m0 = static_cast<int>(row * CLUSTER * BM + rank * BM);
    n0 = static_cast<int>(col * BN);
  };
  // This cluster's work, in order: work(tile, first k tile, end k tile) for its whole tiles,
  // then for the one or two parts of tiles its run covers.
  const auto for_each_work = [&](auto&& work) {
    for (int64_t u = cluster; u < schedule.whole; u += clusters) work(u, 0, k_tiles);
    const int64_t first = cluster * schedule.run;
    const int64_t end = first + schedule.run < schedule.split_k_tiles
                            ? first + schedule.run : schedule.split_k_tiles;
    for (int64_t i = first; i < end;) {
      const int kb = static_cast<int>(i % k_tiles);
      const int ke = static_cast<int>(k_tiles - kb < end - i ? k_tiles : kb + (end - i));
      work(schedule.whole + i / k_tiles, kb, ke);
      i += ke - kb;
    }
  };

  if (group == 0) {
    // ---------------------------------------------------------------- the producer (t3's)
    warpgroup_registers_decrease<40>();
    if (tid == 0) {
      int64_t it = 0;
      for_each_work([&](int64_t u, int kb, int ke) {
        int m0, n0;
        tile_origin(u, m0, n0);
        for (int t = kb; t < ke; ++t, ++it) {
          const int s = static_cast<int>(it % STAGES);
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
      });
    }
    __syncwarp();
  } else {
    // ---------------------------------------------------------------- the consumers
    warpgroup_registers_increase<232>();
    const int consumer = group - 1;
    const int lane = tid % 32, warp = (tid % 128) / 32, me = tid % 128;
    const int g = lane / 4, q = lane % 4;
    T* const staging = sC + consumer * 2 * BOX;
    const bool leader = me == 0;
    // Where the partial of cluster c's helper part lives (this block's rank, this consumer).
    const auto slot = [&](int64_t c) { return (c * CLUSTER + rank) * 2 + consumer; };
    int64_t it = 0;
    int stored = 0;
    for_each_work([&](int64_t u, int kb, int ke) {
      int m0, n0;
      tile_origin(u, m0, n0);
      float d[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
      for (int t = kb; t < ke; ++t, ++it) {
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
        wgmma_wait<1>();
        if (t > kb && lane == 0)
          release_stage<CLUSTER>(&empty[static_cast<int>((it - 1) % STAGES)]);
      }
      wgmma_wait<0>();
      if (lane == 0) release_stage<CLUSTER>(&empty[static_cast<int>((it - 1) % STAGES)]);

      if (kb > 0) {
        // A helper part: the partial sums go to this cluster's slot, each thread's values
        // as 16-byte pieces side by side with its neighbours' (whole sectors), then the flag.
        float4* const out = reinterpret_cast<float4*>(partials + slot(cluster) * PART);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
          out[j * 128 + me] = make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]);
        named_barrier(1 + consumer, 128);
        if (leader) flag_set_release(&flags[slot(cluster)], 1);
        return;
      }
      // The owner of a split tile adds the helpers' partials, in the order of their runs:
      // cluster + 1 holds k tiles [ke, ke + run), cluster + 2 the next run, ...
      for (int64_t helper = cluster + 1, done = ke; done < k_tiles; ++helper) {
        if (leader) flag_wait_acquire(&flags[slot(helper)], 1);
        named_barrier(1 + consumer, 128);
        const float4* const in = reinterpret_cast<const float4*>(partials + slot(helper) * PART);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const float4 p = __ldcg(&in[j * 128 + me]);
          d[4 * j] += p.x, d[4 * j + 1] += p.y, d[4 * j + 2] += p.z, d[4 * j + 3] += p.w;
        }
        done += schedule.run < k_tiles - done ? schedule.run : k_tiles - done;
      }

      // The epilogue: t3's.
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
            const int jj = box * 8 + j;
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
    });
    if (leader) tma_store_wait_all();
  }
  cluster_sync();
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

// The schedule of `tiles` cluster tiles of `k_tiles` k tiles each over `clusters` clusters
// (see "schedule" above).
static StreamKSchedule stream_k_schedule(int64_t tiles, int64_t clusters, int64_t k_tiles) {
  const int64_t left = tiles % clusters;
  StreamKSchedule s{tiles - left, left * k_tiles, k_tiles};
  if (left > 0) {
    const int64_t even = ceil_div(s.split_k_tiles, clusters);
    int64_t least = ceil_div(k_tiles, CVT_T5_MAX_SPLIT);
    if (least < CVT_T5_MIN_RUN) least = CVT_T5_MIN_RUN;
    s.run = even > least ? even : least;
    // Splitting pays only where the last round shrinks by more than the hand-over costs.
    if (s.run > k_tiles - CVT_T5_MIN_GAIN) s.run = k_tiles;
  }
  return s;
}

template <class T>
static cudaError_t launch_t5(const void* A, const void* B, void* C, int64_t M, int64_t N,
                             int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T5_BM, BK = CVT_T5_BK, BN = CVT_T5_BN, STAGES = CVT_T5_STAGES;
  constexpr int CLUSTER = CVT_T5_CLUSTER;
  static_assert(BN == 128 || BN == 256, "CVT_T5_BN: the wgmma shapes of cuda/hopper.cuh");
  static_assert(BK == 64 && BM == 128, "CVT_T5_BM, CVT_T5_BK: t3's");
  static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "CVT_T5_CLUSTER");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map, c_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) ||
      !tensor_map_16bit(&b_map, B, K, N, BK, bf16) ||
      !tensor_map_16bit(&c_map, C, M, N, 64, bf16))
    return cudaErrorInvalidValue;
  constexpr auto kernel = matmul_t5_stream_k_kernel<T, BN, STAGES, CLUSTER, CVT_T5_GROUP>;
  constexpr int smem = 1024 + (STAGES * (BM * BK + BK * BN) + 2 * 2 * 64 * 64) * 2 + STAGES * 16;
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
    // The flags (cleared before every launch: a helper raises its flag by writing 1), then
    // the partials.
    const int64_t slots = static_cast<int64_t>(clusters) * CLUSTER * 2;
    const size_t flag_bytes = ceil_div(slots * sizeof(unsigned), 256) * 256;
    const size_t part_bytes = static_cast<size_t>(slots) * 64 * BN * sizeof(float);
    if ((err = workspace_alloc(&workspace, flag_bytes + part_bytes, stream)) != cudaSuccess)
      return err;
    flags = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + flag_bytes);
    err = cudaMemsetAsync(flags, 0, flag_bytes, stream);
  }
  if (err == cudaSuccess)
    err = launch_persistent_clusters<kernel>(CLUSTER, 384, smem, clusters, stream, a_map, b_map,
                                             c_map, static_cast<int>(M), static_cast<int>(N),
                                             static_cast<int>(K), schedule, partials, flags);
  if (workspace != nullptr) {
    const cudaError_t freed = cudaFreeAsync(workspace, stream);
    if (err == cudaSuccess) err = freed;
  }
  return err;
}

cudaError_t launch_matmul_t5_stream_k(const void* A, const void* B, void* C, int64_t M,
                                      int64_t N, int64_t K, TensorCoreType type,
                                      cudaStream_t stream) {
  return launch_tma_rung(launch_t5<__nv_bfloat16>, launch_t5<__half>, A, B, C, M, N, K, type,
                         stream);  // see "precond."
}

}  // namespace cvt
