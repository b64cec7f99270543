"""The embedded broker delivers a queue's messages in the order they were sent, also when the
clock its file names come from gains a digit (16.7 minutes after boot, then 2.8 hours, ...).

kombu's own filesystem transport delivers them reversed there: a CI run on a freshly booted
machine lost a worker's "starting" announcement to an older heartbeat that came after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery
from kombu.transport import filesystem
from kombu.transport.virtual import BrokerState

from flashjudge import embedded_transport
from tests.embedded_broker import embedded_broker

ACROSS_A_DIGIT = [999.999, 1000.000]  # 999,999 ms then 1,000,000 ms since boot


@pytest.fixture(autouse=True)
def fresh_broker_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """kombu keeps the bindings it declared in one state per process, not per data dir: a
    second data dir in the same process would get no binding file, and its messages would go
    nowhere (a process of the service has one data dir)."""
    monkeypatch.setattr(filesystem.Transport, "global_state", BrokerState())


def sent_and_received(config: dict, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    stamps: Iterator[float] = iter(ACROSS_A_DIGIT)
    monkeypatch.setattr(embedded_transport, "clock", lambda: next(stamps))
    monkeypatch.setattr(filesystem, "monotonic", lambda: next(stamps))  # kombu's, for the twin
    app = Celery("order-test")
    app.conf.update(config)
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue("control")
        queue.put({"sent": 1})
        queue.put({"sent": 2})
        received = []
        for _ in ACROSS_A_DIGIT:
            message = queue.get(timeout=5)
            received.append(message.payload["sent"])
            message.ack()
        queue.close()
    return received


def test_messages_sent_across_a_digit_of_the_clock_arrive_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sent_and_received(embedded_broker(tmp_path), monkeypatch) == [1, 2]


def test_kombus_own_transport_reverses_them(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin: why the embedded broker names its own transport (when kombu pads its stamps,
    this fails and flashjudge/embedded_transport.py can go)."""
    config = {k: v for k, v in embedded_broker(tmp_path).items() if k != "broker_transport"}
    assert sent_and_received(config, monkeypatch) == [2, 1]


def test_the_service_uses_it_and_a_message_lies_whole_under_a_fixed_width_name(
        tmp_path: Path) -> None:
    app = Celery("name-test")
    app.conf.update(embedded_broker(tmp_path))
    with app.connection_for_write() as connection:
        assert connection.transport_cls == "flashjudge.embedded_transport:Transport"
        queue = connection.SimpleQueue("control")
        queue.put({"sent": 1})
        queue.close()
    names = [p.name for p in (tmp_path / "broker" / "queue").iterdir()]
    assert len(names) == 1 and re.fullmatch(r"\d{15}_[0-9a-f-]{36}\.control\.msg", names[0])
