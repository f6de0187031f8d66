"""A deterministic byte encoding for named float arrays (the model state in a checkpoint).

Same arrays in, same bytes out, on every host: a JSON header (sorted names, dtypes,
shapes) followed by each array's little-endian bytes in that order.

A float64 array whose every value is a float32 exactly (bit for bit, once widened) is
stored as float32 and widened back on decode, so what is read is what was written, to
the bit. The wgpu sampler's carries are such arrays (its chains run in float32): at the
trial's 54 instruments an account their positions are about 47 KB of a 58 KB blob
(docs/bench-results/round_blobs.py), and every byte of the checkpoint is written and
synced before the orders go. Such a blob
starts with NARROWED_MAGIC, so a release from before refuses it (its worker fails at
resume and is restarted until this release runs again) rather than misread the float32
bytes; a blob with no array narrowed keeps MAGIC and the bytes it always had (the numpy
sampler's float64 carries, and every earlier checkpoint). From this release on, a marker
it does not know is refused with what to do (checkpoint_codec.checkpoint_state).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

MAGIC = b"RTA1"  # every array in its own dtype
NARROWED_MAGIC = b"RTA2"  # some float64 arrays stored as float32: header "stored": "<f4"
_F64, _F32 = np.dtype("<f8"), np.dtype("<f4")


class CodecError(ValueError):
    """The blob is not an array bundle this code wrote (corrupt or foreign)."""


def encode_arrays(arrays: Mapping[str, np.ndarray]) -> bytes:
    names = sorted(arrays)
    fixed = [  # copy=False: an array already contiguous and little-endian is not copied
        np.ascontiguousarray(arrays[n]).astype(arrays[n].dtype.newbyteorder("<"), copy=False)
        for n in names
    ]
    stored = list(map(_narrowed, fixed))
    header: list[dict[str, Any]] = []
    for name, array, kept in zip(names, fixed, stored, strict=True):
        entry: dict[str, Any] = {"name": name, "dtype": array.dtype.str, "shape": list(array.shape)}
        if kept.dtype != array.dtype:
            entry["stored"] = kept.dtype.str
        header.append(entry)
    magic = MAGIC if all(s is a for s, a in zip(stored, fixed, strict=True)) else NARROWED_MAGIC
    head = json.dumps(header, separators=(",", ":")).encode()
    return magic + struct.pack("<I", len(head)) + head + b"".join(a.tobytes() for a in stored)


def _narrowed(array: np.ndarray) -> np.ndarray:
    """`array` as float32 if it is float64 and each value widens back to its own bits;
    else `array` itself. Bits, not values, are compared: -0.0, a NaN's payload and a
    float64 subnormal must come back as they went in."""
    if array.dtype != _F64 or array.size == 0:
        return array
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        narrow = array.astype(_F32)
    same = np.array_equal(narrow.astype(_F64).view(np.uint64), array.view(np.uint64))
    return narrow if same else array


def decode_arrays(blob: bytes) -> dict[str, np.ndarray]:
    if blob[:4] not in (MAGIC, NARROWED_MAGIC):
        raise CodecError(f"model state starts with {blob[:4]!r}, not a marker this release "
                         f"reads ({MAGIC!r} or {NARROWED_MAGIC!r})")
    (size,) = struct.unpack("<I", blob[4:8])
    try:
        header = json.loads(blob[8 : 8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CodecError(f"model state header unreadable: {error}") from None
    offset, out = 8 + size, {}
    for entry in header:
        dtype = np.dtype(entry["dtype"])
        kept = np.dtype(entry.get("stored", dtype))
        count = int(np.prod(entry["shape"], dtype=np.int64))
        end = offset + count * kept.itemsize
        if end > len(blob):
            raise CodecError(f"model state truncated inside array {entry['name']!r}")
        values = np.frombuffer(blob[offset:end], dtype=kept).reshape(entry["shape"])
        out[entry["name"]] = values.astype(dtype)  # a copy, widened where it was narrowed
        offset = end
    return out
