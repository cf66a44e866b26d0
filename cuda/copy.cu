// Copy: out = x, element by element, any length, float32 / float16 / bfloat16.
//
//   idea      the simplest kernel there is (the first Triton example of "A Practitioner's
//             Guide to Triton"): one read and one write per element, no arithmetic. Its
//             bandwidth is the ceiling every other memory-bound kernel is measured against,
//             so it must be as fast as the hardware allows: 16-byte vectors, kCopyUnroll of
//             them in flight per thread, neighbour threads on neighbour vectors.
//   change    from cuda/vector_add.cu: one input instead of two, no conversion (the
//             vector is stored as it was loaded, whatever the dtype).
//             The Practitioner's Guide walks through two wrong versions of this kernel
//             (offsets that ignore the block index; block index times n instead of times
//             the block size): they are kept in Triton, triton_impl/copy.py, as labelled
//             wrong variants the harness must catch. Here the offset of a vector is
//                 base (this block's first vector) + u * kCopyThreads + threadIdx.x
//             and base advances by gridDim.x tiles: every vector is owned exactly once.
//   traffic   reads n, writes n elements: compulsory = model = 2 n sizeof(T) bytes.
//   precond.  as cuda/vector_add.cu: contiguous, any n >= 0, vector path when both
//             pointers are 16-byte aligned (run-time check), scalar tail for n % VEC.
//   run       python -m bench check --kernels cuda_copy,triton_copy
//             python -m bench time --kernels '*copy' --shapes 67108864 --precision fp32
#include "memory_common.cuh"

namespace cvt {

// Launch parameters: memory_config.h.
constexpr int kCopyThreads = CVT_COPY_THREADS;
constexpr int kCopyUnroll = CVT_COPY_UNROLL;  // vectors per thread per step

template <typename T, int VEC>
__global__ void __launch_bounds__(kCopyThreads)
copy_kernel(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  const int64_t nvec = n / VEC;
  const int64_t tile = int64_t{kCopyThreads} * kCopyUnroll;
  for (int64_t base = blockIdx.x * tile; base < nvec; base += int64_t{gridDim.x} * tile) {
    Vec<T, VEC> a[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const int64_t v = base + u * kCopyThreads + threadIdx.x;
      if (v < nvec) a[u] = load_vec<T, VEC>(x + v * VEC);
    }
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const int64_t v = base + u * kCopyThreads + threadIdx.x;
      if (v < nvec) store_vec<T, VEC>(out + v * VEC, a[u]);
    }
  }
  const int64_t i = nvec * VEC + threadIdx.x;  // the n % VEC tail, block 0
  if (blockIdx.x == 0 && i < n) store_one(out + i, x[i]);
}

template <typename T>
cudaError_t launch_copy_typed(const T* x, T* out, int64_t n, cudaStream_t stream) {
  constexpr int V = kVec16<T>;
  const bool vector = aligned16(x) && aligned16(out);
  const int64_t nvec = vector ? n / V : n;
  const int64_t blocks = std::max<int64_t>(1, std::min(ceil_div(nvec, kCopyThreads * kCopyUnroll), kMaxGridX));
  if (vector) {
    copy_kernel<T, V><<<blocks, kCopyThreads, 0, stream>>>(x, out, n);
  } else {
    copy_kernel<T, 1><<<blocks, kCopyThreads, 0, stream>>>(x, out, n);
  }
  return cudaGetLastError();
}

cudaError_t launch_copy(DType dtype, const void* x, void* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return launch_copy_typed(static_cast<const T*>(x), static_cast<T*>(out), n, stream);
  });
}

}  // namespace cvt
