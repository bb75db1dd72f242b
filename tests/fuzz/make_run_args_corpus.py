#!/usr/bin/env python3
"""Writes the seed corpus of the run_args fuzz target.

    python3 tests/fuzz/make_run_args_corpus.py tests/fuzz/corpus/run_args

Each seed is an attune-run command line, one argument a line, followed by
the files it names, each as "\\n@@file@@\\n<name>\\n<bytes>" (the format
RunArgsFuzzer.cpp reads). The .npy files are built byte by byte here, as
NumPy 1.x writes them (format 1.0, the header padded with spaces so that the
data starts at a multiple of 64 bytes), with no third-party package, so
running the script again leaves `git status` clean. The names are those of
the target's fixed model: inputs ids (i64 [batch, seq]), mask (bool [batch,
seq]), x (f32 [batch, seq, 4]), h (f16 [?, 3]), w (bf16 [2, kv], read from
f32), pos (i32 [seq]) and q (i8, rank 0). valid_* fill every input; each
invalid_* breaks one rule attune-run checks.
"""

import os
import struct
import sys


def npy(descr, shape, data, version=1, fortran=False, raw_header=None):
    if raw_header is None:
        dims = ", ".join(str(d) for d in shape)
        if len(shape) == 1:
            dims += ","
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
            descr, "True" if fortran else "False", dims)
    else:
        header = raw_header
    length_size = 2 if version == 1 else 4
    pre = 6 + 2 + length_size
    header += " " * ((-(pre + len(header) + 1)) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def f32(shape, scale=0.25):
    return struct.pack("<%df" % count(shape),
                       *[(i % 7 - 3) * scale for i in range(count(shape))])


def f16(shape):
    # 0.5 * (i % 5): f16 bits of 0, 0.5, 1, 1.5, 2.
    bits = [0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000]
    return struct.pack("<%dH" % count(shape),
                       *[bits[i % 5] for i in range(count(shape))])


def i64(shape, bound=1000):
    return struct.pack("<%dq" % count(shape),
                       *[(i * 37) % bound for i in range(count(shape))])


def i32(shape):
    return struct.pack("<%di" % count(shape), *range(count(shape)))


def boolean(shape):
    return bytes([1 if i % 4 else 0 for i in range(count(shape))])


def seed(args, files=()):
    out = "".join(a + "\n" for a in args).encode()
    for name, data in files:
        out += b"\n@@file@@\n" + name.encode() + b"\n" + data
    return out


SEEDS = {
    "valid_random": seed(["libblock.so", "--random-inputs"]),
    "valid_random_dims": seed(
        ["libblock.so", "--random-inputs", "--dim", "seq=7", "--dim",
         "batch=2", "--dim", "kv=5", "--check-reference", "--bench", "20"]),
    "valid_ids_mask": seed(
        ["libbert.so", "--input", "ids=@ids.npy", "--input", "mask=@mask.npy",
         "--random-inputs"],
        [("ids.npy", npy("<i8", (2, 7), i64((2, 7)))),
         ("mask.npy", npy("|b1", (2, 7), boolean((2, 7))))]),
    "valid_every_file": seed(
        ["libblock.so", "--dim=seq=7", "--input=x=@x.npy", "--input=h=@h.npy",
         "--input=w=@w.npy", "--input", "q=@q.npy", "--random-inputs",
         "--dim", "batch=2", "--output", "out/"],
        [("x.npy", npy("<f4", (2, 7, 4), f32((2, 7, 4)))),
         ("h.npy", npy("<f2", (5, 3), f16((5, 3)))),
         ("w.npy", npy("<f4", (2, 5), f32((2, 5), 1e-3))),
         ("q.npy", npy("|i1", (), b"\xfd"))]),
    "valid_rank0_v2": seed(
        ["lib.so", "--input", "q=@q.npy", "--input", "ids=@ids.npy",
         "--random-inputs"],
        [("q.npy", npy("|i1", (), b"\x05", version=2)),
         ("ids.npy", npy("<i8", (1, 3), i64((1, 3)), version=3))]),
    "valid_empty_dim": seed(
        ["lib.so", "--dim", "seq=0", "--dim", "batch=0", "--random-inputs",
         "--input", "pos=pos.bin"],
        [("pos.bin", b"")]),
    "invalid_dim_conflict": seed(
        ["lib.so", "--dim", "seq=3", "--input", "ids=@ids.npy",
         "--random-inputs"],
        [("ids.npy", npy("<i8", (2, 7), i64((2, 7))))]),
    "invalid_dim_twice": seed(
        ["lib.so", "--dim", "seq=3", "--dim", "seq=4", "--random-inputs"]),
    "invalid_dim_value": seed(["lib.so", "--dim", "seq=-1", "--random-inputs"]),
    "invalid_files_disagree": seed(
        ["lib.so", "--input", "ids=@ids.npy", "--input", "mask=@mask.npy",
         "--random-inputs"],
        [("ids.npy", npy("<i8", (2, 7), i64((2, 7)))),
         ("mask.npy", npy("|b1", (2, 6), boolean((2, 6))))]),
    "invalid_dtype": seed(
        ["lib.so", "--input", "ids=@ids.npy", "--random-inputs"],
        [("ids.npy", npy("<f8", (2, 7), b"\0" * 112))]),
    "invalid_bf16_from_f16": seed(
        ["lib.so", "--input", "w=@w.npy", "--random-inputs"],
        [("w.npy", npy("<f2", (2, 5), f16((2, 5))))]),
    "invalid_rank": seed(
        ["lib.so", "--input", "x=@x.npy", "--random-inputs"],
        [("x.npy", npy("<f4", (2, 7), f32((2, 7))))]),
    "invalid_static_dim": seed(
        ["lib.so", "--input", "x=@x.npy", "--random-inputs"],
        [("x.npy", npy("<f4", (2, 7, 5), f32((2, 7, 5))))]),
    "invalid_unknown_names": seed(
        ["lib.so", "--input", "nope=@a.npy", "--dim", "heads=4",
         "--random-inputs"]),
    "invalid_input_twice": seed(
        ["lib.so", "--input", "ids=@a.npy", "--input", "ids=b.bin"]),
    "invalid_input_spec": seed(["lib.so", "--input", "ids=@", "--input", "=x"]),
    "invalid_no_data": seed(["lib.so", "--input", "ids=@ids.npy"],
                            [("ids.npy", npy("<i8", (2, 7), i64((2, 7))))]),
    "invalid_raw_size": seed(
        ["lib.so", "--input", "pos=pos.npy", "--random-inputs"],
        [("pos.npy", npy("<i4", (8,), i32((8,))))]),
    "invalid_truncated": seed(
        ["lib.so", "--input", "x=@x.npy", "--random-inputs"],
        [("x.npy", npy("<f4", (2, 7, 4), f32((2, 7, 4)))[:-5])]),
    "invalid_fortran": seed(
        ["lib.so", "--input", "h=@h.npy", "--random-inputs"],
        [("h.npy", npy("<f2", (5, 3), f16((5, 3)), fortran=True))]),
    "invalid_big_endian": seed(
        ["lib.so", "--input", "x=@x.npy", "--random-inputs"],
        [("x.npy", npy(">f4", (2, 7, 4), f32((2, 7, 4))))]),
    "invalid_bool_value": seed(
        ["lib.so", "--input", "mask=@mask.npy", "--random-inputs"],
        [("mask.npy", npy("|b1", (1, 3), b"\x01\x02\x00"))]),
    "invalid_huge_dim": seed(
        ["lib.so", "--dim", "seq=4611686018427387904", "--random-inputs"]),
    "invalid_header_text": seed(
        ["lib.so", "--input", "ids=@ids.npy", "--random-inputs"],
        [("ids.npy", npy("<i8", (2, 7), i64((2, 7)),
                         raw_header="{'descr': '<i8', 'shape': (2, 7)}"))]),
    "invalid_missing_file": seed(
        ["lib.so", "--input", "ids=@ids.npy", "--random-inputs"]),
}


def main(out):
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name not in SEEDS and not name.startswith("regress-"):
            os.remove(os.path.join(out, name))
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d files, %d bytes" % (len(SEEDS), sum(len(d) for d in SEEDS.values())))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
