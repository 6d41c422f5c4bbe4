#!/usr/bin/env bash
# The recorded GPU run of the verify suite (issue 5): run from the repo root on a machine whose
# python3 has a GPU torch. Writes everything under ${OUT:-./gpu-run}. Wheels for rocm-wizard's own
# dependencies may be carried in .whl/ (installed into /tmp/site), since that machine has no network;
# carry rocm-wizard's own wheel there too (`python -m pip wheel --no-deps -w .whl .`): `rocm-wizard verify`
# then runs as installed (wizard.steps and wizard.plans exist only in an install, so a source tree's
# `python3 -m wizard` verifies without its diagnoser).
set -u
OUT=${OUT:-./gpu-run}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
{
  echo "date: $(date -u +%FT%TZ)"; echo "uname: $(uname -srm)"; echo "cpus: $(nproc)"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], sys.executable); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
t() { local TIMEFORMAT="wall %R s"; time "$@"; }
echo "== full suite (cold: first run on this machine)"
t python3 wizard/verify/suite.py --json > "$OUT/suite_full_cold.jsonl" 2>> "$OUT/log.txt"; tail -1 "$OUT/suite_full_cold.jsonl"
echo "== full suite (second run)"
t python3 wizard/verify/suite.py --json > "$OUT/suite_full.jsonl" 2>> "$OUT/log.txt"; tail -1 "$OUT/suite_full.jsonl"
echo "== quick"; t python3 wizard/verify/suite.py --quick 2>&1 | tee -a "$OUT/log.txt"
echo "== throughput probe vs direct"
python3 benchmarks/verify_throughput.py --json-out "$OUT/throughput.json" 2>&1 | tee -a "$OUT/log.txt"
echo "== rocm-wizard verify --json"
OUT=$(cd "$OUT" && pwd)
CLI_DIR=.
[ -d /tmp/site/wizard/plans ] && CLI_DIR=/tmp  # the carried install, not the source tree's wizard/
PY=$(command -v python3)
(cd "$CLI_DIR" && t python3 -m wizard verify --python "$PY" --json) > "$OUT/wizard_verify.json" 2>> "$OUT/log.txt"
(cd "$CLI_DIR" && COLUMNS=120 python3 -m wizard verify --python "$PY" --quick) 2>&1 | tee -a "$OUT/log.txt"
echo "== injected conv2d hang on the GPU (timeout 5 s)"
t env PYTHONPATH="tests/fixtures/fake_torch:${PYTHONPATH:-}" ROCM_WIZARD_FAULT=conv2d:hang \
  python3 wizard/verify/suite.py --only import,conv2d,matmul --timeout 5 > "$OUT/suite_conv_hang.txt" 2>&1
cat "$OUT/suite_conv_hang.txt"
