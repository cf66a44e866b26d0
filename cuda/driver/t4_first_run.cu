// DRAFT companion of cuda/matmul_t4_tf32.cu for its first GPU run (not wired into the suite):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icuda cuda/driver/t4_first_run.cu cuda/matmul_t4_tf32.cu \
//        cuda/matmul_v7_lean_fetch.cu -lcublas -o t4 && ./t4
// Checks t4 against a float64 reference of the float inputs (bound: tf32 truncation of both
// operands, 2 * 2^-10 per product, plus float32 accumulation), C poisoned with NaN, at odd
// shapes on the TMA path and off it; then times it beside cublasGemmEx with
// CUBLAS_COMPUTE_32F_FAST_TF32 at 4096^3 and 8192^3 (median of 15, L2 flushed).
#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "driver/driver_common.h"
#include "launchers.h"

namespace cvt {
cudaError_t launch_matmul_t4_tf32(const float* A, const float* B, float* C, int64_t M,
                                  int64_t N, int64_t K, cudaStream_t stream);
}

static cudaError_t cublas_tf32(const float* A, const float* B, float* C, int64_t M, int64_t N,
                               int64_t K, cudaStream_t stream) {
  static cublasHandle_t h = nullptr;
  if (!h && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  cublasSetStream(h, stream);
  const float one = 1.0f, zero = 0.0f;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B, CUDA_R_32F,
                      (int)N, A, CUDA_R_32F, (int)K, &zero, C, CUDA_R_32F, (int)N,
                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS
             ? cudaSuccess : cudaErrorUnknown;
}

static bool check(int64_t M, int64_t N, int64_t K, int64_t off, bool time) {
  std::mt19937 rng(unsigned(M * 7 + N * 3 + K));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (auto& x : A) x = dist(rng);
  for (auto& x : B) x = dist(rng);
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, (M * K + 4) * 4));
  CUDA_CHECK(cudaMalloc(&b, (K * N + 4) * 4));
  CUDA_CHECK(cudaMalloc(&c, (M * N + 4) * 4));
  CUDA_CHECK(cudaMemcpy(a + off, A.data(), M * K * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b + off, B.data(), K * N * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(c + off, 0xFF, M * N * 4));
  const cudaError_t err = cvt::launch_matmul_t4_tf32(a + off, b + off, c + off, M, N, K, 0);
  if (err != cudaSuccess) { std::printf("%ldx%ldx%ld: launch %s\n", (long)M, (long)N, (long)K, cudaGetErrorString(err)); return false; }
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(C.data(), c + off, M * N * 4, cudaMemcpyDeviceToHost));
  const bool all = M * N * K <= (int64_t(1) << 28);
  const int64_t samples = all ? M * N : 4096;
  std::mt19937_64 pick(1);
  double worst = 0;
  int bad = 0;
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t idx = all ? s : int64_t(pick() % uint64_t(M * N)), i = idx / N, j = idx % N;
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) { const double p = double(A[i * K + k]) * B[k * N + j]; ref += p; mag += std::fabs(p); }
    const double e = std::fabs(C[idx] - ref) / (mag > 0 ? mag : 1);
    if (!(e <= 2 * std::ldexp(1.0, -10) + K * std::ldexp(1.0, -24))) { if (bad++ < 3) std::printf("  C[%ld][%ld] = %g, expected %g\n", (long)i, (long)j, C[idx], ref); }
    if (!(e <= worst)) worst = e;
  }
  std::printf("t4 %6ld x %6ld x %6ld off %ld  max rel err %.2e  %s", (long)M, (long)N, (long)K, (long)off, worst, bad ? "WRONG" : "ok");
  if (time) {
    const double t4 = median_launch_ms([&] { return cvt::launch_matmul_t4_tf32(a, b, c, M, N, K, 0); }, 15, 0);
    const double cb = median_launch_ms([&] { return cublas_tf32(a, b, c, M, N, K, 0); }, 15, 0);
    std::printf("  t4 %.1f TFLOP/s  cublas tf32 %.1f  x%.3f", 2.0 * M * N * K / t4 / 1e9, 2.0 * M * N * K / cb / 1e9, cb / t4);
  }
  std::printf("\n");
  cudaFree(a); cudaFree(b); cudaFree(c);
  return bad == 0;
}

int main() {
  bool ok = true;
  const int64_t shapes[][3] = {{1, 4, 4}, {64, 128, 32}, {256, 256, 64}, {300, 260, 100}, {257, 132, 36}, {100, 264, 40}, {1000, 1000, 1000}, {2056, 4104, 520}, {130, 257, 40}, {129, 264, 37}};
  for (const auto& s : shapes) ok &= check(s[0], s[1], s[2], 0, false);
  ok &= check(200, 264, 96, 1, false);  // off 16 bytes: v7's kernel
  ok &= check(4096, 4096, 4096, 0, true);
  ok &= check(8192, 8192, 8192, 0, true);
  return ok ? 0 : 1;
}
