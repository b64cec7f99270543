"""Messages from inside the sandbox, stamped by the kernel at the moment they were written.

The program's time runs from the ready line (written just before its exec) to bubblewrap's
exit-code record (written once the program exited). The supervisor used to stamp each when it
*read* it. A supervisor that wakes late, as it does on a loaded host (its threads have the default
CPU weight; timed runs have the most), stamped the start late and so cut the program's time: a
test with a 1 ms limit read 0 s and passed (CI, overlapped runs on 2 busy cores), and a run the
supervisor noticed only after its exit read a negative time. So both channels are Unix
SOCK_SEQPACKET pairs with SO_TIMESTAMPNS: the kernel stamps each record when it is written, the
reader gets the stamp with the record whenever it reads, and a closed writer still reads as the
end (a datagram pair would stamp too but never says its writer is gone).
"""

from __future__ import annotations

import socket
import struct
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's number; not every Python names it
STAMP = struct.Struct("qq")  # struct timespec: seconds, nanoseconds (CLOCK_REALTIME)


def stamped_channel() -> tuple[int, int]:
    """(read end, write end) as raw fds: each record written is one read, with its stamp."""
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    reader.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return reader.detach(), writer.detach()


def receive(fd: int, limit: int = 1 << 16) -> tuple[bytes, float | None]:
    """One record and when it was written on the monotonic clock (None: the kernel gave no
    stamp, as for b"", the writer gone)."""
    with socket.socket(fileno=fd) as sock:
        try:
            data, ancillary, _, _ = sock.recvmsg(limit, socket.CMSG_SPACE(STAMP.size))
        finally:
            sock.detach()  # the fd stays the caller's
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= STAMP.size:
            seconds, nanoseconds = STAMP.unpack(payload[:STAMP.size])
            return data, seconds + nanoseconds / 1e9 - (time.time() - time.monotonic())
    return data, None
