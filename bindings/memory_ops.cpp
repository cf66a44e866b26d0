// Torch ops of the memory-bound CUDA kernels (cuda/vector_add.cu, copy.cu, relu_dropout.cu,
// softmax_row_sram.cu, softmax_online.cu, rgb_to_grey.cu), in the `cvt` namespace next to
// the matmul ladder (bindings/matmul_ops.cpp owns TORCH_LIBRARY(cvt); this file adds a
// fragment). Every op does what the matmul ops do, in the same order:
//   1. check the caller's input (TORCH_CHECK: dtype, device, rank, shapes, arguments),
//      with a message that names the op, the expectation and the actual value;
//   2. make the input contiguous (no copy if it already is) and allocate the output;
//   3. launch on the current stream of the input's device, then check the launch.
// The list of ops is CVT_MEMORY_OPS (cuda/memory_config.h): the schemas and registrations at
// the end of this file expand it. Fake (meta) kernels for torch.compile live in
// bindings/_fake_memory.py.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../cuda/memory_launchers.h"

namespace {

// The kernels' element type for a floating-point tensor.
cvt::DType float_dtype(const char* op, const at::Tensor& x) {
  switch (x.scalar_type()) {
    case at::kFloat: return cvt::DType::kFloat32;
    case at::kHalf: return cvt::DType::kFloat16;
    case at::kBFloat16: return cvt::DType::kBFloat16;
    default: break;
  }
  TORCH_CHECK(false, op, ": x must be float32, float16 or bfloat16, got ", x.scalar_type());
  return cvt::DType::kFloat32;  // not reached
}

void check_cuda(const char* op, const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda(), op, ": x must be a CUDA tensor, got ", x.device());
}

void check_launch(const char* op, cudaError_t err) {
  // The launchers cap their grids at CUDA's limits (grid-stride loops) or are checked
  // before the launch (rgb_to_grey), so this is an invariant, not a caller's mistake.
  TORCH_INTERNAL_ASSERT(err != cudaErrorInvalidConfiguration, op,
                        ": a launcher asked for a grid past CUDA's limits");
  C10_CUDA_CHECK(err);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

cudaStream_t stream_of(const at::Tensor& x) {
  return c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
}

// The SM count of x's device, for the launchers that size their grid to fill the GPU. Asked
// of the CUDA runtime (an attribute query: cheap, no cudaGetDeviceProperties) rather than
// through at::cuda::getCurrentDeviceProperties(), whose header (ATen/cuda/CUDAContext.h)
// includes cuBLAS, cuSPARSE and cuSOLVER: a CUDA toolkit without those libraries could then
// not build these bindings.
int sm_count(const at::Tensor& x) {
  int sms = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, x.get_device()));
  return sms;
}

// ---------------------------------------------------------------------------------------

at::Tensor vector_add(const at::Tensor& x, const at::Tensor& y) {
  constexpr const char* op = "vector_add";
  TORCH_CHECK(x.scalar_type() == y.scalar_type(), op, ": x and y must have the same dtype, got ",
              x.scalar_type(), " and ", y.scalar_type());
  const cvt::DType dtype = float_dtype(op, x);
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), op, ": x and y must be CUDA tensors, got ", x.device(),
              " and ", y.device());
  TORCH_CHECK(x.device() == y.device(), op, ": x and y must be on the same device, got ",
              x.device(), " and ", y.device());
  TORCH_CHECK(x.sizes() == y.sizes(), op, ": x and y must have the same shape (no broadcasting), got ",
              x.sizes(), " and ", y.sizes());
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor a = x.contiguous(), b = y.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  if (a.numel() == 0) return out;
  check_launch(op, cvt::launch_vector_add(dtype, a.data_ptr(), b.data_ptr(), out.data_ptr(),
                                          a.numel(), sm_count(a), stream_of(a)));
  return out;
}

at::Tensor copy(const at::Tensor& x) {
  constexpr const char* op = "copy";
  const cvt::DType dtype = float_dtype(op, x);
  check_cuda(op, x);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor a = x.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  if (a.numel() == 0) return out;
  check_launch(op, cvt::launch_copy(dtype, a.data_ptr(), out.data_ptr(), a.numel(), stream_of(a)));
  return out;
}

at::Tensor relu_dropout(const at::Tensor& x, double p, int64_t seed) {
  constexpr const char* op = "relu_dropout";
  const cvt::DType dtype = float_dtype(op, x);
  check_cuda(op, x);
  TORCH_CHECK(p >= 0.0 && p < 1.0, op, ": p must be in [0, 1), got ", p);
  TORCH_CHECK(seed >= 0, op, ": seed must be >= 0, got ", seed);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor a = x.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  if (a.numel() == 0) return out;
  check_launch(op, cvt::launch_relu_dropout(dtype, a.data_ptr(), out.data_ptr(), a.numel(), p,
                                            static_cast<uint64_t>(seed), stream_of(a)));
  return out;
}

// x viewed as [outer, n, inner] around dimension `dim`.
struct SoftmaxView {
  int64_t outer = 1, n = 1, inner = 1;
};

SoftmaxView softmax_view(const char* op, const at::Tensor& x, int64_t dim) {
  TORCH_CHECK(x.dim() >= 1, op, ": x must have at least one dimension, got a 0-D tensor");
  TORCH_CHECK(dim >= -x.dim() && dim < x.dim(), op, ": dim must be in [", -x.dim(), ", ",
              x.dim() - 1, "] for a ", x.dim(), "-D tensor, got ", dim);
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  SoftmaxView v;
  for (int64_t i = 0; i < d; ++i) v.outer *= x.size(i);
  v.n = x.size(d);
  for (int64_t i = d + 1; i < x.dim(); ++i) v.inner *= x.size(i);
  return v;
}

at::Tensor run_softmax(const char* op, const at::Tensor& x, int64_t dim, bool sram) {
  const cvt::DType dtype = float_dtype(op, x);
  check_cuda(op, x);
  const SoftmaxView v = softmax_view(op, x, dim);
  TORCH_CHECK(!sram || v.n <= cvt::kSoftmaxSramMaxN, op, ": a row of ", v.n,
              " elements (dim ", dim, " of ", x.sizes(), ") does not fit in SRAM: at most ",
              cvt::kSoftmaxSramMaxN, "; softmax_online takes rows of any length");
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor a = x.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  if (a.numel() == 0) return out;
  const int sms = sm_count(a);
  const cudaError_t err =
      sram ? cvt::launch_softmax_row_sram(dtype, a.data_ptr(), out.data_ptr(), v.outer, v.n, v.inner, sms, stream_of(a))
           : cvt::launch_softmax_online(dtype, a.data_ptr(), out.data_ptr(), v.outer, v.n, v.inner, sms, stream_of(a));
  check_launch(op, err);
  return out;
}

at::Tensor softmax_row_sram(const at::Tensor& x, int64_t dim) {
  return run_softmax("softmax_row_sram", x, dim, true);
}

at::Tensor softmax_online(const at::Tensor& x, int64_t dim) {
  return run_softmax("softmax_online", x, dim, false);
}

// The split softmax (softmax_split.cu), rows only: a row split over a thread-block cluster of the
// size the launcher picks (memory_launchers.h). Columns (dim not the last) are
// softmax_online's; a row longer than a cluster of kSplitMaxCluster blocks can hold, and a
// row that needs a cluster on a GPU without clusters, are refused with the limit named.
at::Tensor softmax_split(const at::Tensor& x, int64_t dim) {
  constexpr const char* op = "softmax_split";
  const cvt::DType dtype = float_dtype(op, x);
  check_cuda(op, x);
  const SoftmaxView v = softmax_view(op, x, dim);
  TORCH_CHECK((dim < 0 ? dim + x.dim() : dim) == x.dim() - 1, op,
              ": rows only: dim must be the last (", x.dim() - 1, " or -1) for a ", x.dim(),
              "-D tensor, got ", dim, "; softmax_online takes any dim");
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor a = x.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  if (a.numel() == 0) return out;
  const cudaError_t err = cvt::launch_softmax_split(dtype, a.data_ptr(), out.data_ptr(), v.outer,
                                                    v.n, stream_of(a));
  TORCH_CHECK(err != cudaErrorNotSupported, op, ": a row of ", v.n, " elements needs a "
              "thread-block cluster, which this GPU does not run (compute capability 9.0 and a "
              "GPC that holds the cluster); softmax_online takes rows of any length");
  TORCH_CHECK(err != cudaErrorInvalidValue, op, ": a row of ", v.n, " elements is past the limit "
              "of ", cvt::kSplitMaxCluster, " slices of the largest shared memory a block may "
              "have; softmax_online takes rows of any length");
  check_launch(op, err);
  return out;
}

at::Tensor rgb_to_grey(const at::Tensor& img) {
  constexpr const char* op = "rgb_to_grey";
  TORCH_CHECK(img.scalar_type() == at::kByte, op, ": the image must be uint8, got ", img.scalar_type());
  TORCH_CHECK(img.dim() == 3 && img.size(0) == 3, op,
              ": the image must be 3 x H x W (channels first, RGB), got shape ", img.sizes());
  TORCH_CHECK(img.is_cuda(), op, ": the image must be a CUDA tensor, got ", img.device());
  // The launcher's grid (memory_launchers.h): a block per kGreyBY rows along x, at most
  // 2^31 - 1; a block per kGreyColumnsPerBlock columns along y, folded into (y, z) past
  // 65535, at most 65535 x 65535. Checked before .contiguous(), which would copy such an image.
  constexpr int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;  // CUDA's limits
  const int64_t h = img.size(1), w = img.size(2);
  const int64_t row_blocks = (h + cvt::kGreyBY - 1) / cvt::kGreyBY;
  const int64_t column_blocks = (w + cvt::kGreyColumnsPerBlock - 1) / cvt::kGreyColumnsPerBlock;
  TORCH_CHECK(row_blocks <= kMaxGridX, op, ": a ", h, " x ", w, " image needs ", row_blocks,
              " blocks along grid x (one per ", cvt::kGreyBY, " rows), more than the ", kMaxGridX,
              " CUDA allows: H must be <= ", kMaxGridX * cvt::kGreyBY);
  TORCH_CHECK(column_blocks <= kMaxGridYZ * kMaxGridYZ, op, ": a ", h, " x ", w, " image needs ",
              column_blocks, " blocks along grid y and z (one per ", cvt::kGreyColumnsPerBlock,
              " columns), more than the ", kMaxGridYZ, " x ", kMaxGridYZ,
              " CUDA allows: W must be <= ", kMaxGridYZ * kMaxGridYZ * cvt::kGreyColumnsPerBlock);
  const c10::cuda::CUDAGuard guard(img.device());
  const at::Tensor a = img.contiguous();
  at::Tensor out = at::empty({h, w}, a.options());
  if (out.numel() == 0) return out;
  check_launch(op, cvt::launch_rgb_to_grey(a.data_ptr<uint8_t>(), out.data_ptr<uint8_t>(), h, w,
                                           stream_of(a)));
  return out;
}

}  // namespace

// Each op's arguments and result, in torch's schema language, named after the op. Every op
// of CVT_MEMORY_OPS needs one (a missing one does not compile).
#define CVT_SCHEMA_vector_add "(Tensor x, Tensor y) -> Tensor"
#define CVT_SCHEMA_copy "(Tensor x) -> Tensor"
#define CVT_SCHEMA_relu_dropout "(Tensor x, float p, int seed) -> Tensor"
#define CVT_SCHEMA_softmax_row_sram "(Tensor x, int dim) -> Tensor"
#define CVT_SCHEMA_softmax_online "(Tensor x, int dim) -> Tensor"
#define CVT_SCHEMA_softmax_split "(Tensor x, int dim) -> Tensor"
#define CVT_SCHEMA_rgb_to_grey "(Tensor img) -> Tensor"

TORCH_LIBRARY_FRAGMENT(cvt, m) {
#define CVT_MEMORY_SCHEMA(NAME) m.def(#NAME CVT_SCHEMA_##NAME);
  CVT_MEMORY_OPS(CVT_MEMORY_SCHEMA)
#undef CVT_MEMORY_SCHEMA
}

// One list of implementations for both dispatch keys, so the two cannot drift apart.
// CPU tensors reach the same functions, so that the caller gets this project's message
// ("x must be a CUDA tensor, got cpu") instead of a dispatcher error.
static void register_memory_impls(torch::Library& m) {
#define CVT_MEMORY_IMPL(NAME) m.impl(#NAME, &NAME);
  CVT_MEMORY_OPS(CVT_MEMORY_IMPL)
#undef CVT_MEMORY_IMPL
}

TORCH_LIBRARY_IMPL(cvt, CUDA, m) { register_memory_impls(m); }
TORCH_LIBRARY_IMPL(cvt, CPU, m) { register_memory_impls(m); }
