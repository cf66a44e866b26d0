// Vector add: out = x + y, element by element, any length, float32 / float16 / bfloat16.
//
//   idea      the lecture's first Triton example (the notes' Figure 5, `_add`): every output
//             element depends on one element of each input, so the only cost is moving
//             bytes. A thread handles whole 16-byte vectors (4 floats or 8 halves): one
//             LDG.128 per input and one STG.128 per output instead of 4 to 8 scalar
//             accesses, and neighbour threads of a warp take neighbour vectors, so a warp
//             reads 512 contiguous bytes per instruction.
//   change    (the first memory-bound kernel; the matmul ladder reuses data, this does not)
//             Each thread keeps kAddUnroll = 4 vectors of each input in flight before it
//             adds: 128 bytes per thread outstanding, which is what it takes to cover the
//             latency of HBM at full bandwidth (Little's law: bytes in flight = bandwidth
//             x latency, ~3 TB/s x ~1 us = ~3 MB across the GPU). A vector too short to
//             give every SM a block that way gets kAddUnrollSmall = 2 vectors per thread
//             (twice the blocks); the launcher is told the device's SM count.
//   traffic   reads 2n, writes n elements, each exactly once:
//             compulsory = model = 3 n sizeof(T) bytes. Its ceiling is the copy bandwidth.
//   precond.  x, y, out: n >= 0 elements of one dtype, contiguous (the binding calls
//             .contiguous()). Vector path when x, y and out are 16-byte aligned (checked at
//             run time by the launcher; torch's allocator always is, an offset view may not
//             be): the n % VEC elements after the last whole vector go through the scalar
//             tail, so odd lengths keep the vector path. Otherwise VEC = 1, the same code.
//             64-bit offsets; a grid-stride loop covers n past 2^31 * 4096 elements.
//   run       python -m bench check --kernels cuda_vector_add,triton_vector_add
//             python -m bench time --kernels '*vector_add' --precision fp32
#include "memory_common.cuh"

namespace cvt {

// Launch parameters: memory_config.h.
constexpr int kAddThreads = CVT_ADD_THREADS;
constexpr int kAddUnroll = CVT_ADD_UNROLL;             // vectors per input per thread per step
constexpr int kAddUnrollSmall = CVT_ADD_UNROLL_SMALL;  // ... when that leaves SMs without a block

template <typename T, int VEC, int UNROLL>
__global__ void __launch_bounds__(kAddThreads)
vector_add_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  const int64_t nvec = n / VEC;                             // whole vectors
  const int64_t tile = int64_t{kAddThreads} * UNROLL;       // vectors per block per step
  for (int64_t base = blockIdx.x * tile; base < nvec; base += int64_t{gridDim.x} * tile) {
    Vec<T, VEC> a[UNROLL], b[UNROLL];
    // All loads first: 2 * UNROLL independent 16-byte loads in flight per thread.
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int64_t v = base + u * kAddThreads + threadIdx.x;  // a warp: 32 neighbour vectors
      if (v < nvec) {
        a[u] = load_vec<T, VEC>(x + v * VEC);
        b[u] = load_vec<T, VEC>(y + v * VEC);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int64_t v = base + u * kAddThreads + threadIdx.x;
      if (v < nvec) {
        Vec<T, VEC> c;
#pragma unroll
        for (int j = 0; j < VEC; ++j) c.v[j] = from_float<T>(to_float(a[u].v[j]) + to_float(b[u].v[j]));
        store_vec<T, VEC>(out + v * VEC, c);
      }
    }
  }
  // The n % VEC elements after the last whole vector (none when VEC == 1): block 0.
  const int64_t i = nvec * VEC + threadIdx.x;
  if (blockIdx.x == 0 && i < n) store_one(out + i, from_float<T>(to_float(x[i]) + to_float(y[i])));
}

template <typename T, int VEC>
cudaError_t launch_vector_add_vec(const T* x, const T* y, T* out, int64_t n, int sms,
                                  cudaStream_t stream) {
  const int64_t nvec = n / VEC;
  const int64_t blocks = ceil_div(nvec, kAddThreads * kAddUnroll);
  if (blocks < sms) {
    const int64_t more = std::max<int64_t>(1, ceil_div(nvec, kAddThreads * kAddUnrollSmall));
    vector_add_kernel<T, VEC, kAddUnrollSmall><<<more, kAddThreads, 0, stream>>>(x, y, out, n);
  } else {
    vector_add_kernel<T, VEC, kAddUnroll><<<std::min(blocks, kMaxGridX), kAddThreads, 0, stream>>>(
        x, y, out, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_vector_add_typed(const T* x, const T* y, T* out, int64_t n, int sms,
                                    cudaStream_t stream) {
  if (aligned16(x) && aligned16(y) && aligned16(out)) {
    return launch_vector_add_vec<T, kVec16<T>>(x, y, out, n, sms, stream);
  }
  return launch_vector_add_vec<T, 1>(x, y, out, n, sms, stream);
}

cudaError_t launch_vector_add(DType dtype, const void* x, const void* y, void* out, int64_t n,
                              int sms, cudaStream_t stream) {
  if (sms < 1) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return launch_vector_add_typed(static_cast<const T*>(x), static_cast<const T*>(y),
                                   static_cast<T*>(out), n, sms, stream);
  });
}

}  // namespace cvt
