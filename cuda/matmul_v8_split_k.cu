// GPU matmul v8, split K across a thread-block cluster: small outputs still fill the GPU.
//
//   idea      give the SMs that the output's tiles leave idle a share of the k loop.
//             v7's 128 x 256 tiles make 32 blocks at 1024^3 for the H100's 132 SMs: 100
//             SMs idle, and v7 runs at a third of cuBLAS's speed there (at 512 x 512 x
//             8192, 8 blocks: 0.07x). Split the k range of each tile into S parts, one
//             block each: S times the blocks, each 1/S of the k loop. The S partial tiles
//             must then be summed. The S blocks of a tile form a cluster (sm_90): they run
//             at the same time and read each other's shared memory (distributed shared
//             memory), so the sum needs no buffer in global memory, no atomics and no
//             second kernel, and it is the same, bit for bit, on every run: each block
//             leaves its partial tile in its shared memory, and after one cluster barrier
//             block s sums rows [s*BM/S, (s+1)*BM/S) of the tile over the S blocks, in rank
//             order, and stores them.
//   change    from v7: blockIdx.z is the split (its rank in the cluster); the k loop runs
//             over the split's tiles [s*split_tiles, (s+1)*split_tiles) instead of all of
//             them (the lean pointers start at the split's first tile); after the loop a
//             split of S > 1 writes its accumulators to shared memory (where the ring was)
//             and sums its rows over the cluster. The kernel is a template on SPLIT: with
//             S = 1 (the launcher's choice for grids that fill the GPU, and before sm_90)
//             the launcher runs SPLIT = false, which compiles to v7's kernel, store
//             included (a run-time S alone cost 5% at 4096^3: other registers, other
//             schedule).
//   splits    chosen by the launcher from the grid and the GPU: S = min(SMs / tiles,
//             MAX_SPLITS, k_tiles / MIN_SPLIT_TILES), at least 1; then split_tiles =
//             ceil(k_tiles / S) and S = ceil(k_tiles / split_tiles), so that no split is
//             empty. H100 (132 SMs, 1 block of v8 per SM): 1024^3 -> 32 tiles, S = 4 (128
//             blocks); 512 x 512 x 8192 -> 8 tiles, S = 8; 4096^3 -> 512 tiles, S = 1.
//   reduce    per split: BM*BN floats written to its shared memory (128 KiB with the
//             default tiles; the launcher asks for max(ring, partial) bytes when S > 1);
//             per output element S float reads from the cluster's shared memory, in rank
//             order (deterministic); C written once. Two cluster barriers: after the
//             partials are written, and before a block may exit (its shared memory must
//             outlive the reads of the others).
//   traffic   as v7 (and v6), element for element: the splits together issue the copies of
//             the k tiles of v7's loop, each once (a split starts its running pointers at
//             its first tile); the last, partial k tile belongs to the last split.
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (cp.async copies)
//               shared loads  ceil(M/BM)*ceil(N/BN) * BM*BN/(TM*TN) * (TM+TN) * BK*ceil(K/BK)
//               global stores M*N
//               FFMAs         ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//             beside them, where S > 1: BM*BN floats per block into shared memory and S
//             reads of distributed shared memory per element of C (not in the model: the
//             model counts the k loop, which is the same for every S).
//   precond.  as v7: float32, row-major contiguous; any M, N, K >= 0, any alignment (W = 4
//             when vector_path_ok, else W = 1); rows of blocks folded into (y, z) past 65535
//             as in v7 when S = 1, while a split (S > 1) takes z and its rows fit on y (it has
//             fewer tiles than the GPU has SMs); sm_80+ for cp.async, sm_90+ for a split
//             (clusters).
//   params    BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP, MAX_SPLITS, MIN_SPLIT_TILES =
//             CVT_V8_* (matmul_config.h); dynamic shared memory STAGES * (BK*(BM+4) +
//             BK*BN) * 4 bytes (74,496), BM*BN*4 (131,072) when split.
//   measured  H100 against cuBLAS fp32, results/h100 (2026-11-26): 0.57x at 256^3, 0.76x at
//             512^3, 0.59x at 1024^3 (v7: 0.24x, 0.18x, 0.35x); 0.954x at 4096^3 (one split).
//             At 1024^3 the kernel takes ~60 us beyond its k loop; where they go is open
//             (docs/performance/ffma_rungs.md, "v7 → v8: split K across a thread-block cluster").
//   run       python -m bench check --kernels cuda_v8* --shapes 1000x999x37,1024x1024x1024
#include "cluster.cuh"
#include "common.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "warptiling.cuh"

namespace cvt {

constexpr int kMaxDevices = 64;  // the launcher remembers a cluster check per device

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP, int W,
          bool SPLIT>
__global__ void __launch_bounds__(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS,
                                  WarpTiling<BM, BN, WM, WN, TM, TN>::MIN_BLOCKS)
matmul_v8_split_k_kernel(const float* __restrict__ A, const float* __restrict__ B,
                         float* __restrict__ C, int M, int N, int K, int split_tiles) {
  using Tiling = WarpTiling<BM, BN, WM, WN, TM, TN>;
  constexpr int THREADS = Tiling::THREADS, LANES_M = Tiling::LANES_M, LANES_N = Tiling::LANES_N;
  constexpr int PM = Tiling::PM, PN = Tiling::PN;
  constexpr int PAD = 4;                          // see "banks" above
  constexpr int LDA = BM + PAD;                   // floats per row of a stage of sA
  constexpr int A_STAGE = BK * LDA, B_STAGE = BK * BN;
  static_assert(STAGES >= 2, "a pipeline needs at least two stages");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % (W * THREADS) == 0,
                "each thread must copy the same number of pieces");

  // The ring: STAGES tiles of A (transposed, sA[s][k][m]) then STAGES tiles of B (sB[s][k][n]).
  extern __shared__ __align__(16) float smem[];
  float* const sA = smem;
  float* const sB = smem + STAGES * A_STAGE;

  // Grouped block order (v6's "change (2)"), over gx x gy tiles. With one split the rows
  // may be folded into (y, z), as in v7; with SPLIT, z is the split and y holds every row.
  const int64_t gx = gridDim.x, gy = ceil_div(M, BM);
  const int64_t y = SPLIT ? static_cast<int64_t>(blockIdx.y) : block_y();
  if (y >= gy) return;  // past the last row of a folded grid (never with SPLIT, whose
                        // blocks all meet at the cluster barriers below)
  const int64_t b = y * gx + blockIdx.x;
  const int64_t first = b / (GROUP * gx) * GROUP;         // first block row of b's group
  const int64_t rows = gy - first < GROUP ? gy - first : GROUP;  // block rows in the group
  const int64_t m0 = (first + (b % (GROUP * gx)) % rows) * BM;
  const int64_t n0 = (b % (GROUP * gx)) / rows * BN;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int lm = lane / LANES_N, ln = lane % LANES_N;
  const int row0 = wm * WM + lm * 4;
  const int col0 = wn * WN + ln * 4;

  // What this thread copies, fixed for the whole k loop: element (a_i + p*A_STEP, a_k) of
  // every A tile and piece (b_k + p*B_STEP, b_j) of every B tile, p = 0, 1, ...
  constexpr int A_STEP = THREADS / BK, B_STEP = THREADS / (BN / W);  // rows per pass
  static_assert(THREADS % BK == 0 && THREADS % (BN / W) == 0, "a pass must cover whole rows");
  const int a_i = threadIdx.x / BK, a_k = threadIdx.x % BK;
  const int b_k = threadIdx.x / (BN / W), b_j = (threadIdx.x % (BN / W)) * W;
  const float* const a_src = A + (m0 + a_i) * K + a_k;  // tile 0's element of pass 0
  const float* const b_src = B + static_cast<int64_t>(b_k) * N + n0 + b_j;
  const int64_t a_pass = static_cast<int64_t>(A_STEP) * K;  // pointer steps of one pass
  const int64_t b_pass = static_cast<int64_t>(B_STEP) * N;
  // Where this thread's copies land in a stage: fixed offsets, the same for every tile.
  const int a_dst = a_k * LDA + a_i, b_dst = b_k * BN + b_j;

  // v6's fetch, for edge blocks and a partial last tile: issues the copies of tile `tile`
  // (k from tile*BK) into stage (a, bt); an element outside the matrix gets a zero instead.
  const auto fetch_masked = [&](int tile, float* a, float* bt) {
    const int64_t k0 = static_cast<int64_t>(tile) * BK;
#pragma unroll
    for (int p = 0; p < BM * BK / THREADS; ++p) {  // A: one float per copy, transposed
      const int i = a_i + p * A_STEP;
      if (m0 + i < M && k0 + a_k < K) cp_async<1>(&a[a_k * LDA + i], a_src + p * a_pass + k0);
      else a[a_k * LDA + i] = 0.0f;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p) {  // B: pieces of W columns
      const int kk = b_k + p * B_STEP;
      if (k0 + kk < K && n0 + b_j < N) cp_async<W>(&bt[kk * BN + b_j], b_src + p * b_pass + k0 * N);
      else *reinterpret_cast<Floats<W>*>(&bt[kk * BN + b_j]) = Floats<W>{};
    }
  };

  // This block's share of the k tiles: split blockIdx.z (its rank in the cluster) takes
  // tiles [first_tile, end_tile) of ceil(K/BK), split_tiles of them (fewer in the last).
  const int tiles = static_cast<int>(ceil_div(K, BK));
  const int splits = SPLIT ? gridDim.z : 1, split = SPLIT ? blockIdx.z : 0;
  const int first_tile = split * split_tiles;
  const int end_tile = SPLIT && first_tile + split_tiles < tiles ? first_tile + split_tiles : tiles;

  // The lean fetch: running pointers at the next tile's element of pass 0, fixed offsets.
  const int64_t b_tile = static_cast<int64_t>(BK) * N;  // B's pointer step per tile
  const float* a_next = a_src + static_cast<int64_t>(first_tile) * BK;
  const float* b_next = b_src + first_tile * b_tile;
  const auto fetch_lean = [&](float* a, float* bt) {
#pragma unroll
    for (int p = 0; p < BM * BK / THREADS; ++p) cp_async<1>(&a[a_dst + p * A_STEP], a_next + p * a_pass);
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p)
      cp_async<W>(&bt[b_dst + p * B_STEP * BN], b_next + p * b_pass);
    a_next += BK;
    b_next += b_tile;
  };

  // An interior block's tiles 0 .. K/BK - 1 are in bounds everywhere: decided once, the
  // same for every thread of the block, so the branch below never diverges.
  const bool interior = m0 + BM <= M && n0 + BN <= N;
  const int lean_tiles = interior ? K / BK : 0;
  const auto fetch = [&](int tile, int s) {
    float* const a = sA + s * A_STAGE;
    float* const bt = sB + s * B_STAGE;
    if (tile < lean_tiles) fetch_lean(a, bt);
    else fetch_masked(tile, a, bt);
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // prologue: the split's first STAGES-1 tiles
    if (first_tile + s < end_tile) fetch(first_tile + s, s);
    cp_async_commit();
  }

  float c[TM][TN] = {};
  Floats<4> a[PM], b4[PN];
  int read = 0, write = STAGES - 1;  // the stages of tile t and of tile t + STAGES - 1
  for (int t = first_tile; t < end_tile; ++t) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile t are in shared memory
    __syncthreads();              // everyone's are; and stage (t-1) % STAGES is read by no one
    const int next = t + STAGES - 1;
    if (next < end_tile) fetch(next, write);
    cp_async_commit();
    write = write + 1 == STAGES ? 0 : write + 1;

    const float* const at = sA + read * A_STAGE;
    const float* const bt = sB + read * B_STAGE;
    read = read + 1 == STAGES ? 0 : read + 1;
#pragma unroll
    for (int ki = 0; ki < BK; ++ki) {
#pragma unroll
      for (int p = 0; p < PM; ++p) a[p] = *reinterpret_cast<const Floats<4>*>(&at[ki * LDA + row0 + p * 4 * LANES_M]);
#pragma unroll
      for (int q = 0; q < PN; ++q) b4[q] = *reinterpret_cast<const Floats<4>*>(&bt[ki * BN + col0 + q * 4 * LANES_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] += a[i / 4].v[i % 4] * b4[j / 4].v[j % 4];
      }
    }
  }

  // As v5: c[i][j] is C[m0 + row0 + (i/4)*4*LANES_M + i%4][n0 + col0 + (j/4)*4*LANES_N + j%4].
  if constexpr (!SPLIT) {  // one split, the whole k range (SPLIT = false): v7's store
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = m0 + row0 + (i / 4) * 4 * LANES_M + i % 4;
#pragma unroll
      for (int j = 0; j < TN; j += W) {
        const int64_t col = n0 + col0 + (j / 4) * 4 * LANES_N + j % 4;
        Floats<W> piece;
#pragma unroll
        for (int w = 0; w < W; ++w) piece.v[w] = c[i][j + w];
        if (row < M && col < N) *reinterpret_cast<Floats<W>*>(&C[row * N + col]) = piece;
      }
    }
  } else {
    // Split K (see "reduce"): this block's partial tile into its shared memory, where the
    // ring was (every copy has landed, and after the barrier nobody reads a stage again).
    cp_async_wait<0>();
    __syncthreads();
    float* const part = smem;  // BM x BN, row-major
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int r = row0 + (i / 4) * 4 * LANES_M + i % 4;
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const int col = col0 + (j / 4) * 4 * LANES_N;
        *reinterpret_cast<Floats<4>*>(&part[r * BN + col]) = {c[i][j], c[i][j + 1],
                                                              c[i][j + 2], c[i][j + 3]};
      }
    }
    cluster_sync();  // every block's partial tile is complete and visible to the cluster

    // Split s sums rows [s*rows, (s+1)*rows) of the tile over the cluster, rank 0 first, and
    // stores them: one float4 of partials from each block per 4 outputs.
    const int split_rows = static_cast<int>(ceil_div(BM, splits));
    const int r_first = split * split_rows;
    const int r_end = r_first + split_rows < BM ? r_first + split_rows : BM;
    for (int e = threadIdx.x; e < (r_end - r_first) * (BN / 4); e += THREADS) {
      const int r = r_first + e / (BN / 4), col = e % (BN / 4) * 4;
      const int64_t row = m0 + r;
      if (row >= M || n0 + col >= N) continue;
      Floats<4> sum = {};
      for (int q = 0; q < splits; ++q) {
        const float* const from = cluster_map(&part[r * BN + col], q);
        const Floats<4> p = *reinterpret_cast<const Floats<4>*>(from);
#pragma unroll
        for (int w = 0; w < 4; ++w) sum.v[w] += p.v[w];
      }
#pragma unroll
      for (int w = 0; w < 4; w += W) {  // W = 4: one float4 (N % 4 == 0); W = 1: each in bounds
        if (n0 + col + w < N) {
          Floats<W> piece;
#pragma unroll
          for (int x = 0; x < W; ++x) piece.v[x] = sum.v[w + x];
          *reinterpret_cast<Floats<W>*>(&C[row * N + n0 + col + w]) = piece;
        }
      }
    }
    cluster_sync();  // no block leaves while another still reads its partial tile
  }
}

// Past the default 48 KB a kernel must ask for its dynamic shared memory.
template <typename Kernel>
static cudaError_t allow_shared(Kernel kernel, int bytes) {
  return bytes > 48 * 1024
             ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
             : cudaSuccess;
}

template <int W>
static cudaError_t launch_v8(const float* A, const float* B, float* C, int64_t M, int64_t N,
                             int64_t K, dim3 grid, int splits, int split_tiles,
                             cudaStream_t stream) {
  constexpr int BM = CVT_V8_BM, BN = CVT_V8_BN, BK = CVT_V8_BK, STAGES = CVT_V8_STAGES;
  constexpr int threads = WarpTiling<BM, BN, CVT_V8_WM, CVT_V8_WN, CVT_V8_TM, CVT_V8_TN>::THREADS;
  constexpr int ring = STAGES * (BK * (BM + 4) + BK * BN) * static_cast<int>(sizeof(float));
  if (splits == 1) {  // one split: v7's kernel (SPLIT = false), grid folded as v7's
    const auto kernel = matmul_v8_split_k_kernel<BM, BN, BK, CVT_V8_WM, CVT_V8_WN, CVT_V8_TM,
                                                  CVT_V8_TN, STAGES, CVT_V8_GROUP, W, false>;
    const cudaError_t err = allow_shared(kernel, ring);
    if (err != cudaSuccess) return err;
    kernel<<<grid, threads, ring, stream>>>(A, B, C, M, N, K, 0);
    return cudaGetLastError();
  }
  const auto kernel = matmul_v8_split_k_kernel<BM, BN, BK, CVT_V8_WM, CVT_V8_WN, CVT_V8_TM,
                                                CVT_V8_TN, STAGES, CVT_V8_GROUP, W, true>;
  constexpr int part = BM * BN * static_cast<int>(sizeof(float));  // a split's partial tile
  constexpr int smem = part > ring ? part : ring;
  cudaError_t err = allow_shared(kernel, smem);
  if (err != cudaSuccess) return err;
  // The splits of a tile form a cluster of `splits` blocks along z: their rank is blockIdx.z.
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 1;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = splits;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  // A cluster that no GPC can hold would never start: say so instead. Asked once per
  // device and cluster size (the answer depends on nothing else here).
  static int fits[kMaxDevices][CVT_V8_MAX_SPLITS + 1] = {};  // 0 unknown, 1 yes, -1 no
  int device = 0;
  err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  int& known = fits[device % kMaxDevices][splits];
  if (known == 0 || device >= kMaxDevices) {
    int clusters = 0;
    err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (err != cudaSuccess) return err;
    known = clusters >= 1 ? 1 : -1;
  }
  if (known < 0) return cudaErrorNotSupported;
  return cudaLaunchKernelEx(&config, kernel, A, B, C, static_cast<int>(M), static_cast<int>(N),
                            static_cast<int>(K), split_tiles);
}

// The split (see "splits" in the header): as many as fill the SMs that the tiles leave
// idle, at most CVT_V8_MAX_SPLITS, each at least CVT_V8_MIN_SPLIT_TILES k tiles deep; 1
// before sm_90 (no clusters), and 1 where the gy rows of tiles are more than grid y holds
// (the split takes z, where they would fold; a grid that splits has fewer tiles than the GPU
// has SMs, so this matters only under a lowered CVT_MAX_GRID_YZ). Every split gets a
// nonempty range.
static cudaError_t choose_splits(int64_t gx, int64_t gy, int64_t K, int* splits,
                                 int* split_tiles) {
  int device = 0, major = 0, sms = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  const int64_t k_tiles = ceil_div(K, CVT_V8_BK);
  int64_t s = major >= 9 && gy <= kMaxGridYZ ? sms / (gx * gy) : 1;
  if (s > CVT_V8_MAX_SPLITS) s = CVT_V8_MAX_SPLITS;
  if (s > k_tiles / CVT_V8_MIN_SPLIT_TILES) s = k_tiles / CVT_V8_MIN_SPLIT_TILES;
  if (s < 1) s = 1;
  const int64_t per = s > 1 ? ceil_div(k_tiles, s) : (k_tiles > 0 ? k_tiles : 1);
  *splits = static_cast<int>(s > 1 ? ceil_div(k_tiles, per) : 1);
  *split_tiles = static_cast<int>(per);
  return cudaSuccess;
}

cudaError_t launch_matmul_v8_split_k(const float* A, const float* B, float* C,
                                     int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, CVT_V8_BN), gy = ceil_div(M, CVT_V8_BM);
  int splits = 1, split_tiles = 1;
  const cudaError_t err = choose_splits(gx, gy, K, &splits, &split_tiles);
  if (err != cudaSuccess) return err;
  dim3 grid(gx, gy, splits);  // a split: z is the split, and gy fits on y (choose_splits)
  if (splits == 1 && !fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  return vector_path_ok(A, B, C, N, K)
             ? launch_v8<4>(A, B, C, M, N, K, grid, splits, split_tiles, stream)
             : launch_v8<1>(A, B, C, M, N, K, grid, splits, split_tiles, stream);
}

}  // namespace cvt
