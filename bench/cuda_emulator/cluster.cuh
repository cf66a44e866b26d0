// Emulated thread-block clusters (stands in for cuda/cluster.cuh: emulate.py puts the
// kernels beside this file). The blocks of a cluster run at once as threads of this
// process (cuda_runtime.h, launch_clusters); the cluster barrier is a std::barrier of all
// their threads, and a block's shared memory is its own buffer, reached by rank.
#pragma once
#include <cstddef>

namespace cvt {

inline void cluster_sync() { cvt_emu::cluster_barrier->arrive_and_wait(); }

template <typename T>
T* cluster_map(T* p, unsigned rank) {
  const std::ptrdiff_t offset =
      reinterpret_cast<char*>(p) - reinterpret_cast<char*>(cvt_emu::block_smem());
  return reinterpret_cast<T*>(reinterpret_cast<char*>(cvt_emu::dynamic_smem[rank]) + offset);
}

}  // namespace cvt
