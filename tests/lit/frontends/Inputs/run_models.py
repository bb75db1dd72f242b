#!/usr/bin/env python3
"""Compiles, runs and checks checkpoint folders for huggingface-vs-ort.mlir.

  run_models.py [--onnx | --onnx-from DIR] [--rtol R] [--atol A] WORKDIR MODELS_DIR NAME...

For each NAME: attune-compile MODELS_DIR/NAME (with --onnx, the ONNX graph
MODELS_DIR/NAME/model.onnx instead of the checkpoint folder; with --onnx-from,
DIR/NAME.onnx) fused (with a fusion report) and with --no-fuse-attention;
attune-run each library on MODELS_DIR/NAME/inputs/*.npy writing its outputs as
.npy; scripts/compare_npy.py against NAME/reference (DIR/NAME/reference with
--onnx-from), |attune - reference| <= atol + rtol |reference| (default 1e-5
and 1e-4). Prints one line per step for FileCheck and exits 1 on the first
failure, after printing the failing command's output.
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        print("FAILED (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stdout))
        sys.exit(1)
    return proc.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--onnx", action="store_true")
    parser.add_argument("--onnx-from")
    parser.add_argument("--rtol", default="1e-4")
    parser.add_argument("--atol", default="1e-5")
    parser.add_argument("work")
    parser.add_argument("models")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    work, models, names = args.work, args.models, args.names
    root = os.path.dirname(os.path.dirname(os.path.abspath(models)))
    compare = os.path.join(root, "scripts", "compare_npy.py")
    for name in names:
        folder = os.path.join(models, name)
        inputs = sorted(f for f in os.listdir(os.path.join(folder, "inputs")) if f.endswith(".npy"))
        if args.onnx_from:
            model = os.path.join(args.onnx_from, name + ".onnx")
            reference = os.path.join(args.onnx_from, name, "reference")
        else:
            model = os.path.join(folder, "model.onnx") if args.onnx else folder
            reference = os.path.join(folder, "reference")
        for variant, flags in (("fused", []), ("unfused", ["--no-fuse-attention"])):
            lib = os.path.join(work, "%s-%s.so" % (name, variant))
            report = os.path.join(work, "%s-%s.json" % (name, variant))
            run(["attune-compile", model, "-o", lib, "--fusion-report=" + report] + flags)
            line = "%s %s" % (name, variant)
            if variant == "fused":
                with open(report) as f:
                    sites = json.load(f)["sites"]
                fused = sum(1 for s in sites if s["fused"])
                line += ": %d of %d attention sites fused" % (fused, len(sites))
            print(line)
            out = os.path.join(work, "%s-%s" % (name, variant))
            run(["attune-run", lib, "--output=" + out]
                + ["--input=%s=@%s" % (f[:-4], os.path.join(folder, "inputs", f)) for f in inputs])
            print(run([sys.executable, compare, out, reference,
                       "--rtol", args.rtol, "--atol", args.atol]), end="")
    print("all models match")


if __name__ == "__main__":
    main()
