// Torch ops of the CUDA matmul ladder. With bindings/memory_ops.cpp (the memory-bound ops),
// the only C++ in the project that includes torch.
//
// Each op is registered once under the `cvt` namespace (schema in TORCH_LIBRARY,
// CUDA implementation in TORCH_LIBRARY_IMPL). Every op does the same three things:
//   1. check the caller's input (TORCH_CHECK: dtype, device, rank, shapes, limits),
//   2. allocate the output and make the inputs contiguous,
//   3. launch on the current stream of the inputs' device, then check the launch.
// Fake (meta) kernels for torch.compile live in bindings/_fake.py.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>

#include "../cuda/launchers.h"

namespace {

constexpr int64_t kMaxDim = std::numeric_limits<int>::max();  // kernels take int sizes

// The dtypes an op accepts: float32 for the FFMA ladder, float16 or bfloat16 (both the
// same) for the tensor-core rungs, any of the three (both the same) for the skinny path.
enum class Accepts { kFloat32, kHalfOrBFloat16, kAny };

void check_matmul_inputs(const char* op, const at::Tensor& a, const at::Tensor& b,
                         Accepts accepts = Accepts::kFloat32) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, op, ": A and B must be 2-D matrices, got ",
              a.dim(), "-D and ", b.dim(), "-D tensors");
  if (accepts == Accepts::kFloat32) {
    TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat, op,
                ": A and B must be float32, got ", a.scalar_type(), " and ", b.scalar_type());
  } else if (accepts == Accepts::kAny) {
    const auto accepted = [](const at::Tensor& t) {
      return t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf ||
             t.scalar_type() == at::kBFloat16;
    };
    TORCH_CHECK(accepted(a) && a.scalar_type() == b.scalar_type(), op,
                ": A and B must both be float32, both float16 or both bfloat16, got ",
                a.scalar_type(), " and ", b.scalar_type());
  } else {
    const auto sixteen = [](const at::Tensor& t) {
      return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
    };
    TORCH_CHECK(sixteen(a) && sixteen(b) && a.scalar_type() == b.scalar_type(), op,
                ": A and B must both be float16 or both bfloat16, got ", a.scalar_type(),
                " and ", b.scalar_type());
  }
  TORCH_CHECK(a.is_cuda() && b.is_cuda(), op, ": A and B must be CUDA tensors, got ",
              a.device(), " and ", b.device());
  TORCH_CHECK(a.device() == b.device(), op, ": A and B must be on the same device, got ",
              a.device(), " and ", b.device());
  TORCH_CHECK(a.size(1) == b.size(0), op, ": inner dimensions must agree, got A ",
              a.sizes(), " and B ", b.sizes(), " (A.size(1) = ", a.size(1),
              " != B.size(0) = ", b.size(0), ")");
  TORCH_CHECK(a.size(0) <= kMaxDim && a.size(1) <= kMaxDim && b.size(1) <= kMaxDim, op,
              ": every dimension must be below 2^31, got M = ", a.size(0), ", K = ",
              a.size(1), ", N = ", b.size(1));
}

// cudaErrorNotSupported from a rung that needs more than this GPU or build has: what it
// needs (cvt::tensor_core_needs, cuda/launchers.h) and what the GPU is.
void check_supported(const char* op, const char* needs, cudaError_t err, int device) {
  if (err != cudaErrorNotSupported || needs == nullptr) return;
  int major = 0, minor = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  TORCH_CHECK(false, op, ": needs ", needs, "; this GPU is compute capability ", major, ".",
              minor, (major == 9 && minor == 0 ? " (so this build lacks sm_90a)" : ""));
}

// Staging for the TMA rungs (t2 to t5). TMA describes a matrix whose rows start on 16-byte
// boundaries: pointers 16-byte aligned, K and N multiples of 16 bytes' worth of values (8 of
// 2 bytes, 4 floats). Where the inputs are not so, the launchers run a fall-back kernel (t1's
// or v7's) that takes any input, at a fraction of the rung's speed. Instead, where the
// product is worth it, the op stages the operands into padded buffers that TMA can take:
// A into M x Kp, B into Kp x Np (Kp, Np: K, N rounded up to the 16-byte multiple; the pad
// is zeros, so the sums do not change), runs the rung's own kernel on them, and copies
// C's first N columns out when N was padded. The copies are part of the op, so they are
// timed with it.
//
// The rule (as PyTorch Inductor's pad_mm: pad only where the product is compute-bound):
// stage when 2MNK >= CVT_STAGE_MIN_FLOPS_PER_BYTE x (MK + KN + MN) x element bytes. The
// copies read and write each operand once more: about twice the compulsory bytes. The
// fall-back runs at a fifth to a tenth of the rung (H100 bf16: t1 at 0.2x of t5; tf32: v7
// at 0.14x of t4), so staging wins where the rung's time is more than about a third of the
// copies': above 64 FLOP per compulsory byte, a quarter of the H100's bf16 ridge point.
constexpr int64_t kStageMinFlopsPerByte = CVT_STAGE_MIN_FLOPS_PER_BYTE;

bool aligned_16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }
int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// True when the rung cannot take A and B as they are and the product is worth the copies.
bool should_stage(const at::Tensor& A, const at::Tensor& B, int64_t M, int64_t N, int64_t K,
                  int per_16) {
  if (K == 0 || M == 0 || N == 0) return false;
  const bool ready = aligned_16(A.data_ptr()) && aligned_16(B.data_ptr()) && K % per_16 == 0 &&
                     N % per_16 == 0;
  if (ready) return false;
  const double bytes = static_cast<double>(M * K + K * N + M * N) * A.element_size();
  return 2.0 * static_cast<double>(M) * N * K >= kStageMinFlopsPerByte * bytes;
}

// `rows` x `cols` of X (contiguous) into a fresh rows_p x cols_p buffer, zeros around it:
// one pass, each piece of the buffer written once (cuda/staging.cu).
at::Tensor padded(const at::Tensor& X, int64_t rows_p, int64_t cols_p) {
  at::Tensor P = at::empty({rows_p, cols_p}, X.options());
  C10_CUDA_CHECK(cvt::launch_stage_pad(X.data_ptr(), X.size(0), X.size(1), P.data_ptr(), rows_p,
                                       cols_p, static_cast<int>(X.element_size()),
                                       c10::cuda::getCurrentCUDAStream(X.get_device())));
  return P;
}

// The operands a TMA rung runs on: A, B and C as they are, or staged (see above).
struct Operands {
  at::Tensor A, B, C;   // what the kernel reads and writes
  int64_t N, K;         // the sizes it sees (padded when staged)
};

Operands stage_if_needed(const at::Tensor& A, const at::Tensor& B, const at::Tensor& C,
                         int per_16) {
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  if (per_16 == 0 || !should_stage(A, B, M, N, K, per_16)) return {A, B, C, N, K};
  const int64_t Kp = round_up(K, per_16), Np = round_up(N, per_16);
  const at::Tensor Ap = (Kp == K && aligned_16(A.data_ptr())) ? A : padded(A, M, Kp);
  const at::Tensor Bp = (Kp == K && Np == N && aligned_16(B.data_ptr())) ? B : padded(B, Kp, Np);
  const at::Tensor Cp = Np == N ? C : at::empty({M, Np}, C.options());
  return {Ap, Bp, Cp, Np, Kp};
}

// C's first N columns from a padded C, in one pass (a no-op when nothing was padded).
void unstage(const Operands& run, at::Tensor& C) {
  if (run.C.is_same(C)) return;
  C10_CUDA_CHECK(cvt::launch_stage_unpad(run.C.data_ptr(), run.N, C.data_ptr(), C.size(0),
                                         C.size(1), static_cast<int>(C.element_size()),
                                         c10::cuda::getCurrentCUDAStream(C.get_device())));
}

// `needs`: nullptr for the FFMA ladder (it runs everywhere), cvt::tensor_core_needs for the
// tf32 tensor-core rungs, which share its contract. `stage_per_16`: 4 for a TMA rung (t4:
// floats), which is staged where it pays (above); 0 for the others.
at::Tensor run_matmul(const char* op, cvt::MatmulLauncher launch, const at::Tensor& a,
                      const at::Tensor& b, const char* needs = nullptr, int stage_per_16 = 0) {
  check_matmul_inputs(op, a, b);
  const c10::cuda::CUDAGuard guard(a.device());
  const at::Tensor A = a.contiguous(), B = b.contiguous();  // no copy if already row-major
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  at::Tensor C = at::empty({M, N}, A.options());
  if (M == 0 || N == 0) return C;

  const Operands run = stage_if_needed(A, B, C, stage_per_16);
  const cudaError_t err = launch(run.A.data_ptr<float>(), run.B.data_ptr<float>(),
                                 run.C.data_ptr<float>(), M, run.N, run.K,
                                 c10::cuda::getCurrentCUDAStream(A.get_device()));
  check_supported(op, needs, err, A.get_device());
  // No grid limit is left to name: every rung's grid covers any M and N below 2^31 (checked
  // above), its rows of blocks folded into (y, z) past CUDA's 65535 (cuda/common.cuh). So
  // cudaErrorInvalidConfiguration is CUDA refusing the launch itself (a cluster that no GPC
  // of this GPU holds, say): CUDA's own words, with the op and the shape.
  TORCH_CHECK(err != cudaErrorInvalidConfiguration, op, ": CUDA refused the launch for a ", M,
              " x ", K, " by ", K, " x ", N, " product: ", cudaGetErrorString(err));
  C10_CUDA_CHECK(err);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  unstage(run, C);
  return C;
}

// The tensor-core rungs: the same three steps, with 16-bit values and the element type
// passed to the launcher; the TMA rungs (t2, t3, t5) staged where it pays (above).
at::Tensor run_tensor_core_matmul(const char* op, cvt::TensorCoreMatmulLauncher launch,
                                  const char* needs, const at::Tensor& a, const at::Tensor& b,
                                  int stage_per_16) {
  check_matmul_inputs(op, a, b, Accepts::kHalfOrBFloat16);
  const c10::cuda::CUDAGuard guard(a.device());
  const at::Tensor A = a.contiguous(), B = b.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  at::Tensor C = at::empty({M, N}, A.options());
  if (M == 0 || N == 0) return C;

  const auto type = A.scalar_type() == at::kBFloat16 ? cvt::TensorCoreType::kBFloat16
                                                      : cvt::TensorCoreType::kFloat16;
  const Operands run = stage_if_needed(A, B, C, stage_per_16);
  const cudaError_t err = launch(run.A.data_ptr(), run.B.data_ptr(), run.C.data_ptr(), M,
                                 run.N, run.K, type,
                                 c10::cuda::getCurrentCUDAStream(A.get_device()));
  check_supported(op, needs, err, A.get_device());
  // cudaErrorInvalidConfiguration: t1's and t2's one block per tile past 2^31 - 1 tiles (their
  // launchers refuse it), or CUDA refusing a cluster this GPU cannot hold: CUDA's words.
  TORCH_CHECK(err != cudaErrorInvalidConfiguration, op, ": CUDA refused the launch for a ", M,
              " x ", K, " by ", K, " x ", N, " product (one block per output tile allows at "
              "most 2^31 - 1 tiles): ", cudaGetErrorString(err));
  C10_CUDA_CHECK(err);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  unstage(run, C);
  return C;
}

// The paths beside the ladder (CVT_SKINNY_OPS): float32, float16 or bfloat16 (A and B the
// same), M <= 16 or N <= 16, and a float32 workspace for split K from the caching allocator.
at::Tensor run_skinny_matmul(const char* op, cvt::SkinnyMatmulLauncher launch,
                             int64_t (*workspace_floats)(int64_t, int64_t, int64_t,
                                                         cvt::MatmulType, int),
                             const at::Tensor& a, const at::Tensor& b) {
  check_matmul_inputs(op, a, b, Accepts::kAny);
  TORCH_CHECK(a.size(0) <= CVT_SKINNY_MAX_R || b.size(1) <= CVT_SKINNY_MAX_R, op,
              ": needs M <= ", CVT_SKINNY_MAX_R, " or N <= ", CVT_SKINNY_MAX_R, ", got M = ",
              a.size(0), " and N = ", b.size(1));
  const c10::cuda::CUDAGuard guard(a.device());
  const at::Tensor A = a.contiguous(), B = b.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  at::Tensor C = at::empty({M, N}, A.options());
  if (M == 0 || N == 0) return C;

  const auto type = A.scalar_type() == at::kFloat  ? cvt::MatmulType::kFloat32
                    : A.scalar_type() == at::kHalf ? cvt::MatmulType::kFloat16
                                                   : cvt::MatmulType::kBFloat16;
  const int64_t floats = workspace_floats(M, N, K, type, A.get_device());
  TORCH_INTERNAL_ASSERT(floats >= 0, op, ": no workspace size for M = ", M, ", N = ", N,
                        ", K = ", K);
  const at::Tensor W = at::empty({floats}, A.options().dtype(at::kFloat));
  const cudaError_t err = launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, type,
                                 W.data_ptr<float>(), floats,
                                 c10::cuda::getCurrentCUDAStream(A.get_device()));
  C10_CUDA_CHECK(err);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}

// The ops, one per version of CVT_MATMUL_OPS (cuda/matmul_config.h, the one list): the op
// matmul_<version> runs the launcher cvt::launch_matmul_<version>.
#define CVT_MATMUL_OP(VERSION)                                                    \
  at::Tensor matmul_##VERSION(const at::Tensor& a, const at::Tensor& b) {        \
    return run_matmul("matmul_" #VERSION, cvt::launch_matmul_##VERSION, a, b);   \
  }
CVT_MATMUL_OPS(CVT_MATMUL_OP)
#undef CVT_MATMUL_OP

// ... and one per rung of CVT_TENSOR_CORE_OPS.
#define CVT_TENSOR_CORE_OP(VERSION)                                                          \
  at::Tensor matmul_##VERSION(const at::Tensor& a, const at::Tensor& b) {                   \
    return run_tensor_core_matmul("matmul_" #VERSION, cvt::launch_matmul_##VERSION,         \
                                  cvt::tensor_core_needs(#VERSION), a, b,                   \
                                  cvt::tensor_core_stage(#VERSION, 8));                     \
  }
CVT_TENSOR_CORE_OPS(CVT_TENSOR_CORE_OP)
#undef CVT_TENSOR_CORE_OP

// ... and one per rung of CVT_TF32_OPS: float32 tensors, the FFMA ladder's steps.
#define CVT_TF32_OP(VERSION)                                                                \
  at::Tensor matmul_##VERSION(const at::Tensor& a, const at::Tensor& b) {                  \
    return run_matmul("matmul_" #VERSION, cvt::launch_matmul_##VERSION, a, b,              \
                      cvt::tensor_core_needs(#VERSION),                                    \
                      cvt::tensor_core_stage(#VERSION, 4));                                \
  }
CVT_TF32_OPS(CVT_TF32_OP)
#undef CVT_TF32_OP

// ... and one per path of CVT_SKINNY_OPS.
#define CVT_SKINNY_OP(VERSION)                                                              \
  at::Tensor matmul_##VERSION(const at::Tensor& a, const at::Tensor& b) {                  \
    return run_skinny_matmul("matmul_" #VERSION, cvt::launch_matmul_##VERSION,             \
                             cvt::matmul_##VERSION##_workspace_floats, a, b);              \
  }
CVT_SKINNY_OPS(CVT_SKINNY_OP)
#undef CVT_SKINNY_OP

}  // namespace

// Every version has the same schema: matmul_v1_naive(Tensor a, Tensor b) -> Tensor, ...
TORCH_LIBRARY(cvt, m) {
#define CVT_MATMUL_SCHEMA(VERSION) m.def("matmul_" #VERSION "(Tensor a, Tensor b) -> Tensor");
  CVT_MATMUL_OPS(CVT_MATMUL_SCHEMA)
  CVT_TENSOR_CORE_OPS(CVT_MATMUL_SCHEMA)
  CVT_TF32_OPS(CVT_MATMUL_SCHEMA)
  CVT_SKINNY_OPS(CVT_MATMUL_SCHEMA)
#undef CVT_MATMUL_SCHEMA
}

// One list of implementations for both dispatch keys, so the two cannot drift apart.
// CPU tensors reach the same functions so that the caller gets this project's message
// ("must be CUDA tensors, got cpu") instead of a dispatcher error.
static void register_impls(torch::Library& m) {
#define CVT_MATMUL_IMPL(VERSION) m.impl("matmul_" #VERSION, &matmul_##VERSION);
  CVT_MATMUL_OPS(CVT_MATMUL_IMPL)
  CVT_TENSOR_CORE_OPS(CVT_MATMUL_IMPL)
  CVT_TF32_OPS(CVT_MATMUL_IMPL)
  CVT_SKINNY_OPS(CVT_MATMUL_IMPL)
#undef CVT_MATMUL_IMPL
}

TORCH_LIBRARY_IMPL(cvt, CUDA, m) { register_impls(m); }
TORCH_LIBRARY_IMPL(cvt, CPU, m) { register_impls(m); }
