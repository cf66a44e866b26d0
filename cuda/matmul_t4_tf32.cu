// GPU matmul t4, DRAFT (not run on a GPU): t3's machinery at tf32, fp32 in and out (Hopper,
// sm_90a).
//
//   idea      wgmma reads tf32 operands from shared memory only K-major (no transpose for
//             32-bit types), and B is row-major (n-major). So compute the transpose:
//             C^T = B^T A^T. Its left operand B^T (n rows, k columns) comes from REGISTERS,
//             where any layout will do: the consumers load their fragments from the B tile
//             TMA put in shared memory; its right operand A^T is A read K-major, exactly
//             how wgmma wants it. The accumulator holds C^T; the epilogue writes it back
//             transposed through the staging boxes.
//   change    from t3: fp32 in and out; wgmma m64n256k8 tf32 with A from registers; the
//             block tile is 256 rows of C (the wgmma's n) by 128 columns (2 consumer
//             warpgroups of 64); k tiles of 32 (a 128-byte row of floats); clusters of
//             CLUSTER blocks along n share each A tile by multicast; each consumer loads its
//             B^T fragments per k tile (4 x 4 floats per thread) and waits for its wgmma
//             before reloading them (wgmma_wait<0>: the fragments are registers it reads).
//   traffic   (TMA path) global: A M*K*ceil(N/BN) delivered (L2 reads / CLUSTER), B
//             N*K*ceil(M/BM); shared loads by threads: the B^T fragments, N*K*ceil(M/BM)
//             values; multiply-adds ceil(M/BM)*BM * ceil(N/BN)*BN * BK*ceil(K/BK).
//   rounding  the tensor core uses the top 19 bits of each float (truncation, not
//             round-to-nearest), for both operands.
//   precond.  fp32, row-major contiguous; TMA path when A, B, C are 16-byte aligned and K, N
//             multiples of 4, K >= 1; otherwise v7's FFMA kernel (more precise: fp32).
//   params    BM = 256, BN = 128, BK = 32, STAGES 4, CLUSTER 2, GROUP 8 (not yet in
//             matmul_config.h); 384 threads; shared memory STAGES * 48 KiB + 32 KiB.
//
// CHECK ON GPU: the register fragment layout of the A operand (a0..a3 as in mma.sync
// m16n8k8 tf32), the K-major descriptor of the 256-row A tile, the staging layout.
#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t4_tf32_kernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map,
                      const __grid_constant__ CUtensorMap c_map, int M, int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = 256, BN = 128, BK = 32;          // C rows (m), C columns (n), k
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // floats per stage
  constexpr int A_PART = BM / CLUSTER;                 // A rows each block of a cluster copies
  constexpr int BOX = 32 * 32, C_BOX = 64 * 32;        // a B box (32 k x 32 n), a C box
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * 4;
  constexpr int CONSUMER_WARPS = 8;

  extern __shared__ unsigned char smem_raw[];
  float* const sA = reinterpret_cast<float*>(align_1024(smem_raw));
  float* const sB = sA + STAGES * A_STAGE;
  float* const sC = sB + STAGES * B_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sC + 2 * 2 * C_BOX);
  uint64_t* const empty = full + STAGES;

  const int tid = threadIdx.x, group = tid / 128;
  const unsigned rank = cluster_rank();
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMER_WARPS * CLUSTER);
    }
    mbarrier_init_fence();
  }
  cluster_sync();

  // Cluster tiles: BM rows by CLUSTER * BN columns; block `rank` takes columns n0 + rank BN.
  const int64_t clusters = gridDim.x / CLUSTER, cluster = blockIdx.x / CLUSTER;
  const int64_t tiles_m = ceil_div(M, BM), tiles_n = ceil_div(N, CLUSTER * BN);
  const int64_t tiles = tiles_m * tiles_n;
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {
    const int64_t first = u / (GROUP * tiles_n) * GROUP;
    const int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
    m0 = static_cast<int>((first + (u % (GROUP * tiles_n)) % rows) * BM);
    n0 = static_cast<int>((u % (GROUP * tiles_n)) / rows * CLUSTER * BN + rank * BN);
  };

  if (group == 0) {
    warpgroup_registers_decrease<40>();
    if (tid == 0) {
      int64_t it = 0;
      for (int64_t u = cluster; u < tiles; u += clusters) {
        int m0, n0;
        tile_origin(u, m0, n0);
        for (int t = 0; t < k_tiles; ++t, ++it) {
          const int s = static_cast<int>(it % STAGES);
          mbarrier_wait(&empty[s], static_cast<unsigned>((it / STAGES) & 1) ^ 1);
          mbarrier_arrive_expect_bytes(&full[s], STAGE_BYTES);
          float* const a_part = sA + s * A_STAGE + rank * A_PART * BK;
          if constexpr (CLUSTER == 1)
            tma_load_2d(a_part, &a_map, &full[s], t * BK, m0);
          else
            tma_load_2d_multicast(a_part, &a_map, &full[s], t * BK, m0 + rank * A_PART,
                                  (1u << CLUSTER) - 1);
#pragma unroll
          for (int box = 0; box < BN / 32; ++box)
            tma_load_2d(sB + s * B_STAGE + box * BOX, &b_map, &full[s], n0 + box * 32, t * BK);
        }
      }
    }
    __syncwarp();
  } else {
    warpgroup_registers_increase<232>();
    const int consumer = group - 1;  // C^T rows (C columns) 64 consumer .. of the block
    const int lane = tid % 32, warp = (tid % 128) / 32;
    const int g = lane / 4, q = lane % 4;
    float* const staging = sC + consumer * 2 * C_BOX;
    const bool leader = tid % 128 == 0;
    const auto release = [&](int s) {
      if constexpr (CLUSTER == 1)
        mbarrier_arrive(&empty[s]);
      else
        for (int r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(&empty[s], r);
    };
    // This thread's B^T rows (C columns inside the block): n and n + 8, in the B box
    // n / 32 at column n % 32; a B value (k, c) of a box sits at k * 32 + ((c / 4) ^ (k % 8)) * 4
    // + c % 4 (the 128-byte swizzle in floats).
    const int n_local = consumer * 64 + warp * 16 + g;
    const int box = n_local / 32, c0 = n_local % 32, c1 = c0 + 8;
    const auto b_at = [&](int k, int c) { return box * BOX + k * 32 + (((c / 4) ^ (k % 8)) * 4) + c % 4; };
    int64_t it = 0;
    int stored = 0;
    for (int64_t u = cluster; u < tiles; u += clusters) {
      int m0, n0;
      tile_origin(u, m0, n0);
      float d[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      for (int t = 0; t < k_tiles; ++t, ++it) {
        const int s = static_cast<int>(it % STAGES);
        mbarrier_wait(&full[s], static_cast<unsigned>((it / STAGES) & 1));
        const float* const bt = sB + s * B_STAGE;
        unsigned frag[BK / 8][4];
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {
          const int k = kk * 8 + q;
          frag[kk][0] = __float_as_uint(bt[b_at(k, c0)]);
          frag[kk][1] = __float_as_uint(bt[b_at(k, c1)]);
          frag[kk][2] = __float_as_uint(bt[b_at(k + 4, c0)]);
          frag[kk][3] = __float_as_uint(bt[b_at(k + 4, c1)]);
        }
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk)
          wgmma_m64n256k8_tf32_rs(d, frag[kk],
                                  wgmma_descriptor(sA + s * A_STAGE + kk * 8, 16, 1024));
        wgmma_commit();
        wgmma_wait<0>();  // the fragments are reloaded next tile; the stage is read
        if (lane == 0) release(s);
      }

      // d[4 j + 2 h + e] is C^T(row 16 warp + g + 8 h, column 8 j + 2 q + e), that is
      // C(m0 + 8 j + 2 q + e, n0 + 64 consumer + 16 warp + g + 8 h). Boxes of C are 64 rows
      // x 32 columns: the consumer's 256 x 64 is 4 x 2 of them; the warps 2 nb and 2 nb + 1
      // hold the columns of box column nb.
#pragma unroll
      for (int b = 0; b < 8; ++b, ++stored) {
        const int mb = b / 2, nb = b % 2;
        float* const out = staging + (stored % 2) * C_BOX;
        if (leader) tma_store_wait_read<1>();
        named_barrier(1 + consumer, 128);
        if (warp / 2 == nb) {
#pragma unroll
          for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const int r = 8 * j + 2 * q + e, cc = (warp % 2) * 16 + g + 8 * h;
                out[r * 32 + (((cc / 4) ^ (r % 8)) * 4) + cc % 4] = d[4 * (mb * 8 + j) + 2 * h + e];
              }
        }
        fence_proxy_async_shared();
        named_barrier(1 + consumer, 128);
        if (leader) {
          tma_store_2d(&c_map, out, n0 + consumer * 64 + nb * 32, m0 + mb * 64);
          tma_store_commit();
        }
      }
    }
    if (leader) tma_store_wait_all();
  }
  cluster_sync();
#else
  if (threadIdx.x == 0) __trap();
#endif
}

cudaError_t launch_matmul_t4_tf32(const float* A, const float* B, float* C, int64_t M,
                                  int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int BM = 256, BN = 128, BK = 32, STAGES = 4, CLUSTER = 2, GROUP = 8;
  if (!hopper_body_built()) return cudaErrorNotSupported;
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) return cudaMemsetAsync(C, 0, M * N * 4, stream);
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (!(aligned(A) && aligned(B) && aligned(C) && K % 4 == 0 && N % 4 == 0))
    return launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream);  // see "precond."
  CUtensorMap a_map, b_map, c_map;
  if (!tensor_map_f32(&a_map, A, M, K, BM / CLUSTER) || !tensor_map_f32(&b_map, B, K, N, BK) ||
      !tensor_map_f32(&c_map, C, M, N, 64))
    return cudaErrorInvalidValue;
  const auto kernel = matmul_t4_tf32_kernel<STAGES, CLUSTER, GROUP>;
  constexpr int smem = 1024 + (STAGES * (BM * BK + BK * BN) + 2 * 2 * 64 * 32) * 4 + STAGES * 16;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = CLUSTER;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  static int fits[64] = {};
  int device = 0;
  if ((err = cudaGetDevice(&device)) != cudaSuccess) return err;
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  if (fits[device] == 0) {
    config.gridDim = dim3(CLUSTER * 1024);
    if ((err = cudaOccupancyMaxActiveClusters(&fits[device], kernel, &config)) != cudaSuccess)
      return err;
    if (fits[device] < 1) return cudaErrorInvalidConfiguration;
  }
  const int64_t tiles = ceil_div(M, BM) * ceil_div(N, CLUSTER * BN);
  const int64_t clusters = tiles < fits[device] ? tiles : fits[device];
  config.gridDim = dim3(static_cast<unsigned>(clusters * CLUSTER));
  err = cudaLaunchKernelEx(&config, kernel, a_map, b_map, c_map, static_cast<int>(M),
                           static_cast<int>(N), static_cast<int>(K));
  return err != cudaSuccess ? err : cudaGetLastError();
}

}  // namespace cvt
