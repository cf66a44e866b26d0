// GPU matmul split_k: the k loop of each output tile shared out over the grid, for products
// with too few tiles to fill the GPU (Hopper, sm_90a). A path beside the tensor-core ladder,
// not a rung of it: cuda_auto runs it where it pays (bindings/auto.py), and it is the CUDA
// twin of triton_split_k (triton_impl/matmul_split_k.py).
//
//   idea      a 128 x 128 tile of 128 x 128 x 131072 has 2048 k tiles of 64 and one block
//             to multiply them: one SM of 132 works, t5 splits it over 4 clusters (its
//             MAX_SPLIT), and cuBLAS runs 10x faster. Share the k loop out instead: split s of
//             S multiplies k tiles [s P, (s + 1) P) of every output tile (grid y), writes its
//             float32 partial tile to a workspace, and a second kernel adds the S partials of
//             each value in split order and rounds once. The sum is repeatable, bit for bit,
//             and no block waits for another (t5's owner waits for its helpers and adds their
//             partials alone; that is cheap at 2 parts, not at 132).
//   change    from t2: the block tile is 128 x 128 (BN = 128: four times the tiles of t5's
//             256 x 256 clusters, so fewer splits are needed), or 64 x 128 where M <= 64 (one
//             warpgroup; see "short"); grid (tiles, S), each block's
//             k loop over its split's tiles; the epilogue stores float pairs into the
//             workspace (S > 1) or rounded pairs into C (S = 1); then split_k_sum (split_k.cuh).
//             Kept from t2: TMA boxes into a ring of stages on mbarriers, wgmma m64nBNk16
//             from the 128-byte swizzle, one wgmma group in flight.
//   short     where M <= 64 (a transformer projection at 16 tokens, 16 x 4096 x 14336) a
//             128-row tile is at least half padding: its tensor cores do twice the useful
//             work, at 16 rows eight times, ~17 GFLOP at 16 x 8192 x 8192, 24 us beside the 28
//             us of reading B once on the H200. BM = SHORT_BM = 64 (wgmma's own M): one
//             warpgroup, half the work per k tile, half the shared memory (99 KiB: two blocks
//             per SM), so twice the splits and twice the loads in flight per SM.
//   splits    chosen by the launcher: tiles = ceil(M/BM) ceil(N/128), k_tiles = ceil(K/64),
//             blocks = the blocks the GPU holds at once (SMs x blocks per SM: 1, or 2 at
//             BM = 64);
//               S = min(blocks / tiles, k_tiles / MIN_RUN, S_bytes), at least 1,
//             S_bytes the most splits whose partials (S*M*N floats, written and read once)
//             are no more than the compulsory bytes (MK + KN + MN values). Then P =
//             ceil(k_tiles / S) and S = ceil(k_tiles / P), so that no split is empty.
//             bindings/auto.py repeats the rule (splits()) to pick this path where S > 1.
//   banks     as t2 (TMA writes and wgmma reads the 128-byte swizzle without conflicts); the
//             partials go from registers to global memory in 8-byte pairs (a warp's quarter
//             row of 8 pairs: whole 32-byte sectors).
//   traffic   block tile 128 x 128, k padded to a multiple of 64 by TMA's zero fill:
//               global loads  A: M*K*ceil(N/128)   B: N*K*ceil(M/128)   (the splits share
//                             each tile's k tiles: the same loads for any S)
//               partials      S > 1: S*M*N floats written, read once by the sum
//               global stores M*N
//   precond.  A, B, C fp16 or bf16 (all the same), row-major contiguous; float32
//             accumulation, output rounded to nearest once. As t2: this kernel runs when TMA
//             can describe A and B (pointers 16-byte aligned, K and N multiples of 8, K >= 1),
//             the op stages them where it pays (bindings/matmul_ops.cpp, "Staging for the
//             TMA rungs"), else t1's kernel runs; K = 0 writes zeros. Needs compute
//             capability 9.0 and a build for sm_90a (cudaErrorNotSupported otherwise).
//   params    BN, STAGES, MIN_RUN, SHORT_BM = CVT_SPLIT_K_* (matmul_config.h); BM = 128, BK = 64
//             (t2's). 2 * BM threads, STAGES * (BM + BN) * BK * 2 bytes of shared memory (128
//             KiB at BM = 128: one block per SM; 96 KiB at 64: two); a workspace of S*M*N
//             floats from a stream-ordered pool (S > 1).
//   run       python -m bench check --kernels cuda_split_k --precision bf16,fp16 --shapes 128x128x131072,1000x1000x4099
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "split_k.cuh"

namespace cvt {

template <class T, int BM, int BN, int STAGES>
__global__ void __launch_bounds__(2 * BM, 1)
matmul_split_k_kernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map, T* __restrict__ C,
                      float* __restrict__ partials, int M, int N, int K, int split_tiles) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BK = 64;
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOX = BK * 64;                        // one TMA box of B: 64 k x 64 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);

  // The ring, as t2: STAGES tiles of A, then STAGES tiles of B, on 1024-byte boundaries.
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);

  // Tile blockIdx.x in row-major order (few tiles: no grouping to do), split blockIdx.y.
  const int64_t tiles_n = ceil_div(N, BN);
  const int m0 = static_cast<int>(blockIdx.x / tiles_n * BM);
  const int n0 = static_cast<int>(blockIdx.x % tiles_n * BN);
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const int first = blockIdx.y * split_tiles;
  const int tiles = (k_tiles - first < split_tiles ? k_tiles - first : split_tiles);

  const int tid = threadIdx.x, group = tid / 128;  // warpgroup 0: rows 0-63, 1: rows 64-127
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();

  // Thread 0 copies the split's k tile t (k tile first + t) into stage t % STAGES.
  const auto fetch = [&](int t) {
    const int s = t % STAGES;
    mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
    tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], (first + t) * BK, m0);
#pragma unroll
    for (int box = 0; box < BN / 64; ++box)
      tma_load_2d(sB + s * B_STAGE + box * B_BOX, &b_map, &full[s], n0 + box * 64,
                  (first + t) * BK);
  };
  if (tid == 0)
    for (int t = 0; t < STAGES - 1 && t < tiles; ++t) fetch(t);

  float d[BN / 2] = {};  // this warpgroup's 64 x BN of the split's partial tile
  for (int t = 0; t < tiles; ++t) {
    const int s = t % STAGES;
    mbarrier_wait(&full[s], (t / STAGES) & 1);
    const T* const a = sA + s * A_STAGE + group * 64 * BK;
    const T* const bt = sB + s * B_STAGE;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      wgmma_m64nNk16<BN, T>(d, wgmma_descriptor(a + kk * 16, 16, 1024),
                            wgmma_descriptor(bt + kk * 16 * 64, B_BOX * sizeof(T), 1024));
    wgmma_commit();
    wgmma_wait<1>();  // tile t - 1's group has finished reading its stage ...
    __syncthreads();  // ... in every warpgroup: stage (t - 1) % STAGES is free
    if (tid == 0 && t + STAGES - 1 < tiles) fetch(t + STAGES - 1);
  }
  wgmma_wait<0>();

  // The accumulator layout as t2's epilogue: rows 16 w + g (+ 8), columns 8 j + 2 q (+ 1).
  // N % 8 == 0: a pair is inside C or outside it. One split: C itself, rounded; else this
  // split's slice of the workspace, S slices of M x N floats.
  const int lane = tid % 32, warp = (tid % 128) / 32;
  const int g = lane / 4, q = lane % 4;
  float* const slice = partials + static_cast<int64_t>(blockIdx.y) * M * N;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = m0 + group * 64 + warp * 16 + g + 8 * h;
      const int64_t col = n0 + j * 8 + 2 * q;
      if (row >= M || col >= N) continue;
      if (gridDim.y == 1)
        *reinterpret_cast<unsigned*>(&C[row * N + col]) =
            pack_pair<T>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      else
        *reinterpret_cast<float2*>(&slice[row * N + col]) =
            make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T, int BM>
static cudaError_t launch_split_k_tile(const void* A, const void* B, void* C, int64_t M,
                                       int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int BK = CVT_SPLIT_K_BK, BN = CVT_SPLIT_K_BN, THREADS = 2 * BM;
  constexpr int STAGES = CVT_SPLIT_K_STAGES;
  static_assert(BN == 128 || BN == 256, "CVT_SPLIT_K_BN: the wgmma shapes of cuda/hopper.cuh");
  static_assert(BK == 64 && (BM == 128 || BM == 64), "BK: t2's; BM: one or two warpgroups");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) || !tensor_map_16bit(&b_map, B, K, N, BK, bf16))
    return cudaErrorInvalidValue;
  constexpr auto kernel = matmul_split_k_kernel<T, BM, BN, STAGES>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 8;
  static_assert(BM != CVT_SPLIT_K_SHORT_BM ||
                    CVT_SPLIT_K_SHORT_BLOCKS * (smem + 1024) <= 228 * 1024,
                "CVT_SPLIT_K_SHORT_BLOCKS (bindings/auto.py plans with it): blocks an SM holds");
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  int blocks = 0;
  if ((err = resident_blocks<kernel>(THREADS, smem, &blocks)) != cudaSuccess) return err;
  const int64_t tiles = ceil_div(M, BM) * ceil_div(N, BN);
  if (tiles > kMaxGridX) return cudaErrorInvalidConfiguration;  // one block per tile, on x
  const int64_t splits = split_count(M, N, K, BM, BN, BK, CVT_SPLIT_K_MIN_RUN, 2, blocks);
  const int64_t split_tiles = ceil_div(ceil_div(K, BK), splits);

  void* workspace = nullptr;
  if (splits > 1 &&
      (err = workspace_alloc(&workspace, static_cast<size_t>(splits * M * N) * sizeof(float),
                             stream)) != cudaSuccess)
    return err;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  kernel<<<grid, THREADS, smem, stream>>>(a_map, b_map, static_cast<T*>(C),
                                          static_cast<float*>(workspace), static_cast<int>(M),
                                          static_cast<int>(N), static_cast<int>(K),
                                          static_cast<int>(split_tiles));
  err = cudaGetLastError();
  if (splits > 1) {
    if (err == cudaSuccess)
      err = launch_split_k_sum<T>(static_cast<const float*>(workspace), static_cast<T*>(C),
                                  M * N, splits, blocks, stream);
    const cudaError_t freed = cudaFreeAsync(workspace, stream);
    if (err == cudaSuccess) err = freed;
  }
  return err;
}

// The 64-row tile where M fits in it (see "short"), else the 128-row one.
template <class T>
static cudaError_t launch_split_k(const void* A, const void* B, void* C, int64_t M, int64_t N,
                                  int64_t K, cudaStream_t stream) {
  static_assert(CVT_SPLIT_K_BM == 128 && CVT_SPLIT_K_SHORT_BM == 64, "the two tiles");
  return M <= CVT_SPLIT_K_SHORT_BM
             ? launch_split_k_tile<T, CVT_SPLIT_K_SHORT_BM>(A, B, C, M, N, K, stream)
             : launch_split_k_tile<T, CVT_SPLIT_K_BM>(A, B, C, M, N, K, stream);
}

cudaError_t launch_matmul_split_k(const void* A, const void* B, void* C, int64_t M, int64_t N,
                                  int64_t K, TensorCoreType type, cudaStream_t stream) {
  return launch_tma_rung(launch_split_k<__nv_bfloat16>, launch_split_k<__half>, A, B, C, M, N,
                         K, type, stream);  // see "precond."
}

}  // namespace cvt
