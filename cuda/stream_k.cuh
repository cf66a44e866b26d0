// The stream-K schedule of t5 (cuda/matmul_t5_stream_k.cu, "schedule"): who multiplies which
// k tiles of which tile, the walk of a cluster through its work, and the workspace in which
// helpers hand partial tiles to owners; apart from the kernel so that another persistent
// rung can take the same schedule with its own tiles.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "common.cuh"

namespace cvt {

// Who does what: tiles [0, whole) dealt round robin; then runs of `run` k tiles over the
// `split_k_tiles` k tiles of the remaining tiles, one run per cluster.
struct StreamKSchedule {
  int64_t whole;          // tiles taken whole, T - T % G
  int64_t split_k_tiles;  // k tiles of the remaining T % G tiles, end to end
  int64_t run;            // k tiles per cluster's run (k_tiles: nothing split)
};

// The schedule of `tiles` tiles of `k_tiles` k tiles each over `clusters` clusters: runs of
// max(ceil(S / G), ceil(k_tiles / max_split), min_run) k tiles, or none (run = k_tiles)
// where the last round would shrink by fewer than min_gain k tiles.
inline StreamKSchedule stream_k_schedule(int64_t tiles, int64_t clusters, int64_t k_tiles,
                                         int64_t max_split, int64_t min_run, int64_t min_gain) {
  const int64_t left = tiles % clusters;
  StreamKSchedule s{tiles - left, left * k_tiles, k_tiles};
  if (left > 0) {
    const int64_t even = ceil_div(s.split_k_tiles, clusters);
    int64_t least = ceil_div(k_tiles, max_split);
    if (least < min_run) least = min_run;
    s.run = even > least ? even : least;
    // Splitting pays only where the last round shrinks by more than the hand-over costs.
    if (s.run > k_tiles - min_gain) s.run = k_tiles;
  }
  return s;
}

// Cluster `cluster`'s work, in order: work(tile, first k tile, end k tile) for its whole
// tiles, then for the one or two parts of tiles its run covers. The producer and the
// consumers walk it alike.
template <class Work>
__device__ __forceinline__ void for_each_stream_k_work(int64_t cluster, int64_t clusters,
                                                       int k_tiles, const StreamKSchedule& s,
                                                       Work&& work) {
  for (int64_t u = cluster; u < s.whole; u += clusters) work(u, 0, k_tiles);
  const int64_t first = cluster * s.run;
  const int64_t end = first + s.run < s.split_k_tiles ? first + s.run : s.split_k_tiles;
  for (int64_t i = first; i < end;) {
    const int kb = static_cast<int>(i % k_tiles);
    const int ke = static_cast<int>(k_tiles - kb < end - i ? k_tiles : kb + (end - i));
    work(s.whole + i / k_tiles, kb, ke);
    i += ke - kb;
  }
}

// Workspace for the partials: from a memory pool of the including launcher's own,
// stream-ordered (freed after the kernel on the same stream, so concurrent streams never
// share it), kept by the pool between launches (no release threshold).
static cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  static std::mutex lock;
  static cudaMemPool_t pools[64] = {};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  {
    std::lock_guard<std::mutex> guard(lock);
    if (pools[device] == nullptr) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      cudaMemPool_t pool = nullptr;
      if ((err = cudaMemPoolCreate(&pool, &props)) != cudaSuccess) return err;
      uint64_t keep = UINT64_MAX;
      if ((err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) !=
          cudaSuccess)
        return err;
      pools[device] = pool;
    }
  }
  return cudaMallocFromPoolAsync(ptr, bytes, pools[device], stream);
}

// The flags (cleared on `stream`: a helper raises its flag by writing 1), then `part_bytes`
// of partials, for `slots` helper slots; nothing to free where nothing is split.
static cudaError_t stream_k_workspace(int64_t slots, size_t part_bytes, cudaStream_t stream,
                                      void** workspace, unsigned** flags, float** partials) {
  const size_t flag_bytes = ceil_div(slots * static_cast<int64_t>(sizeof(unsigned)), 256) * 256;
  cudaError_t err = workspace_alloc(workspace, flag_bytes + part_bytes, stream);
  if (err != cudaSuccess) return err;
  *flags = static_cast<unsigned*>(*workspace);
  *partials = reinterpret_cast<float*>(static_cast<char*>(*workspace) + flag_bytes);
  return cudaMemsetAsync(*flags, 0, flag_bytes, stream);
}

}  // namespace cvt
