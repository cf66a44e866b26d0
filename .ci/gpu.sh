#!/usr/bin/env bash
# The GPU counterpart of .ci/run, for a machine with an NVIDIA GPU (the H100 and H200 we
# measure on): the GPU tier, the sweeps and the result sets, every log under $OUT and the
# logs packed into $OUT/logs.tgz at the end. Stages run in the order given:
#
#   OUT=/tmp/out bash .ci/gpu.sh STAGE [STAGE ...]     (logs and results: $OUT/logs.tgz)
#     tiers     make test: the fast tier of every tier this machine runs, its own build
#               included (the README's test command; budget: 5 minutes on a fresh H100)
#     fast      the GPU tier without the slow tests, on an extension already built
#     slow-1 slow-2 slow-3
#               the slow GPU tests (what `make test-all` adds), in three parts that each fit
#               a 10-minute run: slow-1 everything but compute-sanitizer (offsets past 2^31 on
#               one worker, fuzzing, every tuning candidate, the standalone drivers, the
#               notebook, the CUDA plugin example); slow-2 compute-sanitizer's memcheck and
#               initcheck over every kernel; slow-3 its racecheck and synccheck
#     all       make test-all: every test (where a run may take longer than 10 minutes)
#     sweep     the FFMA rungs' tile sweep next to cuBLAS (cuda/driver/ffma_sweep.sh)
#     tensor    the tensor-core rungs' tile sweep next to cuBLAS (cuda/driver/tensor_core_sweep.sh)
#     user      a new user's walk (.ci/user_walk.sh): pip install . into a fresh environment,
#               then the README's and docs' commands outside the checkout (user-now: the
#               same with pip install --no-build-isolation .)
#     report    make report into $OUT/set (about 7 minutes on the H100 with every kernel;
#               REPORT_ARGS="--alternate 5 --kernels ..." passes more arguments)
#     report-start, report-wait
#               make report as the README gives it, in the background on the GPU machine
#               (into /tmp/cvt_report_bg/set), for a device whose runs stop at 10 minutes:
#               report-start starts it and waits up to REPORT_WAIT seconds (default 500);
#               report-wait, in the next run on the same machine, waits again. Whichever
#               sees it end copies the set and its log into $OUT/set and $OUT/report.log.
#     report-4096  the counters of the ladder, the tensor-core rungs, triton_autotuned and
#               triton_persistent at 4096^3 (fp32, tf32, fp16, bf16) added to SET (default: the
#               $OUT/set of a `report` stage before it) and the figures redrawn. The
#               committed results/<gpu>/ sets are made by `report report-4096`; where one
#               call cannot hold both, run `report`, put its set into the tree (untracked
#               files travel), then `SET=that/folder ... report-4096`.
#     results   check and time only, into $OUT/set (a second GPU's set for `bench compare`)
#     paths     the paths for shapes that are not one big GEMM (docs/performance/shapes.md):
#               tests/gpu/test_shape_paths.py, slow tests included, then compute-sanitizer's
#               memcheck, initcheck and racecheck over the entries that run them (PATHS_KERNELS)
#     rungs     the tensor-core rungs (docs/performance/tensor_cores.md): their GPU tests, then
#               compute-sanitizer memcheck and racecheck over them, then alternating rounds
#               beside cuBLAS and triton_persistent at 4096^3 and 8192^3 (bf16, fp16) into
#               $OUT/alternating_4096 and $OUT/alternating_8192 (ROUNDS: default 3)
#     suite     the shape suite: SUITE_KERNELS (default cuda_auto,triton_auto) checked
#               against float64 at every suite shape and precision, then timed beside cuBLAS
#               into $OUT/suite (SUITE_PRECISIONS: default all four). SUITE_NAMES: the
#               suites or categories to run, one after another into the same set (default
#               "shapes"; e.g. "shapes:few-tiles shapes:skinny"); SUITE_SET: a set of the
#               same commit and GPU to add them to (copied into $OUT/suite; --append)
#
# The GPU copy of the tree has no .git: pass the commit as CVT_GIT_SHA=... to label results.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
FINAL=${OUT:-build/gpu_out}
OUT=$(mktemp -d /tmp/gpu_work.XXXX)     # packed into $FINAL/logs.tgz at the end
mkdir -p "$FINAL"
JOBS=${JOBS:-$(nproc)}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$OUT/gpu.csv" 2>&1
cat "$OUT/gpu.csv"

built=""
build() {
  [ -n "$built" ] && return 0
  local t0=$SECONDS
  make build > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  grep -E "Compiling entry|Used [0-9]+ registers|spill" "$OUT/build.log" > "$OUT/ptxas.txt" || true
  echo "build: $((SECONDS - t0)) s"
  built=yes
}

failures() {   # log, how many: each failed or erroring test once (pytest -v lines and -rfE summary)
  grep -E "(^| )(FAILED|ERROR) " "$1" | sort -u | head -"$2"
}

pytest_gpu() {   # name, timeout, test path, pytest arguments...
  local name=$1 limit=$2 tests=$3; shift 3
  # -v: every test's outcome is in the log as it ends, so a run cut by a time limit still
  # names each failure (the summary of -rfE comes only at the end)
  timeout "$limit" python3 -m pytest "$tests" -p no:cacheprovider -v --tb=short -rfE \
    --junitxml="$OUT/junit_$name.xml" "$@" > "$OUT/pytest_$name.log" 2>&1
  echo "pytest $name rc=$?"
  failures "$OUT/pytest_$name.log" 30
  tail -1 "$OUT/pytest_$name.log"
}

sanitize() {   # name, kernels (globs), time limit, tools...: compute-sanitizer over
  # tests.support.sanitize_target, a log per tool ($OUT/sanitize_NAME_TOOL.log)
  local name=$1 kernels=$2 limit=$3 sanitizer tool extra
  shift 3
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in "$@"; do
    extra=""; [ "$tool" = initcheck ] && extra="--poison-outputs"
    # shellcheck disable=SC2086  # extra: one flag or none
    timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 3 --target-processes all \
      --print-limit 50 python3 -m tests.support.sanitize_target --kernels "$kernels" $extra \
      > "$OUT/sanitize_${name}_$tool.log" 2>&1
    echo "compute-sanitizer $tool rc=$?"
    grep -E "ERROR SUMMARY" "$OUT/sanitize_${name}_$tool.log" | sort | uniq -c
  done
}

for stage in "$@"; do
  t0=$SECONDS
  echo "=== $stage"
  case "$stage" in
  tiers|all)   # the README's commands as they are, their own build included
    target=test limit=${TIERS_LIMIT:-580}
    [ "$stage" = all ] && target=test-all limit=${ALL_LIMIT:-3600}
    timeout "$limit" make "$target" PYTEST_ARGS="-v --tb=short -p no:cacheprovider -rfEs" \
      > "$OUT/pytest_$stage.log" 2>&1; echo "make $target rc=$?"
    failures "$OUT/pytest_$stage.log" 40
    tail -1 "$OUT/pytest_$stage.log"
    ;;
  fast)
    build
    pytest_gpu fast "${FAST_LIMIT:-300}" tests/gpu -m "not slow" -n "${PYTEST_JOBS:-$JOBS}" --dist loadgroup
    ;;
  slow-1|slow-2|slow-3)
    build
    case "$stage" in
      slow-1) part="not compute_sanitizer" ;;
      slow-2) part="compute_sanitizer and (memcheck or initcheck)" ;;
      slow-3) part="compute_sanitizer and (racecheck or synccheck)" ;;
    esac
    pytest_gpu "$stage" "${SLOW_LIMIT:-580}" tests/gpu -m slow -k "$part" -n "${PYTEST_JOBS:-8}" --dist loadgroup \
      --durations=25
    ;;
  sweep)
    timeout "${SWEEP_LIMIT:-360}" bash cuda/driver/ffma_sweep.sh "$OUT/sweep" > "$OUT/sweep.log" 2>&1
    echo "sweep rc=$?"; tail -26 "$OUT/sweep.log"
    ;;
  user|user-now)
    mode=plain; [ "$stage" = user-now ] && mode=now
    timeout "${USER_LIMIT:-420}" bash .ci/user_walk.sh "$mode" "$OUT/user_walk_$mode.log"
    echo "user walk rc=$?"; grep -E "^(\\$ |\[exit)" "$OUT/user_walk_$mode.log" | paste - - | cut -c1-150
    ;;
  report)
    build
    # shellcheck disable=SC2086  # REPORT_ARGS: more arguments, e.g. "--alternate 5"
    timeout "${REPORT_LIMIT:-540}" python3 -m bench report --out "$OUT/set" --force ${REPORT_ARGS:-} \
      > "$OUT/report.log" 2>&1; echo "report rc=$?"; grep -A12 "^## Summary" "$OUT/set/report.md"
    ;;
  report-start|report-wait)
    bg=/tmp/cvt_report_bg
    if [ "$stage" = report-start ]; then
      build
      rm -rf "$bg"; mkdir -p "$bg"
      # its own session: the run's end does not stop it
      setsid nohup bash -c "make report OUT='$bg/set' > '$bg/report.log' 2>&1; echo \$? > '$bg/rc'" \
        > /dev/null 2>&1 < /dev/null &
      echo "make report started in the background: $bg/report.log"
    fi
    [ -d "$bg" ] || { echo "no make report started on this machine (report-start)"; exit 2; }
    waited=0
    while [ ! -f "$bg/rc" ] && [ "$waited" -lt "${REPORT_WAIT:-500}" ]; do sleep 5; waited=$((waited + 5)); done
    if [ -f "$bg/rc" ]; then
      echo "make report rc=$(cat "$bg/rc")"; cp -r "$bg/set" "$OUT/set"; cp "$bg/report.log" "$OUT/"
      grep -A12 "^## Summary" "$OUT/set/report.md"
    else
      echo "make report still running after ${waited} s: $(tail -c 300 "$bg/report.log" | tr '\r' '\n' | tail -1)"
      echo "run report-wait on this machine before it is given back"
    fi
    ;;
  report-4096)  # SET=a set made by `report` (in an earlier call when one call cannot hold both)
    build
    set_dir=${SET:-$OUT/set}
    timeout "${P4096_LIMIT:-240}" python3 -m bench profile --append --precision fp32,tf32,fp16,bf16 \
      --kernels "${P4096_KERNELS:-@ladder,@tensor_cores,triton_autotuned,triton_persistent}" \
      --shapes 4096x4096x4096 --out "$set_dir" > "$OUT/profile4096.log" 2>&1
    echo "profile 4096 rc=$?"; tail -3 "$OUT/profile4096.log"
    timeout 60 python3 -m bench report --out "$set_dir" --replot > /dev/null 2>&1
    echo "replot rc=$?"
    [ "$set_dir" = "$OUT/set" ] || cp -r "$set_dir" "$OUT/set"
    ;;
  paths)
    build
    pytest_gpu paths "${PATHS_LIMIT:-300}" tests/gpu/test_shape_paths.py -n "${PYTEST_JOBS:-8}" \
      --dist loadgroup
    sanitize paths "${PATHS_KERNELS:-cuda_auto,triton_auto,triton_split_k,cuda_split_k,cuda_split_k_tf32,cuda_split_k_fp32,cuda_t2*,cuda_t3*,cuda_t4*,cuda_t5*}" \
      "${SANITIZE_LIMIT:-240}" memcheck initcheck racecheck
    ;;
  rungs)
    build
    pytest_gpu rungs "${RUNGS_LIMIT:-240}" tests/gpu/test_tensor_core_rungs.py -m "not slow" \
      -n "${PYTEST_JOBS:-8}" --dist loadgroup
    sanitize rungs 'cuda_t*' 150 memcheck racecheck
    for size in 4096 8192; do
      timeout 240 python3 -m bench time --alternate "${ROUNDS:-3}" --precision bf16,fp16 \
        --kernels 'cuda_t*,triton_persistent' --shapes "${size}x${size}x${size}" \
        --out "$OUT/alternating_$size" > "$OUT/alternating_$size.log" 2>&1
      echo "alternating $size rc=$?"; tail -14 "$OUT/alternating_$size.log"
    done
    ;;
  suite)
    build
    kernels=${SUITE_KERNELS:-cuda_auto,triton_auto}
    precisions=${SUITE_PRECISIONS:-fp32,tf32,fp16,bf16}
    append=""
    if [ -n "${SUITE_SET:-}" ]; then cp -r "$SUITE_SET" "$OUT/suite"; append="--append --no-ceilings"; fi
    for name in ${SUITE_NAMES:-shapes}; do
      log=$OUT/suite_${name//:/_}
      timeout "${SUITE_CHECK_LIMIT:-240}" python3 -m bench check --suite "$name" --kernels "$kernels" \
        --precision "$precisions" > "${log}_check.log" 2>&1
      echo "suite $name check rc=$?"; grep -E "FAIL|passed|failed" "${log}_check.log" | tail -8
      # shellcheck disable=SC2086  # append: two flags or none
      timeout "${SUITE_LIMIT:-420}" python3 -m bench time --suite "$name" --kernels "$kernels" \
        --precision "$precisions" --out "$OUT/suite" $append > "${log}_time.log" 2>&1
      echo "suite $name time rc=$?"; tail -4 "${log}_time.log"
      append="--append --no-ceilings"
    done
    timeout 60 python3 -m bench report --out "$OUT/suite" --replot > /dev/null 2>&1
    echo "suite replot rc=$?"
    ;;
  tensor)  # the drivers and their builds stay out of $OUT: the tables and logs come back
    timeout 400 bash cuda/driver/tensor_core_sweep.sh /tmp/tensor_core_sweep \
      > "$OUT/tensor_core_sweep.log" 2>&1; echo "tensor sweep rc=$?"
    mkdir -p "$OUT/tensor_core_sweep"
    cp /tmp/tensor_core_sweep/*.txt /tmp/tensor_core_sweep/*.log "$OUT/tensor_core_sweep/"
    cat /tmp/tensor_core_sweep/tensor_core_sweep.txt
    ;;
  results)
    build
    timeout 200 python3 -m bench check --exact --nonfinite --out "$OUT/set" > "$OUT/check.log" 2>&1
    echo "check rc=$?"; tail -2 "$OUT/check.log"
    timeout "${TIME_LIMIT:-330}" python3 -m bench time --out "$OUT/set" > "$OUT/time.log" 2>&1
    echo "time rc=$?"; tail -12 "$OUT/time.log"
    ;;
  *)
    echo "unknown stage $stage"; exit 2 ;;
  esac
  echo "=== $stage: $((SECONDS - t0)) s"
done

# Everything in one archive: logs, result sets, sweeps. (Nsight Compute report files are left
# out: large, binary, and remade by `bench profile`.)
tar -czf "$FINAL/logs.tgz" --exclude='*.ncu-rep' -C "$OUT" . && echo "packed $FINAL/logs.tgz"
