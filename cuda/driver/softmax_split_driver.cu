// Standalone timing driver for the split softmax (cuda/softmax_split.cu, version 3 and its
// refill form): no Python, no torch. It includes the kernel file, so
// the kernel's macros (CVT_SPLIT_*, memory_config.h and softmax_split.cu) are set by -D on
// this file's compile: cuda/driver/softmax_split_sweep.sh builds one binary per variant.
//
//   softmax_split_driver fp32|fp16|bf16 ROWS N REPS C[,C...] [LABEL]
//
// C >= 0: the refill variant with clusters of C blocks (0: its automatic choice); C = -1:
// version 3 with its automatic cluster size, C < -1 with clusters of -C blocks. The input is 3 * a normal deviate per element (a
// hash of its index, made on the GPU), like the harness's softmax inputs. Each variant first
// runs once on an output filled with 0xFF bytes (NaN in every float type): rows 0 and ROWS - 1
// are compared with a float64 CPU softmax, and the worst |y - y64| / (y64 + tiny) printed
// ("check", tiny the smallest normal of the type) beside the harness's bound
// (bench/families/memory/problems.py); above it the driver stops with status 1. Then three
// rounds, each timing REPS launches of a device-to-device copy of the input and of every
// variant (driver_common.h's launch_times_ms: CUDA events around each launch, L2 flushed
// before each, two warm-up launches), and one line per variant: the median over the rounds'
// launches, GB/s counted on the compulsory bytes (the row read once, written once) and the %
// of the copy's bandwidth, min and max. The program to put under ncu and compute-sanitizer for
// this kernel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "driver_common.h"  // CUDA_CHECK, launch_times_ms
#include "softmax_split.cu"  // the kernel and its launcher, compiled with this file's -D

enum Kind { kF32 = 0, kF16 = 1, kBF16 = 2 };
constexpr int kCopy = 1000;  // the copy's entry among the cluster sizes

// x[i] = 3 z, z a normal deviate (Box-Muller) of two 16-bit halves of a hash of i.
__global__ void fill(unsigned short* p16, float* p32, int64_t count, int kind) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += step) {
    uint32_t h = static_cast<uint32_t>(i * 2654435761u) ^ static_cast<uint32_t>(i >> 32) * 40503u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    const float u1 = ((h & 0xffff) + 0.5f) / 65536.0f, u2 = ((h >> 16) + 0.5f) / 65536.0f;
    const float z = 3.0f * sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
    if (kind == kF32) {
      p32[i] = z;
    } else if (kind == kF16) {
      const __half v = __float2half(z);
      memcpy(&p16[i], &v, 2);
    } else {
      const __nv_bfloat16 v = __float2bfloat16(z);
      memcpy(&p16[i], &v, 2);
    }
  }
}

static float host_get(const void* b, int kind, int64_t i) {
  if (kind == kF32) return static_cast<const float*>(b)[i];
  const unsigned short r = static_cast<const unsigned short*>(b)[i];
  if (kind == kF16) { __half_raw h; h.x = r; return __half2float(__half(h)); }
  __nv_bfloat16_raw h; h.x = r;
  return __bfloat162float(__nv_bfloat16(h));
}

int main(int argc, char** argv) {
  if (argc < 6) {
    printf("usage: %s fp32|fp16|bf16 ROWS N REPS C[,C...] [LABEL]\n", argv[0]);
    return 2;
  }
  const std::string type = argv[1];
  const int kind = type == "fp32" ? kF32 : type == "fp16" ? kF16 : kBF16;
  const int64_t rows = atoll(argv[2]), n = atoll(argv[3]);
  const int reps = atoi(argv[4]);
  std::vector<int> clusters;
  for (char* t = strtok(argv[5], ","); t; t = strtok(nullptr, ",")) clusters.push_back(atoi(t));
  const char* label = argc > 6 ? argv[6] : "";
  const size_t es = kind == kF32 ? 4 : 2, bytes = rows * n * es;
  void *x, *y;
  CUDA_CHECK(cudaMalloc(&x, bytes));
  CUDA_CHECK(cudaMalloc(&y, bytes));
  fill<<<1024, 256>>>(static_cast<unsigned short*>(x), static_cast<float*>(x), rows * n, kind);
  CUDA_CHECK(cudaDeviceSynchronize());
  const cvt::DType dt = kind == kF32   ? cvt::DType::kFloat32
                        : kind == kF16 ? cvt::DType::kFloat16
                                       : cvt::DType::kBFloat16;
  const auto run = [&](int c) -> cudaError_t {
    if (c == kCopy) return cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, 0);
    if (c == -1) return cvt::launch_softmax_split(dt, x, y, rows, n, 0, cvt::SplitForm::kSplit, 0);
    if (c < -1) return cvt::launch_softmax_split(dt, x, y, rows, n, -c, cvt::SplitForm::kSplit, 0);
    return cvt::launch_softmax_split(dt, x, y, rows, n, c, cvt::SplitForm::kRefill, 0);
  };

  // Each variant once on a poisoned output: rows 0 and rows - 1 against float64.
  std::vector<unsigned char> hx(n * es), hy(n * es);
  const double tiny = kind == kF16 ? 6.1e-5 : 1.2e-38;  // the smallest normal of the type
  for (int c : clusters) {
    CUDA_CHECK(cudaMemset(y, 0xff, bytes));
    cudaError_t e = run(c);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("%s C=%d: %s\n", argv[1], c, cudaGetErrorString(e));
      return 1;
    }
    double worst = 0;
    for (int64_t r : {int64_t{0}, rows - 1}) {
      const size_t at = r * n * es, row = n * es;
      CUDA_CHECK(cudaMemcpy(hx.data(), static_cast<char*>(x) + at, row, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(hy.data(), static_cast<char*>(y) + at, row, cudaMemcpyDeviceToHost));
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max<double>(m, host_get(hx.data(), kind, i));
      for (int64_t i = 0; i < n; ++i) s += std::exp(host_get(hx.data(), kind, i) - m);
      for (int64_t i = 0; i < n; ++i) {
        const double ref = std::exp(host_get(hx.data(), kind, i) - m) / s;
        const double err = std::fabs(host_get(hy.data(), kind, i) - ref) / (ref + tiny);
        if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : std::max(worst, err);
      }
    }
    // the harness's bound (problems.py, SoftmaxProblem.tolerance): 2 u of the output type
    // plus (80 + 4 sqrt(n)) float32 ulps
    const double u = kind == kF32 ? 0x1p-24 : kind == kF16 ? 0x1p-11 : 0x1p-8;
    const double bound = 2 * u + (80 + 4 * std::sqrt(static_cast<double>(n))) * 0x1p-24;
    printf("check %s %s C=%d worst rel err %.3g (bound %.3g)\n", label, argv[1], c, worst, bound);
    if (!(worst <= bound)) {
      printf("WRONG %s %s C=%d\n", label, argv[1], c);
      return 1;
    }
  }

  // Three rounds of (copy, every variant): REPS timed launches each, L2 flushed before each.
  std::vector<int> all = {kCopy};
  all.insert(all.end(), clusters.begin(), clusters.end());
  std::vector<std::vector<float>> ms(all.size());
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < all.size(); ++k) {
      const std::vector<float> t = launch_times_ms([&] { return run(all[k]); }, reps, 0);
      ms[k].insert(ms[k].end(), t.begin(), t.end());
    }
  }
  float copy = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    std::sort(ms[k].begin(), ms[k].end());
    const float med = ms[k][ms[k].size() / 2];
    if (all[k] == kCopy) copy = med;
    const std::string name = all[k] == kCopy ? "copy"
                             : all[k] == -1  ? "v3 auto"
                             : all[k] < 0    ? "v3 C=" + std::to_string(-all[k])
                                             : "C=" + std::to_string(all[k]);
    printf("%-12s %s %lldx%lld %-10s ms %.4f  GB/s %.0f  %%copy %.1f  (min %.4f max %.4f)\n",
           label, argv[1], static_cast<long long>(rows), static_cast<long long>(n), name.c_str(),
           med, 2.0 * bytes / med / 1e6, 100.0 * copy / med, ms[k].front(), ms[k].back());
  }
  return 0;
}
