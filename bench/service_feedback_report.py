"""Print what the service recorded of the feedback for some submissions, then ask for one
ncu profile and print its summary (used by bench/gpu_service_check.sh on a GPU machine).

    python3 bench/service_feedback_report.py URL TA_TOKEN OUT_DIR SUB_ID... [--profile SUB:TEST]

Waits for pending diagnoses (up to 5 minutes each), keeps the submissions' JSON and pages in
OUT_DIR (submissions.json, page-N.html) and prints verdicts, roofline rows, flags and findings.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


def call(url: str, token: str, method: str = "GET", form: dict[str, str] | None = None,
         accept: str = "application/json") -> bytes:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": accept})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def wait_for(fetch: Any, done: Any, limit_s: float) -> Any:
    deadline = time.monotonic() + limit_s
    body = fetch()
    while not done(body) and time.monotonic() < deadline:
        time.sleep(3)
        body = fetch()
    return body


def show_roofline(body: dict[str, Any]) -> None:
    feedback = body.get("feedback") or {}
    gpu = feedback.get("gpu") or {}
    if gpu:
        print(f"  GPU {gpu['name']}: FP32 {gpu['peak_tflops']} TFLOP/s, tensor "
              f"{gpu['tensor_peak_tflops']} TFLOP/s, {gpu['bandwidth_gbs']} GB/s, "
              f"CUDA start {gpu['cuda_start_s']} s")
    verdicts = {t["id"]: t["verdict"] for t in body["tests"]}
    print(f"  {'test':<5}{'verdict':>8}{'seconds':>10}{'GFLOP':>9}{'min MB':>9}{'TFLOP/s':>9}"
          f"{'floor ms':>10}{'bound':>8}{'ref ms':>9}{'speedup':>11}{'start':>7}")
    for r in feedback.get("roofline") or []:
        share = f"{r['start_share']:.0%}" if r.get("start_share") is not None else ""
        ref = f"{r['reference_s'] * 1e3:.3f}" if r.get("reference_s") is not None else ""
        speed = f"{r['speedup']:.3g}x" if r.get("speedup") is not None else ""
        print(f"  {r['test_id']:<5}{verdicts.get(r['test_id'], ''):>8}{r['seconds']:>10.4f}"
              f"{r['flops'] / 1e9:>9.2f}{r['min_bytes'] / 1e6:>9.1f}"
              f"{r['achieved_tflops']:>9.3f}{r['floor_s'] * 1e3:>10.3f}{r['bound']:>8}"
              f"{ref:>9}{speed:>11}{share:>7}")
    print(f"  flag status {body.get('flag_status')!r}, flags {body.get('flags')}")


def show_diagnosis(body: dict[str, Any]) -> None:
    diagnosis = body.get("diagnosis")
    print(f"  diagnosis status {body.get('diagnosis_status')!r}")
    if not diagnosis:
        return
    print(f"  message: {diagnosis.get('message')}  ({diagnosis.get('seconds', 0):.1f} s)")
    if diagnosis.get("error"):
        print(f"  error: {diagnosis['error']}")
    for report in diagnosis.get("reports") or []:
        print(f"  {report['tool']}: {report['total']} errors ({report['summary']}); run: "
              f"{report.get('run')}")
        for f in report["findings"][:5]:
            print(f"    {f['kind']} at {f['where']} thread {f['thread']} block {f['block']} "
                  f"{f['details']}")


def report_submission(base: str, token: str, out: Path, sub_id: str) -> dict[str, Any]:
    url = f"{base}/api/submissions/{sub_id}"
    body = wait_for(lambda: json.loads(call(url, token)),
                    lambda b: b["status"] == "done" and b["diagnosis_status"] != "pending", 300)
    page = call(f"{base}/submissions/{sub_id}", token, accept="text/html").decode()
    (out / f"page-{sub_id}.html").write_text(page)
    print(f"=== submission {sub_id}: {body['language']} {body['verdict']} passed {body['passed']}"
          f" score {body['score']} time {body['time']} (page: {page.count('<svg')} SVGs, "
          f"{'Traceback' in page and 'TRACEBACK IN PAGE' or 'no traceback'})")
    show_roofline(body)
    show_diagnosis(body)
    return body


def profile(base: str, token: str, out: Path, sub_id: str, test_id: str) -> None:
    asked = json.loads(call(f"{base}/api/submissions/{sub_id}/profiles", token, "POST",
                            {"test_id": test_id}))
    print(f"=== profile {asked['id']} of submission {sub_id} on {test_id}: {asked['status']}")
    url = f"{base}/api/submissions/{sub_id}/profiles"
    listed = wait_for(lambda: json.loads(call(url, token)),
                      lambda rows: rows[0]["status"] == "done", 420)
    row = listed[0]
    (out / "profile.json").write_text(json.dumps(row, indent=1))
    print(f"  status {row['status']} error {row['error']!r} seconds {row['seconds']}")
    main = row.get("main") or {}
    for key in ("name", "duration_s", "achieved_occupancy_pct", "memory_throughput_pct",
                "sm_throughput_pct", "dram_throughput_pct", "stalls"):
        print(f"  {key}: {main.get(key)}")
    print(f"  launches profiled: {len(row.get('kernels') or [])}")
    if row.get("report_url"):
        size = len(call(base + row["report_url"], token, accept="*/*"))
        print(f"  .ncu-rep downloaded: {size} bytes")


def main(argv: list[str]) -> int:
    base, token, out = argv[0], argv[1], Path(argv[2])
    rest = argv[3:]
    wanted = rest[rest.index("--profile") + 1] if "--profile" in rest else None
    subs = [a for a in rest if a != "--profile" and a != wanted]
    bodies = {sub_id: report_submission(base, token, out, sub_id) for sub_id in subs}
    (out / "submissions.json").write_text(json.dumps(bodies, indent=1))
    if wanted:
        profile(base, token, out, *wanted.split(":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
