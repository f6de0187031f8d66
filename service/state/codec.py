"""A deterministic byte encoding for named float arrays (the model state in a checkpoint).

Same arrays in, same bytes out, on every host: a JSON header (sorted names, dtypes,
shapes) followed by each array's little-endian bytes in that order.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping

import numpy as np

MAGIC = b"RTA1"


class CodecError(ValueError):
    """The blob is not an array bundle this code wrote (corrupt or foreign)."""


def encode_arrays(arrays: Mapping[str, np.ndarray]) -> bytes:
    names = sorted(arrays)
    fixed = [  # copy=False: an array already contiguous and little-endian is not copied
        np.ascontiguousarray(arrays[n]).astype(arrays[n].dtype.newbyteorder("<"), copy=False)
        for n in names
    ]
    header = [
        {"name": n, "dtype": a.dtype.str, "shape": list(a.shape)}
        for n, a in zip(names, fixed, strict=True)
    ]
    head = json.dumps(header, separators=(",", ":")).encode()
    return MAGIC + struct.pack("<I", len(head)) + head + b"".join(a.tobytes() for a in fixed)


def decode_arrays(blob: bytes) -> dict[str, np.ndarray]:
    if blob[:4] != MAGIC:
        raise CodecError("model state does not start with the expected marker")
    (size,) = struct.unpack("<I", blob[4:8])
    try:
        header = json.loads(blob[8 : 8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CodecError(f"model state header unreadable: {error}") from None
    offset, out = 8 + size, {}
    for entry in header:
        dtype = np.dtype(entry["dtype"])
        count = int(np.prod(entry["shape"], dtype=np.int64))
        end = offset + count * dtype.itemsize
        if end > len(blob):
            raise CodecError(f"model state truncated inside array {entry['name']!r}")
        out[entry["name"]] = (
            np.frombuffer(blob[offset:end], dtype=dtype).reshape(entry["shape"]).copy()
        )
        offset = end
    return out
