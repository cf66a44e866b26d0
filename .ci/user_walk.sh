#!/usr/bin/env bash
# A new user's first hour, on a GPU machine without a network: install the suite with pip
# into a fresh environment, leave the checkout, and run what the README and docs show.
# Each command is printed after "$ " with its output, as a reader would see it.
#
#   bash .ci/user_walk.sh [plain|now] LOG
#     plain   pip install .                        (the CUDA ops build on their first use)
#     now     pip install --no-build-isolation .   (the CUDA ops are built by pip)
#
# The GPU's Python holds torch and the rest; the environment sees them
# (--system-site-packages) and adds only this package.
set -uo pipefail
MODE=${1:-plain}
LOG=${2:-/dev/stdout}
REPO=$(cd "$(dirname "$0")/.." && pwd)
HOME_DIR=$(mktemp -d /tmp/user.XXXX)          # the user's home: their JIT cache goes there
export HOME=$HOME_DIR
VENV=$HOME_DIR/venv
WORK=$HOME_DIR/work
mkdir -p "$WORK"
failed=0

say() {   # one command as the user types it, its output, its time and exit status
  local expect=${EXPECT:-0}
  echo "\$ $*" >> "$LOG"
  local t0=$SECONDS
  (cd "$WORK" && eval "$@") >> "$LOG" 2>&1
  local rc=$?
  echo "[exit $rc, $((SECONDS - t0)) s]" >> "$LOG"
  echo >> "$LOG"
  [ $rc -eq "$expect" ] || { failed=$((failed + 1)); echo "user walk: FAILED (exit $rc): $*"; }
}

python3 -m venv --system-site-packages "$VENV"
# python3 may itself be a virtual environment (the GPU machines' is), whose packages
# --system-site-packages does not reach: point the new one at them.
python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
  > "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/gpu-python.pth"
export PATH=$VENV/bin:$PATH
case "$MODE" in
  plain) say "pip install -q --no-index $REPO" ;;
  now)   say "pip install -q --no-index --no-build-isolation $REPO" ;;
  *) echo "mode: plain or now"; exit 2 ;;
esac
say "python -c 'import bench, bindings; print(bench.__file__); print(bindings.__file__)'"
say "ls \$(python -c 'import bindings, os; print(os.path.dirname(bindings.__file__))') | head -5"
say "cvt-bench list | head -8"
say "cvt-bench model --kernels 'cuda_v3*' --shape 64x64x64"
# The README's three lines, on the GPU (the first CUDA call builds the ops if pip did not)
say "python -c 'import torch; from bench import kernels; a, b = torch.randn(300, 200, device=\"cuda\"), torch.randn(200, 100, device=\"cuda\"); c = kernels.cuda_v3_smem_tiling(a, b); print(c.shape, (c - a @ b).abs().max().item())'"
say "python -c 'from bench import kernels; help(kernels)' | head -30"
say "cvt-bench check --kernels '@ladder' --shapes 1x1x1,17x13x7,1000x999x37"
say "cvt-bench check --kernels 'cuda_softmax*,triton_softmax*' --precision fp32,bf16"
say "cvt-bench time --kernels 'cuda_v6*,triton_autotuned,cublas' --precision fp32 --shapes 2048x2048x2048 --out mine"
say "cvt-bench plot --results mine --out mine"
# your own kernel, from the docs' worked examples, copied next to you
say "cp $REPO/docs/examples/my_triton_matmul.py $REPO/docs/examples/my_cuda_matmul.py ."
# (exit 1 expected: one of the examples is deliberately wrong, to show the failure report)
EXPECT=1 say "cvt-bench check --plugin my_triton_matmul.py --plugin my_cuda_matmul.py --kernels 'my_*' --shapes 1x1x1,100x70x33,130x129x33"
say "cvt-bench model --plugin my_triton_matmul.py --kernels 'my_*' --shape 1024x1024x1024"
# two GPUs side by side, from the committed result sets
say "cvt-bench compare $REPO/results/h100 $REPO/results/h200 --out cmp"
say "ls cmp cmp/figures"
# training with your own kernels
say "python $REPO/docs/examples/train_mlp.py --steps 20"
echo "user walk ($MODE): $failed commands failed" | tee -a "$LOG"
exit $((failed > 0))
