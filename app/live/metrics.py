"""This process's live side for Prometheus: open streams and what its poller asked the database.

Unlike app/metrics.py these are per process (each API process has its own poller and streams):
a scrape reads the process it reached. The query counter is what makes "open streams cost the
database nothing" checkable: it grows with polls and changes, not with streams.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.live.poller import Stats


class LiveCollector(Collector):
    """Streams open in this process and its poller's counters, as read on the event loop (the
    hub belongs to the loop's thread; a scrape renders in another)."""

    def __init__(self, streams: int, stats: Stats) -> None:
        self.streams = streams
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("flashjudge_live_streams",
                                "Live event streams open in this API process.",
                                value=self.streams)
        stats = self.stats
        for name, value, text in (
                ("polls", stats.polls, "Reads of the change feed by this process's poller."),
                ("queries", stats.queries, "SQL statements this process's poller sent."),
                ("changes", stats.changes, "Change feed rows this process's poller passed on."),
                ("snapshots", stats.snapshots, "Submission states loaded for live streams."),
                ("poll_failures", stats.failures, "Polls of the change feed that failed.")):
            yield CounterMetricFamily(f"flashjudge_live_{name}", text, value=value)
