// Standalone driver for the memory-bound kernels: no Python, no torch.
//
//   memory_driver list
//   memory_driver all [--reps R]          every kernel, every dtype, awkward sizes
//   memory_driver KERNEL [--reps R]       one of: vector_add copy relu_dropout
//                                         softmax_row_sram softmax_online softmax_split
//                                         rgb_to_grey
//                                         (CVT_MEMORY_OPS, memory_config.h)
//
// Each case fills the inputs with random values, poisons the output (NaN, or 0xAB bytes for
// uint8: every element must be written), runs the launcher once and compares every element
// with a CPU reference: exact for copy, vector add (float32 arithmetic, then the dtype's
// rounding) and ReLU + dropout (Philox on the CPU, cuda/philox.cuh, bit for bit); for
// softmax within the bound of bench/families/memory/problems.py of a float64 reference, relative to
// the row's largest output;
// within one grey level for RGB -> grey. Cases include lengths 1, primes, sizes that are not
// multiples of any block, pointers offset by one element (the launchers' scalar paths),
// softmax over rows and over columns (inner > 1), rows of -inf. With --reps R > 0 it also
// times R launches of each case and prints the median. The launchers that size their grid
// by the GPU's SM count get the count of the device they run on (cudaDeviceGetAttribute).
// Exit status 1 on any wrong element or CUDA error. This is the program to put under
// compute-sanitizer:
//   compute-sanitizer --tool memcheck  build/cmake/memory_driver all
//   compute-sanitizer --tool racecheck build/cmake/memory_driver softmax_row_sram
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "memory_launchers.h"
#include "philox.cuh"
#include "cuda_check.h"

using cvt::DType;

// ---- host-side element conversions ------------------------------------------------------

static size_t elem_size(DType t) { return t == DType::kFloat32 ? 4 : 2; }
static const char* dtype_name(DType t) {
  return t == DType::kFloat32 ? "fp32" : t == DType::kFloat16 ? "fp16" : "bf16";
}

// Host bytes <-> float for one element of type t.
static float get(const std::vector<unsigned char>& b, DType t, int64_t i) {
  if (t == DType::kFloat32) { float f; std::memcpy(&f, &b[4 * i], 4); return f; }
  unsigned short raw;
  std::memcpy(&raw, &b[2 * i], 2);
  if (t == DType::kFloat16) { __half_raw h; h.x = raw; return __half2float(__half(h)); }
  __nv_bfloat16_raw h; h.x = raw; return __bfloat162float(__nv_bfloat16(h));
}
static void put(std::vector<unsigned char>& b, DType t, int64_t i, float f) {
  if (t == DType::kFloat32) { std::memcpy(&b[4 * i], &f, 4); return; }
  unsigned short raw;
  if (t == DType::kFloat16) { __half_raw h = __half(__float2half_rn(f)); raw = h.x; }
  else { __nv_bfloat16_raw h = __nv_bfloat16(__float2bfloat16_rn(f)); raw = h.x; }
  std::memcpy(&b[2 * i], &raw, 2);
}
static float round_to(DType t, float f) {  // f rounded to type t and back
  std::vector<unsigned char> one(4);
  put(one, t, 0, f);
  return get(one, t, 0);
}
static bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// ---- device buffers with an offset (misaligned on purpose when offset > 0) ----------------

struct Buffer {
  unsigned char* base = nullptr;
  size_t offset = 0;
  explicit Buffer(size_t bytes, size_t off) : offset(off) { CUDA_CHECK(cudaMalloc(&base, bytes + off + 16)); }
  ~Buffer() { cudaFree(base); }
  void* ptr() const { return base + offset; }
};

struct Options {
  int reps = 0;
  int sms = 0;  // SMs of the current device: main() asks the runtime
};

static double time_ms(const std::function<cudaError_t()>& launch, int reps) {
  if (reps <= 0) return 0.0;
  std::vector<float> ms;
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int r = 0; r < reps; ++r) {
    CUDA_CHECK(cudaEventRecord(a));
    CUDA_CHECK(launch());
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

static int report(const char* kernel, DType t, const std::string& shape, int64_t wrong,
                  double worst, double ms) {
  std::printf("%-18s %-5s %-22s %s worst %.3g", kernel, dtype_name(t), shape.c_str(),
              wrong ? "WRONG" : " ok ", worst);
  if (ms > 0) std::printf("  %.4f ms", ms);
  std::printf("\n");
  if (wrong) std::fprintf(stderr, "  %s %s %s: %lld wrong elements\n", kernel, dtype_name(t),
                          shape.c_str(), static_cast<long long>(wrong));
  return wrong ? 1 : 0;
}

// ---- element-wise kernels ------------------------------------------------------------------

static int run_elementwise(const char* kernel, DType t, int64_t n, size_t off, const Options& o,
                           std::mt19937& rng) {
  const size_t es = elem_size(t), bytes = es * static_cast<size_t>(n);
  std::vector<unsigned char> hx(bytes + 4), hy(bytes + 4), hout(bytes + 4);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int64_t i = 0; i < n; ++i) { put(hx, t, i, normal(rng)); put(hy, t, i, normal(rng)); }
  Buffer dx(bytes, off * es), dy(bytes, off * es), dout(bytes, off * es);
  CUDA_CHECK(cudaMemcpy(dx.ptr(), hx.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dy.ptr(), hy.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dout.ptr(), 0xFF, bytes));  // NaN in every float type
  const double p = 0.3;
  const uint64_t seed = 0x123456789ABCull;
  std::function<cudaError_t()> launch;
  const std::string k = kernel;
  if (k == "vector_add") launch = [&] { return cvt::launch_vector_add(t, dx.ptr(), dy.ptr(), dout.ptr(), n, o.sms, 0); };
  else if (k == "copy") launch = [&] { return cvt::launch_copy(t, dx.ptr(), dout.ptr(), n, 0); };
  else launch = [&] { return cvt::launch_relu_dropout(t, dx.ptr(), dout.ptr(), n, p, seed, 0); };
  CUDA_CHECK(launch());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(hout.data(), dout.ptr(), bytes, cudaMemcpyDeviceToHost));
  const float p32 = static_cast<float>(p), scale = static_cast<float>(1.0 / (1.0 - p));
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float x = get(hx, t, i);
    float want;
    if (k == "vector_add") {
      want = round_to(t, x + get(hy, t, i));
    } else if (k == "copy") {
      want = x;
    } else {
      const uint4 bits = cvt::philox_group(seed, static_cast<uint64_t>(i / 4));
      const uint32_t word[4] = {bits.x, bits.y, bits.z, bits.w};
      const float u = cvt::philox_uniform(word[i % 4]);
      const float relu = x <= 0.f ? 0.f : x;
      want = round_to(t, u >= p32 ? relu * scale : 0.f);
    }
    if (!same(get(hout, t, i), want)) ++wrong;
  }
  const std::string shape = "n=" + std::to_string(n) + (off ? " +1" : "");
  return report(kernel, t, shape, wrong, 0.0, time_ms(launch, o.reps));
}

// ---- softmax -------------------------------------------------------------------------------

static int run_softmax(const char* kernel, DType t, int64_t outer, int64_t n, int64_t inner,
                       size_t off, bool minus_inf_row, const Options& o, std::mt19937& rng) {
  const int64_t total = outer * n * inner;
  const size_t es = elem_size(t), bytes = es * static_cast<size_t>(total);
  std::vector<unsigned char> hx(bytes + 4), hy(bytes + 4);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (int64_t i = 0; i < total; ++i) put(hx, t, i, normal(rng));
  if (minus_inf_row) {  // column (0, 0) all -inf: NaN expected; (0, 1)... a few -inf only
    for (int64_t k = 0; k < n; ++k) put(hx, t, k * inner, -INFINITY);
    if (inner > 1 || outer > 1) put(hx, t, inner > 1 ? 1 : n, -INFINITY);
  }
  Buffer dx(bytes, off * es), dy(bytes, off * es);
  CUDA_CHECK(cudaMemcpy(dx.ptr(), hx.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dy.ptr(), 0xFF, bytes));
  const std::string k = kernel;
  std::function<cudaError_t()> launch = [&] {  // the split takes rows only (inner == 1)
    return k == "softmax_row_sram"
               ? cvt::launch_softmax_row_sram(t, dx.ptr(), dy.ptr(), outer, n, inner, o.sms, 0)
           : k == "softmax_split"
               ? cvt::launch_softmax_split(t, dx.ptr(), dy.ptr(), outer * inner, n, 0)
               : cvt::launch_softmax_online(t, dx.ptr(), dy.ptr(), outer, n, inner, o.sms, 0);
  };
  CUDA_CHECK(launch());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(hy.data(), dy.ptr(), bytes, cudaMemcpyDeviceToHost));
  // The bound of bench/families/memory/problems.py: output rounding plus (16 + 4 sqrt(n)) float32
  // roundoffs for the exps and the sum, relative to the row's largest output.
  const double out_u = t == DType::kFloat32 ? std::ldexp(1.0, -24)
                       : t == DType::kFloat16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const double tol = 2 * out_u + (16 + 4 * std::sqrt(double(n))) * std::ldexp(1.0, -24);
  int64_t wrong = 0;
  double worst = 0.0;
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t i = 0; i < inner; ++i) {
      double m = -INFINITY;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, double(get(hx, t, (a * n + k) * inner + i)));
      double s = 0.0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(double(get(hx, t, (a * n + k) * inner + i)) - m);
      double top = 0.0;
      std::vector<double> ref(n);
      for (int64_t k = 0; k < n; ++k) {
        ref[k] = std::exp(double(get(hx, t, (a * n + k) * inner + i)) - m) / s;
        top = std::max(top, ref[k]);
      }
      for (int64_t k = 0; k < n; ++k) {
        const double y = get(hy, t, (a * n + k) * inner + i);
        if (std::isinf(m)) {  // a column of -inf: NaN, as torch.softmax
          if (!std::isnan(y)) ++wrong;
          continue;
        }
        const double err = std::fabs(y - ref[k]) / top;
        worst = std::max(worst, std::isnan(err) ? INFINITY : err);
        if (!(err <= tol)) ++wrong;
      }
    }
  }
  const std::string shape = std::to_string(outer) + "x" + std::to_string(n) + "x" +
                            std::to_string(inner) + (off ? " +1" : "") + (minus_inf_row ? " -inf" : "");
  return report(kernel, t, shape, wrong, worst, time_ms(launch, o.reps));
}

// ---- RGB -> grey -----------------------------------------------------------------------------

static int run_grey(int64_t h, int64_t w, size_t off, const Options& o, std::mt19937& rng) {
  const size_t plane = static_cast<size_t>(h * w);
  std::vector<uint8_t> img(3 * plane), grey(plane);
  for (auto& v : img) v = static_cast<uint8_t>(rng() & 0xFF);
  Buffer di(3 * plane, off), dg(plane, off);
  CUDA_CHECK(cudaMemcpy(di.ptr(), img.data(), 3 * plane, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dg.ptr(), 0xAB, plane));
  auto launch = [&] {
    return cvt::launch_rgb_to_grey(static_cast<const uint8_t*>(di.ptr()), static_cast<uint8_t*>(dg.ptr()), h, w, 0);
  };
  CUDA_CHECK(launch());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(grey.data(), dg.ptr(), plane, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  double worst = 0.0;
  for (size_t p = 0; p < plane; ++p) {
    const double v = 0.2989 * img[p] + 0.5870 * img[plane + p] + 0.1140 * img[2 * plane + p];
    const double err = std::fabs(grey[p] - v);  // <= 0.5 when rounded to nearest
    worst = std::max(worst, err);
    if (err > 0.5 + 1e-3) ++wrong;
  }
  const std::string shape = "3x" + std::to_string(h) + "x" + std::to_string(w) + (off ? " +1" : "");
  return report("rgb_to_grey", DType::kFloat32, shape, wrong, worst, time_ms(launch, o.reps));
}

// ---- the cases -------------------------------------------------------------------------------

// Every op of CVT_MEMORY_OPS (memory_config.h); run() below knows how to check each.
static const char* kKernels[] = {
#define CVT_KERNEL_NAME(NAME) #NAME,
    CVT_MEMORY_OPS(CVT_KERNEL_NAME)
#undef CVT_KERNEL_NAME
};

static int run(const std::string& k, const Options& o) {
  std::mt19937 rng(1234);
  int failures = 0;
  const DType types[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  if (k == "vector_add" || k == "copy" || k == "relu_dropout") {
    for (DType t : types) {
      for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{4099}, int64_t{65537}, int64_t{1000003}}) {
        failures += run_elementwise(k.c_str(), t, n, 0, o, rng);
      }
      failures += run_elementwise(k.c_str(), t, 4099, 1, o, rng);  // misaligned: scalar path
    }
  } else if (k == "softmax_row_sram" || k == "softmax_online" || k == "softmax_split") {
    struct Case { int64_t outer, n, inner; size_t off; bool minus_inf; };
    std::vector<Case> cases = {{5, 1, 1, 0, false},   {7, 33, 1, 0, false}, {3, 1000, 1, 0, true},
                               {2, 1001, 1, 1, false}, {4, 4096, 1, 0, false}, {2, 32768, 1, 0, false}};
    if (k != "softmax_split") {  // columns: the split takes rows only
      cases.insert(cases.end(), {{1, 100, 100, 0, true}, {2, 3, 5, 0, false},
                                 {3, 300, 7, 1, false},  {1, 5000, 40, 0, false}});
    }
    if (k != "softmax_row_sram") {
      cases.push_back({2, 100003, 1, 0, true});   // longer than SRAM, scalar path
      cases.push_back({2, 70000, 1, 0, false});   // several vector steps (16-bit: 32768 each)
    }
    if (k == "softmax_split") {  // its automatic cluster size (memory_launchers.h)
      cases.push_back({3, 393216, 1, 0, true});   // clusters of 8 (float32: one block per SM)
      cases.push_back({300, 4096, 1, 1, false});  // one block a row, more rows than the GPU holds
    }
    for (DType t : types) {
      for (const Case& c : cases) {
        failures += run_softmax(k.c_str(), t, c.outer, c.n, c.inner, c.off, c.minus_inf, o, rng);
      }
    }
  } else if (k == "rgb_to_grey") {
    for (auto hw : {std::pair<int64_t, int64_t>{1, 1}, {7, 5}, {150, 225}, {33, 512}, {9, 1600}}) {
      failures += run_grey(hw.first, hw.second, 0, o, rng);
    }
    failures += run_grey(17, 48, 1, o, rng);
  } else {
    std::fprintf(stderr, "unknown kernel %s (try `list`)\n", k.c_str());
    return 1;
  }
  return failures;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s list | all | KERNEL [--reps R]\n", argv[0]);
    return 2;
  }
  Options o;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0) o.reps = std::atoi(argv[++i]);
  }
  const std::string what = argv[1];
  if (what == "list") {
    for (const char* k : kKernels) std::printf("%s\n", k);
    return 0;
  }
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&o.sms, cudaDevAttrMultiProcessorCount, device));
  int failures = 0;
  if (what == "all") {
    for (const char* k : kKernels) failures += run(k, o);
  } else {
    failures += run(what, o);
  }
  std::printf("%s: %d failing case(s)\n", failures ? "FAILED" : "all ok", failures);
  return failures ? 1 : 0;
}
