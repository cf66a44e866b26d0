// Standalone driver for the matmul ladder: no Python, no torch.
//
//   matmul_driver list
//   matmul_driver VERSION M N K [M N K ...] [--reps R] [--seed S] [--full-check]
//                 [--misalign] [--cublas]
//   matmul_driver all M N K ...        every version in turn
//
// For each version and shape it fills A and B with random floats, poisons C with NaN
// (every element must be written), runs the kernel once, compares C with a float64 CPU
// reference (every element when M*N*K <= 2^28, else 4096 sampled ones; --full-check
// forces all), then times R launches (default 20) with CUDA events, flushing L2
// before each one, and prints the median. Exit status 1 on any wrong element or
// CUDA error. This is the program to run under ncu and compute-sanitizer:
//   compute-sanitizer --tool memcheck  build/cmake/matmul_driver all 67 45 31 --reps 0
//   compute-sanitizer --tool racecheck build/cmake/matmul_driver v3_smem_tiling 130 129 17 --reps 0
//
// --misalign offsets A, B and C by one float from their allocations, so no row is
// 16-byte aligned: the kernels with a 128-bit path must take their scalar path and still
// be right. --cublas (a driver built with -DCVT_WITH_CUBLAS, linked with -lcublas; CMake:
// -DCVT_WITH_CUBLAS=ON) also times cuBLAS's SGEMM on the same inputs, in the same process
// and the same way, with TF32 off, and prints the ratio; the version `cublas` runs it as a
// version of its own (checked like the others). The tf32 rungs (CVT_TF32_OPS: t4_tf32) are
// versions too, checked with TF32's looser bound and compared with cuBLAS at tf32
// (`cublas_tf32`); on a GPU without their instructions they are skipped, and say so.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "driver_common.h"
#include "launchers.h"

#ifdef CVT_WITH_CUBLAS
#include <cublas_v2.h>

// cuBLAS's SGEMM as a MatmulLauncher. cuBLAS is column-major: a row-major M x N matrix is
// its N x M transpose, so C = A B (row-major) is C^T = B^T A^T (column-major), one call with
// the operands swapped and no transposition flag. CUBLAS_DEFAULT_MATH keeps FP32 on FFMA
// (no TF32 tensor cores; the environment variable NVIDIA_TF32_OVERRIDE=1 would override
// it, so leave it unset).
static cudaError_t launch_cublas(const float* A, const float* B, float* C, int64_t M,
                                 int64_t N, int64_t K, cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr) {
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
    if (cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  }
  if (M == 0 || N == 0) return cudaSuccess;
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(N),
                                        static_cast<int>(M), static_cast<int>(K), &one, B,
                                        static_cast<int>(N), A, static_cast<int>(K > 0 ? K : 1),
                                        &zero, C, static_cast<int>(N));
  return st == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
}

// cuBLAS at tf32 (CUBLAS_COMPUTE_32F_FAST_TF32: float32 in and out, tensor cores), the
// reference of the tf32 rungs.
static cudaError_t launch_cublas_tf32(const float* A, const float* B, float* C, int64_t M,
                                      int64_t N, int64_t K, cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  if (M == 0 || N == 0) return cudaSuccess;
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasGemmEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
      static_cast<int>(K), &one, B, CUDA_R_32F, static_cast<int>(N), A, CUDA_R_32F,
      static_cast<int>(K > 0 ? K : 1), &zero, C, CUDA_R_32F, static_cast<int>(N),
      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
}
#endif

// `input_error`: the relative error one product may carry from how the hardware cuts its
// inputs (0 for IEEE FFMA; 3 * 2^-11 for the tf32 rungs: one operand truncated to TF32,
// 2^-10, the other rounded, 2^-11). `tf32`: compared with cuBLAS at tf32, not SGEMM.
struct Version {
  const char* name;
  cvt::MatmulLauncher launch;
  double input_error;
  bool tf32;
};

// Every version of CVT_MATMUL_OPS (matmul_config.h), in ladder order, then CVT_TF32_OPS.
static const Version kVersions[] = {
#define CVT_VERSION(VERSION) {#VERSION, cvt::launch_matmul_##VERSION, 0.0, false},
    CVT_MATMUL_OPS(CVT_VERSION)
#undef CVT_VERSION
#define CVT_VERSION(VERSION) {#VERSION, cvt::launch_matmul_##VERSION, 3 * 0x1p-11, true},
    CVT_TF32_OPS(CVT_VERSION)
#undef CVT_VERSION
#ifdef CVT_WITH_CUBLAS
    {"cublas", launch_cublas, 0.0, false},
    {"cublas_tf32", launch_cublas_tf32, 3 * 0x1p-11, true},
#endif
};

struct Options {
  int reps = 20;
  unsigned seed = 0;
  bool full_check = false;
  bool misalign = false;  // A, B, C one float past their allocations
  bool cublas = false;    // also time cuBLAS (CVT_WITH_CUBLAS builds only)
};

// Checks C against a float64 reference: |c - ref| <= tol * sum_k |a_ik * b_kj|, with
// tol = 2 * (input_error + K * 2^-24) (the inputs' cut, then the recursive-summation bound
// for float32), so a wrong index or a missing term fails while rounding passes.
static bool check(const std::vector<float>& A, const std::vector<float>& B,
                  const std::vector<float>& C, int64_t M, int64_t N, int64_t K,
                  bool full, unsigned seed, double input_error, double* worst) {
  const double tol = 2.0 * (input_error + std::max<int64_t>(K, 1) * std::ldexp(1.0, -24));
  const bool all = full || M * N * std::max<int64_t>(K, 1) <= (int64_t{1} << 28);
  const int64_t samples = all ? M * N : 4096;
  std::mt19937_64 rng(seed + 7);
  *worst = 0.0;
  bool ok = true;
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t idx = all ? s : static_cast<int64_t>(rng() % static_cast<uint64_t>(M * N));
    const int64_t i = idx / N, j = idx % N;
    double ref = 0.0, mag = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double p = static_cast<double>(A[i * K + k]) * B[k * N + j];
      ref += p;
      mag += std::fabs(p);
    }
    const double c = C[idx];
    const double err = std::fabs(c - ref) / (mag > 0 ? mag : 1.0);
    if (!(err <= tol)) {  // also catches NaN (a poisoned element nobody wrote)
      if (ok) std::fprintf(stderr, "  wrong C[%lld][%lld] = %g, expected %g\n",
                           (long long)i, (long long)j, c, ref);
      ok = false;
    }
    if (!(err <= *worst)) *worst = err;
  }
  return ok;
}

static bool run_one(const Version& v, int64_t M, int64_t N, int64_t K, const Options& opt) {
  std::mt19937 rng(opt.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (auto& x : A) x = dist(rng);
  for (auto& x : B) x = dist(rng);

  float *allocA, *allocB, *allocC;
  const int64_t off = opt.misalign ? 1 : 0;  // cudaMalloc is 256-byte aligned; +1 float is not 16
  CUDA_CHECK(cudaMalloc(&allocA, (std::max<int64_t>(A.size(), 1) + off) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&allocB, (std::max<int64_t>(B.size(), 1) + off) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&allocC, (std::max<int64_t>(C.size(), 1) + off) * sizeof(float)));
  float* const dA = allocA + off;
  float* const dB = allocB + off;
  float* const dC = allocC + off;
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dC, 0xFF, C.size() * sizeof(float)));  // NaN everywhere

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaError_t err = v.launch(dA, dB, dC, M, N, K, stream);
  if (err == cudaErrorNotSupported) {  // a Hopper-only rung elsewhere (cuda/launchers.h)
    std::printf("%-20s skipped: this GPU or build lacks its instructions\n", v.name);
    return true;
  }
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s %lldx%lldx%lld: launch failed: %s\n", v.name, (long long)M,
                 (long long)N, (long long)K, cudaGetErrorString(err));
    return false;
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0.0;
  const bool ok = check(A, B, C, M, N, K, opt.full_check, opt.seed, v.input_error, &worst);

  double median_ms = 0.0, cublas_ms = 0.0;
  if (opt.reps > 0 && M * N > 0) {
    median_ms = median_launch_ms([&] { return v.launch(dA, dB, dC, M, N, K, stream); },
                                 opt.reps, stream);
#ifdef CVT_WITH_CUBLAS
    if (opt.cublas)
      cublas_ms = median_launch_ms(
          [&] { return (v.tf32 ? launch_cublas_tf32 : launch_cublas)(dA, dB, dC, M, N, K, stream); },
          opt.reps, stream);
#endif
  }
  const double flops = 2.0 * M * N * K;
  const double tflops = median_ms > 0 ? flops / (median_ms * 1e-3) / 1e12 : 0.0;
  std::printf("%-20s %6lld x %6lld x %6lld%s  max rel err %.2e  %s", v.name, (long long)M,
              (long long)N, (long long)K, opt.misalign ? " misaligned" : "", worst,
              ok ? "ok   " : "WRONG");
  if (median_ms > 0)
    std::printf("  median %9.4f ms  %7.2f TFLOP/s (%s)", median_ms, tflops, v.tf32 ? "tf32" : "fp32");
  if (cublas_ms > 0) {
    std::printf("  cublas %7.2f TFLOP/s  x%.3f", flops / (cublas_ms * 1e-3) / 1e12,
                cublas_ms / median_ms);
  }
  std::printf("\n");

  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(allocA));
  CUDA_CHECK(cudaFree(allocB));
  CUDA_CHECK(cudaFree(allocC));
  return ok;
}

static int usage() {
  std::fprintf(stderr,
               "usage: matmul_driver list\n"
               "       matmul_driver VERSION|all M N K [M N K ...] [--reps R] [--seed S]\n"
               "                     [--full-check] [--misalign] [--cublas]\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "list") == 0) {
    for (const auto& v : kVersions) std::printf("%s\n", v.name);
    return 0;
  }
  if (argc < 5) return usage();
  const std::string which = argv[1];
  std::vector<int64_t> dims;  // M N K, M N K, ...
  int i = 2;
  if (!read_shapes(argc, argv, i, "matmul_driver", dims)) return 2;
  Options opt;
  for (; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) opt.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) opt.seed = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--full-check")) opt.full_check = true;
    else if (!std::strcmp(argv[i], "--misalign")) opt.misalign = true;
    else if (!std::strcmp(argv[i], "--cublas")) opt.cublas = true;
    else return usage();
  }
#ifndef CVT_WITH_CUBLAS
  if (opt.cublas) {
    std::fprintf(stderr, "matmul_driver: --cublas needs a driver built with -DCVT_WITH_CUBLAS "
                         "(and -lcublas)\n");
    return 2;
  }
#endif
  bool ok = true, found = false;
  for (const auto& v : kVersions) {
    const bool library = !std::strncmp(v.name, "cublas", 6);  // `all`: the ladder and rungs
    if ((which == "all" && !library) || which == v.name) {
      found = true;
      for (size_t d = 0; d < dims.size(); d += 3) {
        ok = run_one(v, dims[d], dims[d + 1], dims[d + 2], opt) && ok;
      }
    }
  }
  if (!found) {
    std::fprintf(stderr, "matmul_driver: unknown version '%s' (try: matmul_driver list)\n", which.c_str());
    return 2;
  }
  return ok ? 0 : 1;
}
