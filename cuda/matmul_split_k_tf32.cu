// GPU matmul split_k_tf32: cuda_split_k's idea at tf32, on t4's way of feeding wgmma with
// 32-bit values (Hopper, sm_90a). A path beside the tensor-core ladder, not a rung of it:
// cuda_auto runs it at tf32 where t4's tiles are too few (bindings/auto.py).
//
//   idea      as cuda/matmul_split_k.cu: grid y shares out the k loop of every output tile,
//             each split writes its float32 partial tile to a workspace, and split_k_sum
//             (split_k.cuh) adds the partials in split order. At 256 x 256 x 524288 t4 has
//             one cluster of two tiles for 132 SMs (0.04x cuBLAS on the H200).
//   change    from t4: no producer warpgroup, no persistent grid, no cluster: t2's loop
//             (thread 0 fetches each stage by TMA; both warpgroups consume; a stage is free
//             after wgmma_wait<1> and one block barrier), with t4's computation C^T = B^T A^T
//             kept whole: wgmma m64n256k8 tf32 with B^T's fragments in registers (rounded
//             to TF32 as t4 rounds them, two sets so that tile t + 1 is loaded while tile t
//             runs) and A read K-major from shared memory (cut to TF32 by the tensor core).
//             Block tile 256 rows of C x 128 columns, as t4's; grid (tiles, S).
//   splits    split_count (split_k.cuh) at BM = 256, BN = 128, BK = 32, 4-byte values:
//             blocks / tiles, k_tiles / MIN_RUN and the partials' bytes; bindings/auto.py
//             repeats it (splits()).
//   traffic   block tile 256 x 128, k padded to a multiple of 32 by TMA's zero fill:
//               global loads  A: M*K*ceil(N/128)   B: N*K*ceil(M/256)   (any S)
//               shared loads  by threads: B^T's fragments, every B value of every stage
//                             once: blocks * 128 * 32*ceil(K/32)
//               partials      S > 1: S*M*N floats written, read once by the sum
//               global stores M*N
//   precond.  A, B, C float32, row-major contiguous. As t4: this kernel runs when TMA can
//             describe A and B (pointers 16-byte aligned, K and N multiples of 4, K >= 1);
//             the op stages them where it pays, else v7's FFMA kernel runs; K = 0 writes
//             zeros. Needs compute capability 9.0 and a build for sm_90a.
//   params    STAGES, MIN_RUN = CVT_SPLIT_K_TF32_* (matmul_config.h); BM = 256, BN = 128,
//             BK = 32 (t4's). 256 threads, STAGES * 48 KiB of shared memory (one block per
//             SM); a workspace of S*M*N floats from a stream-ordered pool (S > 1).
//   run       python -m bench check --kernels cuda_split_k_tf32 --precision tf32 --shapes 256x256x524288,1000x1000x4099
#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "split_k.cuh"

namespace cvt {

template <int STAGES>
__global__ void __launch_bounds__(256, 1)
matmul_split_k_tf32_kernel(const __grid_constant__ CUtensorMap a_map,
                           const __grid_constant__ CUtensorMap b_map, float* __restrict__ C,
                           float* __restrict__ partials, int M, int N, int K, int split_tiles) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 256, BN = 128, BK = 32;           // C rows, C columns, k
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // floats per stage
  constexpr int BOX = 32 * 32;                         // a B box: 32 k x 32 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * 4;

  extern __shared__ unsigned char smem_raw[];
  float* const sA = reinterpret_cast<float*>(align_1024(smem_raw));
  float* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);

  const int64_t tiles_n = ceil_div(N, BN);
  const int m0 = static_cast<int>(blockIdx.x / tiles_n * BM);
  const int n0 = static_cast<int>(blockIdx.x % tiles_n * BN);
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const int first = blockIdx.y * split_tiles;
  const int tiles = (k_tiles - first < split_tiles ? k_tiles - first : split_tiles);

  const int tid = threadIdx.x, consumer = tid / 128;  // C columns 64 consumer .. of the block
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();

  const auto fetch = [&](int t) {  // thread 0: the split's k tile t into stage t % STAGES
    const int s = t % STAGES;
    mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
    tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], (first + t) * BK, m0);
#pragma unroll
    for (int box = 0; box < BN / 32; ++box)
      tma_load_2d(sB + s * B_STAGE + box * BOX, &b_map, &full[s], n0 + box * 32,
                  (first + t) * BK);
  };
  if (tid == 0)
    for (int t = 0; t < STAGES - 1 && t < tiles; ++t) fetch(t);

  // B^T's fragments as t4 loads them (its "change" says why rows g and g + 8 are adjacent
  // columns and how a warp's loads cover the banks).
  const int lane = tid % 32, warp = (tid % 128) / 32;
  const int g = lane / 4, q = lane % 4;
  const int box = consumer * 2 + warp / 2;
  const int c = (g / 4) * 16 + (warp % 2) * 8 + 2 * (g % 4);
  const auto b_at = [&](int k) { return box * BOX + k * 32 + (((c / 4) ^ (k % 8)) * 4) + c % 4; };
  const auto tf32 = [](float x) {  // to the nearest TF32, ties to even (as t4)
    unsigned r;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
  };
  using Fragments = unsigned[BK / 8][4];
  float d[128] = {};  // this warpgroup's 64 x 256 of C^T
  // Tile t: wait for its bytes, load its fragments into `frag`, issue its 4 wgmma as one
  // group; then wait<1> (tile t - 1 is done: its fragments and its stage are free) and
  // refill that stage with tile t + STAGES - 1.
  const auto step = [&](Fragments& frag, int t) {
    const int s = t % STAGES;
    mbarrier_wait(&full[s], (t / STAGES) & 1);
    const float* const bt = sB + s * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
      const float2 lo = *reinterpret_cast<const float2*>(bt + b_at(kk * 8 + q));
      const float2 hi = *reinterpret_cast<const float2*>(bt + b_at(kk * 8 + q + 4));
      frag[kk][0] = tf32(lo.x);
      frag[kk][1] = tf32(lo.y);
      frag[kk][2] = tf32(hi.x);
      frag[kk][3] = tf32(hi.y);
    }
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk)
      wgmma_m64n256k8_tf32_rs(d, frag[kk], wgmma_descriptor(sA + s * A_STAGE + kk * 8, 16, 1024));
    wgmma_commit();
    wgmma_wait<1>();
    __syncthreads();
    if (tid == 0 && t + STAGES - 1 < tiles) fetch(t + STAGES - 1);
  };
  Fragments f0, f1;
  for (int t = 0; t < tiles; t += 2) {
    step(f0, t);
    if (t + 1 < tiles) step(f1, t + 1);
  }
  wgmma_wait<0>();

  // d[4 j + 2 h + e] is C(m0 + 8 j + 2 q + e, n0 + 32 box + c + h) (t4's epilogue): one
  // 8-byte store per j and e, into C (one split) or this split's slice of the workspace.
  float* const out = gridDim.y == 1 ? C : partials + static_cast<int64_t>(blockIdx.y) * M * N;
  const int col = n0 + 32 * box + c;  // even, and N % 4 == 0: col < N means col + 1 < N
  if (col < N) {
#pragma unroll
    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = m0 + 8 * j + 2 * q + e;
        if (row < M)
          *reinterpret_cast<float2*>(out + static_cast<int64_t>(row) * N + col) =
              make_float2(d[4 * j + e], d[4 * j + 2 + e]);
      }
  }
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

cudaError_t launch_matmul_split_k_tf32(const float* A, const float* B, float* C, int64_t M,
                                       int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_SPLIT_K_TF32_BM, BN = CVT_SPLIT_K_TF32_BN, BK = CVT_SPLIT_K_TF32_BK;
  constexpr int STAGES = CVT_SPLIT_K_TF32_STAGES;
  static_assert(BM == 256 && BN == 128 && BK == 32, "CVT_SPLIT_K_TF32_BM, BN, BK: t4's");
  if (!hopper_body_built()) return cudaErrorNotSupported;
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) return cudaMemsetAsync(C, 0, M * N * sizeof(float), stream);
  if (!tma_path_ok(A, B, C, N, K, 4))
    return launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream);  // see "precond."
  CUtensorMap a_map, b_map;
  if (!tensor_map_f32(&a_map, A, M, K, BM) || !tensor_map_f32(&b_map, B, K, N, BK))
    return cudaErrorInvalidValue;
  constexpr auto kernel = matmul_split_k_tf32_kernel<STAGES>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 4 + STAGES * 8;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  int blocks = 0;
  if ((err = resident_blocks<kernel>(256, smem, &blocks)) != cudaSuccess) return err;
  const int64_t tiles = ceil_div(M, BM) * ceil_div(N, BN);
  if (tiles > kMaxGridX) return cudaErrorInvalidConfiguration;
  const int64_t splits = split_count(M, N, K, BM, BN, BK, CVT_SPLIT_K_TF32_MIN_RUN, 4, blocks);
  const int64_t split_tiles = ceil_div(ceil_div(K, BK), splits);

  void* workspace = nullptr;
  if (splits > 1 &&
      (err = workspace_alloc(&workspace, static_cast<size_t>(splits * M * N) * sizeof(float),
                             stream)) != cudaSuccess)
    return err;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  kernel<<<grid, 256, smem, stream>>>(a_map, b_map, C, static_cast<float*>(workspace),
                                      static_cast<int>(M), static_cast<int>(N),
                                      static_cast<int>(K), static_cast<int>(split_tiles));
  err = cudaGetLastError();
  if (splits > 1) {
    if (err == cudaSuccess)
      err = launch_split_k_sum<float>(static_cast<const float*>(workspace), C, M * N, splits,
                                      blocks, stream);
    const cudaError_t freed = cudaFreeAsync(workspace, stream);
    if (err == cudaSuccess) err = freed;
  }
  return err;
}

}  // namespace cvt
