#!/usr/bin/env bash
# device script (untracked; deleted before finishing)
set -uo pipefail
export PYTHONUNBUFFERED=1 CVT_GIT_SHA=${CVT_GIT_SHA:-unknown}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
if [ ! -e bindings/_C*.so ] 2>/dev/null; then make build > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }; fi
echo "build: $((SECONDS-t0)) s"
case "$1" in
one)
  for f in labs/01_vector_add/instructor/solution.py labs/01_vector_add/instructor/solution.cu labs/03_tiled_matmul/instructor/solution.py; do
    n=$(basename $(dirname $(dirname $f)) | cut -c1-2)
    timeout 200 python3 -m bench grade ${n#0} $f --out $OUT/one_$(basename $f) > $OUT/one_$(basename $f).log 2>&1; echo "grade $f rc=$?"
    python3 - $OUT/one_$(basename $f)/results.json <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    if "traffic" in t["name"] or "load" in t["name"] or "store" in t["name"] or "read" in t["name"] or t.get("status") == "failed":
        print(" ", t["name"], t.get("status"), t["score"], "|", t["output"].replace("\n", " | ")[:600])
PY
  done
  ;;
labs)
  export CVT_LAB_LOG=$OUT/labs.jsonl
  timeout ${LIMIT:-480} python3 -m pytest tests/gpu/test_labs_gpu.py -m "" -k "${K:-}" -p no:cacheprovider -n 8 -q --tb=short -rfE \
     > $OUT/labs.log 2>&1; echo "labs rc=$?"; tail -15 $OUT/labs.log
  python3 - <<'PY'
import json, os
for line in open(os.environ["CVT_LAB_LOG"]):
    r = json.loads(line); t = r["results"]["tests"]
    got = sum(x["score"] for x in t); tot = sum(x["max_score"] for x in t)
    bad = [x["name"] for x in t if x.get("status") == "failed"]
    print(" ".join(a.split("/")[-1] for a in r["args"][:2]), r["status"], f"{got}/{tot}", "failed:", ",".join(bad)[:150])
PY
  ;;
*) eval "$1" ;;
esac
