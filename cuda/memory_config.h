// Launch parameters of the memory-bound kernels (vector add, copy, ReLU + dropout, softmax,
// RGB -> grey), and the list of their ops: the single source of truth.
//
// Every value is a compile-time constant. bindings/config.py reads this file (it is its one
// Python reader) so that the Triton twins (triton_impl/tiles.py), the fake kernels of
// bindings/ and the harness's registry use the numbers the kernels were compiled with:
// change a value here and the CUDA kernel, its twin and its registry record follow. Each
// value can be overridden on the compiler command line (-DCVT_ADD_UNROLL=8 ...), as the
// matmul tiles can (matmul_config.h); the Python side always reads the defaults below.
//
// Only what a launcher chooses lives here. What the hardware fixes stays in the kernels: a
// 16-byte vector (kVec16 in memory_common.cuh), a warp of 32 threads, the 4 words of one
// Philox call (relu_dropout.cu). How many SMs the grid should fill is not a constant at all:
// the launchers take the device's count as an argument (memory_launchers.h).
#pragma once

// ---------------------------------------------------------------------------------------
// The ops, in the order of the kernel files: one X(name) per op. Each is the torch op
// cvt::name (bindings/memory_ops.cpp expands this list for its schemas and registrations),
// a case of the standalone driver (cuda/driver/memory_driver.cu) and a fake kernel
// (bindings/_fake_memory.py, through bindings/config.py's MEMORY_OPS). The launchers'
// signatures differ from op to op, so memory_launchers.h declares them one by one.
// ---------------------------------------------------------------------------------------
#define CVT_MEMORY_OPS(X) \
  X(vector_add)           \
  X(copy)                 \
  X(relu_dropout)         \
  X(softmax_row_sram)     \
  X(softmax_online)       \
  X(softmax_split)        \
  X(rgb_to_grey)

// ---------------------------------------------------------------------------------------
// Vector add (vector_add.cu)
// ---------------------------------------------------------------------------------------

// Threads per block.
#ifndef CVT_ADD_THREADS
#define CVT_ADD_THREADS 256
#endif
// 16-byte vectors of each input in flight per thread per step: 4 x 2 inputs x 16 bytes =
// 128 bytes outstanding per thread, what it takes to cover HBM's latency (Little's law).
#ifndef CVT_ADD_UNROLL
#define CVT_ADD_UNROLL 4
#endif
// ... when CVT_ADD_UNROLL would leave SMs without a block (short vectors): at 192,311
// float32 elements 4 gave 47 blocks for 132 SMs, 2 gives 94
// (docs/performance/memory_bound.md, "Small shapes").
#ifndef CVT_ADD_UNROLL_SMALL
#define CVT_ADD_UNROLL_SMALL 2
#endif

// ---------------------------------------------------------------------------------------
// Copy (copy.cu)
// ---------------------------------------------------------------------------------------

// Threads per block.
#ifndef CVT_COPY_THREADS
#define CVT_COPY_THREADS 256
#endif
// 16-byte vectors in flight per thread per step.
#ifndef CVT_COPY_UNROLL
#define CVT_COPY_UNROLL 4
#endif

// ---------------------------------------------------------------------------------------
// ReLU + dropout (relu_dropout.cu)
// ---------------------------------------------------------------------------------------

// Threads per block.
#ifndef CVT_DROP_THREADS
#define CVT_DROP_THREADS 256
#endif
// Groups of 4 elements (one Philox call each) per thread per step.
#ifndef CVT_DROP_UNROLL
#define CVT_DROP_UNROLL 4
#endif

// ---------------------------------------------------------------------------------------
// Softmax, both versions (softmax_row_sram.cu, softmax_online.cu)
// ---------------------------------------------------------------------------------------

// The longest row (or column) the SRAM version takes: 32768 float32 = 128 KiB of shared
// memory, within the H100's 227 KiB per block. The binding refuses longer rows with a
// message that points to softmax_online.
#ifndef CVT_SOFTMAX_SRAM_MAX_N
#define CVT_SOFTMAX_SRAM_MAX_N 32768
#endif
// Column layouts (dim != -1), in memory_common.cuh's column_tile: a block reads TX
// neighbour columns. TX starts at CVT_SOFTMAX_COLUMNS_FIRST (8: one 32-byte sector of
// float32 per row of the tile) and doubles, up to CVT_SOFTMAX_COLUMNS_MAX, only while the
// grid keeps at least CVT_SOFTMAX_BLOCKS_PER_SM blocks per SM.
#ifndef CVT_SOFTMAX_COLUMNS_FIRST
#define CVT_SOFTMAX_COLUMNS_FIRST 8
#endif
#ifndef CVT_SOFTMAX_COLUMNS_MAX
#define CVT_SOFTMAX_COLUMNS_MAX 32
#endif
#ifndef CVT_SOFTMAX_BLOCKS_PER_SM
#define CVT_SOFTMAX_BLOCKS_PER_SM 4
#endif

// The row in SRAM (softmax_row_sram.cu): threads per block, at most (short rows get fewer).
#ifndef CVT_SRAM_THREADS
#define CVT_SRAM_THREADS 512
#endif
// Elements per thread in flight while a row is loaded, on the vector path (64: 256 bytes
// of float32, so a 512-thread block of the longest rows issues all its loads at once) ...
#ifndef CVT_SRAM_ELEMENTS
#define CVT_SRAM_ELEMENTS 64
#endif
// ... and loads per thread in flight on the scalar path (one element each).
#ifndef CVT_SRAM_SCALAR_UNROLL
#define CVT_SRAM_SCALAR_UNROLL 8
#endif
// Vectors per thread of a short row: the launcher sizes the block for about this many per
// thread and, where one step covers the row, uses a kernel that keeps only this many in
// flight (32 registers instead of 106: 10 blocks per SM instead of 3;
// docs/performance/memory_bound.md, "CUDA row softmax at 3000×3000").
#ifndef CVT_SRAM_UNROLL_SHORT
#define CVT_SRAM_UNROLL_SHORT 4
#endif
// The row in SRAM, rows of 16-bit types ("packed"): the row kept in shared memory in its own
// type (a 32768-element float16 row takes 64 KiB, not 128), so CVT_SRAM_PACKED_MIN_BLOCKS
// blocks share an SM and one block's loads overlap another's arithmetic;
// CVT_SRAM_PACKED_UNROLL loads per thread in flight (3 blocks of 512 threads leave 40
// registers per thread; 4 x 16 B x 1536 threads = 96 KiB in flight per SM, four times
// Little's law's 3 TB/s x 1 us / 132 SMs). float32 rows keep the staged kernel above.
#ifndef CVT_SRAM_PACKED_UNROLL
#define CVT_SRAM_PACKED_UNROLL 4
#endif
#ifndef CVT_SRAM_PACKED_MIN_BLOCKS
#define CVT_SRAM_PACKED_MIN_BLOCKS 3
#endif

// Online (softmax_online.cu): threads per row block, at most (short rows get fewer).
#ifndef CVT_ONLINE_THREADS
#define CVT_ONLINE_THREADS 1024
#endif
// Elements per thread in flight in a float32 row step, on the vector path (16: 64 registers
// is what a 1024-thread block allows). A float32 row of at most CVT_ONLINE_THREADS x
// CVT_ONLINE_ELEMENTS elements is one step, kept in registers and read once (the traffic
// model's one_pass_n).
#ifndef CVT_ONLINE_ELEMENTS
#define CVT_ONLINE_ELEMENTS 16
#endif
// ... and loads per thread in flight on the scalar path (one element each).
#ifndef CVT_ONLINE_SCALAR_UNROLL
#define CVT_ONLINE_SCALAR_UNROLL 4
#endif
// Online, rows of 16-bit types ("packed"): a row step kept in registers as loaded (two
// values per register): CVT_ONLINE_PACKED_BYTES per thread (8 vectors: 64 float16 elements),
// blocks of CVT_ONLINE_PACKED_THREADS threads, two per SM; a 32768-element 16-bit row is one
// step, read once (the traffic model's one_pass_n). float32 rows keep the step above.
#ifndef CVT_ONLINE_PACKED_BYTES
#define CVT_ONLINE_PACKED_BYTES 128
#endif
#ifndef CVT_ONLINE_PACKED_THREADS
#define CVT_ONLINE_PACKED_THREADS 512
#endif

// Columns: threads per block (TX columns x TY threads per column: a power of two) ...
#ifndef CVT_ONLINE_COL_THREADS
#define CVT_ONLINE_COL_THREADS 256
#endif
// ... and elements per thread of its column in flight.
#ifndef CVT_ONLINE_COL_UNROLL
#define CVT_ONLINE_COL_UNROLL 4
#endif

// ---------------------------------------------------------------------------------------
// The split softmax (softmax_split.cu; docs/performance/memory_bound.md): the op
// softmax_split, a row cut into slices, one block per slice, the blocks of a row one
// thread-block cluster (sm_90) exchanging their (max, sum) through distributed shared memory.
// ---------------------------------------------------------------------------------------

// A slice takes at most CVT_SPLIT_SLICE_BYTES of shared memory (96 KiB: two blocks per SM);
// the cluster has at most CVT_SPLIT_MAX_CLUSTER blocks (16 is the H100's non-portable maximum,
// 8 the portable one). Blocks of CVT_SPLIT_THREADS threads.
#ifndef CVT_SPLIT_SLICE_BYTES
#define CVT_SPLIT_SLICE_BYTES 98304
#endif
#ifndef CVT_SPLIT_MAX_CLUSTER
#define CVT_SPLIT_MAX_CLUSTER 16
#endif
#ifndef CVT_SPLIT_THREADS
#define CVT_SPLIT_THREADS 512
#endif
// The automatic cluster size is at most CVT_SPLIT_AUTO_MAX_CLUSTER (8, the portable size)
// where slices that many fit a block, even when they are larger than CVT_SPLIT_SLICE_BYTES:
// clusters of 16 leave SMs idle (the H100's GPCs hold 14 of them, 224 of 264 block slots).
#ifndef CVT_SPLIT_AUTO_MAX_CLUSTER
#define CVT_SPLIT_AUTO_MAX_CLUSTER 8
#endif
// __launch_bounds__ asks for registers that let CVT_SPLIT_MIN_BLOCKS blocks share an SM.
#ifndef CVT_SPLIT_MIN_BLOCKS
#define CVT_SPLIT_MIN_BLOCKS 1
#endif

// ---------------------------------------------------------------------------------------
// RGB -> grey (rgb_to_grey.cu): blocks of CVT_GREY_BY rows x CVT_GREY_BX threads, each
// thread converting CVT_GREY_PX neighbour pixels of its row (one 16-byte load per plane).
// ---------------------------------------------------------------------------------------

#ifndef CVT_GREY_PX
#define CVT_GREY_PX 16
#endif
#ifndef CVT_GREY_BX
#define CVT_GREY_BX 32
#endif
#ifndef CVT_GREY_BY
#define CVT_GREY_BY 8
#endif
