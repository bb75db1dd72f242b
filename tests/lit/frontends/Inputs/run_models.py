#!/usr/bin/env python3
"""Compiles, runs and checks checkpoint folders for huggingface-vs-ort.mlir.

  run_models.py [--onnx] WORKDIR MODELS_DIR NAME...

For each NAME: attune-compile MODELS_DIR/NAME (with --onnx, the ONNX graph
MODELS_DIR/NAME/model.onnx instead of the checkpoint folder) fused (with a fusion report)
and with --no-fuse-attention; attune-run each library on NAME/inputs/*.npy
writing its outputs as .npy; scripts/compare_npy.py against NAME/reference.
Prints one line per step for FileCheck and exits 1 on the first failure,
after printing the failing command's output.
"""
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
    args = sys.argv[1:]
    onnx = args[:1] == ["--onnx"]
    if onnx:
        args = args[1:]
    work, models, names = args[0], args[1], args[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(models)))
    compare = os.path.join(root, "scripts", "compare_npy.py")
    for name in names:
        folder = os.path.join(models, name)
        inputs = sorted(f for f in os.listdir(os.path.join(folder, "inputs")) if f.endswith(".npy"))
        for variant, flags in (("fused", []), ("unfused", ["--no-fuse-attention"])):
            lib = os.path.join(work, "%s-%s.so" % (name, variant))
            report = os.path.join(work, "%s-%s.json" % (name, variant))
            model = os.path.join(folder, "model.onnx") if onnx else folder
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
            print(run([sys.executable, compare, out, os.path.join(folder, "reference"),
                       "--rtol", "1e-4", "--atol", "1e-5"]), end="")
    print("all models match")


if __name__ == "__main__":
    main()
