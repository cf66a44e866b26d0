// Standalone driver for the matmul ladder: no Python, no torch.
//
//   matmul_driver list
//   matmul_driver VERSION M N K [--reps R] [--seed S] [--full-check]
//   matmul_driver all M N K ...        every version in turn
//
// For each version it fills A and B with random floats, poisons C with NaN (every
// element must be written), runs the kernel once, compares C with a float64 CPU
// reference (every element when M*N*K <= 2^28, else 4096 sampled ones; --full-check
// forces all), then times R launches (default 20) with CUDA events, flushing L2
// before each one, and prints the median. Exit status 1 on any wrong element or
// CUDA error. This is the program to run under ncu and compute-sanitizer:
//   compute-sanitizer --tool memcheck  build/cmake/matmul_driver all 67 45 31 --reps 0
//   compute-sanitizer --tool racecheck build/cmake/matmul_driver v3_smem_tiling 130 129 17 --reps 0
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "launchers.h"
#include "cuda_check.h"

struct Version {
  const char* name;
  cvt::MatmulLauncher launch;
};

// Every version of CVT_MATMUL_OPS (matmul_config.h), in ladder order.
static const Version kVersions[] = {
#define CVT_VERSION(VERSION) {#VERSION, cvt::launch_matmul_##VERSION},
    CVT_MATMUL_OPS(CVT_VERSION)
#undef CVT_VERSION
};

struct Options {
  int reps = 20;
  unsigned seed = 0;
  bool full_check = false;
};

// Checks C against a float64 reference: |c - ref| <= tol * sum_k |a_ik * b_kj|, with
// tol = 2 * K * 2^-24 (the recursive-summation bound for float32), so a wrong index
// or a missing term fails while rounding passes.
static bool check(const std::vector<float>& A, const std::vector<float>& B,
                  const std::vector<float>& C, int64_t M, int64_t N, int64_t K,
                  bool full, unsigned seed, double* worst) {
  const double tol = 2.0 * std::max<int64_t>(K, 1) * std::ldexp(1.0, -24);
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

  float *dA, *dB, *dC;
  CUDA_CHECK(cudaMalloc(&dA, std::max<int64_t>(A.size(), 1) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, std::max<int64_t>(B.size(), 1) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, std::max<int64_t>(C.size(), 1) * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dC, 0xFF, C.size() * sizeof(float)));  // NaN everywhere

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaError_t err = v.launch(dA, dB, dC, M, N, K, stream);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s %lldx%lldx%lld: launch failed: %s\n", v.name, (long long)M,
                 (long long)N, (long long)K, cudaGetErrorString(err));
    return false;
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0.0;
  const bool ok = check(A, B, C, M, N, K, opt.full_check, opt.seed, &worst);

  double median_ms = 0.0;
  if (opt.reps > 0 && M * N > 0) {
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
    const size_t flush_bytes = 4 * static_cast<size_t>(l2_bytes);  // evicts A, B and C from L2
    void* flush;
    CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int r = -2; r < opt.reps; ++r) {  // two warm-up launches
      CUDA_CHECK(cudaMemsetAsync(flush, r & 0xFF, flush_bytes, stream));
      CUDA_CHECK(cudaEventRecord(start, stream));
      CUDA_CHECK(v.launch(dA, dB, dC, M, N, K, stream));
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r >= 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    median_ms = times[times.size() / 2];
    CUDA_CHECK(cudaFree(flush));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
  }
  const double tflops = median_ms > 0 ? 2.0 * M * N * K / (median_ms * 1e-3) / 1e12 : 0.0;
  std::printf("%-20s %6lld x %6lld x %6lld  max rel err %.2e  %s", v.name, (long long)M,
              (long long)N, (long long)K, worst, ok ? "ok   " : "WRONG");
  if (median_ms > 0) std::printf("  median %9.4f ms  %7.2f TFLOP/s (fp32)", median_ms, tflops);
  std::printf("\n");

  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  return ok;
}

static int usage() {
  std::fprintf(stderr,
               "usage: matmul_driver list\n"
               "       matmul_driver VERSION|all M N K [--reps R] [--seed S] [--full-check]\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "list") == 0) {
    for (const auto& v : kVersions) std::printf("%s\n", v.name);
    return 0;
  }
  if (argc < 5) return usage();
  const std::string which = argv[1];
  char* end;
  int64_t dims[3];
  for (int d = 0; d < 3; ++d) {
    dims[d] = std::strtoll(argv[2 + d], &end, 10);
    if (*end != '\0' || dims[d] < 0) {
      std::fprintf(stderr, "matmul_driver: M, N, K must be integers >= 0, got '%s'\n", argv[2 + d]);
      return 2;
    }
  }
  Options opt;
  for (int i = 5; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) opt.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) opt.seed = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--full-check")) opt.full_check = true;
    else return usage();
  }
  bool ok = true, found = false;
  for (const auto& v : kVersions) {
    if (which == "all" || which == v.name) {
      found = true;
      ok = run_one(v, dims[0], dims[1], dims[2], opt) && ok;
    }
  }
  if (!found) {
    std::fprintf(stderr, "matmul_driver: unknown version '%s' (try: matmul_driver list)\n", which.c_str());
    return 2;
  }
  return ok ? 0 : 1;
}
