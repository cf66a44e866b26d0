import torch, sys
from triton_impl import softmax_split, softmax_split_smem
def run(rows, n, dt, tile=None, groups=None, inf=False):
    x = torch.randn(rows, n, device="cuda").to(dt)
    if inf: x[0] = -float("inf"); x[1, : n // 2] = -float("inf")
    y = softmax_split.softmax_split(x, smem=True, smem_tile=tile, groups=groups)
    torch.cuda.synchronize()
    ref = torch.softmax(x.double(), -1)
    ok = (y.double() - ref)[2:].abs().max().item()
    print("ran", rows, n, dt, tile, groups, "err", ok, flush=True)
for dt in (torch.float32, torch.float16, torch.bfloat16):
    run(5, 448, dt)
    run(33, 4096, dt, (4096, 2, 4))
    run(9, 32768, dt, (8192, 2, 8), groups=2)
    run(3, 393216, dt)
    run(4, 65536 + 64, dt, (16384, 1, 8), inf=True)
