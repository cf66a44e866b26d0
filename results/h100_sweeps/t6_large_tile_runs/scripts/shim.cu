#include "launchers.h"
// exp_t3: the launcher of t3, or of t5 / t6 where built with -DEXP_T5 / -DEXP_T6.
extern "C" int exp_t3(const void* A, const void* B, void* C, long long M, long long N, long long K,
                      int bf16, void* stream) {
  const auto type = bf16 ? cvt::TensorCoreType::kBFloat16 : cvt::TensorCoreType::kFloat16;
  const auto s = static_cast<cudaStream_t>(stream);
#if defined(EXP_T6)
  return static_cast<int>(cvt::launch_matmul_t6_large_tile(A, B, C, M, N, K, type, s));
#elif defined(EXP_T5)
  return static_cast<int>(cvt::launch_matmul_t5_stream_k(A, B, C, M, N, K, type, s));
#else
  return static_cast<int>(cvt::launch_matmul_t3_warp_specialized(A, B, C, M, N, K, type, s));
#endif
}
