// The TMA rungs' staging in one pass each way (bindings/matmul_ops.cpp, "Staging for the TMA
// rungs"): not a rung, the copies an op makes where TMA cannot take its operands as they are.
//
//   idea      TMA needs rows that start on 16-byte boundaries. Where A or B has none (K or N
//             not a multiple of 16 bytes' worth of values, a pointer off 16 bytes) the op
//             copies them into padded buffers, and copies C's first N columns out of a
//             padded C. Done with PyTorch's copy_ into a strided view of the buffer and two
//             zero fills, each operand costs about twice its bytes at copy bandwidth (the
//             unaligned shapes kept 51-75% of the aligned square's speed where the napkin
//             math allowed 85%: docs/performance/shapes.md). Here each buffer is written once,
//             every 16-byte piece of it by one thread: its values where the source has them,
//             zeros elsewhere, so the pad costs no pass of its own.
//   pad       dst (rows_p x cols_p, 16-byte aligned, cols_p a multiple of 16 bytes' values)
//             from src (rows x cols, contiguous, any alignment): thread i writes piece i of
//             dst (row i / (cols_p / V), V values from column (i % (cols_p / V)) * V; V = 8
//             of 2 bytes, 4 of 4) with one 16-byte store, its values read one by one.
//   unpad     dst (rows x cols, contiguous, any alignment) from the first cols columns of src
//             (rows x cols_p): V consecutive values of dst per thread, one load and one store
//             each (dst's rows may start anywhere, so no wider store fits every row).
//   traffic   pad: reads rows*cols values once, writes rows_p*cols_p once; unpad: reads and
//             writes rows*cols values once. A grid-stride loop over at most 4096 blocks of 256.
#include <cstdint>

#include "common.cuh"
#include "launchers.h"

namespace cvt {

namespace {

constexpr int kStageThreads = 256;
constexpr int64_t kStageMaxBlocks = 4096;

unsigned stage_blocks(int64_t work) {
  const int64_t blocks = ceil_div(work, static_cast<int64_t>(kStageThreads));
  return static_cast<unsigned>(blocks < kStageMaxBlocks ? (blocks > 0 ? blocks : 1)
                                                        : kStageMaxBlocks);
}

}  // namespace

template <class T>
__global__ void __launch_bounds__(kStageThreads)
stage_pad_kernel(const T* __restrict__ src, int64_t rows, int64_t cols, T* __restrict__ dst,
                 int64_t rows_p, int64_t cols_p) {
  constexpr int V = 16 / sizeof(T);
  const int64_t per_row = cols_p / V, pieces = rows_p * per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < pieces;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row, c0 = (i - r * per_row) * V;
    uint4 piece;
    T* const v = reinterpret_cast<T*>(&piece);
#pragma unroll
    for (int j = 0; j < V; ++j)
      v[j] = (r < rows && c0 + j < cols) ? src[r * cols + c0 + j] : T(0);
    *reinterpret_cast<uint4*>(dst + i * V) = piece;
  }
}

template <class T>
__global__ void __launch_bounds__(kStageThreads)
stage_unpad_kernel(const T* __restrict__ src, int64_t cols_p, T* __restrict__ dst,
                   int64_t rows, int64_t cols) {
  constexpr int V = 16 / sizeof(T);
  const int64_t n = rows * cols, pieces = ceil_div(n, static_cast<int64_t>(V));
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < pieces;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t f = i * V, r = f / cols, c = f - r * cols;  // one division per piece
#pragma unroll
    for (int j = 0; j < V; ++j, ++f) {
      if (f < n) dst[f] = src[r * cols_p + c];
      if (++c == cols) c = 0, ++r;
    }
  }
}

cudaError_t launch_stage_pad(const void* src, int64_t rows, int64_t cols, void* dst,
                             int64_t rows_p, int64_t cols_p, int element_bytes,
                             cudaStream_t stream) {
  const int V = 16 / element_bytes;
  if ((element_bytes != 2 && element_bytes != 4) || cols_p % V != 0 || rows_p < rows ||
      cols_p < cols || reinterpret_cast<uintptr_t>(dst) % 16 != 0)
    return cudaErrorInvalidValue;
  if (rows_p == 0 || cols_p == 0) return cudaSuccess;
  const unsigned blocks = stage_blocks(rows_p * (cols_p / V));
  if (element_bytes == 2)
    stage_pad_kernel<uint16_t><<<blocks, kStageThreads, 0, stream>>>(
        static_cast<const uint16_t*>(src), rows, cols, static_cast<uint16_t*>(dst), rows_p, cols_p);
  else
    stage_pad_kernel<uint32_t><<<blocks, kStageThreads, 0, stream>>>(
        static_cast<const uint32_t*>(src), rows, cols, static_cast<uint32_t*>(dst), rows_p, cols_p);
  return cudaGetLastError();
}

cudaError_t launch_stage_unpad(const void* src, int64_t cols_p, void* dst, int64_t rows,
                               int64_t cols, int element_bytes, cudaStream_t stream) {
  if ((element_bytes != 2 && element_bytes != 4) || cols_p < cols) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const unsigned blocks = stage_blocks(ceil_div(rows * cols, static_cast<int64_t>(16 / element_bytes)));
  if (element_bytes == 2)
    stage_unpad_kernel<uint16_t><<<blocks, kStageThreads, 0, stream>>>(
        static_cast<const uint16_t*>(src), cols_p, static_cast<uint16_t*>(dst), rows, cols);
  else
    stage_unpad_kernel<uint32_t><<<blocks, kStageThreads, 0, stream>>>(
        static_cast<const uint32_t*>(src), cols_p, static_cast<uint32_t*>(dst), rows, cols);
  return cudaGetLastError();
}

}  // namespace cvt
