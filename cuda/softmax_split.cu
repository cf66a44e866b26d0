// Softmax, split rows: a row split over the blocks of a thread-block cluster, each slice kept
// in shared memory: read once, written once, for rows of any size up to the shared memory of
// a cluster.
//
//   idea      a row too long for one SM (4096 x 393216: a 768 KiB float16 row, 1.5 MiB in
//             float32, where an SM has 227 KiB of shared memory) is cut into C slices, one
//             block per slice, and the C blocks of a row form a cluster (sm_90): the hardware
//             runs them at the same time, on SMs of one GPC, and each may read the others'
//             shared memory (distributed shared memory, DSMEM). Each block copies its slice
//             into shared memory (cp.async: no registers, every copy of the slice in flight at
//             once), computes the slice's maximum m_b and sum s_b = sum exp(x - m_b), and
//             publishes (m_b, s_b) in its shared memory. After one cluster barrier every block
//             reads the C pairs and folds them as the online softmax folds its chunks:
//             M = max m_b, S = sum s_b exp(m_b - M). It then writes exp(x - M) / S from its
//             slice. One exchange per row; the row crosses DRAM once in each direction.
//             A slice takes at most kSplitSliceBytes (96 KiB: two blocks per SM, so one block
//             computes while the other's copies are in flight). C is the smallest power of two
//             that gets there: 1 for a 32768-element float16 row (64 KiB: three blocks per SM,
//             no cluster: the row-in-SRAM kernel, the row in its own type and cp.async), 2 for
//             float32 (64 KiB slices), 8 for 393216 float16, 16 for 393216 float32 (16 is the
//             H100's non-portable cluster limit, allowed by a function attribute). The
//             automatic size is capped at kSplitAutoMaxCluster (8) where such slices fit a
//             block: 393216 float32 as 8 slices of 192 KiB, one block per SM (91% of the copy
//             bandwidth on the H100 against 88% with 16: the GPCs hold 14 clusters of 16, 16
//             of 8).
//   change    from the online kernel: the second read of the row is gone (it came from DRAM
//             once the rows in flight outgrew L2: 132 rows of 768 KiB are 101 MB for a 50 MB
//             L2), at the price of a cluster barrier per row and a limit on the row:
//             kSplitMaxCluster slices of the largest shared memory a block may have (16 x 227
//             KiB on the H100: 3.6 MiB, 930,000 float32 elements).
//             From the row-in-SRAM kernel: the row is kept in its own type (half the shared
//             memory of a 16-bit row) and copied by cp.async, and may span several SMs.
//   traffic   reads N, writes N elements: compulsory = model = 2 N sizeof(T), one pass, plus
//             8 C bytes of DSMEM per row (the pairs).
//   precond.  contiguous [rows, n] (dim = -1 only: the op cvt::softmax_split);
//             any n >= 1 up to the limit above; C > 1 needs compute capability 9.0 or newer
//             (cudaErrorNotSupported elsewhere). Vector path (16-byte cp.async) when n *
//             sizeof(T) and both pointers are multiples of 16 bytes, else element copies.
//             Rows of -inf, NaN and +inf behave as in the row-in-SRAM and online kernels.
//   exps      the slice's exps as ex2.approx.ftz and 16-bit maxima on pairs: 29% fewer
//             instructions than __expf and element-wise maxima (comment above ex2_ftz below).
//   sync      the two cluster barriers are arrived at without release semantics (a release
//             arrive is MEMBAR.ALL.GPU: each thread waits until its earlier stores are
//             visible GPU-wide); thread 0 alone fences the one store the cluster reads, its
//             pair. The block's (max, sum) is one reduction of pairs (5 block barriers a row
//             where a maximum and then a sum took 8). In 16-bit at 393216: 86.5 -> 93.5% of
//             the copy bandwidth on the H100.
//   history   the forms measured and dropped (a persistent "refill" grid, __expf, release
//             arrivals, two block reductions) and the commit that holds their code:
//             docs/performance/memory_bound.md, "Variants measured and dropped".
//   run       python -m bench check --kernels cuda_softmax_split --shapes 8x100003,4x393216
//             python -m bench time --kernels '*softmax*' --shapes 4096x393216 --precision fp16
#include <cmath>
#include <cuda_pipeline.h>

#include "cluster.cuh"  // cluster_rank, cluster_size, the barrier's halves, cluster_map
#include "memory_common.cuh"

namespace cvt {

// A slice element copied global -> shared: 16 bytes by cp.async (asynchronous, bypasses
// registers and L1) on the vector path; through a register otherwise.
template <typename T, int VEC>
__device__ __forceinline__ void copy_to_shared(T* dst, const T* src) {
  if constexpr (sizeof(T) * VEC == 16) {
    __pipeline_memcpy_async(dst, src, 16);
  } else {
    *reinterpret_cast<Vec<T, VEC>*>(dst) = load_vec<T, VEC>(src);
  }
}

// The slice's arithmetic ("exps" in the header). __expf is
// ex2.approx.f32 of x * log2(e), and ex2.approx without .ftz spends a compare and two predicated
// multiplies on every element for its subnormal results (argument halved, result squared): with
// the conversions, 24.6 instructions per 16-bit element (Nsight Compute: issue slots 58% busy in
// a float16 split kernel, 30% in float32). A sum of exps that is at least 1 loses nothing
// when terms below 2^-126 are flushed to zero, so the slice's sum takes ex2.approx.ftz. The
// output takes it on the argument raised by 64 and a scale lowered by 2^-64 (inv = 1 / sum is at
// least 2^-31, so inv * 2^-64 stays normal): every output down to 2^-190 comes from a normal
// exp, and only the last multiply rounds to a subnormal, as before. Raising by 64 rounds the
// argument to 2^-18 (3e-6 relative): kept for 16-bit outputs, whose ulp is 2^-11 or 2^-8;
// float32 outputs keep vec_exp_scaled. The maximum of 16-bit elements is taken on pairs (HMNMX2:
// exact) and converted once.
__device__ __forceinline__ float ex2_ftz(float t) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
}

template <typename T, int VEC>
__device__ __forceinline__ float split_vec_max(const Vec<T, VEC>& a) {
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
    using P = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    P r;
    memcpy(&r, &a.v[0], 4);
#pragma unroll
    for (int i = 1; i < VEC / 2; ++i) {
      P p;
      memcpy(&p, &a.v[2 * i], 4);
      r = __hmax2(r, p);
    }
    Vec<T, 2> two;
    memcpy(&two, &r, 4);
    const float2 f = pair_to_float(two, 0);
    return fmaxf(f.x, f.y);
  } else {
    return vec_max(a);
  }
}

constexpr float kLog2e = 1.4426950408889634f;

template <typename T, int VEC>
__device__ __forceinline__ float split_sum_exp(const Vec<T, VEC>& a, float shift) {
  float r = 0.0f;
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
      const float2 f = pair_to_float(a, i);
      r += ex2_ftz((f.x - shift) * kLog2e) + ex2_ftz((f.y - shift) * kLog2e);
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) r += ex2_ftz((to_float(a.v[j]) - shift) * kLog2e);
  }
  return r;
}

template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> split_exp_scaled(const Vec<T, VEC>& a, float shift, float scale) {
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
    const float low = scale * 0x1p-64f;
    Vec<T, VEC> out;
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
      const float2 f = pair_to_float(a, i);
      out.v[2 * i] = from_float<T>(ex2_ftz(fmaf(f.x - shift, kLog2e, 64.0f)) * low);
      out.v[2 * i + 1] = from_float<T>(ex2_ftz(fmaf(f.y - shift, kLog2e, 64.0f)) * low);
    }
    return out;
  } else {
    return vec_exp_scaled(a, shift, scale);
  }
}

// (max, sum of exp(x - max)) of two parts folded into the pair of both, as the online
// softmax folds its chunks; a part of only -inf is (-inf, 0), a NaN anywhere makes the sum NaN.
// A block's pairs are folded with it in one block_allreduce (a maximum, then a sum, took two).
struct FoldPairs {
  __device__ __forceinline__ float2 operator()(float2 a, float2 b) const {
    const float m = fmaxf(a.x, b.x);
    const float shift = m == -INFINITY ? 0.0f : m;
    return make_float2(m, a.y * __expf(a.x - shift) + b.y * __expf(b.x - shift));
  }
};

template <typename T, int VEC, bool CLUSTER>
__global__ void __launch_bounds__(kSplitThreads, kSplitMinBlocks)
softmax_row_split_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                         int64_t slice_vecs) {
  extern __shared__ __align__(16) unsigned char slice_raw[];  // slice_vecs vectors of T
  T* slice = reinterpret_cast<T*>(slice_raw);
  __shared__ float2 pair_scratch[33];

  int rank = 0, size = 1;  // this block's slice of the row, and the slices per row
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (CLUSTER) {
    rank = static_cast<int>(cluster_rank());
    size = static_cast<int>(cluster_size());
  }
#else
  if constexpr (CLUSTER) __trap();  // the launcher never starts a cluster before sm_90
#endif
  const int64_t nvec = n / VEC;  // VEC > 1 only when n % VEC == 0
  const int64_t first = rank * slice_vecs;
  const int64_t left = nvec - first;  // vectors of the row from this slice on (may be <= 0)
  const int count = static_cast<int>(left < 0 ? 0 : left < slice_vecs ? left : slice_vecs);

  const int64_t first_row = blockIdx.x / size, row_step = gridDim.x / size;
  // The slice into shared memory: every copy issued, then one wait. Each thread later
  // reads only the vectors it copied itself, so no block barrier is needed after it.
  const auto issue_copies = [&](int64_t row) {
    const T* xs = x + row * n + first * VEC;
    for (int v = threadIdx.x; v < count; v += blockDim.x) {
      copy_to_shared<T, VEC>(slice + v * VEC, xs + v * VEC);
    }
    __pipeline_commit();
  };
  for (int64_t row = first_row; row < rows; row += row_step) {
    T* ys = y + row * n + first * VEC;
    issue_copies(row);
    __pipeline_wait_prior(0);

    // The slice's maximum and sum of exps: per thread, then per block.
    float m = -INFINITY;
    for (int v = threadIdx.x; v < count; v += blockDim.x) {
      m = fmaxf(m, split_vec_max(*reinterpret_cast<const Vec<T, VEC>*>(slice + v * VEC)));
    }
    const float own_shift = m == -INFINITY ? 0.0f : m;  // all -inf: exp(-inf) = 0, no NaN
    float s = 0.0f;
    for (int v = threadIdx.x; v < count; v += blockDim.x) {
      s += split_sum_exp(*reinterpret_cast<const Vec<T, VEC>*>(slice + v * VEC), own_shift);
    }
    const float2 block = block_allreduce(make_float2(m, s), FoldPairs(),
                                         make_float2(-INFINITY, 0.0f), pair_scratch);
    float row_max = block.x, row_sum = block.y;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CLUSTER) {
      // Publish (m_b, s_b); after the barrier lane r of every warp reads block r's pair
      // (size <= 16 < 32 lanes) and the warp folds them: every thread gets M and S.
      __shared__ float2 partial;  // this block's (max, sum), read by the whole cluster
      if (threadIdx.x == 0) partial = make_float2(row_max, row_sum);
      // Only the pair is read across the cluster: thread 0 orders its store, and no thread
      // waits at the arrive for its own outputs of the last row to become visible.
      if (threadIdx.x == 0) asm volatile("fence.release.cluster;" ::: "memory");
      cluster_arrive_relaxed();
      cluster_wait();
      const int lane = threadIdx.x & 31;
      float pm = -INFINITY, ps = 0.0f;
      if (lane < size) {
        const float2 p = *cluster_map(&partial, lane);
        pm = p.x;
        ps = p.y;
      }
      row_max = warp_allreduce(pm, MaxOp());
      const float shift = row_max == -INFINITY ? 0.0f : row_max;
      row_sum = warp_allreduce(ps * __expf(pm - shift), SumOp());
      // Done reading the others' pairs; they may reuse (or free, by exiting) theirs once
      // every block has arrived here. Arrive now, wait after the output is written.
      cluster_arrive_relaxed();  // reads done
    }
#endif

    // exp(x - M) / S, from the slice (M = -inf: a row of -inf gives NaN, as torch.softmax).
    const float inv = 1.0f / row_sum;
    for (int v = threadIdx.x; v < count; v += blockDim.x) {
      const Vec<T, VEC> a = *reinterpret_cast<const Vec<T, VEC>*>(slice + v * VEC);
      store_vec<T, VEC>(ys + v * VEC, split_exp_scaled(a, row_max, inv));
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CLUSTER) cluster_wait();
#endif
  }
}

// ---------------------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------------------

template <typename Kernel>
cudaError_t split_shared(Kernel kernel, size_t bytes) {
  return bytes > 48 * 1024
             ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes))
             : cudaSuccess;
}

template <typename T, int VEC>
cudaError_t launch_split(const T* x, T* y, int64_t rows, int64_t n, cudaStream_t stream) {
  int device = 0, major = 0, smem_limit = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&smem_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  }
  if (err != cudaSuccess) return err;

  const int64_t nvec = n / VEC;
  const auto slice_bytes = [&](int64_t c) {
    return ceil_div(nvec, c) * VEC * static_cast<int64_t>(sizeof(T));
  };
  // The cluster size C: the smallest power of two whose slices fit kSplitSliceBytes (or the
  // limit) ...
  int64_t c = 1;
  while (c < kSplitMaxCluster && slice_bytes(c) > kSplitSliceBytes) c *= 2;
  // ... but at most the portable cluster size (8) where the slices still fit one block.
  // Clusters of 16 leave SMs idle: the H100's GPCs hold 14 of them (224 of 264 block slots);
  // with 8, 16 clusters of one 192 KiB block per SM (fp32 393216) use 128 SMs.
  if (c > kSplitAutoMaxCluster && slice_bytes(kSplitAutoMaxCluster) <= smem_limit) {
    c = kSplitAutoMaxCluster;
  }
  if (slice_bytes(c) > smem_limit) return cudaErrorInvalidValue;
  if (c > 1 && major < 9) return cudaErrorNotSupported;

  const int64_t slice_vecs = ceil_div(nvec, c);
  const size_t smem = static_cast<size_t>(slice_bytes(c));
  // About 4 vectors per thread (a 96 KiB slice: 12 per thread of 512), at least one warp.
  const int threads = static_cast<int>(
      std::min<int64_t>(kSplitThreads, std::max<int64_t>(32, ceil_div(ceil_div(slice_vecs, 4), 32) * 32)));
  // One row per cluster (past the grid's limit, each cluster loops over rows).
  const int64_t groups = std::min(rows, kMaxGridX / c);

  if (c == 1) {
    const auto kernel = softmax_row_split_kernel<T, VEC, false>;
    err = split_shared(kernel, smem);
    if (err != cudaSuccess) return err;
    kernel<<<static_cast<unsigned>(groups), threads, smem, stream>>>(x, y, rows, n, slice_vecs);
    return cudaGetLastError();
  }
  const auto kernel = softmax_row_split_kernel<T, VEC, true>;
  err = split_shared(kernel, smem);
  if (err == cudaSuccess && c > 8) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  }
  if (err != cudaSuccess) return err;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(c);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(groups * c));
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  // A cluster that no GPC can hold (too many blocks, too much shared memory) would never
  // start: say so instead of launching.
  int clusters = 0;
  err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
  if (err != cudaSuccess) return err;
  if (clusters < 1) return cudaErrorNotSupported;
  return cudaLaunchKernelEx(&config, kernel, x, y, rows, n, slice_vecs);
}

cudaError_t launch_softmax_split(DType dtype, const void* x, void* y, int64_t rows, int64_t n,
                                 cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (aligned16(x) && aligned16(y) && (n * static_cast<int64_t>(sizeof(T))) % 16 == 0) {
      return launch_split<T, kVec16<T>>(xt, yt, rows, n, stream);
    }
    return launch_split<T, 1>(xt, yt, rows, n, stream);
  });
}

}  // namespace cvt
