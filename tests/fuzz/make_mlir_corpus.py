#!/usr/bin/env python3
"""Writes the seed corpus of the mlir fuzz target.

    python3 tests/fuzz/make_mlir_corpus.py tests/fuzz/corpus/mlir

The seeds are copied from the repository's own IR: every example model of
examples/ that is not a near copy of another (the d128 variants are left
out), and cases of the lit tests that cover what the examples do not (each
op's syntax, the matcher's negative cases, encodings the raise pass
rewrites, packed weights and layouts, invalid IR the verifier rejects).
Lit files are split at `// -----` as `-split-input-file` splits them, and a
file of many functions without splits (dialect/ops.mlir) at top-level
functions into pieces of about 8 KB; comment lines (RUN, CHECK,
expected-error and prose) are dropped, since a mutant of a comment tests
nothing. Chunks are taken at a fixed stride, so running the script again
leaves `git status` clean; files the script did not write are removed
first, except the regress-* inputs that fixed bugs left behind.
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Example models, whole (comments dropped).
EXAMPLES = [
    "examples/alibi-decoder/block.mlir",
    "examples/attention/attention_alibi.mlir",
    "examples/attention/attention_alibi_exported.mlir",
    "examples/attention/attention_causal.mlir",
    "examples/attention/attention_deberta.mlir",
    "examples/attention/attention_deberta_exported.mlir",
    "examples/attention/attention_decode.mlir",
    "examples/attention/attention_full.mlir",
    "examples/attention/attention_padding.mlir",
    "examples/attention/attention_rope.mlir",
    "examples/attention/attention_rope_exported.mlir",
    "examples/attention/attention_shaw.mlir",
    "examples/attention/attention_t5.mlir",
    "examples/attention/attention_window.mlir",
    "examples/attention/attention_xl.mlir",
    "examples/bert-encoder/block.mlir",
    "examples/gpt2-block/block.mlir",
    "examples/llama-decoder/block.mlir",
    "examples/t5-encoder/block.mlir",
]

# Lit files and how many of their chunks to take (evenly spread).
LIT = [
    ("tests/lit/dialect/ops.mlir", 4),
    ("tests/lit/dialect/invalid.mlir", 5),
    ("tests/lit/dialect/canonicalize.mlir", 2),
    ("tests/lit/modifiers/ops.mlir", 2),
    ("tests/lit/modifiers/invalid.mlir", 2),
    ("tests/lit/passes/fuse-attention.mlir", 8),
    ("tests/lit/passes/raise-encodings.mlir", 4),
    ("tests/lit/passes/raise-t5.mlir", 1),
    ("tests/lit/passes/decompose-attention.mlir", 2),
    ("tests/lit/passes/roundtrip.mlir", 2),
    ("tests/lit/passes/pack-weights.mlir", 2),
    ("tests/lit/passes/propagate-layouts.mlir", 2),
    ("tests/lit/passes/fuse-epilogues.mlir", 2),
]


def strip_comments(text):
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("//")]
    # No blank runs left where comment blocks were.
    out, blank = [], False
    for line in lines:
        if not line.strip():
            if blank or not out:
                continue
            blank = True
        else:
            blank = False
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def chunks(text):
    parts = re.split(r"^// -----\s*$", text, flags=re.M)
    if len(parts) > 1:
        return parts
    # One module of many functions: pieces of whole top-level functions.
    funcs = re.split(r"(?=^func\.func)", text, flags=re.M)
    pieces, current = [], ""
    for f in funcs:
        if current and len(current) + len(f) > 8000:
            pieces.append(current)
            current = ""
        current += f
    if current:
        pieces.append(current)
    return pieces


def pick(items, count):
    if count >= len(items):
        return list(range(len(items)))
    return [i * len(items) // count for i in range(count)]


def main(out):
    os.makedirs(out, exist_ok=True)
    written = {}
    for path in EXAMPLES:
        # attention_rope.mlir keeps its name; a block takes its folder's.
        name = os.path.basename(path)
        if name == "block.mlir":
            name = path.split("/")[-2] + ".mlir"
        with open(os.path.join(ROOT, path)) as f:
            written[name] = strip_comments(f.read())
    for path, count in LIT:
        with open(os.path.join(ROOT, path)) as f:
            parts = [strip_comments(p) for p in chunks(f.read())]
        parts = [p for p in parts if p.strip()]
        stem = "lit-" + path.split("/")[-2] + "-" + os.path.basename(path)[:-5]
        for i in pick(parts, count):
            written["%s-%02d.mlir" % (stem, i)] = parts[i]
    for name in os.listdir(out):
        if name not in written and not name.startswith("regress-"):
            os.remove(os.path.join(out, name))
    for name, text in sorted(written.items()):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    total = sum(len(t) for t in written.values())
    print("%d files, %d bytes" % (len(written), total))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
