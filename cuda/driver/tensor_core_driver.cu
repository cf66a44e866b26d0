// Standalone driver for the tensor-core rungs (CVT_TENSOR_CORE_OPS): no Python, no torch.
//
//   tensor_core_driver list
//   tensor_core_driver VERSION|all fp16|bf16 M N K [M N K ...] [--reps R] [--seed S]
//                      [--misalign] [--cublas]
//
// For each rung and shape it fills A and B with random values in [-1, 1] of the element type,
// poisons C with NaN, runs the rung once, compares C with a float64 CPU reference of the
// same (rounded) inputs (every element when M*N*K <= 2^28, else 4096 sampled ones), then
// times R launches (default 20) with CUDA events, L2 flushed before each, and prints the
// median. Exit status 1 on a wrong element or a CUDA error. The program to put under ncu
// and compute-sanitizer, and the one the tile sweep builds (cuda/driver/tensor_core_sweep.sh):
//   compute-sanitizer --tool racecheck build/cmake/tensor_core_driver all bf16 136 264 40 --reps 0
//
// An element passes when |c - ref| <= 2 (u + K 2^-24) sum_k |a_ik b_kj|, u the unit
// roundoff of the output (2^-11 fp16, 2^-8 bf16): the output's rounding plus float32
// accumulation, so a wrong index or a missing product fails. --misalign starts A, B and C
// one element past their allocations (no row 16-byte aligned: the scalar path). --cublas
// (a driver built with -DCVT_WITH_CUBLAS and -lcublas) also times cublasGemmEx on the same
// inputs (same types, float32 compute), in the same process and the same way.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

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

// cublasGemmEx as a TensorCoreMatmulLauncher: row-major C = A B is column-major
// C^T = B^T A^T, one call with the operands swapped.
static cudaError_t launch_cublas(const void* A, const void* B, void* C, int64_t M, int64_t N,
                                 int64_t K, cvt::TensorCoreType type, cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  if (M == 0 || N == 0) return cudaSuccess;
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  const cudaDataType t = type == cvt::TensorCoreType::kBFloat16 ? CUDA_R_16BF : CUDA_R_16F;
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasGemmEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
      static_cast<int>(K), &one, B, t, static_cast<int>(N), A, t,
      static_cast<int>(K > 0 ? K : 1), &zero, C, t, static_cast<int>(N), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
}
#endif

struct Version {
  const char* name;
  cvt::TensorCoreMatmulLauncher launch;
};

static const Version kVersions[] = {
#define CVT_VERSION(VERSION) {#VERSION, cvt::launch_matmul_##VERSION},
    CVT_TENSOR_CORE_OPS(CVT_VERSION)
#undef CVT_VERSION
#ifdef CVT_WITH_CUBLAS
    {"cublas", launch_cublas},
#endif
};

// One element type: its host conversions and output roundoff.
struct Type {
  cvt::TensorCoreType tag;
  double roundoff;
  unsigned short (*to_bits)(float);
  float (*from_bits)(unsigned short);
};
static unsigned short bf16_bits(float x) {
  const __nv_bfloat16 v = __float2bfloat16_rn(x);
  return *reinterpret_cast<const unsigned short*>(&v);
}
static float bf16_value(unsigned short b) {
  return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(&b));
}
static unsigned short f16_bits(float x) {
  const __half v = __float2half_rn(x);
  return *reinterpret_cast<const unsigned short*>(&v);
}
static float f16_value(unsigned short b) { return __half2float(*reinterpret_cast<const __half*>(&b)); }
static const Type kBf16{cvt::TensorCoreType::kBFloat16, std::ldexp(1.0, -8), bf16_bits, bf16_value};
static const Type kF16{cvt::TensorCoreType::kFloat16, std::ldexp(1.0, -11), f16_bits, f16_value};

struct Options {
  int reps = 20;
  unsigned seed = 0;
  bool misalign = false;
  bool cublas = false;
};

static bool run_one(const Version& v, const Type& type, const char* type_name, int64_t M,
                    int64_t N, int64_t K, const Options& opt) {
  std::mt19937 rng(opt.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<unsigned short> A(M * K), B(K * N), C(M * N);
  for (auto& x : A) x = type.to_bits(dist(rng));
  for (auto& x : B) x = type.to_bits(dist(rng));

  unsigned short *allocA, *allocB, *allocC;
  const int64_t off = opt.misalign ? 1 : 0;  // one element: 2 bytes, never 16
  CUDA_CHECK(cudaMalloc(&allocA, (std::max<int64_t>(A.size(), 1) + off) * 2));
  CUDA_CHECK(cudaMalloc(&allocB, (std::max<int64_t>(B.size(), 1) + off) * 2));
  CUDA_CHECK(cudaMalloc(&allocC, (std::max<int64_t>(C.size(), 1) + off) * 2));
  unsigned short* const dA = allocA + off;
  unsigned short* const dB = allocB + off;
  unsigned short* const dC = allocC + off;
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dC, 0xFF, C.size() * 2));  // NaN in both types

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  const cudaError_t err = v.launch(dA, dB, dC, M, N, K, type.tag, stream);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s %s %lldx%lldx%lld: launch failed: %s\n", v.name, type_name,
                 (long long)M, (long long)N, (long long)K, cudaGetErrorString(err));
    return false;
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * 2, cudaMemcpyDeviceToHost));

  const double tol = 2.0 * (type.roundoff + std::max<int64_t>(K, 1) * std::ldexp(1.0, -24));
  const bool all = M * N * std::max<int64_t>(K, 1) <= (int64_t{1} << 28);
  const int64_t samples = all ? M * N : 4096;
  std::mt19937_64 pick(opt.seed + 7);
  double worst = 0.0;
  bool ok = true;
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t idx = all ? s : static_cast<int64_t>(pick() % static_cast<uint64_t>(M * N));
    const int64_t i = idx / N, j = idx % N;
    double ref = 0.0, mag = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double p = static_cast<double>(type.from_bits(A[i * K + k])) * type.from_bits(B[k * N + j]);
      ref += p;
      mag += std::fabs(p);
    }
    const double c = type.from_bits(C[idx]);
    const double e = std::fabs(c - ref) / (mag > 0 ? mag : 1.0);
    if (!(e <= tol)) {  // NaN too: an element nobody wrote
      if (ok) std::fprintf(stderr, "  wrong C[%lld][%lld] = %g, expected %g\n", (long long)i,
                           (long long)j, c, ref);
      ok = false;
    }
    if (!(e <= worst)) worst = e;
  }

  double ms = 0.0, cublas_ms = 0.0;
  if (opt.reps > 0 && M * N > 0) {
    ms = median_launch_ms([&] { return v.launch(dA, dB, dC, M, N, K, type.tag, stream); },
                          opt.reps, stream);
#ifdef CVT_WITH_CUBLAS
    if (opt.cublas)
      cublas_ms = median_launch_ms(
          [&] { return launch_cublas(dA, dB, dC, M, N, K, type.tag, stream); }, opt.reps, stream);
#endif
  }
  const double flops = 2.0 * M * N * K;
  std::printf("%-14s %s %6lld x %6lld x %6lld%s  max rel err %.2e  %s", v.name, type_name,
              (long long)M, (long long)N, (long long)K, opt.misalign ? " misaligned" : "",
              worst, ok ? "ok   " : "WRONG");
  if (ms > 0) std::printf("  median %8.4f ms  %7.1f TFLOP/s", ms, flops / (ms * 1e-3) / 1e12);
  if (cublas_ms > 0) std::printf("  cublas %7.1f TFLOP/s  x%.3f", flops / (cublas_ms * 1e-3) / 1e12, cublas_ms / ms);
  std::printf("\n");
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(allocA));
  CUDA_CHECK(cudaFree(allocB));
  CUDA_CHECK(cudaFree(allocC));
  return ok;
}

static int usage() {
  std::fprintf(stderr,
               "usage: tensor_core_driver list\n"
               "       tensor_core_driver VERSION|all fp16|bf16 M N K [M N K ...] [--reps R]\n"
               "                          [--seed S] [--misalign] [--cublas]\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "list") == 0) {
    for (const auto& v : kVersions) std::printf("%s\n", v.name);
    return 0;
  }
  if (argc < 6) return usage();
  const std::string which = argv[1], type_name = argv[2];
  if (type_name != "fp16" && type_name != "bf16") {
    std::fprintf(stderr, "tensor_core_driver: the type is fp16 or bf16, got '%s'\n", argv[2]);
    return 2;
  }
  const Type& type = type_name == "bf16" ? kBf16 : kF16;
  std::vector<int64_t> dims;  // M N K, M N K, ...
  int i = 3;
  if (!read_shapes(argc, argv, i, "tensor_core_driver", dims)) return 2;
  Options opt;
  for (; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) opt.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) opt.seed = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--misalign")) opt.misalign = true;
    else if (!std::strcmp(argv[i], "--cublas")) opt.cublas = true;
    else return usage();
  }
#ifndef CVT_WITH_CUBLAS
  if (opt.cublas) {
    std::fprintf(stderr, "tensor_core_driver: --cublas needs a driver built with "
                         "-DCVT_WITH_CUBLAS (and -lcublas)\n");
    return 2;
  }
#endif
  bool ok = true, found = false;
  for (const auto& v : kVersions) {
    const bool library = !std::strcmp(v.name, "cublas");
    if ((which == "all" && !library) || which == v.name) {
      found = true;
      for (size_t d = 0; d < dims.size(); d += 3)
        ok = run_one(v, type, type_name.c_str(), dims[d], dims[d + 1], dims[d + 2], opt) && ok;
    }
  }
  if (!found) {
    std::fprintf(stderr, "tensor_core_driver: unknown version '%s' (try: tensor_core_driver list)\n",
                 which.c_str());
    return 2;
  }
  return ok ? 0 : 1;
}
