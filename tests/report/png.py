"""A tiny PNG decoder (zlib + the five scanline filters), enough to judge a screenshot.

Handles what Chromium writes: 8-bit RGB or RGBA, not interlaced.  No Pillow needed.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type -> samples per pixel


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    pixels: npt.NDArray[np.uint8]  # (height, width, channels)

    def gray(self) -> npt.NDArray[np.float64]:
        rgb = self.pixels[..., :3].astype(np.float64)
        gray: npt.NDArray[np.float64] = rgb @ np.array([0.299, 0.587, 0.114])
        return gray

    def distinct_colours(self) -> int:
        flat = self.pixels[..., :3].reshape(-1, 3)
        return len(np.unique(flat, axis=0))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw: bytes, width: int, height: int, bpp: int) -> bytearray:
    stride = width * bpp
    out = bytearray(height * stride)
    prev = bytearray(stride)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((x + p) & 0xFF for x, p in zip(line, prev, strict=True))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                upleft = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(left, prev[i], upleft)) & 0xFF
        elif ftype != 0:
            raise ValueError(f"PNG row {y}: unknown filter type {ftype}")
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return out


def size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, without decoding the pixels."""
    if not data.startswith(SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def decode(data: bytes) -> Image:
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    pos = len(SIGNATURE)
    idat = bytearray()
    width = height = colour = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in CHANNELS or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    bpp = CHANNELS[colour]
    pixels = _unfilter(zlib.decompress(bytes(idat)), width, height, bpp)
    arr = np.frombuffer(bytes(pixels), dtype=np.uint8).reshape(height, width, bpp)
    return Image(width, height, arr)


def encode_rgb(width: int, height: int, rgb: bytes) -> bytes:
    """A minimal PNG writer (filter 0), for testing the decoder against known pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride : (y + 1) * stride] for y in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )
