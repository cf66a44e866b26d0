#!/usr/bin/env bash
# 003e287 (t5) verified on the GPU: the tensor-core rung tests, initcheck over every kernel
# with its outputs poisoned, the harness timing tests, bench time --alternate 3 (sustained)
set -u
export PYTHONUNBUFFERED=1 CVT_GIT_SHA=003e287
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee $OUT/c1/gpu.csv
t0=$SECONDS
make build > $OUT/c1/build.log 2>&1 || { tail -30 $OUT/c1/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
timeout 150 python3 -m bench time --kernels cuda_t3_warp_specialized,cuda_t5_stream_k --shapes 8192x8192x8192 --precision bf16,fp16 --alternate 3 --out $OUT/c1/alt > $OUT/c1/alt.log 2>&1
echo "alt rc=$?"; tail -8 $OUT/c1/alt.log
timeout 200 python3 -m pytest tests/gpu/test_tensor_core_rungs.py -p no:cacheprovider -q -rfE -n 8 --dist loadgroup > $OUT/c1/tc_tests.log 2>&1
echo "tc tests rc=$?"; grep -E "^(FAILED|ERROR)" $OUT/c1/tc_tests.log | head; tail -1 $OUT/c1/tc_tests.log
timeout 170 python3 -m pytest "tests/gpu/test_sanitizer.py::test_compute_sanitizer_over_every_kernel[initcheck]" tests/gpu/test_harness_timing.py -p no:cacheprovider -q -rfE -s > $OUT/c1/initcheck.log 2>&1
echo "initcheck rc=$?"; grep -E "error\(s\)|no errors|exit|passed|failed" $OUT/c1/initcheck.log | head -30
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
