"""The in-process fan-out: a slow stream gets the newest state, never a backlog; closing ends
every stream; a stream that never started leaves nothing behind."""

from __future__ import annotations

import asyncio
import gc

import pytest

from app.live.hub import Closed, Hub


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_slow_subscriber_gets_the_newest_state_merged_not_a_backlog():
    async def scenario() -> dict | None:
        hub = Hub()
        box = hub.subscribe("submission:1")
        for n in range(1000):
            hub.publish("submission:1", {"status": "running", "passed": n})
        hub.publish("submission:1", {"queue_position": None})  # a partial update merges
        return await box.next(timeout_s=1)

    assert run(scenario()) == {"status": "running", "passed": 999, "queue_position": None}


def test_only_subscribers_of_the_topic_get_it_and_nothing_comes_back_empty():
    async def scenario() -> tuple:
        hub = Hub()
        mine, other = hub.subscribe("submission:1"), hub.subscribe("submission:2")
        count = hub.publish("submission:1", {"status": "done"})
        return count, await mine.next(1), await other.next(0.01)

    assert run(scenario()) == (1, {"status": "done"}, None)


def test_closing_the_hub_ends_every_stream_and_later_ones():
    async def scenario() -> None:
        hub = Hub()
        box = hub.subscribe("scoreboard")
        hub.close()
        with pytest.raises(Closed):
            await box.next(timeout_s=1)
        with pytest.raises(Closed):
            await hub.subscribe("scoreboard").next(timeout_s=1)

    run(scenario())


def test_subscriptions_are_counted_and_dropped_with_their_stream():
    hub = Hub()
    kept = hub.subscribe("submission:1")
    hub.subscribe("submission:2")  # its stream never started: nothing refers to it
    gc.collect()
    assert hub.count() == 1 and hub.watched("submission:") == {"submission:1"}
    assert hub.waiting("submission:") == {"submission:1"}
    hub.publish("submission:1", {"queue_position": 0})  # a partial update: still waiting
    assert hub.waiting("submission:") == {"submission:1"}
    hub.publish("submission:1", {"status": "queued", "queue_position": 0}, whole=True)
    assert hub.waiting("submission:") == set()
    hub.unsubscribe(kept)
    assert hub.count() == 0 and hub.watched() == set()


def test_a_spread_publish_lets_other_work_run_between_chunks_and_reaches_everyone():
    """500 scoreboard streams are woken 25 at a time, so a request that arrives meanwhile waits
    behind one chunk, not behind all 500."""
    async def scenario() -> tuple[int, list[int]]:
        hub = Hub()
        boxes = [hub.subscribe("scoreboard") for _ in range(500)]
        delivered: list[int] = []

        async def other_work() -> None:  # counts how many boxes were filled when it got a turn
            await asyncio.sleep(0)
            delivered.append(sum(b.next_nowait() is not None for b in boxes))

        other = asyncio.create_task(other_work())
        count = await hub.publish_spread("scoreboard", {"seq": 7}, chunk=25)
        await other
        return count, delivered

    count, delivered = run(scenario())
    assert count == 500
    assert delivered and 0 < delivered[0] < 500  # it ran while the publish was under way
