"""Shutting the live side down ends every open stream and the poller, and nothing waits."""

from __future__ import annotations

import asyncio

import pytest

from app.changefeed.changes import SCOREBOARD
from app.live.runtime import Live
from app.live.streams import scoreboard_events


def test_stopping_ends_every_stream_and_the_poller(settings):
    async def steps() -> None:
        live = Live(settings)
        live.start()
        stream = scoreboard_events(live.hub, live.hub.subscribe(SCOREBOARD), 0, keepalive_s=60)
        assert await anext(stream) == 'event: scoreboard\ndata: {"seq": 0}\n\n'
        waiting = asyncio.ensure_future(anext(stream))  # no change, no keepalive for a minute
        await live.stop()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiting, 10)
        assert live.hub.count() == 0 and live.poller.stats.failures == 0

    asyncio.run(steps())
