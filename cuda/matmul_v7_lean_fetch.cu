// GPU matmul v7, a lean fetch: interior tiles are copied without a single mask.
//
//   idea      make the copies of a k-step cost a few instructions, not a few hundred.
//             In v6 every copy of every tile recomputes its address from k0 in 64-bit
//             arithmetic, tests its row, column and k against M, N, K, and takes a branch
//             to either the copy or a zero store: ~210 SASS instructions per warp and
//             16-k step for 12 copies, beside the 2048 FFMAs. Nsight Compute on the H100
//             at 4096^3 counts 2,492,882,944 warp instructions for v6's 2,147,483,648
//             FFMAs: 329 others per warp and step, 13.9% of the issue slots
//             (docs/performance/ffma_rungs.md, "v6 → v7: a lean fetch"). But a block
//             whose BM x BN tile lies inside C needs no mask until the last, partial
//             k-tile: every copy of its first K / BK tiles is in bounds. For those tiles
//             v7 keeps one running pointer into A and one into B per thread, advances them
//             by BK columns of A and BK rows of B per tile, and issues the copies at fixed
//             offsets from them: no compare, no branch, no zero store (~40 instructions
//             per step).
//   change    from v6: only the fetch. A block decides once whether its tile is interior;
//             for an interior block, tiles 0 .. K/BK - 1 take the lean fetch below and the
//             remaining partial tile (if K % BK != 0) takes v6's masked fetch; an edge block
//             (the last block row or column when M or N is not a multiple of the tile)
//             takes v6's masked fetch for every tile. Tiles are fetched in increasing order
//             exactly once each, so a running pointer is always at the next tile. The
//             stage being written and the stage being read advance by one and wrap, without
//             a modulo. Tiles, warp layout, inner loop, pipeline and block order: v6's (the
//             sweep's best tiles for v7 are v6's, cuda/driver/ffma_sweep.sh).
//   pipeline  as v6 (one barrier per step, copies STAGES-1 steps ahead).
//   banks     as v6.
//   traffic   as v6, element for element: the lean fetch copies exactly what v6's masked
//             fetch copies for an interior tile (every element is in bounds there).
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (cp.async copies)
//               shared loads  ceil(M/BM)*ceil(N/BN) * BM*BN/(TM*TN) * (TM+TN) * BK*ceil(K/BK)
//               global stores M*N
//               FFMAs         ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//             What changes is the instructions around them: per thread and interior tile,
//             BM*BK/THREADS + BK*BN/(W*THREADS) copies and the adds of their addresses.
//   precond.  as v6: float32, row-major contiguous; any M, N, K >= 0, any alignment (W = 4
//             when vector_path_ok, else W = 1); rows of blocks folded into (y, z) past
//             65535; sm_80+ for cp.async.
//   params    BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP = CVT_V7_* (matmul_config.h);
//             dynamic shared memory STAGES * (BK*(BM+4) + BK*BN) * 4 bytes (74,496 with
//             the defaults, as v6).
//   measured  H100 against cuBLAS fp32 (TF32 off): 0.954x at 4096^3 in results/h100 (2026-11-26;
//             v6 0.846x, triton_autotuned 0.873x in the same run); 0.955x and 0.971x at 4096^3
//             and 8192^3 in the tile sweep (results/sweeps/h100/ffma_sweep.txt, row 27).
//   run       python -m bench check --kernels cuda_v7* --shapes 1000x999x37,1024x1024x1024
#include "common.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "warptiling.cuh"

namespace cvt {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP, int W>
__global__ void __launch_bounds__(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS,
                                  WarpTiling<BM, BN, WM, WN, TM, TN>::MIN_BLOCKS)
matmul_v7_lean_fetch_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int M, int N, int K) {
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

  // Grouped block order (v6's "change (2)"), over gx x gy tiles: gy is not gridDim.y, which
  // holds only part of the rows when the launcher folds them into (y, z) (see precond.).
  const int64_t gx = gridDim.x, gy = ceil_div(M, BM), y = block_y();
  if (y >= gy) return;  // past the last row of a folded grid
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

  // The lean fetch: running pointers at the next tile's element of pass 0, fixed offsets.
  const float* a_next = a_src;
  const float* b_next = b_src;
  const int64_t b_tile = static_cast<int64_t>(BK) * N;  // B's pointer step per tile
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

  const int tiles = static_cast<int>(ceil_div(K, BK));
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0 .. STAGES-2
    if (s < tiles) fetch(s, s);
    cp_async_commit();
  }

  float c[TM][TN] = {};
  Floats<4> a[PM], b4[PN];
  int read = 0, write = STAGES - 1;  // the stages of tile t and of tile t + STAGES - 1
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile t are in shared memory
    __syncthreads();              // everyone's are; and stage (t-1) % STAGES is read by no one
    const int next = t + STAGES - 1;
    if (next < tiles) fetch(next, write);
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
}

template <int W>
static cudaError_t launch_v7(const float* A, const float* B, float* C, int64_t M, int64_t N,
                             int64_t K, dim3 grid, cudaStream_t stream) {
  constexpr int BM = CVT_V7_BM, BN = CVT_V7_BN, BK = CVT_V7_BK, STAGES = CVT_V7_STAGES;
  const auto kernel = matmul_v7_lean_fetch_kernel<BM, BN, BK, CVT_V7_WM, CVT_V7_WN, CVT_V7_TM,
                                                   CVT_V7_TN, STAGES, CVT_V7_GROUP, W>;
  constexpr int threads = WarpTiling<BM, BN, CVT_V7_WM, CVT_V7_WN, CVT_V7_TM, CVT_V7_TN>::THREADS;
  constexpr int smem = STAGES * (BK * (BM + 4) + BK * BN) * static_cast<int>(sizeof(float));
  if (smem > 48 * 1024) {  // past the default limit a kernel must ask for its shared memory
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (err != cudaSuccess) return err;
  }
  kernel<<<grid, threads, smem, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

cudaError_t launch_matmul_v7_lean_fetch(const float* A, const float* B, float* C,
                                        int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, CVT_V7_BN), gy = ceil_div(M, CVT_V7_BM);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  return vector_path_ok(A, B, C, N, K) ? launch_v7<4>(A, B, C, M, N, K, grid, stream)
                                       : launch_v7<1>(A, B, C, M, N, K, grid, stream);
}

}  // namespace cvt
