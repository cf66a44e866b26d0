// GPU matmul t4, the tf32 tensor-core rung: t3's machinery on float32 inputs, computing
// C^T = B^T A^T (Hopper, sm_90a).
//
//   idea      wgmma reads 32-bit operands from shared memory only K-major (the transpose
//             bit exists for 16-bit types only), and a row-major B is N-major. So compute
//             the transpose, C^T = B^T A^T. Its left operand B^T (n rows, k columns) may
//             come from REGISTERS, where any layout will do: the consumers load their
//             fragments from the B tile TMA put in shared memory. Its right operand A^T is
//             A read K-major, exactly how wgmma wants it. The accumulator holds a 64 x 256
//             piece of C^T per consumer, which the threads store into C as it is: each
//             holds pairs of adjacent columns of C. (cuBLAS's tf32 kernel for this layout
//             makes the same swap, and so do triton_persistent and triton_autotuned at tf32.)
//   change    from t3: fp32 in and out; wgmma m64n256k8 tf32 with its left operand in
//             registers; the block tile is 256 rows of C (the wgmma's n) by 128 columns
//             (2 consumer warpgroups of 64), k tiles of 32 floats (one 128-byte row);
//             clusters of CLUSTER blocks along n share each A tile by multicast (t3 shared
//             B along m). Each consumer loads its B^T fragments per k tile (16 floats per
//             thread, rounded to TF32) and keeps two sets: tile t + 1 is loaded and issued
//             while tile t runs, then wgmma_wait<1> frees tile t's registers and stage.
//             The wgmma rows g and g + 8 of a thread stand for adjacent columns, so each
//             pair of fragment values is one 8-byte shared load, and each pair of results
//             one 8-byte global store: C goes from registers to global memory directly (no
//             TMA store: Compute Sanitizer's initcheck did not see t4's float32 TMA stores
//             as writes, and these stores fill whole 32-byte sectors anyway).
//   banks     TMA writes and wgmma reads the 128-byte swizzle; the fragment loads (a warp:
//             4 rows of k x 8 pairs of columns, in two runs of 8 columns) cover all 32
//             banks, 2 wavefronts per 8-byte load.
//   rounding  B's values are rounded to the nearest TF32 (cvt.rn.tf32.f32, one F2FP each:
//             the same rounding as the Triton tf32 paths); A's, read by the tensor core from
//             shared memory, are truncated to their top 19 bits. So t4(A, I) is A truncated
//             and t4(I, B) is B rounded (tests/gpu/test_tensor_core_rungs.py).
//   traffic   M, N, K any (on this path: K % 4 == 0, N % 4 == 0); BM x BN block tiles,
//             k padded to a multiple of BK by TMA's zero fill; clusters of C blocks cover
//             C*BN columns.
//               global loads  A: M*K*C*ceil(N/(C*BN)) delivered (every block receives its
//                             whole A tile; L2 reads it once per cluster: /C)
//                             B: N*K*ceil(M/BM)
//               shared loads  by threads: B^T's fragments, every B value of every stage
//                             once: blocks * BN * BK*ceil(K/BK)
//               shared reads  by the tensor core: A^T, each consumer the whole 256 x 32
//               global stores M*N (8-byte stores, masked at the matrix's edge)
//               multiply-adds blocks * BM*BN * BK*ceil(K/BK)
//   precond.  A, B, C float32, row-major contiguous. This kernel runs when TMA can describe
//             A and B (and C's rows are 16-byte aligned): pointers 16-byte aligned, K and N
//             multiples of 4, K >= 1. Where they are not, the op stages A and B into
//             zero-padded, aligned buffers (K and N rounded up to 4) when the product is
//             compute-bound, as t2 does (bindings/matmul_ops.cpp, "Staging for the TMA
//             rungs"); below 64 FLOP per compulsory byte the launcher runs v7's FFMA kernel (float32 arithmetic: more precise
//             than tf32; the op's docstring says so); K = 0 writes zeros. Needs compute
//             capability 9.0 and a build for sm_90a (cudaErrorNotSupported otherwise).
//   params    STAGES, CLUSTER, GROUP = CVT_T4_* (matmul_config.h); BM = 256, BN = 128,
//             BK = 32 fixed. 384 threads (producer 40 registers, consumers 232), shared
//             memory STAGES * 48 KiB, one block per SM.
//   run       python -m bench check --kernels cuda_t4* --precision tf32 --shapes 1000x1000x1000,4096x4096x4096
#include "common.cuh"
#include "hopper.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <int STAGES, int CLUSTER, int GROUP>
__global__ void __launch_bounds__(384, 1)
matmul_t4_tf32_kernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map,
                      float* __restrict__ C, int M, int N, int K) {
#ifdef CVT_HOPPER_DEVICE
  constexpr int BM = CVT_T4_BM, BN = CVT_T4_BN, BK = CVT_T4_BK;  // C rows, C columns, k
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // floats per stage
  constexpr int A_PART = BM / CLUSTER;                 // A rows each block of a cluster copies
  constexpr int BOX = 32 * 32;                         // a B box: 32 k x 32 n
  constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * 4;
  constexpr int CONSUMER_WARPS = 8;

  extern __shared__ unsigned char smem_raw[];
  float* const sA = reinterpret_cast<float*>(align_1024(smem_raw));
  float* const sB = sA + STAGES * A_STAGE;
  uint64_t* const full = reinterpret_cast<uint64_t*>(sB + STAGES * B_STAGE);
  uint64_t* const empty = full + STAGES;

  const int tid = threadIdx.x, group = tid / 128;
  const unsigned rank = cluster_rank();
  init_stage_barriers<STAGES>(full, empty, CONSUMER_WARPS * CLUSTER);

  // Cluster tiles: BM rows by CLUSTER * BN columns; block `rank` takes columns n0 + rank BN.
  const int64_t clusters = gridDim.x / CLUSTER, cluster = blockIdx.x / CLUSTER;
  const int64_t tiles_m = ceil_div(M, BM), tiles_n = ceil_div(N, CLUSTER * BN);
  const int64_t tiles = tiles_m * tiles_n;
  const int k_tiles = static_cast<int>(ceil_div(K, BK));
  const auto tile_origin = [&](int64_t u, int& m0, int& n0) {
    int64_t row, col;
    grouped_tile<GROUP>(u, tiles_m, tiles_n, row, col);
    m0 = static_cast<int>(row * BM);
    n0 = static_cast<int>(col * CLUSTER * BN + rank * BN);
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
    // This thread's B^T rows (C columns inside the block). The wgmma row 16 warp + g + 8 h
    // may stand for any column of the block as long as the epilogue agrees. Here rows g and
    // g + 8 are adjacent columns c and c + 1, so a0, a1 (and a2, a3) are one 8-byte load;
    // and a warp's 16 columns are two runs of 8 (box columns 0-7 and 16-23, or 8-15 and
    // 24-31), so that the swizzle (a value (k, c) of a 32 x 32 B box sits at k * 32 +
    // ((c / 4) ^ (k % 8)) * 4 + c % 4) puts its 4 rows of k on all 32 banks: 2 wavefronts
    // per load, the least 256 bytes take (16 consecutive columns would take 4).
    const int box = consumer * 2 + warp / 2;  // of the 4 B boxes (32 columns each)
    const int c = (g / 4) * 16 + (warp % 2) * 8 + 2 * (g % 4);
    const auto b_at = [&](int k) { return box * BOX + k * 32 + (((c / 4) ^ (k % 8)) * 4) + c % 4; };
    const auto tf32 = [](float x) {  // to the nearest TF32, ties to even (see "rounding")
      unsigned r;
      asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
      return r;
    };
    using Fragments = unsigned[BK / 8][4];  // a0..a3 of each k8 step (as mma.sync m16n8k8)
    const auto load = [&](Fragments& frag, int s) {
      const float* const bt = sB + s * B_STAGE;
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk) {
        const float2 lo = *reinterpret_cast<const float2*>(bt + b_at(kk * 8 + q));
        const float2 hi = *reinterpret_cast<const float2*>(bt + b_at(kk * 8 + q + 4));
        frag[kk][0] = tf32(lo.x);  // (row g, k q)
        frag[kk][1] = tf32(lo.y);  // (row g + 8, k q)
        frag[kk][2] = tf32(hi.x);  // (row g, k q + 4)
        frag[kk][3] = tf32(hi.y);  // (row g + 8, k q + 4)
      }
    };
    int64_t it = 0;
    for (int64_t u = cluster; u < tiles; u += clusters) {
      int m0, n0;
      tile_origin(u, m0, n0);
      float d[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      // One k tile: wait for its bytes, load its fragments, issue its 4 wgmma as one group.
      const auto issue = [&](Fragments& frag) {
        const int s = static_cast<int>(it % STAGES);
        mbarrier_wait(&full[s], static_cast<unsigned>((it / STAGES) & 1));
        ++it;
        load(frag, s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk)
          wgmma_m64n256k8_tf32_rs(d, frag[kk],
                                  wgmma_descriptor(sA + s * A_STAGE + kk * 8, 16, 1024));
        wgmma_commit();
        return s;
      };
      // Two sets of fragments: tile t + 1 is loaded and issued while tile t runs; then
      // wait<1> says tile t is done, so its stage is released and its set may be reloaded.
      Fragments f0, f1;
      int running = -1;  // the stage of the group still in flight
      for (int t = 0; t < k_tiles; t += 2) {
        int s = issue(f0);
        if (running >= 0) {
          wgmma_wait<1>();
          if (lane == 0) release_stage<CLUSTER>(&empty[running]);
        }
        running = s;
        if (t + 1 < k_tiles) {
          s = issue(f1);
          wgmma_wait<1>();
          if (lane == 0) release_stage<CLUSTER>(&empty[running]);
          running = s;
        }
      }
      wgmma_wait<0>();
      if (lane == 0) release_stage<CLUSTER>(&empty[running]);

      // d[4 j + 2 h + e] is C^T(row 16 warp + g + 8 h, column 8 j + 2 q + e), that is
      // C(m0 + 8 j + 2 q + e, n0 + 32 box + c + h). For each j and e the two values h = 0, 1
      // are adjacent columns: one 8-byte store, and the warp's 32 stores of one instruction
      // fill 8 whole 32-byte sectors (4 rows x two runs of 8 columns).
      const int col = n0 + 32 * box + c;  // even, and N % 4 == 0: col < N means col + 1 < N
      if (col < N) {
#pragma unroll
        for (int j = 0; j < BM / 8; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int row = m0 + 8 * j + 2 * q + e;
            if (row < M)
              *reinterpret_cast<float2*>(C + static_cast<int64_t>(row) * N + col) =
                  make_float2(d[4 * j + e], d[4 * j + 2 + e]);
          }
      }
    }
  }
  cluster_sync();  // no block leaves while its peer may still multicast into it
#else
  if (threadIdx.x == 0) __trap();  // no sm_90a body: the launcher never launches this
#endif
}

cudaError_t launch_matmul_t4_tf32(const float* A, const float* B, float* C, int64_t M,
                                  int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_T4_BM, BN = CVT_T4_BN, BK = CVT_T4_BK, STAGES = CVT_T4_STAGES;
  constexpr int CLUSTER = CVT_T4_CLUSTER;
  static_assert(BM == 256 && BN == 128 && BK == 32,
                "CVT_T4_BM, BN, BK: wgmma m64n256k8, two consumer warpgroups, 128-byte rows");
  static_assert(CLUSTER == 1 || CLUSTER == 2, "CVT_T4_CLUSTER: A's 256 rows in 1 or 2 boxes");
  if (!hopper_body_built()) return cudaErrorNotSupported;
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) return cudaMemsetAsync(C, 0, M * N * sizeof(float), stream);
  if (!tma_path_ok(A, B, C, N, K, 4))
    return launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream);  // see "precond."
  CUtensorMap a_map, b_map;
  if (!tensor_map_f32(&a_map, A, M, K, BM / CLUSTER) || !tensor_map_f32(&b_map, B, K, N, BK))
    return cudaErrorInvalidValue;  // the launcher checked what TMA needs: not expected
  constexpr auto kernel = matmul_t4_tf32_kernel<STAGES, CLUSTER, CVT_T4_GROUP>;
  constexpr int smem = 1024 + STAGES * (BM * BK + BK * BN) * 4 + STAGES * 16;
  return launch_persistent_clusters<kernel>(CLUSTER, 384, smem,
                                            ceil_div(M, BM) * ceil_div(N, CLUSTER * BN), stream,
                                            a_map, b_map, C, static_cast<int>(M),
                                            static_cast<int>(N), static_cast<int>(K));
}

}  // namespace cvt
