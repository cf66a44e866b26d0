import ctypes, sys, torch
names = sys.argv[1].split(",")
M = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
a = torch.randn(M, M, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a); c = torch.empty_like(a)
for name in names:
    if name == "cublas":
        torch.matmul(a, b, out=c)
    else:
        lib = ctypes.CDLL(f"/tmp/exp_{name}.so")
        lib.exp_t3.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong] * 3 + [ctypes.c_int, ctypes.c_void_p]
        assert lib.exp_t3(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, M, M, 1,
                          torch.cuda.current_stream().cuda_stream) == 0
    torch.cuda.synchronize()
    print("ran", name, flush=True)
