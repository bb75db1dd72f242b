#!/usr/bin/env python3
"""attune's attention against ONNX Runtime on the same shapes, in one run.

  scripts/compare_ort.py                 # S in {512, 2048}, D=64, non-causal, T in {1, 2}
  scripts/compare_ort.py --full          # the issue's grid: S in {512, 2048, 4096},
                                         # D in {64, 128}, causal 0/1, T in {1, 2}
  ATTUNE_CPU=avx2 scripts/compare_ort.py # attune's AVX2 variant (ORT picks its own)

Makes a venv in build/ort-venv (onnxruntime, onnx, numpy) on first use and
re-runs itself there. Then:
 1. runs build/bin/attention_benchmark (fused and unfused libraries, which check
    their own results before timing) on the grid, JSON out;
 2. checks, on the smallest shape of the grid, ORT's graphs and attune's fused
    library (through the runtime's C API) against a float64 numpy attention;
 3. times two ORT graphs per shape, MatMul->Softmax->MatMul with the 1/sqrt(D)
    scale and com.microsoft.MultiHeadAttention (causal: an additive mask), with
    intra_op_num_threads=T, inter_op_num_threads=1, sequential execution, in
    bursts after attune's process has exited, so no engine's spinning workers
    steal the other's cores;
 4. prints one table. GFLOP/s count useful work, 4*B*H*S^2*D flops (half when
    causal), B=1, H=12, fp32; ORT's figure is the better of its two graphs.
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("ATTUNE_BUILD_DIR", os.path.join(ROOT, "build"))
VENV = os.path.join(BUILD, "ort-venv")
PACKAGES = ["onnxruntime", "onnx", "numpy"]
HEADS = 12
NAME = re.compile(r"BM_Attention/(fused|unfused)/S:(\d+)/D:(\d+)/causal:(\d)/T:(\d+)")
# attune and ORT are each checked against float64 attention on N(0, 1) inputs:
# |got - want| <= TOL * (|want| + 1), as in attention_benchmark.
TOL = 1e-4


def ensure_venv():
    """Re-executes this script inside build/ort-venv, creating it if needed."""
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(python):
        if subprocess.call([sys.executable, "-c", "import ensurepip, venv"],
                           stderr=subprocess.DEVNULL) != 0:
            # Debian splits venv/ensurepip into python3-venv.
            sudo = [] if os.geteuid() == 0 else ["sudo"]
            subprocess.check_call(sudo + ["apt-get", "install", "-y", "python3-venv"])
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    if subprocess.call([python, "-c", "import onnxruntime, onnx, numpy"],
                       stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([python, "-m", "pip", "install", "-q"] + PACKAGES)
    os.execv(python, [python] + sys.argv)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="the issue's full grid")
    p.add_argument("--seq", type=int, nargs="+", help="sequence lengths")
    p.add_argument("--dims", type=int, nargs="+", help="head dims (64, 128)")
    p.add_argument("--causal", type=int, nargs="+", choices=[0, 1])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per burst")
    p.add_argument("--repetitions", type=int, default=3, help="bursts / repetitions")
    p.add_argument("--bench", default=os.path.join(BUILD, "bin", "attention_benchmark"))
    p.add_argument("--json", help="keep attention_benchmark's JSON here")
    a = p.parse_args()
    a.seq = a.seq or ([512, 2048, 4096] if a.full else [512, 2048])
    a.dims = a.dims or ([64, 128] if a.full else [64])
    a.causal = a.causal if a.causal is not None else ([0, 1] if a.full else [0])
    return a


def flops(s, d, causal):
    f = 4.0 * HEADS * s * s * d
    return f / 2 if causal else f


def run_attune(a, out_json):
    alt = lambda xs: "(" + "|".join(str(x) for x in xs) + ")"
    pattern = (f"^BM_Attention/(fused|unfused)/S:{alt(a.seq)}/D:{alt(a.dims)}"
               f"/causal:{alt(a.causal)}/T:{alt(a.threads)}(/|$)")
    cmd = [a.bench, f"--benchmark_filter={pattern}",
           f"--benchmark_min_time={a.min_time}",
           f"--benchmark_repetitions={a.repetitions}",
           "--benchmark_report_aggregates_only=true",
           f"--benchmark_out={out_json}", "--benchmark_out_format=json"]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    if subprocess.call(cmd, stdout=sys.stderr) != 0:
        sys.exit("compare_ort: attention_benchmark failed (a wrong result or an error)")
    with open(out_json) as f:
        text = f.read()
    if not text.strip():
        sys.exit("compare_ort: attention_benchmark ran nothing (see its message above)")
    data = json.loads(text)
    rows = {}
    for r in data["benchmarks"]:
        m = NAME.match(r["run_name"])
        # Medians over repetitions; the single run when there is one.
        wanted = "median" if a.repetitions > 1 else None
        if r.get("aggregate_name") != wanted or not m:
            continue
        variant, s, d, c, t = m.groups()
        rows.setdefault((int(s), int(d), int(c), int(t)), {})[variant] = r
    return data["context"], rows


def inputs(np, s, d, seed=7):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, HEADS, s, d), dtype=np.float32) for _ in range(3)]


def reference(np, q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        s = q.shape[2]
        scores = np.where(np.tri(s, dtype=bool), scores, -np.inf)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return (scores / scores.sum(-1, keepdims=True)) @ v


def causal_bias(np, s):
    # Additive: 0 on and below the diagonal, a large negative above (-inf can
    # give NaN in some kernels' max-subtraction).
    return np.where(np.tri(s, dtype=bool), 0.0, -1e9).astype(np.float32)


def matmul_graph(onnx, np, s, d, causal):
    """MatMul(Q, K^T) * 1/sqrt(D) [+ mask] -> Softmax -> MatMul(., V), BHSD."""
    from onnx import TensorProto, helper, numpy_helper
    shape = [1, HEADS, s, d]
    inits = [numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale")]
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["qk"]),
             helper.make_node("Mul", ["qk", "scale"], ["scores"])]
    last = "scores"
    if causal:
        inits.append(numpy_helper.from_array(causal_bias(np, s), "mask"))
        nodes.append(helper.make_node("Add", ["scores", "mask"], ["masked"]))
        last = "masked"
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["out"])]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "qkv"]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)
    graph = helper.make_graph(nodes, "attention", ins, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def mha_graph(onnx, np, s, d, causal):
    """com.microsoft.MultiHeadAttention on [B, S, H*D] inputs."""
    from onnx import TensorProto, helper, numpy_helper
    shape = [1, s, HEADS * d]
    inits, node_inputs = [], ["q", "k", "v"]
    if causal:  # attention_bias, input 5, broadcast over batch and heads
        inits.append(numpy_helper.from_array(causal_bias(np, s).reshape(1, 1, s, s), "mask"))
        node_inputs += ["", "", "mask"]
    node = helper.make_node("MultiHeadAttention", node_inputs, ["out"], domain="com.microsoft",
                            num_heads=HEADS, scale=float(1 / np.sqrt(d)))
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "qkv"]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)
    graph = helper.make_graph([node], "mha", ins, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)])


def bshd(x):
    return x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1).copy()


GRAPHS = {"matmul": (matmul_graph, lambda x: x, lambda y, ref: y),
          "mha": (mha_graph, bshd, lambda y, ref: y.reshape(ref.shape[0], ref.shape[2],
                                                             HEADS, -1).transpose(0, 2, 1, 3))}


def session(ort, model, threads):
    """An ORT session for `model` (an onnx ModelProto, its bytes, or a file path) with every
    graph optimisation, T intra-op threads, one inter-op thread, sequential execution, CPU."""
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def close(np, got, want):
    return np.all(np.abs(got - want) <= TOL * (np.abs(want) + 1))


class AttuneModel:
    """A compiled attention library run through the runtime's C API."""

    class Tensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                    ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * 8)]

    def __init__(self, path):
        self.rt = ctypes.CDLL(os.path.join(BUILD, "lib", "libattune_runtime.so"))
        self.rt.attune_status_message.restype = ctypes.c_char_p
        self.model = ctypes.c_void_p()
        self.call("attune_model_open", path.encode(), ctypes.byref(self.model))
        self.call("attune_model_set_num_threads", self.model, 1)

    def call(self, fn, *args):
        if getattr(self.rt, fn)(*args) != 0:
            sys.exit(f"compare_ort: {fn}: {self.rt.attune_status_message().decode()}")

    def tensor(self, x):
        t = self.Tensor(x.ctypes.data, 0, x.ndim)
        t.shape[:x.ndim] = x.shape
        return t

    def run_once(self, np, q, k, v):
        """Runs on one thread and closes the model (its pool must not spin
        while ORT is timed)."""
        out = np.empty_like(q)
        ins = (self.Tensor * 3)(*(self.tensor(x) for x in (q, k, v)))
        self.call("attune_model_run", self.model, ins, 3, ctypes.byref(self.tensor(out)), 1)
        self.rt.attune_model_close(self.model)
        return out


def check_once(np, onnx, ort, s, d, causal):
    q, k, v = inputs(np, s, d)
    want = reference(np, q, k, v, causal)
    form = ("causal" if causal else "full") + ("" if d == 64 else f"_d{d}")
    lib = os.path.join(BUILD, "benchmarks", "libs", f"libattention_{form}_fused.so")
    got = {"attune fused": AttuneModel(lib).run_once(np, q, k, v)}
    for name, (build, layout, back) in GRAPHS.items():
        sess = session(ort, build(onnx, np, s, d, causal), 1)
        y = sess.run(None, dict(zip("qkv", (layout(x) for x in (q, k, v)))))[0]
        got["ORT " + name] = back(y, want)
    for name, y in got.items():
        err = float(np.max(np.abs(y - want)))
        ok = close(np, y, want)
        print(f"check S={s} D={d} causal={causal}: {name} max |err| {err:.2e} "
              f"{'ok' if ok else 'FAILED'}", file=sys.stderr)
        if not ok:
            sys.exit(f"compare_ort: {name} differs from the float64 reference")


def time_ort(np, onnx, ort, s, d, causal, threads, min_time, bursts):
    """Median of per-burst medians, seconds per run, for each graph."""
    q, k, v = inputs(np, s, d)
    best = {}
    for name, (build, layout, _) in GRAPHS.items():
        sess = session(ort, build(onnx, np, s, d, causal), threads)
        feeds = dict(zip("qkv", (layout(x) for x in (q, k, v))))
        for _ in range(2):
            sess.run(None, feeds)
        medians = []
        for _ in range(bursts):
            times, start = [], time.perf_counter()
            while len(times) < 3 or time.perf_counter() - start < min_time:
                t0 = time.perf_counter()
                sess.run(None, feeds)
                times.append(time.perf_counter() - t0)
            medians.append(statistics.median(times))
        best[name] = statistics.median(medians)
        del sess
    return best


def main():
    ensure_venv()
    import numpy as np
    import onnx
    import onnxruntime as ort
    a = parse_args()
    out_json = a.json or os.path.join(BUILD, "compare_ort_attune.json")
    context, attune = run_attune(a, out_json)
    for c in a.causal:  # the smallest shape, with and without the mask
        check_once(np, onnx, ort, min(a.seq), a.dims[0], c)
    print(f"# {context.get('attune_isa', '?')} (ATTUNE_CPU={os.environ.get('ATTUNE_CPU', '')}), "
          f"peak {context.get('peak_GFLOPs_per_thread', '?')} GFLOP/s per thread; "
          f"onnxruntime {ort.__version__}; B=1 H=12 fp32, GFLOP/s of useful work, medians")
    print("| S | D | causal | T | attune fused | attune unfused | ORT best | ORT graph "
          "| fused/ORT | fused peak_fraction |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in a.seq:
        for d in a.dims:
            for c in a.causal:
                for t in a.threads:
                    row = attune.get((s, d, c, t), {})
                    if "fused" not in row or "unfused" not in row:
                        sys.exit(f"compare_ort: no attune result for S={s} D={d} causal={c} T={t}")
                    ort_s = time_ort(np, onnx, ort, s, d, c, t, a.min_time, a.repetitions)
                    graph = min(ort_s, key=ort_s.get)
                    ort_g = flops(s, d, c) / ort_s[graph] / 1e9
                    fused, unfused = row["fused"]["GFLOPs"], row["unfused"]["GFLOPs"]
                    print(f"| {s} | {d} | {c} | {t} | {fused:.1f} | {unfused:.1f} | {ort_g:.1f} "
                          f"| {graph} | {fused / ort_g:.2f}x | {row['fused']['peak_fraction']:.2f} |",
                          flush=True)


if __name__ == "__main__":
    main()
