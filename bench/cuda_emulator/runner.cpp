// Runs every version of CVT_MATMUL_OPS on the emulator at the shapes given on the command
// line (M N K OFFSET quadruples; OFFSET floats shift A, B and C off their 16-byte-aligned
// allocations) and compares every element with a float64 reference; with a first argument
// --only=VERSION (v3_smem_tiling), that version alone. Built by tests/cpu/test_ffma_rungs.py
// with the kernels rewritten by emulate.py included below.
#include <cuda_runtime.h>  // the emulator's (bench/cuda_emulator/cuda_runtime.h)

#include <cmath>
#include <cstring>
#include <random>

#include EMULATED_KERNELS  // every cuda/matmul_*.cu, rewritten

struct Version {
  const char* name;
  cvt::MatmulLauncher launch;
};
static const Version kVersions[] = {
#define CVT_VERSION(VERSION) {#VERSION, cvt::launch_matmul_##VERSION},
    CVT_MATMUL_OPS(CVT_VERSION)
#undef CVT_VERSION
};

int main(int argc, char** argv) {
  const bool one = argc > 1 && std::strncmp(argv[1], "--only=", 7) == 0;
  int wrong = 0;
  for (const auto& v : kVersions) {
    if (one && std::strcmp(argv[1] + 7, v.name) != 0) continue;
    for (int a = one ? 2 : 1; a + 3 < argc; a += 4) {
      const int64_t M = atoll(argv[a]), N = atoll(argv[a + 1]), K = atoll(argv[a + 2]);
      const int64_t off = atoll(argv[a + 3]);
      std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 7 + K));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> A(M * K + off), B(K * N + off), C(M * N + off, NAN);
      for (auto& x : A) x = dist(rng);
      for (auto& x : B) x = dist(rng);
      const float* a_ = A.data() + off;
      const float* b_ = B.data() + off;
      float* c_ = C.data() + off;
      if (v.launch(a_, b_, c_, M, N, K, nullptr) != cudaSuccess) {
        std::printf("%s %ldx%ldx%ld: launch error\n", v.name, (long)M, (long)N, (long)K);
        ++wrong;
        continue;
      }
      int bad = 0;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double ref = 0.0, mag = 0.0;
          for (int64_t k = 0; k < K; ++k) {
            const double p = static_cast<double>(a_[i * K + k]) * b_[k * N + j];
            ref += p;
            mag += std::fabs(p);
          }
          const double err = std::fabs(c_[i * N + j] - ref) / (mag > 0 ? mag : 1.0);
          if (!(err <= 4 * std::max<int64_t>(K, 1) * std::ldexp(1.0, -24))) {
            if (bad++ == 0)
              std::printf("  %s: C[%ld][%ld] = %g, expected %g\n", v.name, (long)i, (long)j,
                          c_[i * N + j], ref);
          }
        }
      std::printf("%-20s %5ld x %5ld x %5ld offset %ld  %s\n", v.name, (long)M, (long)N,
                  (long)K, (long)off, bad ? "WRONG" : "ok");
      wrong += bad > 0;
    }
  }
  return wrong ? 1 : 0;
}
