// Launchers of the matmul ladder in cuda/: the one C++ interface the torch bindings
// (bindings/matmul_ops.cpp) and the standalone driver (cuda/driver/matmul_driver.cu) both
// call. The memory-bound kernels have theirs in memory_launchers.h.
//
// The matmul contract, shared by every version of the ladder:
//   C[M, N] = A[M, K] @ B[K, N], float32, row-major, contiguous, device pointers.
//   Any M, N, K >= 0 is accepted; each must be < 2^31 and each matrix may hold up
//   to 2^31 elements or more (offsets are 64-bit). K = 0 writes zeros (the k-loop
//   runs zero times); M = 0 or N = 0 launches nothing.
//   The kernel runs on `stream`. The return value is cudaSuccess, the error of the
//   launch itself, or cudaErrorInvalidConfiguration when the output needs more
//   blocks than CUDA's grid allows along one dimension (see matmul_grid_limits).
#pragma once
#include <cstdint>
#include <string_view>
#include <cuda_runtime.h>

#include "matmul_config.h"

namespace cvt {

using MatmulLauncher = cudaError_t (*)(const float* A, const float* B, float* C,
                                       int64_t M, int64_t N, int64_t K,
                                       cudaStream_t stream);

// One launcher per version of CVT_MATMUL_OPS (matmul_config.h), each a MatmulLauncher:
//   cudaError_t launch_matmul_v1_naive(const float* A, const float* B, float* C,
//                                      int64_t M, int64_t N, int64_t K, cudaStream_t stream);
// and so on, defined in cuda/matmul_<version>.cu.
#define CVT_DECLARE_MATMUL_LAUNCHER(VERSION)                                        \
  cudaError_t launch_matmul_##VERSION(const float* A, const float* B, float* C,     \
                                      int64_t M, int64_t N, int64_t K, cudaStream_t stream);
CVT_MATMUL_OPS(CVT_DECLARE_MATMUL_LAUNCHER)
#undef CVT_DECLARE_MATMUL_LAUNCHER

// The tensor-core rungs (CVT_TENSOR_CORE_OPS): the same contract with 16-bit values.
// C[M, N] = A[M, K] @ B[K, N], all three of `type` (fp16 or bf16), row-major, contiguous;
// products accumulated in float32, C rounded to nearest. cudaErrorNotSupported on a GPU
// without the rung's instructions, or a build without them: what each rung needs is
// tensor_core_needs below, which the op's error message quotes.
enum class TensorCoreType { kFloat16, kBFloat16 };
using TensorCoreMatmulLauncher = cudaError_t (*)(const void* A, const void* B, void* C,
                                                 int64_t M, int64_t N, int64_t K,
                                                 TensorCoreType type, cudaStream_t stream);
#define CVT_DECLARE_TENSOR_CORE_LAUNCHER(VERSION)                                    \
  cudaError_t launch_matmul_##VERSION(const void* A, const void* B, void* C, int64_t M, \
                                      int64_t N, int64_t K, TensorCoreType type,     \
                                      cudaStream_t stream);
CVT_TENSOR_CORE_OPS(CVT_DECLARE_TENSOR_CORE_LAUNCHER)
#undef CVT_DECLARE_TENSOR_CORE_LAUNCHER

// The tensor-core rungs at tf32 (CVT_TF32_OPS): the FFMA ladder's contract (float32 in and
// out, a MatmulLauncher), products on tensor cores from inputs cut to TF32 (each rung's
// header says how it rounds), float32 accumulation. cudaErrorNotSupported as above.
#define CVT_DECLARE_TF32_LAUNCHER(VERSION)                                          \
  cudaError_t launch_matmul_##VERSION(const float* A, const float* B, float* C,     \
                                      int64_t M, int64_t N, int64_t K, cudaStream_t stream);
CVT_TF32_OPS(CVT_DECLARE_TF32_LAUNCHER)
#undef CVT_DECLARE_TF32_LAUNCHER

// The paths beside the ladder (CVT_SKINNY_OPS): skinny products, M <= 16 or N <= 16.
// C[M, N] = A[M, K] @ B[K, N], all three of `type`, row-major, contiguous; products
// accumulated in float32, C rounded to nearest once. Split K sums its partial tiles in a
// float32 workspace that the caller allocates: matmul_<version>_workspace_floats(M, N, K,
// type, device) floats (0 where one split covers K) for the launch on `device`, passed with
// its size. cudaErrorInvalidValue when neither M nor N is at most CVT_SKINNY_MAX_R, or the
// workspace is smaller than asked.
enum class MatmulType { kFloat32, kFloat16, kBFloat16 };
using SkinnyMatmulLauncher = cudaError_t (*)(const void* A, const void* B, void* C, int64_t M,
                                             int64_t N, int64_t K, MatmulType type,
                                             float* workspace, int64_t workspace_floats,
                                             cudaStream_t stream);
#define CVT_DECLARE_SKINNY_LAUNCHER(VERSION)                                                 \
  cudaError_t launch_matmul_##VERSION(const void* A, const void* B, void* C, int64_t M,      \
                                      int64_t N, int64_t K, MatmulType type,                 \
                                      float* workspace, int64_t workspace_floats,            \
                                      cudaStream_t stream);                                  \
  int64_t matmul_##VERSION##_workspace_floats(int64_t M, int64_t N, int64_t K,              \
                                               MatmulType type, int device);
CVT_SKINNY_OPS(CVT_DECLARE_SKINNY_LAUNCHER)
#undef CVT_DECLARE_SKINNY_LAUNCHER

// The TMA rungs' staging (cuda/staging.cu; bindings/matmul_ops.cpp uses it), one pass each
// way, for elements of 2 or 4 bytes. launch_stage_pad: src (rows x cols, contiguous, any
// alignment) into dst (rows_p x cols_p, 16-byte aligned, cols_p a multiple of 16 bytes'
// values), zeros around it. launch_stage_unpad: the first cols columns of src (rows x cols_p)
// into dst (rows x cols, contiguous). cudaErrorInvalidValue for sizes or pointers outside that.
cudaError_t launch_stage_pad(const void* src, int64_t rows, int64_t cols, void* dst,
                             int64_t rows_p, int64_t cols_p, int element_bytes,
                             cudaStream_t stream);
cudaError_t launch_stage_unpad(const void* src, int64_t cols_p, void* dst, int64_t rows,
                               int64_t cols, int element_bytes, cudaStream_t stream);

// What each rung of CVT_TENSOR_CORE_OPS and CVT_TF32_OPS (and each split_k path) needs, which
// the op's error message quotes, and how many values of its element fill 16 bytes where the
// op stages A and B into padded, 16-byte-aligned buffers because TMA cannot take them as they
// are (bindings/matmul_ops.cpp, "Staging for the TMA rungs"). t1 (mma.sync, cp.async) runs
// from compute capability 8.0 on and takes any input; every other one is a TMA kernel for
// sm_90a: a new TMA rung needs no line here, its X line is enough.
constexpr const char* kNeedsMmaSync =
    "a GPU of compute capability 8.0 or later (mma.sync on fp16 and bf16)";
constexpr const char* kNeedsHopper =
    "a Hopper GPU (compute capability 9.0) and a build for sm_90a (TORCH_CUDA_ARCH_LIST "
    "with 9.0a: wgmma and TMA exist only there)";
constexpr const char* tensor_core_needs(std::string_view version) {
  return version == "t1_mma_sync" ? kNeedsMmaSync : kNeedsHopper;
}
// per_16: 8 for CVT_TENSOR_CORE_OPS (2-byte values), 4 for CVT_TF32_OPS (floats); 0: no staging
constexpr int tensor_core_stage(std::string_view version, int per_16) {
  return version == "t1_mma_sync" ? 0 : per_16;
}

}  // namespace cvt
