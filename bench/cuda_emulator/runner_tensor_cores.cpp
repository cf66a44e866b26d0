// Runs the rungs emulate.py can emulate (EMULATED_TENSOR_CORE_RUNGS: t1; the Hopper rungs
// have no emulation) on the emulator, in fp16 and bf16, at the shapes
// given on the command line (M N K OFFSET quadruples; OFFSET elements shift A, B and C off
// their 16-byte-aligned allocations, which sends the launcher to its scalar path) and
// compares every element with a float64 reference of the same 16-bit inputs:
// |c - ref| <= 2 (u + K 2^-24) sum_k |a b|, u the output's unit roundoff. C starts as NaN.
// Built by tests/cpu/test_tensor_core_rungs.py with the kernels rewritten by emulate.py.
#include <cuda_runtime.h>  // the emulator's (bench/cuda_emulator/cuda_runtime.h)

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include EMULATED_KERNELS  // every cuda/matmul_t*.cu, rewritten

struct Version {
  const char* name;
  cvt::TensorCoreMatmulLauncher launch;
};
static const Version kVersions[] = {
#define X(VERSION) {#VERSION, cvt::launch_matmul_##VERSION},
#include "emulated_rungs.inc"  // X(t1_mma_sync) ..., written by emulate.py
#undef X
};

static unsigned short to_bits(float x, bool bf16) {
  return bf16 ? __float2bfloat16_rn(x).x : __float2half_rn(x).x;
}
static double to_value(unsigned short b, bool bf16) {
  return bf16 ? __bfloat162float({b}) : __half2float({b});
}

int main(int argc, char** argv) {
  int wrong = 0;
  for (const auto& v : kVersions) {
    for (const bool bf16 : {false, true}) {
      const double u = bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
      for (int a = 1; a + 3 < argc; a += 4) {
        const int64_t M = atoll(argv[a]), N = atoll(argv[a + 1]), K = atoll(argv[a + 2]);
        const int64_t off = atoll(argv[a + 3]);
        std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 7 + K));
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<unsigned short> A(M * K + off), B(K * N + off), C(M * N + off, 0xFFFF);
        for (auto& x : A) x = to_bits(dist(rng), bf16);
        for (auto& x : B) x = to_bits(dist(rng), bf16);
        const unsigned short* a_ = A.data() + off;
        const unsigned short* b_ = B.data() + off;
        unsigned short* c_ = C.data() + off;
        const auto type = bf16 ? cvt::TensorCoreType::kBFloat16 : cvt::TensorCoreType::kFloat16;
        if (v.launch(a_, b_, c_, M, N, K, type, nullptr) != cudaSuccess) {
          std::printf("%s %ldx%ldx%ld: launch error\n", v.name, (long)M, (long)N, (long)K);
          ++wrong;
          continue;
        }
        const double tol = 2.0 * (u + std::max<int64_t>(K, 1) * std::ldexp(1.0, -24));
        int bad = 0;
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double ref = 0.0, mag = 0.0;
            for (int64_t k = 0; k < K; ++k) {
              const double p = to_value(a_[i * K + k], bf16) * to_value(b_[k * N + j], bf16);
              ref += p;
              mag += std::fabs(p);
            }
            const double c = to_value(c_[i * N + j], bf16);
            const double err = std::fabs(c - ref) / (mag > 0 ? mag : 1.0);
            if (!(err <= tol) && bad++ == 0)
              std::printf("  %s: C[%ld][%ld] = %g, expected %g\n", v.name, (long)i, (long)j, c, ref);
          }
        std::printf("%-14s %s %5ld x %5ld x %5ld offset %ld  %s\n", v.name, bf16 ? "bf16" : "fp16",
                    (long)M, (long)N, (long)K, (long)off, bad ? "WRONG" : "ok");
        wrong += bad > 0;
      }
    }
  }
  return wrong ? 1 : 0;
}
