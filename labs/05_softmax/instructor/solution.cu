// Lab 5 in CUDA, the reference solution: every test passes (tests/cpu/test_labs.py checks it).
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
  float m = -INFINITY;
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    row[i] = x[base + i];  // the row's one read
    m = fmaxf(m, row[i]);
  }
  m = block_max(m);
  float s = 0.0f;
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    row[i] = expf(row[i] - m);
    s += row[i];
  }
  s = block_sum(s);
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    out[base + i] = row[i] / s;
  }
}

// A row longer than MAX_ROW: one pass keeps a running maximum and a running sum per thread
// (the sum rescaled whenever the maximum grows), a second pass writes; two reads.
__global__ void softmax_online_kernel(const float* x, float* out, long cols) {
  const long base = static_cast<long>(blockIdx.x) * cols;
  float m = -INFINITY, s = 0.0f;
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    const float v = x[base + i];
    const float m_new = fmaxf(m, v);
    s = s * expf(m - m_new) + expf(v - m_new);
    m = m_new;
  }
  const float row_max = block_max(m);
  const float total = block_sum(s * expf(m - row_max));  // a thread with no element adds 0
  for (long i = threadIdx.x; i < cols; i += THREADS) {
    out[base + i] = expf(x[base + i] - row_max) / total;
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
