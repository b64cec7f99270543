#!/usr/bin/env bash
# Per-GPU-model limits through the real service on a GPU node: `flashjudge serve --suite hw4`
# judges a cuda-program and a cuda-kernel; then prints, from the API, the GPU model each result
# names, the limits it was judged under (the suite's `[gpu_limits]`: a model it does not list gets
# the `unlisted` model's), the refined times with their bands once the low-priority refinement has
# come back, and the scoreboard's model tabs.
#
#   OUT=/tmp/out bash bench/gpu_model_check.sh
#
# Expects what bench/gpu_service_check.sh expects (root, the CUDA toolkit, CuPy, .bwrap/, .whl/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fj-model-check}"
mkdir -p "$OUT"
export FLASHJUDGE_DATA_DIR="${FLASHJUDGE_DATA_DIR:-/tmp/fj-model}"
export FLASHJUDGE_JUDGE_TESTS="${FLASHJUDGE_JUDGE_TESTS:-t01,t05,t11,t20}"
source bench/gpu_service_env.sh

"${FJ[@]}" users add alice --password 'a long passphrase' --role student > /dev/null
"${FJ[@]}" users add tara --password 'a long passphrase' --role ta > /dev/null
STUDENT=$("${FJ[@]}" users token alice)
TA=$("${FJ[@]}" users token tara)
"${FJ[@]}" serve --port 8000 --suite hw4 > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
for _ in $(seq 90); do curl -sf -o /dev/null "$URL/login" && break; sleep 1; done

timeout 300 "${FJ[@]}" submit tests/hostile/cuda-correct/hw4.cu --server "$URL" --token "$STUDENT"
timeout 300 "${FJ[@]}" submit tests/hostile/forgers/memory-timings-twin/solve.cu \
  --language cuda-kernel --server "$URL" --token "$STUDENT"

python3 - "$URL" "$TA" <<'EOF'
"""Wait for both refinements, then print what a TA and a student see of the GPU model."""
import sys, time
import httpx
url, token = sys.argv[1], sys.argv[2]
client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
for sub_id in (1, 2):
    for _ in range(120):  # the refinement is on the low-priority queue: up to two minutes
        body = client.get(f"/api/submissions/{sub_id}").json()
        if (body.get("timing") or {}).get("total_band_s") is not None:
            break
        time.sleep(1)
    print(f"submission {sub_id} ({body['language']}): {body['verdict']}, judged on "
          f"{body['gpu_model']!r}; refined total {body['time']}, band "
          f"{(body.get('timing') or {}).get('total_band_s')}")
    for t in body["tests"]:
        print(f"  {t['id']} {t['verdict']} {t['seconds']} s, limit {t.get('time_limit')} s")
board = client.get("/api/scoreboard", params={"live": 1}).json()
print("scoreboard models:", board["gpu_models"])
for model in board["gpu_models"]:
    rows = client.get("/api/scoreboard", params={"live": 1, "gpu_model": model}).json()["rows"]
    print(f"  {model}: {[(r['user'], r['time'], r['band_s']) for r in rows]}")
    for r in rows:
        print("   ", {t: (c["seconds"], c.get("band_s")) for t, c in r["tests"].items()})
page = client.get("/scoreboard").text
if len(board["gpu_models"]) > 1:  # one model: one board, no tabs
    print("the page has a tab per model:", all(m in page for m in board["gpu_models"]))
EOF
echo "=== errors in the service log"
grep -nE "Traceback|ERROR" "$OUT/serve.log" | grep -v kombu | head -20
