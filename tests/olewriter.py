"""A minimal OLE compound file writer (MS-CFB version 3), enough to make Outlook .msg test files:
streams at the root only, each padded to the mini-stream cutoff so all live in regular sectors."""

from __future__ import annotations

import struct

_SECTOR = 512
_CUTOFF = 4096
_END, _FREE, _FAT, _NONE = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF


def _entry(name: str, kind: int, child: int, right: int, start: int, size: int) -> bytes:
    raw = (name + "\x00").encode("utf-16-le")
    return (raw.ljust(64, b"\x00") + struct.pack("<HBB", len(raw), kind, 1)
            + struct.pack("<III", _NONE, right, child) + bytes(16) + bytes(4) + bytes(16)
            + struct.pack("<IQ", start, size))  # fmt: skip


def write_ole(streams: dict[str, bytes]) -> bytes:
    """The bytes of a compound file holding ``streams`` (name -> data) in its root storage."""
    names = list(streams)
    datas = [streams[n].ljust(_CUTOFF, b"\x00") for n in names]
    dir_sectors = (len(names) + 1 + 3) // 4
    fat = [_FAT] + [1 + i + 1 if i + 1 < dir_sectors else _END for i in range(dir_sectors)]
    starts = []
    for data in datas:
        count = (len(data) + _SECTOR - 1) // _SECTOR
        first = len(fat)
        starts.append(first)
        fat += [first + i + 1 if i + 1 < count else _END for i in range(count)]
    assert len(fat) <= _SECTOR // 4, "one FAT sector only"
    fat += [_FREE] * (_SECTOR // 4 - len(fat))
    entries = _entry("Root Entry", 5, 1 if names else _NONE, _NONE, _END, 0)
    for i, name in enumerate(names):
        right = i + 2 if i + 1 < len(names) else _NONE
        entries += _entry(name, 2, _NONE, right, starts[i], len(datas[i]))  # padded: no mini stream
    entries = entries.ljust(dir_sectors * _SECTOR, b"\x00")
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + bytes(6) + struct.pack("<IIIIIIIII", 0, 1, 1, 0, _CUTOFF, _END, 0, _END, 0)
              + struct.pack("<I", 0) + struct.pack("<108I", *([_FREE] * 108)))  # fmt: skip
    assert len(header) == _SECTOR
    body = b"".join(d.ljust(((len(d) + _SECTOR - 1) // _SECTOR) * _SECTOR, b"\x00") for d in datas)
    return header + struct.pack(f"<{_SECTOR // 4}I", *fat) + entries + body
