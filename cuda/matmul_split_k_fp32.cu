// GPU matmul split_k_fp32: the k loop of each output tile shared out over the whole grid, in
// float32 on FFMA, for products with too few tiles to fill the GPU. A path beside the FFMA
// ladder, not a rung of it: the fp32 twin of cuda_split_k (cuda/matmul_split_k.cu), and the
// CUDA side of triton_split_k at fp32.
//
//   idea      v8 splits a tile's k loop over a thread-block cluster and sums the partial
//             tiles through distributed shared memory: no workspace, but at most
//             CVT_V8_MAX_SPLITS (8) blocks per tile. 128 x 128 x 131072 is one tile of v7's
//             128 x 256: 8 of 132 SMs work (H200: 0.03x cuBLAS fp32). Share the k loop out over
//             the grid instead, as cuda_split_k does at 16 bits: split s of S multiplies k
//             tiles [s P, (s + 1) P) of every output tile (grid z), writes its float32 partial
//             tile to a workspace, and a second kernel adds the S partials of each value in
//             split order (split_k.cuh). The sum is the same, bit for bit, on every run, and no
//             block waits for another.
//   change    from v8: the split is grid z without a cluster; after the k loop each block
//             stores its accumulators to the workspace W[split][M][N] (pieces of W floats, as
//             v7 stores C), and split_k_sum adds them; one split runs v7 itself.
//   tiles     v7's 128 x 256 (8 warps of 64 x 64), or 128 x 128 (4 warps of the same 64 x 64)
//             where N <= 128: at N = 128 half of v7's tile would be columns past C, so each
//             block would do half the useful work of its k tiles (128 x 128 x 131072 ran at
//             0.54x cuBLAS on the wide tile, docs/performance/shapes.md).
//   splits    chosen by the launcher: tiles = ceil(M/BM) ceil(N/BN), k_tiles = ceil(K/BK),
//             blocks = the blocks the GPU holds at once (SMs x blocks per SM);
//               S = min(blocks / tiles, k_tiles / MIN_RUN, S_bytes), at least 1,
//             S_bytes the most splits whose partials (S*M*N floats, written and read once)
//             are no more than the compulsory bytes (split_k.cuh, split_count). Then P =
//             ceil(k_tiles / S) and S = ceil(k_tiles / P), so that no split is empty.
//             bindings/auto.py repeats the rule (splits()).
//   traffic   as v7, element for element: the splits together issue the copies of the k
//             tiles of v7's loop, each once.
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (cp.async copies)
//               partials      S > 1: S*M*N floats written, read once by the sum
//               global stores M*N
//   precond.  as v7: float32, row-major contiguous; any M, N, K >= 0, any alignment (W = 4
//             when vector_path_ok, else W = 1); sm_80+ (cp.async). The split needs the tiles'
//             rows on grid y (they are fewer than the GPU's blocks) and S <= 65535.
//   params    BM, BN, BK, WM, WN, TM, TN, STAGES, MIN_RUN, NARROW_BN = CVT_SPLIT_K_FP32_*
//             (matmul_config.h; v7's tile); dynamic shared memory STAGES * (BK*(BM+4) + BK*BN) * 4 bytes; a
//             workspace of S*M*N floats from a stream-ordered pool (S > 1).
//   run       python -m bench check --kernels cuda_split_k_fp32 --precision fp32 --shapes 128x128x131072,1000x1000x4099
#include "common.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "split_k.cuh"
#include "warptiling.cuh"

namespace cvt {

// The partial tile of split blockIdx.z over k tiles [z*split_tiles, (z+1)*split_tiles), into
// W[z][M][N]. The k loop is v7's: a ring of STAGES cp.async stages, lean copies for interior
// blocks and masked ones at the edges, warptiled FFMAs from float4 reads of shared memory.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int W>
__global__ void __launch_bounds__(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS,
                                  WarpTiling<BM, BN, WM, WN, TM, TN>::MIN_BLOCKS)
matmul_split_k_fp32_kernel(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ W_, int M, int N, int K, int split_tiles) {
  using Tiling = WarpTiling<BM, BN, WM, WN, TM, TN>;
  constexpr int THREADS = Tiling::THREADS, LANES_M = Tiling::LANES_M, LANES_N = Tiling::LANES_N;
  constexpr int PM = Tiling::PM, PN = Tiling::PN;
  constexpr int LDA = BM + 4;  // floats per row of a stage of sA (v6's padding: no conflicts)
  constexpr int A_STAGE = BK * LDA, B_STAGE = BK * BN;
  static_assert(STAGES >= 2, "a pipeline needs at least two stages");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % (W * THREADS) == 0,
                "each thread must copy the same number of pieces");

  extern __shared__ __align__(16) float smem[];
  float* const sA = smem;
  float* const sB = smem + STAGES * A_STAGE;

  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int lm = lane / LANES_N, ln = lane % LANES_N;
  const int row0 = wm * WM + lm * 4;
  const int col0 = wn * WN + ln * 4;

  // What this thread copies, fixed for the whole k loop (v7's "lean fetch").
  constexpr int A_STEP = THREADS / BK, B_STEP = THREADS / (BN / W);
  static_assert(THREADS % BK == 0 && THREADS % (BN / W) == 0, "a pass must cover whole rows");
  const int a_i = threadIdx.x / BK, a_k = threadIdx.x % BK;
  const int b_k = threadIdx.x / (BN / W), b_j = (threadIdx.x % (BN / W)) * W;
  const float* const a_src = A + (m0 + a_i) * K + a_k;
  const float* const b_src = B + static_cast<int64_t>(b_k) * N + n0 + b_j;
  const int64_t a_pass = static_cast<int64_t>(A_STEP) * K;
  const int64_t b_pass = static_cast<int64_t>(B_STEP) * N;
  const int a_dst = a_k * LDA + a_i, b_dst = b_k * BN + b_j;

  const auto fetch_masked = [&](int tile, float* a, float* bt) {
    const int64_t k0 = static_cast<int64_t>(tile) * BK;
#pragma unroll
    for (int p = 0; p < BM * BK / THREADS; ++p) {
      const int i = a_i + p * A_STEP;
      if (m0 + i < M && k0 + a_k < K) cp_async<1>(&a[a_k * LDA + i], a_src + p * a_pass + k0);
      else a[a_k * LDA + i] = 0.0f;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p) {
      const int kk = b_k + p * B_STEP;
      if (k0 + kk < K && n0 + b_j < N)
        cp_async<W>(&bt[kk * BN + b_j], b_src + p * b_pass + k0 * N);
      else
        *reinterpret_cast<Floats<W>*>(&bt[kk * BN + b_j]) = Floats<W>{};
    }
  };

  // This split's k tiles.
  const int tiles = static_cast<int>(ceil_div(K, BK));
  const int first_tile = blockIdx.z * split_tiles;
  const int end_tile = first_tile + split_tiles < tiles ? first_tile + split_tiles : tiles;

  const int64_t b_tile = static_cast<int64_t>(BK) * N;
  const float* a_next = a_src + static_cast<int64_t>(first_tile) * BK;
  const float* b_next = b_src + first_tile * b_tile;
  const auto fetch_lean = [&](float* a, float* bt) {
#pragma unroll
    for (int p = 0; p < BM * BK / THREADS; ++p)
      cp_async<1>(&a[a_dst + p * A_STEP], a_next + p * a_pass);
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p)
      cp_async<W>(&bt[b_dst + p * B_STEP * BN], b_next + p * b_pass);
    a_next += BK;
    b_next += b_tile;
  };
  const bool interior = m0 + BM <= M && n0 + BN <= N;
  const int lean_tiles = interior ? K / BK : 0;
  const auto fetch = [&](int tile, int s) {
    float* const a = sA + s * A_STAGE;
    float* const bt = sB + s * B_STAGE;
    if (tile < lean_tiles) fetch_lean(a, bt);
    else fetch_masked(tile, a, bt);
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (first_tile + s < end_tile) fetch(first_tile + s, s);
    cp_async_commit();
  }

  float c[TM][TN] = {};
  Floats<4> a[PM], b4[PN];
  int read = 0, write = STAGES - 1;
  for (int t = first_tile; t < end_tile; ++t) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
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
      for (int p = 0; p < PM; ++p)
        a[p] = *reinterpret_cast<const Floats<4>*>(&at[ki * LDA + row0 + p * 4 * LANES_M]);
#pragma unroll
      for (int q = 0; q < PN; ++q)
        b4[q] = *reinterpret_cast<const Floats<4>*>(&bt[ki * BN + col0 + q * 4 * LANES_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] += a[i / 4].v[i % 4] * b4[j / 4].v[j % 4];
      }
    }
  }
  cp_async_wait<0>();  // no copy outlives the block

  // The partial tile, stored as v7 stores C: c[i][j] is element (row, col) below.
  float* const w = W_ + static_cast<int64_t>(blockIdx.z) * M * N;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + (i / 4) * 4 * LANES_M + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += W) {
      const int64_t col = n0 + col0 + (j / 4) * 4 * LANES_N + j % 4;
      Floats<W> piece;
#pragma unroll
      for (int x = 0; x < W; ++x) piece.v[x] = c[i][j + x];
      if (row < M && col < N) *reinterpret_cast<Floats<W>*>(&w[row * N + col]) = piece;
    }
  }
}

// BN: v7's 256 columns, or CVT_SPLIT_K_FP32_NARROW_BN where C has no more columns than that
// (see "tiles"): the same warp tile, half the warps.
template <int W, int BN>
static cudaError_t launch_split(const float* A, const float* B, float* C, int64_t M, int64_t N,
                                int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_SPLIT_K_FP32_BM, BK = CVT_SPLIT_K_FP32_BK;
  constexpr int STAGES = CVT_SPLIT_K_FP32_STAGES;
  constexpr auto kernel =
      matmul_split_k_fp32_kernel<BM, BN, BK, CVT_SPLIT_K_FP32_WM, CVT_SPLIT_K_FP32_WN,
                                 CVT_SPLIT_K_FP32_TM, CVT_SPLIT_K_FP32_TN, STAGES, W>;
  constexpr int threads = WarpTiling<BM, BN, CVT_SPLIT_K_FP32_WM, CVT_SPLIT_K_FP32_WN,
                                     CVT_SPLIT_K_FP32_TM, CVT_SPLIT_K_FP32_TN>::THREADS;
  constexpr int smem = STAGES * (BK * (BM + 4) + BK * BN) * static_cast<int>(sizeof(float));
  cudaError_t err =
      smem > 48 * 1024
          ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)
          : cudaSuccess;
  if (err != cudaSuccess) return err;
  int blocks = 0;
  if ((err = resident_blocks<kernel>(threads, smem, &blocks)) != cudaSuccess) return err;
  const int64_t gx = ceil_div(N, BN), gy = ceil_div(M, BM);
  const int64_t splits =
      gy <= kMaxGridYZ
          ? split_count(M, N, K, BM, BN, BK, CVT_SPLIT_K_FP32_MIN_RUN, 4, blocks)
          : 1;
  if (splits <= 1 || splits > kMaxGridYZ)  // one split: v7 itself
    return launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream);
  const int64_t split_tiles = ceil_div(ceil_div(K, BK), splits);

  void* workspace = nullptr;
  if ((err = workspace_alloc(&workspace, static_cast<size_t>(splits * M * N) * sizeof(float),
                             stream)) != cudaSuccess)
    return err;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                  static_cast<unsigned>(splits));
  kernel<<<grid, threads, smem, stream>>>(A, B, static_cast<float*>(workspace),
                                          static_cast<int>(M), static_cast<int>(N),
                                          static_cast<int>(K), static_cast<int>(split_tiles));
  err = cudaGetLastError();
  if (err == cudaSuccess)
    err = launch_split_k_sum_any(static_cast<const float*>(workspace), C, M * N, splits, blocks,
                                 stream);
  const cudaError_t freed = cudaFreeAsync(workspace, stream);
  return err == cudaSuccess ? freed : err;
}

cudaError_t launch_matmul_split_k_fp32(const float* A, const float* B, float* C, int64_t M,
                                       int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) return launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream);  // zeros
  constexpr int WIDE = CVT_SPLIT_K_FP32_BN, NARROW = CVT_SPLIT_K_FP32_NARROW_BN;
  const bool vector = vector_path_ok(A, B, C, N, K);
  if (N <= NARROW)
    return vector ? launch_split<4, NARROW>(A, B, C, M, N, K, stream)
                  : launch_split<1, NARROW>(A, B, C, M, N, K, stream);
  return vector ? launch_split<4, WIDE>(A, B, C, M, N, K, stream)
                : launch_split<1, WIDE>(A, B, C, M, N, K, stream);
}

}  // namespace cvt
