// Thread-block clusters (sm_90 and later): the blocks of a cluster run at the same time on
// SMs of one GPC, wait for each other at a cluster barrier, and read each other's shared
// memory (distributed shared memory, DSMEM). The suite's one vocabulary for them: a
// block's rank and the cluster's size, a barrier of the whole cluster (whole, or in two
// halves), and the address of a variable in another block. The launcher starts a cluster of several blocks only on sm_90+, so before sm_90 a
// kernel sees a cluster of one block, where the calls reduce to the block's own rank 0,
// barrier and shared memory.
#pragma once
#include <cooperative_groups.h>

namespace cvt {

// This block's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ unsigned cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().block_rank();
#else
  return 0;
#endif
}

// Waits until every thread of every block of the cluster has arrived; shared-memory
// writes made before it are visible to the whole cluster after it (release / acquire).
// Every thread of the block calls it (.aligned). On sm_90a the same machine code as
// cooperative_groups::this_cluster().sync().
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
               ::: "memory");
#else
  __syncthreads();
#endif
}

// The number of blocks in this block's cluster.
__device__ __forceinline__ unsigned cluster_size() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().num_blocks();
#else
  return 1;
#endif
}

// cluster_sync in two halves, for a block with work to do between them: arrive says this
// block is done with what the others may reuse, wait returns once every block has
// arrived. Relaxed: the arrival orders no memory operation; a block whose writes the
// others must see fences them first (fence.release.cluster), as the split softmax does.
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
#endif
}

// The address of `p` (a variable in this block's shared memory) in the shared memory of
// the cluster's block `rank`: the same variable, in that block.
template <typename T>
__device__ __forceinline__ T* cluster_map(T* p, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
  return p;  // a cluster of one block: rank is 0
#endif
}

}  // namespace cvt
