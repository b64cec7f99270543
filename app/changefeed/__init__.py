"""The change feed: table `changes`, one row per change a live page follows, written in the
transaction of the change it names (`changes`: the topics and `note_change`; `tracking`: the
session listeners that note submission changes for every writer; `feed`: reading new rows and
pruning old ones). app/live/ reads it and pushes to open pages; writers only add to it."""
