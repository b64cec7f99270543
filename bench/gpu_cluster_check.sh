#!/usr/bin/env bash
# The documented deployment on a GPU host, run for real: PostgreSQL and Redis as real
# servers (carried by scripts/node-bundle.sh), migrations, the API (compose's uvicorn command), the
# control worker, and the GPU side as a separate node would run it (`flashjudge worker --gpus all`:
# its own data directory, the broker URL and nothing else). bench/gpu_cluster.py drives the phases,
# all in one call of at most ~9 minutes on 2 H100s/H200s:
#
#   OUT=/tmp/out bash bench/gpu_cluster_check.sh       # overlap verdicts faults throughput
#   OUT=/tmp/out bash bench/gpu_cluster_check.sh throughput   # only some phases
#
# Env: THROUGHPUT_COUNT (judgings per throughput run, 6), FAULT_COUNT (6), CHECK_BUDGET_S (470:
# every phase's waiting ends by then), FLASHJUDGE_JUDGE_TESTS (the tests judged through the
# service: t01,t02,t05,t10,t20), GPUS_ONE / GPUS (the two throughput runs' GPUs, 0 and all; ''
# skips one, so the two can take two calls), FJ_OVERLAP_* (bench/verdict_overlap.py), FJ_NODE_FLASHJUDGE_X
# (FLASHJUDGE_X for the node only, e.g. FJ_NODE_FLASHJUDGE_VERDICT_PARALLEL=4).
# Expects: root, nvidia-smi, the CUDA toolkit, CuPy, and in the checkout .whl/, .servers/ and
# .bwrap/ (`scripts/node-bundle.sh`, `make bwrap-bundle`). The servers stay up between calls.
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS="${OUT:-/tmp/fj-cluster}"  # what comes back: the tables, NVML's answers, the logs packed
export OUT=/tmp/fj-cluster-run  # the driver's logs and JSON lines
mkdir -p "$RESULTS" "$OUT"
export FLASHJUDGE_JUDGE_TESTS="${FLASHJUDGE_JUDGE_TESTS:-t01,t02,t05,t10,t20}"
source bench/gpu_service_env.sh
source bench/node_servers.sh
export FLASHJUDGE_DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1:5432/flashjudge"
export FLASHJUDGE_BROKER_URL="redis://127.0.0.1:6379/0"
export PATH="$PWD/.bwrap:$PATH"  # setpriv for PostgreSQL's own user where the node lacks it

nvidia-smi -L | tee "$RESULTS/gpus.txt"
python3 bench/record_nvml.py > "$RESULTS/nvml_answers.json" 2>&1
redis_cli 6379 ping >/dev/null 2>&1 || start_redis 6379 || exit 1
[ -f "$SERVERS_DIR/pgdata/PG_VERSION" ] || start_postgres 5432 || exit 1

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(overlap verdicts faults throughput)
# SIGINT, not SIGTERM, at the end: the driver's `finally` stops every process it started
timeout -s INT "${CHECK_TIMEOUT_S:-500}" python3 bench/gpu_cluster.py "${phases[@]}" \
    --count "${THROUGHPUT_COUNT:-6}" --fault-count "${FAULT_COUNT:-6}" \
    --gpus-one "${GPUS_ONE-0}" --gpus "${GPUS-all}" \
    --budget-s "${CHECK_BUDGET_S:-470}" 2>&1 | tee "$RESULTS/cluster.txt"
echo "--- GPU processes at the end:"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tee -a "$RESULTS/cluster.txt"
grep -hE '"level": "(ERROR|CRITICAL)"' "$OUT"/*.log | grep -v kombu | cut -c1-400 | head -20
cp "$OUT/cluster.jsonl" "$RESULTS/" 2>/dev/null
tar czf "$RESULTS/logs.tgz" -C "$OUT" . "$SERVERS_DIR/redis.log" "$SERVERS_DIR/postgres.log" \
    2>/dev/null
ls "$RESULTS"
