#!/usr/bin/env python3
"""Writes the seed corpus of the safetensors fuzz target.

    python3 tests/fuzz/make_safetensors_corpus.py tests/fuzz/corpus/safetensors

The seeds are built byte by byte here (no numpy, no safetensors package), so
the same script writes the same files on every machine: running it again
must leave `git status` clean. Valid seeds cover each dtype, tensors packed
at odd offsets as the reference writer leaves them, attune's own 64-byte
aligned layout with U8 padding entries, empty tensors, metadata and escaped
names. Invalid seeds hold one broken rule each, so that a mutant is often a
small step from either side of a check.
"""

import os
import struct
import sys


def tensor_file(entries, data, metadata=None, pad_to=1, raw_header=None):
    """A safetensors file: `entries` is a list of (name, dtype, shape, begin,
    end) written in that order (so duplicates survive), `data` the data
    section; the header is padded with spaces to a multiple of `pad_to`."""
    if raw_header is None:
        parts = []
        if metadata is not None:
            items = ",".join('"%s":"%s"' % kv for kv in metadata)
            parts.append('"__metadata__":{%s}' % items)
        for name, dtype, shape, begin, end in entries:
            parts.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                         % (name, dtype, ",".join(str(d) for d in shape),
                            begin, end))
        header = "{" + ",".join(parts) + "}"
    else:
        header = raw_header
    header = header.encode("utf-8")
    header += b" " * ((-(8 + len(header))) % pad_to)
    return struct.pack("<Q", len(header)) + header + data


def packed(tensors, metadata=None):
    """Tensors back to back, as the reference writer lays them out."""
    entries, data = [], b""
    for name, dtype, shape, payload in tensors:
        entries.append((name, dtype, shape, len(data), len(data) + len(payload)))
        data += payload
    return tensor_file(entries, data, metadata)


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def seeds():
    one_of_each = [
        ("flag", "BOOL", [3], bytes([1, 0, 1])),
        ("f32", "F32", [2, 2], f32(1.0, -2.5, 3.25, 1e-40)),
        ("f16", "F16", [3], struct.pack("<3H", 0x3C00, 0x0001, 0x7C00)),
        ("bf16", "BF16", [2], struct.pack("<2H", 0x3F80, 0x7FC1)),
        ("i64", "I64", [1], struct.pack("<q", -(2 ** 40))),
        ("i32", "I32", [2], struct.pack("<2i", 7, -7)),
        ("i8", "I8", [2], struct.pack("<2b", -128, 127)),
    ]
    yield "valid_empty", tensor_file([], b"", pad_to=8)
    yield "valid_metadata_only", tensor_file([], b"", metadata=[("format", "pt")])
    yield "valid_one_f32", packed([("w", "F32", [2, 3], f32(0, 1, 2, 3, 4, 5))])
    yield "valid_each_dtype_packed", packed(one_of_each, [("format", "pt")])

    # attune's writer: data 64-byte aligned, gaps filled by U8 padding.
    entries, data = [], b""
    for i, (name, dtype, shape, payload) in enumerate(one_of_each[:4]):
        gap = (-len(data)) % 64
        if gap:
            entries.append(("__attune_padding_%d" % i, "U8", [gap], len(data),
                            len(data) + gap))
            data += b"\0" * gap
        entries.append((name, dtype, shape, len(data), len(data) + len(payload)))
        data += payload
    yield "valid_attune_aligned", tensor_file(entries, data, pad_to=64)

    yield "valid_empty_tensors", tensor_file(
        [("e0", "F32", [0], 0, 0), ("a", "F32", [1], 0, 4),
         ("e1", "I64", [2, 0], 4, 4), ("s", "F32", [], 4, 8)], f32(1, 2))
    yield "valid_escaped_names", tensor_file(
        [("x\\u002ey", "F32", [1], 0, 4), ("caf\\u00e9 \\\"q\\\"", "I8", [1], 4, 5)],
        f32(1) + b"\x05")

    yield "invalid_gap", tensor_file(
        [("a", "F32", [1], 0, 4), ("b", "F32", [1], 8, 12)], b"\0" * 12)
    yield "invalid_overlap", tensor_file(
        [("a", "F32", [8], 0, 32), ("e", "F32", [0], 16, 16),
         ("c", "F32", [1], 20, 24)], b"\0" * 32)
    yield "invalid_duplicate_name", tensor_file(
        [("x", "F32", [1], 0, 4), ("x", "F32", [1], 4, 8)], b"\0" * 8)
    yield "invalid_trailing_bytes", packed([("w", "F32", [1], f32(1))]) + b"\0"
    yield "invalid_deep_nesting", tensor_file(
        [], b"", raw_header='{"__metadata__":' + "[" * 200 + "]" * 200 + "}")
    yield "invalid_header_too_large", struct.pack("<Q", 100000001) + b"{}"
    yield "invalid_truncated", packed([("w", "F32", [4], f32(1, 2, 3, 4))])[:-3]
    yield "invalid_u8_tensor", packed([("u", "U8", [2], b"\1\2")])
    yield "invalid_shape_overflow", tensor_file(
        [("w", "F32", [4294967296, 4294967296], 0, 4)], b"\0" * 4)
    yield "invalid_unterminated_escape", struct.pack("<Q", 6) + b'{"a\\\\\\'


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_safetensors_corpus.py OUTPUT_FOLDER")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
