#include "launchers.h"
extern "C" int exp_t3(const void* A, const void* B, void* C, long long M, long long N, long long K,
                      int bf16, void* stream) {
  const auto type = bf16 ? cvt::TensorCoreType::kBFloat16 : cvt::TensorCoreType::kFloat16;
#ifdef EXP_T5
  return static_cast<int>(cvt::launch_matmul_t5_stream_k(A, B, C, M, N, K, type,
                                                         static_cast<cudaStream_t>(stream)));
#else
  return static_cast<int>(cvt::launch_matmul_t3_warp_specialized(A, B, C, M, N, K, type,
                                                                 static_cast<cudaStream_t>(stream)));
#endif
}
