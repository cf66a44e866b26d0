"""Shape sweeps shared by every matmul test (M x N x K).

Chosen to break kernels that assume something: the smallest product, primes, K = 1,
K far longer than M and N, tall-skinny and wide-short outputs, and shapes one below and
one above every tile size the ladder uses (16, 32, 64, 128, 256 elements).
"""
from bench.families.matmul.models import MatmulShape

TILE_SIZES = (16, 32, 64, 128, 256)

EDGE_SHAPES = [
    MatmulShape(1, 1, 1),
    MatmulShape(2, 3, 5),
    MatmulShape(7, 1, 13),
    MatmulShape(1, 1000, 1),      # wide-short
    MatmulShape(1000, 1, 1),      # tall-skinny
    MatmulShape(31, 33, 1),       # K = 1
    MatmulShape(37, 41, 2000),    # K much larger than M and N
    MatmulShape(4, 8, 16385),     # huge K, not a multiple of anything
    MatmulShape(1025, 3, 65),
    MatmulShape(3, 1025, 65),
]

TILE_EDGE_SHAPES = [s for t in TILE_SIZES for s in
                    (MatmulShape(t - 1, t + 1, t - 1), MatmulShape(t + 1, t - 1, t + 1))]

GPU_SWEEP = EDGE_SHAPES + TILE_EDGE_SHAPES + [MatmulShape(1024, 1024, 1024)]

# exact mode (integers in [-3, 3]): a tile edge, a long K, a single column
# exact mode (small integers): every partial sum is exact in float32 up to K = 2^24 / 9, so
# long K too, at every precision: the output is the product rounded once
EXACT_SHAPES = [MatmulShape(129, 131, 257), MatmulShape(64, 64, 4096), MatmulShape(255, 1, 17),
                MatmulShape(96, 80, 65537)]

EMPTY_SHAPES = [MatmulShape(0, 5, 3), MatmulShape(5, 0, 3), MatmulShape(5, 3, 0),
                MatmulShape(0, 0, 0)]


def shapes_at_tile_edges(t: int) -> list[MatmulShape]:
    """The smallest product, primes, K = 1, and one below / above the tile in every dim."""
    return [MatmulShape(1, 1, 1), MatmulShape(2, 3, 5), MatmulShape(31, 33, 1),
            MatmulShape(t - 1, t + 1, t - 1), MatmulShape(t + 1, t - 1, t + 1),
            MatmulShape(2 * t + 1, t, 3 * t - 1), MatmulShape(t, 2 * t, 16)]
