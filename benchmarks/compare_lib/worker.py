#!/usr/bin/env python3
"""One peer engine (ONNX Runtime, PyTorch or IREE) in a process of its own, driven by
benchmarks/compare: one JSON request a line on stdin, one JSON reply a line on stdout.

A worker runs one engine at one thread count for one model (or one attention form) and lives
for that (model, thread count)'s rows; between requests it blocks on stdin, so its threads
are idle while another engine is timed. Requests:

  {"op": "load", "engine": "ort"|"torch"|"iree", "spec": {...}}    -> {"version": "..."}
  {"op": "prepare", "seq": S}      per-sequence set-up (IREE's module for S; ORT's attention
                                   sessions and its choice of graph)  -> {"note": "..."}
  {"op": "outputs", "seq": S, "out": FILE.npz}   one run; every output into FILE
  {"op": "burst", "seq": S, "min_time": T}       one warm-up run, then runs until T seconds
                                                 have passed (at least one)  -> {"ms": mean}
  {"op": "quit"}

A failure replies {"error": "<exception type>: <its first line>"}; the driver reports the
engine as missing with that reason.

Spec: {"kind": "model" | "attention", "threads": T, "feeds": {S: FILE.npz} (inputs by name),
  model: "arch" (bert, gpt2, llama), "folder" (checkpoint), "onnx" (graph file), "pool",
         "normalize" (sentence-transformers' mean pooling and L2 norm after BertModel),
         "inputs"/"outputs" (the graph's names in order), "iree" {S: FILE.vmfb};
  attention: "d", "causal", "heads", "iree" {S: FILE.vmfb}}.
"""
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import numpy as np  # noqa: E402

import compare_ort  # noqa: E402  (the attention graphs and the ORT session settings)


def first_line(exc):
    lines = [l for l in str(exc).strip().splitlines() if l.strip()]
    return "%s: %s" % (type(exc).__name__, lines[0].strip() if lines else "(no message)")


class Engine:
    def __init__(self, spec):
        self.spec = spec
        self.threads = spec["threads"]
        self.feeds = {}

    def inputs(self, seq):
        if seq not in self.feeds:
            with np.load(self.spec["feeds"][str(seq)]) as z:
                self.feeds = {seq: {k: z[k] for k in z.files}}  # one length at a time
        return self.feeds[seq]

    def prepare(self, seq):
        self.inputs(seq)
        return ""

    def run(self, seq):
        """One run; returns {output name: numpy array}."""
        raise NotImplementedError


# ------------------------------------------------------------------------------------------
# ONNX Runtime

class OrtModel(Engine):
    def __init__(self, spec):
        super().__init__(spec)
        import onnxruntime as ort
        self.version = "onnxruntime " + ort.__version__
        self.sess = compare_ort.session(ort, spec["onnx"], self.threads)
        self.names = [i.name for i in self.sess.get_inputs()]
        self.out_names = [o.name for o in self.sess.get_outputs()]

    def run(self, seq):
        feeds = {k: v for k, v in self.inputs(seq).items() if k in self.names}
        return dict(zip(self.out_names, self.sess.run(None, feeds)))


class OrtAttention(Engine):
    """Two graphs (scripts/compare_ort.py): MatMul -> Softmax -> MatMul and
    com.microsoft.MultiHeadAttention; prepare() times both briefly and keeps the faster."""

    def __init__(self, spec):
        super().__init__(spec)
        import onnxruntime as ort
        compare_ort.HEADS = spec["heads"]
        self.ort, self.co = ort, compare_ort
        self.version = "onnxruntime " + ort.__version__
        self.seq, self.graph, self.sess, self.feeds_by_graph = None, None, None, None

    def prepare(self, seq):
        import onnx
        q, k, v = (self.inputs(seq)[n] for n in "qkv")
        d, causal = self.spec["d"], self.spec["causal"]
        best = None
        self.sess = None
        for name, (build, layout, back) in self.co.GRAPHS.items():
            sess = compare_ort.session(self.ort, build(onnx, np, seq, d, causal),
                                       self.threads)
            feeds = dict(zip("qkv", (layout(x) for x in (q, k, v))))
            sess.run(None, feeds)
            times = []
            start = time.perf_counter()
            while len(times) < 2 or time.perf_counter() - start < 0.2:
                t0 = time.perf_counter()
                sess.run(None, feeds)
                times.append(time.perf_counter() - t0)
            t = min(times)
            if best is None or t < best[0]:
                best = (t, name, sess, feeds, back)
            del sess
        _, self.graph, self.sess, self.graph_feeds, self.back = best
        self.seq = seq
        return "graph " + self.graph

    def check_outputs(self, seq):
        """Every graph's output (the driver checks both, whichever prepare() keeps)."""
        import onnx
        q, k, v = (self.inputs(seq)[n] for n in "qkv")
        outs = {}
        for name, (build, layout, back) in self.co.GRAPHS.items():
            sess = compare_ort.session(self.ort, build(onnx, np, seq, self.spec["d"],
                                               self.spec["causal"]), 1)
            y = sess.run(None, dict(zip("qkv", (layout(x) for x in (q, k, v)))))[0]
            del sess
            outs["out[%s]" % name] = np.ascontiguousarray(back(y, q))
        return outs

    def run(self, seq):
        if seq != self.seq:
            self.prepare(seq)
        y = self.sess.run(None, self.graph_feeds)[0]
        q = self.inputs(seq)["q"]
        return {"out": np.ascontiguousarray(self.back(y, q))}


# ------------------------------------------------------------------------------------------
# PyTorch

def torch_setup(threads):
    import torch
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    return torch


class TorchModel(Engine):
    """Hugging Face transformers' model of the folder, attn_implementation="sdpa"
    (torch.nn.functional.scaled_dot_product_attention), float32, inference mode."""

    def __init__(self, spec):
        super().__init__(spec)
        torch = torch_setup(self.threads)
        import transformers
        transformers.logging.set_verbosity_error()
        self.torch = torch
        classes = {"bert": transformers.BertModel, "gpt2": transformers.GPT2LMHeadModel,
                   "llama": transformers.LlamaForCausalLM}
        kwargs = {"dtype": torch.float32, "attn_implementation": "sdpa"}
        if spec["arch"] == "bert":
            kwargs["add_pooling_layer"] = False  # the graph has no pooler; nor does attune
        model = classes[spec["arch"]].from_pretrained(spec["folder"], **kwargs)
        impl = getattr(model.config, "_attn_implementation", None)
        if impl != "sdpa":
            raise RuntimeError("transformers chose attention %r, not sdpa" % impl)
        self.model = model.eval()
        self.arch = spec["arch"]
        self.version = "torch %s, transformers %s (sdpa; CPU capability %s)" % (
            torch.__version__, transformers.__version__,
            torch.backends.cpu.get_cpu_capability())
        self.tensors = {}

    def inputs(self, seq):
        feeds = super().inputs(seq)
        if self.tensors.get("seq") != seq:
            self.tensors = {"seq": seq, **{k: self.torch.from_numpy(v) for k, v in feeds.items()}}
        return feeds

    def run(self, seq):
        self.inputs(seq)
        t = self.tensors
        torch = self.torch
        with torch.inference_mode():
            if self.arch == "bert":
                kw = {k: t[k] for k in ("input_ids", "token_type_ids", "attention_mask") if k in t}
                h = self.model(**kw).last_hidden_state
                out = {"last_hidden_state": h}
                if self.spec.get("pool"):
                    # sentence-transformers' Pooling (mean over kept tokens) and Normalize
                    m = t["attention_mask"].unsqueeze(-1).to(h.dtype)
                    e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
                    if self.spec.get("normalize"):
                        e = torch.nn.functional.normalize(e, p=2, dim=1)
                    out["sentence_embedding"] = e
            else:
                out = {"logits": self.model(input_ids=t["input_ids"], use_cache=False).logits}
        return {k: v.numpy() for k, v in out.items()}


class TorchAttention(Engine):
    def __init__(self, spec):
        super().__init__(spec)
        self.torch = torch_setup(self.threads)
        self.version = "torch %s (CPU capability %s)" % (
            self.torch.__version__, self.torch.backends.cpu.get_cpu_capability())
        self.tensors = {}

    def run(self, seq):
        torch = self.torch
        if self.tensors.get("seq") != seq:
            f = self.inputs(seq)
            self.tensors = {"seq": seq, **{n: torch.from_numpy(f[n]) for n in "qkv"}}
        t = self.tensors
        with torch.inference_mode():
            y = torch.nn.functional.scaled_dot_product_attention(
                t["q"], t["k"], t["v"], is_causal=bool(self.spec["causal"]))
        return {"out": y.numpy()}


# ------------------------------------------------------------------------------------------
# IREE

class Iree(Engine):
    """A module compiled per sequence length (static shapes), llvm-cpu for the host CPU, on
    the local-task device with a task topology of `threads` workers."""

    def __init__(self, spec):
        super().__init__(spec)
        import iree.runtime as rt
        rt.flags.parse_flags("--task_topology_max_group_count=%d" % self.threads)
        self.rt = rt
        self.config = rt.Config("local-task")
        try:
            from iree._runtime_libs import version as v
            self.version = "iree-base-runtime " + v.VERSION
        except Exception:  # the version is for the report only
            self.version = "iree-base-runtime"
        self.seq, self.fn, self.ctx = None, None, None
        self.order = spec.get("inputs") or ["q", "k", "v"]
        self.out_names = spec.get("outputs") or ["out"]

    def prepare(self, seq):
        feeds = self.inputs(seq)
        if seq != self.seq:
            self.fn = self.ctx = None  # drop the previous length's module first
            path = self.spec["iree"][str(seq)]
            vm = self.rt.VmModule.mmap(self.config.vm_instance, path)
            self.ctx = self.rt.SystemContext(vm_modules=[vm], config=self.config)
            names = [n for n in vm.function_names if "$" not in n and not n.startswith("__")]
            if len(names) != 1:
                raise RuntimeError("%s exports %s, not one function" % (path, names))
            self.fn = self.ctx.modules[vm.name][names[0]]
            self.seq = seq
            self.args = [np.ascontiguousarray(feeds[n]) for n in self.order]
        return ""

    def run(self, seq):
        if seq != self.seq:
            self.prepare(seq)
        res = self.fn(*self.args)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        return dict(zip(self.out_names, res))

    def host(self, outs):
        return {k: np.asarray(v.to_host()) for k, v in outs.items()}


ENGINES = {("ort", "model"): OrtModel, ("ort", "attention"): OrtAttention,
           ("torch", "model"): TorchModel, ("torch", "attention"): TorchAttention,
           ("iree", "model"): Iree, ("iree", "attention"): Iree}


def burst(engine, seq, min_time):
    engine.run(seq)  # warm-up, as model_benchmark's first (checking) run for attune
    runs, start = 0, time.perf_counter()
    while runs < 1 or time.perf_counter() - start < min_time:
        engine.run(seq)
        runs += 1
    return (time.perf_counter() - start) / runs * 1e3, runs


def handle(state, msg):
    op = msg["op"]
    if op == "load":
        spec = msg["spec"]
        state["engine"] = ENGINES[(msg["engine"], spec["kind"])](spec)
        return {"version": state["engine"].version, "pid": os.getpid()}
    engine = state["engine"]
    seq = msg.get("seq")
    if op == "prepare":
        return {"note": engine.prepare(seq) or ""}
    if op == "outputs":
        outs = engine.check_outputs(seq) if hasattr(engine, "check_outputs") else engine.run(seq)
        if hasattr(engine, "host"):
            outs = engine.host(outs)
        np.savez(msg["out"], **{k: np.asarray(v) for k, v in outs.items()})
        return {"outputs": sorted(outs)}
    if op == "burst":
        ms, runs = burst(engine, seq, msg["min_time"])
        return {"ms": ms, "runs": runs}
    if op == "quit":
        return {}
    raise ValueError("unknown request %r" % op)


def main():
    # The protocol owns the original stdout; whatever the libraries print goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    state = {}
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            reply = handle(state, msg)
        except BaseException as e:  # noqa: B902 - the driver reports any failure
            traceback.print_exc()
            reply = {"error": first_line(e)}
        proto.write(json.dumps(reply) + "\n")
        proto.flush()
        if msg["op"] == "quit":
            break


if __name__ == "__main__":
    main()
