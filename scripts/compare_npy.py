#!/usr/bin/env python3
"""Compares every .npy in one folder with the same-named .npy in another.

  scripts/compare_npy.py DIR_A DIR_B [--rtol R] [--atol A]

For each DIR_A/NAME.npy (not recursive) it loads DIR_B/NAME.npy and prints the shapes' agreement,
the max absolute error and the max relative error (|a - b| / |b|, over elements where b != 0).
A file passes when the shapes and dtypes' kinds match and |a - b| <= atol + rtol * |b| everywhere
(numpy.allclose, with NaNs equal only to NaNs and infinities only to themselves). Exits 1 if any file fails or is missing from
DIR_B, 0 otherwise; DIR_B's extra files are listed but do not fail. Needs numpy only.

Typical use: DIR_A holds what attune (or anything else) produced for tests/models/<name>/inputs,
DIR_B is tests/models/<name>/reference.
"""
import argparse
import os
import sys

import numpy as np


def compare(a, b, rtol, atol):
    """Returns (ok, message) for two arrays."""
    if a.shape != b.shape:
        return False, "shape %s vs %s" % (list(a.shape), list(b.shape))
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        diff = int(np.count_nonzero(a != b))
        return diff == 0, "%s, %d of %d elements differ" % (a.dtype, diff, a.size)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf, handled below
        err = np.abs(a64 - b64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    err[both_nan] = 0.0
    err[a64 == b64] = 0.0  # equal infinities (masked scores) agree; inf - inf is NaN
    nonzero = b64 != 0
    max_abs = float(np.nanmax(err)) if err.size else 0.0
    max_rel = float(np.nanmax(err[nonzero] / np.abs(b64[nonzero]))) if nonzero.any() else 0.0
    ok = bool(np.allclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True)) and not np.isnan(err).any()
    worst = ""
    if err.size and max_abs > 0:
        i = np.unravel_index(int(np.nanargmax(err)), err.shape)
        worst = " at %s (%.6g vs %.6g)" % (list(map(int, i)), a64[i], b64[i])
    return ok, "max abs %.3e  max rel %.3e%s" % (max_abs, max_rel, worst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir_a")
    ap.add_argument("dir_b")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()

    names = sorted(f for f in os.listdir(args.dir_a) if f.endswith(".npy"))
    if not names:
        print("no .npy files in %s" % args.dir_a)
        return 1
    failed = 0
    for name in names:
        path_b = os.path.join(args.dir_b, name)
        if not os.path.exists(path_b):
            print("%-28s MISSING in %s" % (name, args.dir_b))
            failed += 1
            continue
        ok, msg = compare(np.load(os.path.join(args.dir_a, name)), np.load(path_b),
                          args.rtol, args.atol)
        print("%-28s %-4s %s" % (name, "ok" if ok else "FAIL", msg))
        failed += not ok
    extra = sorted(set(f for f in os.listdir(args.dir_b) if f.endswith(".npy")) - set(names))
    for name in extra:
        print("%-28s only in %s" % (name, args.dir_b))
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
