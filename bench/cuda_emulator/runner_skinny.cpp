// Runs the skinny path (cuda/matmul_skinny.cu, CVT_SKINNY_OPS) on the emulator in float32,
// float16 and bfloat16 at the shapes given on the command line (M N K OFFSET quadruples;
// OFFSET elements shift A, B and C off their aligned allocations, which sends the launcher to
// its scalar loads) and compares every element with a float64 reference of the same inputs:
// |c - ref| <= 2 (u + K 2^-24) sum_k |a b|, u the output's unit roundoff (0 for float32,
// whose bound is 4 K 2^-24 sum_k |a b|). C and the workspace start as NaN, and the OFFSET
// elements before C must stay untouched. Prints the workspace each shape asked for (0: one
// split). Built by tests/cpu/test_matmul_skinny.py with the kernels rewritten by emulate.py.
#include <cuda_runtime.h>  // the emulator's (bench/cuda_emulator/cuda_runtime.h)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include EMULATED_KERNELS  // cuda/matmul_skinny.cu, rewritten

enum class Kind { kFloat32, kFloat16, kBFloat16 };

// Storage of one element of each kind: its bits, and its value as a double.
template <Kind KIND> struct Element;
template <> struct Element<Kind::kFloat32> {
  using T = float;
  static T from(float x) { return x; }
  static double value(T x) { return x; }
  static constexpr const char* name = "fp32";
  static constexpr double u = 0.0;
  static constexpr cvt::MatmulType type = cvt::MatmulType::kFloat32;
};
template <> struct Element<Kind::kFloat16> {
  using T = __half;
  static T from(float x) { return __float2half_rn(x); }
  static double value(T x) { return __half2float(x); }
  static constexpr const char* name = "fp16";
  static constexpr double u = 0x1p-11;
  static constexpr cvt::MatmulType type = cvt::MatmulType::kFloat16;
};
template <> struct Element<Kind::kBFloat16> {
  using T = __nv_bfloat16;
  static T from(float x) { return __float2bfloat16_rn(x); }
  static double value(T x) { return __bfloat162float(x); }
  static constexpr const char* name = "bf16";
  static constexpr double u = 0x1p-8;
  static constexpr cvt::MatmulType type = cvt::MatmulType::kBFloat16;
};

template <Kind KIND>
static int run(int64_t M, int64_t N, int64_t K, int64_t off) {
  using E = Element<KIND>;
  using T = typename E::T;
  std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 7 + K));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> A(M * K + off), B(K * N + off), C(M * N + off, E::from(NAN));
  for (auto& x : A) x = E::from(dist(rng));
  for (auto& x : B) x = E::from(dist(rng));
  const T* a = A.data() + off;
  const T* b = B.data() + off;
  T* c = C.data() + off;
  const int64_t floats = cvt::matmul_skinny_workspace_floats(M, N, K, E::type, 0);
  std::vector<float> W(floats, NAN);
  if (floats > 0 &&
      cvt::launch_matmul_skinny(a, b, c, M, N, K, E::type, W.data(), floats - 1, nullptr) !=
          cudaErrorInvalidValue) {
    std::printf("skinny %s %ldx%ldx%ld: a workspace too small was taken\n", E::name, (long)M,
                (long)N, (long)K);
    return 1;
  }
  if (cvt::launch_matmul_skinny(a, b, c, M, N, K, E::type, W.data(), floats, nullptr) !=
      cudaSuccess) {
    std::printf("skinny %s %ldx%ldx%ld: launch error\n", E::name, (long)M, (long)N, (long)K);
    return 1;
  }
  const double tol = KIND == Kind::kFloat32 ? 4.0 * std::max<int64_t>(K, 1) * 0x1p-24
                                            : 2.0 * (E::u + std::max<int64_t>(K, 1) * 0x1p-24);
  int bad = 0;
  for (int64_t i = 0; i < off; ++i)
    if (!std::isnan(E::value(C[i])) && bad++ == 0)
      std::printf("  skinny %s: wrote before C, at C[-%ld]\n", E::name, (long)(off - i));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0.0, mag = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = E::value(a[i * K + k]) * E::value(b[k * N + j]);
        ref += p;
        mag += std::fabs(p);
      }
      const double got = E::value(c[i * N + j]);
      const double err = std::fabs(got - ref) / (mag > 0 ? mag : 1.0);
      if (!(err <= tol) && bad++ == 0)
        std::printf("  skinny %s: C[%ld][%ld] = %g, expected %g\n", E::name, (long)i, (long)j,
                    got, ref);
    }
  std::printf("skinny %s %5ld x %5ld x %5ld offset %ld workspace %ld  %s\n", E::name, (long)M,
              (long)N, (long)K, (long)off, (long)floats, bad ? "WRONG" : "ok");
  return bad > 0;
}

int main(int argc, char** argv) {
  int wrong = 0;
  // neither side small: refused, whatever the workspace
  std::vector<float> x(17 * 17, 0.0f);
  if (cvt::launch_matmul_skinny(x.data(), x.data(), x.data(), 17, 17, 1,
                                cvt::MatmulType::kFloat32, nullptr, 0, nullptr) !=
      cudaErrorInvalidValue) {
    std::printf("skinny: a 17 x 17 product was taken\n");
    ++wrong;
  }
  for (int a = 1; a + 3 < argc; a += 4) {
    const int64_t M = atoll(argv[a]), N = atoll(argv[a + 1]), K = atoll(argv[a + 2]);
    const int64_t off = atoll(argv[a + 3]);
    wrong += run<Kind::kFloat32>(M, N, K, off);
    wrong += run<Kind::kFloat16>(M, N, K, off);
    wrong += run<Kind::kBFloat16>(M, N, K, off);
  }
  return wrong ? 1 : 0;
}
