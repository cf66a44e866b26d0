#!/usr/bin/env bash
set -x
mkdir -p $OUT/exp
nvidia-smi -q -d POWER,CLOCK > $OUT/exp/smi.txt 2>&1
timeout 330 python results/h100_sweeps/t5_stream_k_runs/scripts/sustained_rounds.py $OUT/exp 2>&1 | tee $OUT/exp/energy.log
M="dram__bytes_read.sum,dram__bytes_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second"
timeout 120 ncu --metrics $M --kernel-name regex:'matmul|gemm|sm90|Kernel' python results/h100_sweeps/t5_stream_k_runs/scripts/ncu_one.py cublas,t3,serp,g16,g16serp,c4 8192 > $OUT/exp/ncu_8192.txt 2>&1
grep -E "ran |dram__|xbar|lts__t_bytes|pipe_tensor|duration|==PROF==|  [a-z_0-9]+.*\(" $OUT/exp/ncu_8192.txt | head -80
(make build > $OUT/exp/build.log 2>&1 && CVT_GIT_SHA=$SHA timeout 200 python -m bench time --alternate 5 --kernels cuda_t3_warp_specialized,cuda_t4_tf32,triton_persistent --precision bf16,tf32 --shapes 4096x4096x4096,8192x8192x8192 --out $OUT/alt > $OUT/exp/alt.log 2>&1); echo "alt rc $?"
tail -30 $OUT/exp/alt.log
cd $OUT && tar czf exp.tgz exp alt 2>/dev/null; ls -la $OUT
