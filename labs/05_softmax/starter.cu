// Lab 5 in CUDA: softmax over the last dim of a float32 tensor, a block per row. Rows up to
// MAX_ROW elements fit in shared memory: read the row once, subtract its maximum,
// exponentiate, divide by the sum, write. Longer rows do not fit: the online softmax walks
// a row keeping a running maximum and a running sum, rescaled by exp(old max - new max)
// whenever the maximum grows, then writes in a second pass - two reads of the row, where
// a naive version reads it three times (max, sum, write).
//
// Fill in the TODOs, then grade it (on a GPU it runs there; without one, on the CPU
// emulator, which also counts every element your kernels load and store):
//
//     cvt-bench grade 5 starter.cu
//
// The grader allocates `out` (like x) and calls softmax() with the tensors' memory: x and
// out hold rows x cols float32 on the GPU, row-major, a row being the last dim. Read
// first: the lecture notes "GPU Matmul and Operator Compilation" on softmax (subtracting
// the maximum, the row held in SRAM), Milakov and Gimelshein, "Online normalizer
// calculation for softmax" (2018), and, in this suite, cuda/softmax_row_sram.cu and
// cuda/softmax_online.cu (the same two ideas, tuned; do not call them).
//
// Counted loads: index the kernels' parameters (x[i]) or keep `auto p = x + i`; a raw
// `const float* p = x + i` (or &x[i], a cast to float4*) escapes the count, and the
// traffic tests then score 0. Keep a loaded value in a `float`: `auto v = x[i]` is a
// reference to global memory, and each of its uses counts as a load. Shared memory is not
// global memory: reading it again is free.
#include <cuda_runtime.h>
#include <math.h>

constexpr int THREADS = 128;       // a block per row; thread t owns elements t, t + THREADS, ...
constexpr int MAX_ROW = 4096;      // rows up to this long are held whole (read once); longer: online

// The maximum, and the sum, of one value per thread of the block, handed to every thread
// (the Triton lab's tl.max and tl.sum): each warp folds its 32 values with shuffles, then
// every thread folds the warps' results. Every thread of the block must call them: they
// meet at __syncthreads().
__device__ float block_max(float v) {
  __shared__ float warp_max[THREADS / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();  // every warp's value is written before anyone reads them
  v = warp_max[0];
  for (int w = 1; w < THREADS / 32; ++w) v = fmaxf(v, warp_max[w]);
  __syncthreads();  // and read before the next call writes them again
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_sum[THREADS / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = v;
  __syncthreads();
  v = warp_sum[0];
  for (int w = 1; w < THREADS / 32; ++w) v += warp_sum[w];
  __syncthreads();
  return v;
}

// The row in shared memory: one read, one write.
__global__ void softmax_row_kernel(const float* x, float* out, long cols) {
  __shared__ float row[MAX_ROW];
  const long base = static_cast<long>(blockIdx.x) * cols;
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    row[i] = x[base + i];  // the row's one read
  }
  // TODO 1: the row's maximum (each thread's over its elements, then block_max), the
  //         exponentials exp(row[i] - max) and their sum (block_sum); then write
  //         exp(x - max) / sum below
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    out[base + i] = row[i];
  }
}

// A row longer than MAX_ROW: one pass keeps a running maximum and a running sum per thread
// (the sum rescaled whenever the maximum grows), a second pass writes; two reads.
__global__ void softmax_online_kernel(const float* x, float* out, long cols) {
  const long base = static_cast<long>(blockIdx.x) * cols;
  // TODO 2: the first pass over the thread's elements: a running maximum m and a running
  //         sum s of exp(x - m); when the maximum grows, rescale s by exp(old m - new m)
  // TODO 3: combine the threads' (m, s) into the row's maximum (block_max) and sum
  //         (block_sum of each s rescaled to that maximum)
  // TODO 4: the second pass: write exp(x - max) / sum
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    out[base + i] = x[base + i];
  }
}

void softmax(const float* x, float* out, long rows, long cols) {
  if (rows == 0 || cols == 0) return;  // an empty output: nothing to launch
  if (cols <= MAX_ROW) {
    softmax_row_kernel<<<rows, THREADS>>>(x, out, cols);
  } else {
    softmax_online_kernel<<<rows, THREADS>>>(x, out, cols);
  }
}
