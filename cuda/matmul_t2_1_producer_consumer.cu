// GPU matmul t2.1, the first of t3's ideas alone: warp specialization. t2's tiles, t2's grid
// (one block per tile of C), t2's epilogue; only who does what changes (Hopper, sm_90a).
//
//   idea      in t2 the same warps copy and compute: every k tile ends in a block barrier
//             (a stage is free only when both warpgroups have read it), and thread 0 stops
//             multiplying to issue the next copies. Give the jobs to different warpgroups.
//             A producer warpgroup (one thread issues TMA) runs ahead of two consumer
//             warpgroups (wgmma) through the ring of stages; each stage has two mbarriers,
//             full (its bytes have landed: the consumers wait on it) and empty (every
//             consumer warp has finished reading it: the producer waits on it). No block
//             barrier is left in the k loop: a consumer that finishes a k tile early goes
//             on to the next one.
//   change    from t2: 384 threads instead of 256 (warpgroup 0 produces, warpgroups 1 and 2
//             consume, each 64 x BN as t2's two); empty barriers, one arrival per consumer
//             warp, instead of __syncthreads. Every thread gets the same registers (at most
//             65536 / 384 = 168: ptxas uses 154, no spill), the producer's idle too. Kept:
//             t2's tiles (CVT_T2_*), its grouped block order, its epilogue from registers.
//             Not yet: the register split (t2.2), a persistent grid (t2.3), clusters and
//             multicast (t2.4), a TMA store (t3).
//   banks     as t2.
//   traffic   as t2: global loads A: M*K*ceil(N/BN), B: N*K*ceil(M/BM) (TMA boxes); shared
//             reads ~ N^3/BN + N^3/64 values by the tensor core; global stores M*N.
//   precond.  as t2 (the TMA path, staged into padded buffers where compute-bound, else
//             t1's kernel; K = 0 zeros).
//   params    BN, STAGES, GROUP = CVT_T2_* (matmul_config.h): t2's, so that only the idea
//             differs; BM = 128, BK = 64. 384 threads, STAGES * (128 + BN) * 64 * 2 bytes of
//             shared memory, one block per SM.
//   run       python -m bench check --kernels cuda_t2.1* --precision bf16,fp16 --shapes 1000x1000x1000,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <class T, int BN, int STAGES, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t2_1_producer_consumer_kernel(const __grid_constant__ CUtensorMap a_map,
                                     const __grid_constant__ CUtensorMap b_map,
                                     T* __restrict__ C, int M, int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 128, BK = 64;
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int B_BOX = BK * 64;                        // one TMA box of B: 64 k x 64 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(T);
  constexpr int CONSUMER_WARPS = 8;

  // The ring (as t2), then the barriers: full[s] (the producer's arrival + STAGE_BYTES of
  // copies) and empty[s] (one arrival per consumer warp).
  extern __shared__ unsigned char smem_raw[];
  T* const sA = reinterpret_cast<T*>(align_1024(smem_raw));
  T* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);
  uint64_t* const empty = full + STAGES;

  // t2's grouped order on a 1-D grid: one block per tile of C.
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, BM);
  const int64_t b = blockIdx.x;
  const int64_t first = b / (GROUP * tiles_n) * GROUP;
  const int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
  const int m0 = static_cast<int>((first + (b % (GROUP * tiles_n)) % rows) * BM);
  const int n0 = static_cast<int>((b % (GROUP * tiles_n)) / rows * BN);

  const int tid = threadIdx.x, group = tid / 128;  // 0: producer; 1, 2: consumers
  const int tiles = static_cast<int>(ceil_div(K, BK));
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
    if (tid == 0)
      for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        // Stage s is free once every consumer warp has read its last use (a fresh barrier
        // passes the wait for parity 1: the ring starts empty).
        mbarrier_wait(&empty[s], static_cast<unsigned>((t / STAGES) & 1) ^ 1);
        mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
        tma_load_2d(sA + s * A_STAGE, &a_map, &full[s], t * BK, m0);
#pragma unroll
        for (int box = 0; box < BN / 64; ++box)
          tma_load_2d(sB + s * B_STAGE + box * B_BOX, &b_map, &full[s], n0 + box * 64, t * BK);
      }
  } else {
    // ---------------------------------------------------------------- the consumers
    const int consumer = group - 1;  // rows 64 * consumer .. of the block tile
    const int lane = tid % 32, warp = (tid % 128) / 32;
    float d[BN / 2];                 // this warpgroup's 64 x BN of C (as t2)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int t = 0; t < tiles; ++t) {
      const int s = t % STAGES;
      mbarrier_wait(&full[s], static_cast<unsigned>((t / STAGES) & 1));
      const T* const a = sA + s * A_STAGE + consumer * 64 * BK;
      const T* const bt = sB + s * B_STAGE;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        wgmma_m64nNk16<BN, T>(d, wgmma_descriptor(a + kk * 16, 16, 1024),
                              wgmma_descriptor(bt + kk * 16 * 64, B_BOX * sizeof(T), 1024));
      wgmma_commit();
      wgmma_wait<1>();  // k tile t - 1's group is done: its stage is free for the producer
      if (t > 0 && lane == 0) mbarrier_arrive(&empty[(t - 1) % STAGES]);
    }
    wgmma_wait<0>();

    // t2's epilogue: thread (warp w, lane 4 g + q) holds rows 16 w + g and 16 w + g + 8,
    // columns 8 j + 2 q and 8 j + 2 q + 1, in d[4 j .. 4 j + 3].
    const int g = lane / 4, q = lane % 4;
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
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

template <class T>
static cudaError_t launch_t2_1(const void* A, const void* B, void* C, int64_t M, int64_t N,
                               int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T2_BM, BK = CVT_T2_BK, BN = CVT_T2_BN, STAGES = CVT_T2_STAGES;
  static_assert(BN == 128 || BN == 256, "CVT_T2_BN: the wgmma shapes of cuda/hopper.cuh");
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  CUtensorMap a_map, b_map;
  if (!tensor_map_16bit(&a_map, A, M, K, BM, bf16) || !tensor_map_16bit(&b_map, B, K, N, BK, bf16))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  const auto kernel = matmul_t2_1_producer_consumer_kernel<T, BN, STAGES, CVT_T2_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 2 + STAGES * 16;
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  const int64_t blocks = ceil_div(M, BM) * ceil_div(N, BN);
  if (blocks > kMaxGridX) return cudaErrorInvalidConfiguration;  // one block per tile, on x
  kernel<<<static_cast<unsigned>(blocks), 384, smem, stream>>>(
      a_map, b_map, static_cast<T*>(C), static_cast<int>(M), static_cast<int>(N),
      static_cast<int>(K));
  return cudaGetLastError();
}

cudaError_t launch_matmul_t2_1_producer_consumer(const void* A, const void* B, void* C,
                                                 int64_t M, int64_t N, int64_t K,
                                                 TensorCoreType type, cudaStream_t stream) {
  return launch_tma_rung(launch_t2_1<__nv_bfloat16>, launch_t2_1<__half>, A, B, C, M, N, K,
                         type, stream);  // see "precond."
}

}  // namespace cvt
