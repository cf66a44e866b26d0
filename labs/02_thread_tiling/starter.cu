// Lab 2 in CUDA: thread tiling. C = A @ B in float32, any M, N, K (0 included), where each
// thread computes V = 4 consecutive outputs of one row of C. The lecture's v1 gives a thread
// one output: it walks k, loading A[row, k] and B[k, col] for every product, 2 M N K loads
// in all. v1.5 gives a thread V outputs of a row: it loads A[row, k] once and uses it for
// all V of them, so A's loads drop to M N K / V (B's stay M N K).
//
// Fill in the TODOs, then grade it (on a GPU it runs there; without one, on the CPU
// emulator, which also counts every element your kernel loads and stores):
//
//     cvt-bench grade 2 starter.cu
//
// The grader allocates `out` (M x N) and calls matmul() with the tensors' memory: a is
// M x K, b is K x N, out M x N, all row-major float32 on the GPU. Read first: the lecture
// notes "GPU Matmul and Operator Compilation" on v1, v1 coalesced and v1.5 (thread
// tiling), and, in this suite, cuda/matmul_v1_5_thread_tiling.cu (a thread there owns a
// V x V block of C; do not call it).
//
// Counted loads: index the kernel's parameters (a[i]) or keep `auto p = a + i`; a raw
// `const float* p = a + i` (or &a[i], a cast to float4*) escapes the count, and the
// traffic tests then score 0. Keep a loaded value in a `float`: `auto x = a[i]` is a
// reference to global memory, and each of its uses counts as a load.
#include <cuda_runtime.h>

constexpr int V = 4;         // outputs per thread: V consecutive columns of one row of C
constexpr int BLOCK_M = 16;  // rows of C per block: a thread each along y
constexpr int BLOCK_N = 64;  // columns of C per block: BLOCK_N / V threads along x

__global__ void matmul_strip_kernel(const float* a, const float* b, float* c, long M, long N,
                                    long K) {
  const long row = static_cast<long>(blockIdx.y) * BLOCK_M + threadIdx.y;
  const long col0 = static_cast<long>(blockIdx.x) * BLOCK_N + threadIdx.x * V;
  if (row >= M || col0 >= N) return;  // this thread's strip lies outside C
  float acc[V] = {};
  // TODO 1: walk k: for (long k = 0; k < K; ++k) { ... }
  // TODO 2:   load A[row, k] once, into a float, for all V outputs
  // TODO 3:   for each of the V columns col0 + v inside C (col0 + v < N): load B[k, col0 + v]
  // TODO 4:   acc[v] += A[row, k] * B[k, col0 + v]
  for (int v = 0; v < V; ++v) {
    if (col0 + v < N) c[row * N + col0 + v] = acc[v];
  }
}

void matmul(const float* a, const float* b, float* out, long M, long N, long K) {
  if (M == 0 || N == 0) return;  // an empty C: nothing to launch
  const dim3 grid((N + BLOCK_N - 1) / BLOCK_N, (M + BLOCK_M - 1) / BLOCK_M);
  matmul_strip_kernel<<<grid, dim3(BLOCK_N / V, BLOCK_M)>>>(a, b, out, M, N, K);
}
