// Fused ReLU + dropout: out = keep ? max(x, 0) / (1 - p) : 0, any length, fp32/fp16/bf16.
//
//   idea      the first Triton kernel of the notebook "Meet Triton". In PyTorch eager,
//             F.dropout(F.relu(x)) is two kernels: relu reads x and writes a temporary,
//             dropout reads the temporary and writes the output and a one-byte mask. Fused,
//             x is read once and the output written once: 2 n sizeof(T) bytes instead of
//             4 n sizeof(T) + n. The random numbers cost arithmetic, not traffic: they come
//             from a counter-based generator (Philox4x32-10, cuda/philox.cuh), a pure
//             function of (seed, element index), so no random state is read or written.
//   change    from cuda/vector_add.cu: a thread owns GROUPS of 4 consecutive elements,
//             because one Philox call yields 4 words: element 4g + j keeps word j of
//             philox(counter = g, key = seed). That is exactly what Triton's
//             tl.rand4x(seed, g) returns, so this kernel and triton_impl/relu_dropout.py
//             drop the same elements, bit for bit (a GPU test checks it).
//             keep = u >= p (not u > p): with p = 0 nothing is dropped, even when u == 0,
//             so p = 0 is ReLU exactly. ReLU is written (x <= 0 ? 0 : x) so that a NaN
//             stays NaN, as in torch.relu. The 1 / (1 - p) factor is computed once on the
//             host in double and rounded to float; x * scale differs from the
//             x / (1 - p) of "Meet Triton" by at most one rounding.
//   traffic   reads n, writes n elements: compulsory = model = 2 n sizeof(T) bytes.
//             Arithmetic: one Philox per 4 elements, ~70 instructions (10 rounds of two
//             32x32->64-bit multiplies, XORs and key adds). At 3 TB/s of float32 (375 G
//             elements/s) that is ~6.6 T instructions/s, about a fifth of what the H100's
//             SMs issue; float16 doubles the elements per byte and so the share (~45%):
//             not the limit, but no longer negligible (ncu: sm__inst_executed vs dram).
//   precond.  contiguous, any n >= 0 (64-bit counters), p in [0, 1), any 64-bit seed.
//             Vector path (one 4-element load per group: 16 bytes for float32, 8 for
//             16-bit types) when both pointers are aligned to 4 elements (run-time check);
//             otherwise the same kernel with element loads. A thread whose groups of a step
//             are all inside n takes them with vector loads only, under one branch: the four
//             loads are in flight together (see the kernel).
//   run       python -m bench check --kernels cuda_relu_dropout,triton_relu_dropout
//             python -m bench time --kernels '*relu_dropout' --shapes 1000x1000 --precision fp32,fp16
#include "memory_common.cuh"
#include "philox.cuh"

namespace cvt {

// Launch parameters: memory_config.h.
constexpr int kDropThreads = CVT_DROP_THREADS;
constexpr int kDropUnroll = CVT_DROP_UNROLL;  // groups of 4 elements per thread per step

template <typename T>
__device__ __forceinline__ T relu_dropout_one(T x, float u, float p, float scale) {
  const float f = to_float(x);
  const float relu = f <= 0.0f ? 0.0f : f;  // NaN <= 0 is false: NaN stays NaN
  return from_float<T>(u >= p ? relu * scale : 0.0f);
}

template <typename T, bool VECTOR>
__global__ void __launch_bounds__(kDropThreads)
relu_dropout_kernel(const T* __restrict__ x, T* __restrict__ out, int64_t n, float p, float scale,
                    uint64_t seed) {
  const int64_t groups = ceil_div(n, 4);
  const int64_t tile = int64_t{kDropThreads} * kDropUnroll;
  for (int64_t base = blockIdx.x * tile; base < groups; base += int64_t{gridDim.x} * tile) {
    Vec<T, 4> a[kDropUnroll];
    // Loads first (they do not depend on the random numbers), then Philox while they fly.
    // One branch around all of them where this thread's groups are all whole: a choice per
    // group (vector or element loads) made the compiler unpack each 16-bit vector as it
    // arrived, so each load waited for the one before.
    const int64_t last = 4 * (base + (kDropUnroll - 1) * kDropThreads + threadIdx.x);
    if (VECTOR && last + 4 <= n) {
#pragma unroll
      for (int u = 0; u < kDropUnroll; ++u)
        a[u] = load_vec<T, 4>(x + 4 * (base + u * kDropThreads + threadIdx.x));
    } else {
#pragma unroll
      for (int u = 0; u < kDropUnroll; ++u) {
        const int64_t i = 4 * (base + u * kDropThreads + threadIdx.x);
        if (VECTOR && i + 4 <= n) {
          a[u] = load_vec<T, 4>(x + i);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) a[u].v[j] = i + j < n ? x[i + j] : from_float<T>(0.0f);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kDropUnroll; ++u) {
      const int64_t g = base + u * kDropThreads + threadIdx.x;
      const int64_t i = 4 * g;
      if (g >= groups) continue;
      const uint4 bits = philox_group(seed, static_cast<uint64_t>(g));
      const float r[4] = {philox_uniform(bits.x), philox_uniform(bits.y), philox_uniform(bits.z),
                          philox_uniform(bits.w)};
      Vec<T, 4> o;
#pragma unroll
      for (int j = 0; j < 4; ++j) o.v[j] = relu_dropout_one(a[u].v[j], r[j], p, scale);
      if (VECTOR && i + 4 <= n) {
        store_vec<T, 4>(out + i, o);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (i + j < n) store_one(out + i + j, o.v[j]);
        }
      }
    }
  }
}

template <typename T>
cudaError_t launch_relu_dropout_typed(const T* x, T* out, int64_t n, float p, float scale,
                                      uint64_t seed, cudaStream_t stream) {
  const uintptr_t group_bytes = 4 * sizeof(T);
  const bool vector = reinterpret_cast<uintptr_t>(x) % group_bytes == 0 &&
                      reinterpret_cast<uintptr_t>(out) % group_bytes == 0;
  const int64_t blocks = std::max<int64_t>(
      1, std::min(ceil_div(ceil_div(n, 4), kDropThreads * kDropUnroll), kMaxGridX));
  if (vector) {
    relu_dropout_kernel<T, true><<<blocks, kDropThreads, 0, stream>>>(x, out, n, p, scale, seed);
  } else {
    relu_dropout_kernel<T, false><<<blocks, kDropThreads, 0, stream>>>(x, out, n, p, scale, seed);
  }
  return cudaGetLastError();
}

cudaError_t launch_relu_dropout(DType dtype, const void* x, void* out, int64_t n, double p,
                                uint64_t seed, cudaStream_t stream) {
  if (!(p >= 0.0 && p < 1.0)) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
  const float p32 = static_cast<float>(p);
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return launch_relu_dropout_typed(static_cast<const T*>(x), static_cast<T*>(out), n, p32, scale,
                                     seed, stream);
  });
}

}  // namespace cvt
