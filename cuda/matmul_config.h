// Tile parameters of the matmul ladder: the single source of truth.
//
// Every value is a compile-time constant. The Python registry reads this file to
// know which parameters the traffic models should use, so change a value here
// and both the kernel and its model follow. Each value can be overridden on the
// compiler command line (-DCVT_V3_L=64 ...), which is how the standalone driver
// sweeps candidates on the GPU (see bench/gpu_session.sh and PERFLOG.md).
//
// Defaults were chosen by measuring candidates on the H100 (PERFLOG.md, "tile sweep").
// v3 keeps S = 8: S = 16 ran as fast (31.5 vs 31.2 TFLOP/s at 4096^3) but its wider
// cooperative fetch needs more than the 128 registers a thread may use, and spills.
#pragma once

// v1 naive and v1 coalesced: a square block of CVT_V1_BLOCK x CVT_V1_BLOCK threads.
#ifndef CVT_V1_BLOCK
#define CVT_V1_BLOCK 32
#endif

// v1.5 thread tiling: each thread computes a V x V block of C; blocks of T x T threads.
#ifndef CVT_V15_V
#define CVT_V15_V 4
#endif
#ifndef CVT_V15_T
#define CVT_V15_T 16
#endif

// v2 register tiling: V x V accumulators per thread; blocks of T x T threads.
#ifndef CVT_V2_V
#define CVT_V2_V 4
#endif
#ifndef CVT_V2_T
#define CVT_V2_T 16
#endif

// v3 shared-memory + register tiling: a block computes an L x L tile of C, stages
// S x L tiles of A and B in shared memory, and each of its (L/V)^2 threads computes V x V.
#ifndef CVT_V3_L
#define CVT_V3_L 128
#endif
#ifndef CVT_V3_S
#define CVT_V3_S 8
#endif
#ifndef CVT_V3_V
#define CVT_V3_V 8
#endif
