// Lab 6: tensor cores. C = A B in float16 (float32 sums), one warp per 16 x 8 tile of C,
// each step of k one mma.sync instruction (cvt_lab_mma.cuh: read its layout first).
//
// Fill in the TODOs, then grade it (on a GPU it runs there; without one, on the CPU
// emulator, which runs the warp's 32 lanes and counts every element your kernel loads):
//
//     cvt-bench grade 6 starter.cu
//
// The grader allocates c and calls matmul() with the tensors' memory: a is M x K, b is
// K x N, c is M x N, all row-major float16 on the GPU. Read first: the PTX ISA's section on
// the mma.m16n8k16 fragments (the table in cvt_lab_mma.cuh is its summary), and, in this
// suite, cuda/matmul_t1_mma_sync.cu (the same instruction fed from shared memory through
// ldmatrix; do not call it).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cvt_lab_mma.cuh"

constexpr int TILE_M = 16;  // one warp computes a TILE_M x TILE_N tile of C
constexpr int TILE_N = 8;

__global__ void mma_matmul_kernel(const __half* a, const __half* b, __half* c, long M, long N,
                                  long K) {
  const long row0 = static_cast<long>(blockIdx.y) * TILE_M;
  const long col0 = static_cast<long>(blockIdx.x) * TILE_N;
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  // A(row, k) and B(k, col), 0 outside the matrices. (Lambdas keep a and b the kernel's own
  // pointers, which the CPU emulator counts; a `const __half* p = a + ...` would not be.)
  const auto a_at = [&](long row, long k) {
    return row < M && k < K ? __half(a[row * K + k]) : __float2half_rn(0.0f);
  };
  const auto b_at = [&](long k, long col) {
    return k < K && col < N ? __half(b[k * N + col]) : __float2half_rn(0.0f);
  };
  for (long k0 = 0; k0 < K; k0 += 16) {
    unsigned af[4] = {0, 0, 0, 0}, bf[2] = {0, 0};
    // TODO 1: af[0..3]: two values of A each, cvt_lab::pack(a_at(row, k), a_at(row, k + 1)),
    //         at the rows and k the layout gives lane (g, t), offset by (row0, k0)
    // TODO 2: bf[0..1]: two values of B each, cvt_lab::pack(b_at(k, col), b_at(k + 1, col))
    (void)a_at;
    (void)b_at;
    cvt_lab::mma_m16n8k16(d, af, bf);
  }
  // TODO 3: store d[0..3] (as __float2half_rn(d[i])) at their rows and columns of C, only
  //         those inside M x N
  (void)row0;
  (void)col0;
  (void)g;
  (void)t;
}

void matmul(const __half* a, const __half* b, __half* c, long M, long N, long K) {
  const dim3 grid(1, 1);  // TODO 4: one block per 16 x 8 tile of C, rounded up (and no
                          //         launch where M or N is 0)
  mma_matmul_kernel<<<grid, 32>>>(a, b, c, M, N, K);
}
