# Sourced by the service checks on a GPU node (gpu_service_check.sh, gpu_model_check.sh), from the
# repository's root: the service's Python packages from .whl/ when the node lacks them (installed
# into /tmp/site), the bwrap bundle, and the settings every check shares. The caller sets
# FLASHJUDGE_DATA_DIR and FLASHJUDGE_JUDGE_TESTS first if it wants others than the defaults.
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH="/tmp/site:$PWD"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 FLASHJUDGE_SUBMIT_INTERVAL_S=0
export FLASHJUDGE_BWRAP="${FLASHJUDGE_BWRAP:-$PWD/.bwrap/bwrap}"
export FLASHJUDGE_DATA_DIR="${FLASHJUDGE_DATA_DIR:-/tmp/fj-service}"
export FLASHJUDGE_JUDGE_TESTS="${FLASHJUDGE_JUDGE_TESTS:-t01,t02,t05,t10,t20}"
FJ=(python3 -m flashjudge_cli.main)
URL=http://127.0.0.1:8000
