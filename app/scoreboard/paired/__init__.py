"""The final standing: neighbours whose time bands overlap are run interleaved on one
GPU until their order is significant or their budget is spent; the board then says which.

`pairs` finds them on a board (pure), `store` is the only writer of their rows (`PairedRun`),
`service` asks for them (at a freeze, on the TA's button) and `progress` is what the TA page
and the board show. `store.settled` is the seam the board's tie marking reads.
"""
