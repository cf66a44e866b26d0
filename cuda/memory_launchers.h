// Launchers of the memory-bound kernels of cuda/ (vector add, copy, ReLU + dropout,
// softmax, RGB -> grey): the C++ interface the torch bindings (bindings/memory_ops.cpp)
// and the standalone driver (cuda/driver/memory_driver.cu) both call.
//
// The contract, shared by every launcher here:
//   - device pointers to contiguous tensors; sizes are 64-bit (any length, offsets
//     past 2^31 included); a size of 0 launches nothing and returns cudaSuccess;
//   - floating-point kernels read float32, float16 or bfloat16 (DType), compute in
//     float32 and write the input's type; RGB -> grey reads and writes uint8;
//   - 16-byte vector loads and stores are used when every pointer allows them (checked
//     at run time); otherwise the same kernel runs with one element per access;
//   - launchers whose grid size depends on how many SMs the GPU has (vector add, the
//     softmax column layouts) take that count, `sms`, from the caller: the bindings pass
//     the current device's multiProcessorCount, the driver asks cudaDeviceGetAttribute.
//     It changes the grid only, never the result;
//   - the kernel runs on `stream`; the return value is cudaSuccess, the launch's own
//     error, cudaErrorInvalidValue for arguments outside the contract (p outside
//     [0, 1), a softmax row longer than kSoftmaxSramMaxN for the SRAM version, sms < 1), or
//     cudaErrorInvalidConfiguration when the grid would exceed CUDA's limits.
//   The bindings check every one of these first and raise a message that names the op.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

#include "memory_config.h"

namespace cvt {

enum class DType : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

// out[i] = x[i] + y[i], i < n.
cudaError_t launch_vector_add(DType dtype, const void* x, const void* y, void* out, int64_t n,
                              int sms, cudaStream_t stream);

// out[i] = x[i], i < n.
cudaError_t launch_copy(DType dtype, const void* x, void* out, int64_t n, cudaStream_t stream);

// out[i] = u_i >= p ? max(x[i], 0) / (1 - p) : 0, with u_i the Philox4x32-10 uniform of
// element i under `seed` (cuda/philox.cuh), the same bits Triton's tl.rand4x draws. p in [0, 1).
cudaError_t launch_relu_dropout(DType dtype, const void* x, void* out, int64_t n, double p,
                                uint64_t seed, cudaStream_t stream);

// Softmax over the middle axis of a contiguous [outer, n, inner] tensor: y[o, :, i] =
// softmax(x[o, :, i]). inner == 1 is softmax over the last dimension (rows); inner > 1
// is any other dimension (columns, read with stride `inner`).
// The SRAM version keeps each row (column) in shared memory: n <= kSoftmaxSramMaxN.
constexpr int64_t kSoftmaxSramMaxN = CVT_SOFTMAX_SRAM_MAX_N;
cudaError_t launch_softmax_row_sram(DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                                    int64_t inner, int sms, cudaStream_t stream);
// The online version streams a row of any length twice (running max and sum, then output).
cudaError_t launch_softmax_online(DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                                  int64_t inner, int sms, cudaStream_t stream);

// The split softmax (softmax_split.cu; the op cvt::softmax_split): softmax over the last
// dimension of a contiguous [rows, n] tensor, same contract as above. A row over a cluster of
// C blocks, each keeping its slice in shared memory; one read, one write. C is the smallest
// power of two whose slices fit kSplitSliceBytes, capped at kSplitAutoMaxCluster where such
// slices fit a block (float32 rows of 393216: 8 blocks of 192 KiB, one per SM, where 16 of
// 96 KiB leave SMs idle). C > 1 needs sm_90 (cudaErrorNotSupported elsewhere, or when the GPU
// cannot hold such a cluster); rows longer than kSplitMaxCluster slices of the largest shared
// memory a block may have are cudaErrorInvalidValue.
constexpr int64_t kSplitSliceBytes = CVT_SPLIT_SLICE_BYTES;
constexpr int kSplitMaxCluster = CVT_SPLIT_MAX_CLUSTER;
constexpr int kSplitAutoMaxCluster = CVT_SPLIT_AUTO_MAX_CLUSTER;
constexpr int kSplitThreads = CVT_SPLIT_THREADS;  // threads per block, at most
constexpr int kSplitMinBlocks = CVT_SPLIT_MIN_BLOCKS;  // __launch_bounds__' blocks per SM
cudaError_t launch_softmax_split(DType dtype, const void* x, void* y, int64_t rows, int64_t n,
                                 cudaStream_t stream);

// grey[r, c] = round(0.2989 R + 0.5870 G + 0.1140 B) of a uint8 3 x h x w image.
// Blocks of kGreyBY rows x kGreyBX threads, kGreyPx neighbour pixels per thread; the row
// blocks go on gridDim.x, the column blocks on gridDim.y, folded into (y, z) past 65535
// (common.cuh): h <= (2^31 - 1) * kGreyBY, w <= 65535 * 65535 * kGreyColumnsPerBlock, else
// cudaErrorInvalidConfiguration (no image that fits in a GPU's memory is refused).
constexpr int kGreyPx = CVT_GREY_PX;  // neighbour pixels per thread
constexpr int kGreyBX = CVT_GREY_BX;  // threads along a row
constexpr int kGreyBY = CVT_GREY_BY;  // rows per block
constexpr int64_t kGreyColumnsPerBlock = int64_t{kGreyBX} * kGreyPx;
cudaError_t launch_rgb_to_grey(const uint8_t* img, uint8_t* grey, int64_t h, int64_t w,
                               cudaStream_t stream);

}  // namespace cvt
