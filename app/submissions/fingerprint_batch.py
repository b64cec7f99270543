"""New submissions' fingerprint requests gathered into one message per short window.

On a deadline night hundreds of uploads arrive within seconds; one `flashjudge.fingerprint`
message each cost the API a broker send per upload and the control worker a task and a commit
per upload, all on the two cores the uploads themselves need (bench/submission_burst.py: about
a quarter of the burst's wall time). Here an upload only notes its id; a daemon thread sends the
ids noted within WINDOW_S as one message (at most MAX_IDS ids each), which the control worker
fingerprints in one transaction (app/similarity/fingerprinting.py).

Best effort, as a single send always was: ids still waiting when the process dies, or a send
the broker refuses, only delay the TAs' similarity page, whose "fingerprint the missing ones"
button asks again (app/similarity/sources.py `request_missing`).
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
WINDOW_S = 0.25  # how long the first id of a batch waits for others
MAX_IDS = 200  # ids per message: a burst's worth, still a small message


class FingerprintBatch:
    """Ids noted by any thread, sent in batches by one daemon thread (started on first use)."""

    def __init__(self, send: Callable[[list[int]], None], window_s: float = WINDOW_S) -> None:
        self.send = send  # sends one message asking for these submissions' fingerprints
        self.window_s = window_s
        self.ids: list[int] = []
        self.lock = threading.Lock()  # guards `ids`
        self.sending = threading.Lock()  # one flush at a time: a flush returns once what was
        # noted before it is on the broker, even if the thread's own flush took it
        self.noted = threading.Event()  # set while ids wait
        self.thread: threading.Thread | None = None

    def add(self, submission_id: int) -> None:
        """Note one stored submission; it is asked for within `window_s`."""
        with self.lock:
            self.ids.append(submission_id)
            self.noted.set()
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, daemon=True,
                                               name="flashjudge-fingerprint-batch")
                self.thread.start()
                atexit.register(self.flush)

    def run(self) -> None:
        while True:
            self.noted.wait()
            threading.Event().wait(self.window_s)  # let the rest of a burst gather
            self.flush()

    def flush(self) -> int:
        """Send what is noted now (tests, and the process's exit, need not wait for the
        window); how many ids went."""
        with self.sending:
            with self.lock:
                ids, self.ids = self.ids, []
                self.noted.clear()
            self.send_all(ids)
        return len(ids)

    def send_all(self, ids: list[int]) -> None:
        for start in range(0, len(ids), MAX_IDS):
            try:
                self.send(ids[start:start + MAX_IDS])
            except Exception as exc:  # noqa: BLE001 - the submissions are stored and judged anyway
                log.warning("could not ask for fingerprints of %d submission(s): %s",
                            len(ids[start:start + MAX_IDS]), exc)
