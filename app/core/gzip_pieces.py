"""Gzip bodies put together from pieces compressed one at a time.

A board is served often and changes a few rows at a time, and each viewer's copy of the table
differs in one row (their own, marked). Compressing each piece (a row) on its own, ended with a
full flush so that it starts and ends on a byte boundary with no history before it, lets a body
be a concatenation of such pieces: unchanged rows keep their compressed bytes from one version to
the next, and a viewer's copy swaps one piece. The gzip member around them needs the CRC-32 and
length of the whole uncompressed body (`zlib.crc32` continues a running value, so a copy that
differs in one piece reuses the CRC of everything before it). This is how pigz compresses in
parallel; every gzip decoder reads it as one ordinary member.
"""

from __future__ import annotations

import struct
import zlib

LEVEL = 6  # zlib's default: rows are compressed once and served many times
WINDOW_BITS = -13  # raw deflate, an 8 KB window: a piece is a row of a few KB, and a smaller
MEM_LEVEL = 6  # state halves the cost of setting a compressor up (28 us instead of 62 per row)
HEADER = bytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])  # deflate, no name, no time, OS unknown
LAST = b"\x03\x00"  # an empty final block: what ends the deflate stream after the pieces


def piece(data: bytes) -> bytes:
    """`data` as raw deflate blocks that any other piece may follow (byte-aligned, not final)."""
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, WINDOW_BITS, MEM_LEVEL)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


def member(pieces: bytes, crc: int, size: int) -> bytes:
    """The gzip file of concatenated `pieces` whose uncompressed bytes have this CRC-32 and
    length."""
    return HEADER + pieces + LAST + struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)


def gzip_whole(data: bytes) -> bytes:
    """A body compressed in one go (zlib releases the GIL while it works)."""
    return member(piece(data), zlib.crc32(data), len(data))


class Assembly:
    """Bytes and their gzip pieces laid end to end, noting where each part lies."""

    def __init__(self) -> None:
        self.texts: list[bytes] = []
        self.zipped: list[bytes] = []
        self.size = 0  # bytes so far
        self.zsize = 0  # compressed bytes so far
        self.crc = 0  # CRC-32 of the bytes so far

    def add(self, text: bytes, zipped: bytes) -> tuple[int, int, int, int, int]:
        """Append one part; (start, end, zstart, zend, CRC-32 of what came before)."""
        where = (self.size, self.size + len(text), self.zsize, self.zsize + len(zipped),
                 self.crc)
        self.texts.append(text)
        self.zipped.append(zipped)
        self.size, self.zsize = where[1], where[3]
        self.crc = zlib.crc32(text, self.crc)
        return where

    def body(self) -> bytes:
        return b"".join(self.texts)

    def pieces(self) -> bytes:
        return b"".join(self.zipped)
