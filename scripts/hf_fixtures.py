#!/usr/bin/env python3
"""Tiny Hugging Face checkpoints with ONNX Runtime reference outputs, for tests/models/.

What it makes. For each model below, a folder tests/models/<name>/ with
  config.json          the architecture's keys, as a Hugging Face checkpoint on the hub has them
                       (model_type, architectures, torch_dtype, rope_theta/rope_scaling, ...);
  model.safetensors    randomly initialised weights under Hugging Face's tensor names and layouts
                       (nn.Linear [out, in]; GPT-2's Conv1D [in, out]), written by this script;
  inputs/<name>.npy    fixed inputs: batch 2, sequence 7, token ids from a fixed seed;
  reference/<name>.npy ONNX Runtime's outputs (float32) for those inputs;
and, with --keep-onnx, model.onnx: the same model built node by node with onnx.helper from the
same weights (its initializers carry the safetensors names), a transcription of the Hugging Face
modeling code. model.onnx is not committed (it repeats the weights); this script rebuilds it.

  name                 architecture                   inputs (int64 [B,S])                 outputs (float32)
  bert-tiny            BertModel + sentence-          input_ids, token_type_ids,           last_hidden_state [B,S,64],
                       transformers mean pooling,     attention_mask                       sentence_embedding [B,64]
                       L2 normalisation
  gpt2-tiny            GPT2LMHeadModel (tied)         input_ids                            logits [B,S,99]
  llama-tiny           LlamaForCausalLM, GQA, BF16    input_ids                            logits [B,S,99]
  mistral-tiny         MistralForCausalLM, sliding    input_ids                            logits [B,S,99]
                       window 4, tied embeddings
  llama3-scaled-tiny   LlamaForCausalLM, llama3 RoPE  input_ids                            logits [B,S,99]
                       scaling
  t5-encoder-tiny      T5EncoderModel, gated-gelu     input_ids, attention_mask            last_hidden_state [B,S,64]

How to run it, from the repository root:

  python3 scripts/hf_fixtures.py                    # (re)write every folder under tests/models/
  python3 scripts/hf_fixtures.py gpt2-tiny          # just these
  python3 scripts/hf_fixtures.py --out DIR          # somewhere else
  python3 scripts/hf_fixtures.py --keep-onnx        # also leave model.onnx in each folder
  python3 scripts/hf_fixtures.py --check-with-transformers
        # then load each folder with transformers (and the bert folder with sentence-transformers)
        # and compare its outputs with reference/ (and a fresh length-40 input through the graph);
        # needs torch, transformers, sentence-transformers
  python3 scripts/hf_fixtures.py --check-only       # the same comparison, writing nothing

Any folder, not only these. The ONNX graph builders are per architecture (bert_graph, gpt2_graph,
llama_graph for llama and mistral, t5_encoder_graph) and read every size from config.json, so the
same transcription serves real checkpoints:

  import hf_fixtures
  model = hf_fixtures.onnx_for_folder(FOLDER)   # onnx.ModelProto; weights from model.safetensors
                                                 # (or its shards), F16/BF16 widened to float32

It takes the folder's tensor-name prefix (bert., transformer., model.) and sentence-transformers'
modules.json (mean pooling, Normalize) as attune's frontend does; scripts/compare_hf_ort.py uses it.

What it needs: numpy, onnx and onnxruntime (pip install numpy onnx onnxruntime). Nothing else on
the default path; --check-with-transformers also needs torch, transformers 5.x and
sentence-transformers. The output is deterministic: fixed seeds, no clock, no randomness
from the environment. ONNX Runtime runs on the CPU execution provider with its default graph
optimisations, one thread.
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "models")
OPSET = 17
BATCH, SEQ = 2, 7
F32_MIN = float(np.finfo(np.float32).min)  # torch.finfo(torch.float32).min, HF's mask value


# --------------------------------------------------------------------------------------------
# safetensors, written with numpy

def f32_to_bf16_bits(x):
    """float32 -> bfloat16 bit patterns (uint16), rounding to nearest, ties to even (as torch)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    assert np.all(np.isfinite(x))
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


class Tensor:
    """One checkpoint tensor: its HF name, the values the reference uses (float32), and how it is
    stored in model.safetensors ("F32" or "BF16"; for BF16, value already holds the widened
    bfloat16 values, so storing loses nothing)."""

    def __init__(self, name, value, dtype):
        self.name, self.value, self.dtype = name, value, dtype


def write_safetensors(path, tensors, metadata=None):
    """The safetensors layout: u64 little-endian header size N, N bytes of JSON (padded with
    spaces to a multiple of 8, as the reference implementation does), then each tensor's bytes,
    row-major, little-endian, back to back; data_offsets are [begin, end) from the data start."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for t in sorted(tensors, key=lambda t: t.name):
        if t.dtype == "F32":
            raw = np.ascontiguousarray(t.value, dtype="<f4").tobytes()
        elif t.dtype == "BF16":
            raw = np.ascontiguousarray(f32_to_bf16_bits(t.value), dtype="<u2").tobytes()
        else:
            raise ValueError(t.dtype)
        header[t.name] = {"dtype": t.dtype, "shape": list(t.value.shape),
                          "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path, floats_only=False):
    """A safetensors file's tensors as numpy arrays: F32, F16 and BF16 widened to float32 (for
    the fixtures' self-check and for any checkpoint's weights), integers as they are, or left
    out with floats_only. The file is memory-mapped, so F32 tensors are views of it."""
    import mmap
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    kinds = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4",
             "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dtype = e["dtype"]
        if dtype not in kinds:
            raise ValueError("%s: tensor %r has dtype %s" % (path, name, dtype))
        if floats_only and dtype not in ("F32", "F16", "BF16"):
            continue
        b, end = e["data_offsets"]
        count = int(np.prod(e["shape"], dtype=np.int64))
        arr = np.frombuffer(data, dtype=kinds[dtype], count=count, offset=base + b)
        assert arr.nbytes == end - b, name
        if dtype == "BF16":
            arr = bf16_bits_to_f32(arr)
        elif dtype == "F16":
            arr = arr.astype(np.float32)
        out[name] = arr.reshape(e["shape"])
    return out


# --------------------------------------------------------------------------------------------
# Random weights

class Weights:
    """Makes the checkpoint's tensors in a fixed order from one seeded generator."""

    def __init__(self, seed, dtype="F32"):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.tensors = {}

    def _add(self, name, value):
        value = value.astype(np.float32)
        if self.dtype == "BF16":
            value = bf16_bits_to_f32(f32_to_bf16_bits(value))
        assert name not in self.tensors, name
        self.tensors[name] = Tensor(name, value, self.dtype)
        return name

    def normal(self, name, shape, std):
        return self._add(name, self.rng.normal(0.0, std, size=shape))

    def gamma(self, name, n):
        """A norm's scale: near 1, with some noise, so a dropped gamma shows."""
        return self._add(name, 1.0 + self.rng.normal(0.0, 0.1, size=(n,)))

    def beta(self, name, n):
        return self._add(name, self.rng.normal(0.0, 0.1, size=(n,)))

    def linear(self, prefix, n_in, n_out, bias=True, std=None):
        """nn.Linear: weight [out, in] (+ bias [out])."""
        std = std if std is not None else 1.6 / math.sqrt(n_in)  # 0.2 at n_in 64
        self.normal(prefix + ".weight", (n_out, n_in), std)
        if bias:
            self.beta(prefix + ".bias", n_out)

    def __getitem__(self, name):
        return self.tensors[name].value

    def list(self):
        return list(self.tensors.values())


# --------------------------------------------------------------------------------------------
# ONNX graph building

class Graph:
    """A small builder over onnx.helper: every node gets a fresh output name; checkpoint tensors
    become initializers under their HF names, constants under c<N>."""

    def __init__(self, weights):
        from onnx import TensorProto
        self.TP = TensorProto
        self.weights = weights
        self.nodes, self.inits, self.inputs, self.outputs = [], {}, [], []
        self.n = 0

    def fresh(self, hint="t"):
        self.n += 1
        return "%s_%d" % (hint, self.n)

    def w(self, name):
        """A checkpoint tensor, by its HF name, as an initializer."""
        from onnx import numpy_helper
        if name not in self.inits:
            try:
                value = self.weights[name]
            except KeyError:
                raise KeyError("the checkpoint has no tensor %r" % name) from None
            self.inits[name] = numpy_helper.from_array(value, name)
        return name

    def const(self, value, dtype=np.float32):
        from onnx import numpy_helper
        name = self.fresh("c")
        self.inits[name] = numpy_helper.from_array(np.asarray(value, dtype=dtype), name)
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        from onnx import helper
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def input(self, name, elem, shape):
        from onnx import helper
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def output(self, value, name, elem, shape):
        from onnx import helper
        self.nodes.append(helper.make_node("Identity", [value], [name]))
        self.outputs.append(helper.make_tensor_value_info(name, elem, shape))

    def model(self, graph_name):
        from onnx import helper
        g = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs,
                              list(self.inits.values()))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="attune scripts/hf_fixtures.py")
        m.ir_version = 8  # opset 17's IR version; older runtimes refuse newer ones
        return m

    # ---- pieces shared by the models -------------------------------------------------------

    def linear(self, x, prefix, bias=True):
        """nn.Linear: x @ W^T + b, W stored [out, in]."""
        y = self.op("MatMul", [x, self.op("Transpose", [self.w(prefix + ".weight")], perm=[1, 0])])
        return self.op("Add", [y, self.w(prefix + ".bias")]) if bias else y

    def conv1d(self, x, prefix):
        """GPT-2's Conv1D: x @ W + b, W stored [in, out]."""
        return self.op("Add", [self.op("MatMul", [x, self.w(prefix + ".weight")]),
                               self.w(prefix + ".bias")])

    def layer_norm(self, x, prefix, eps):
        return self.op("LayerNormalization", [x, self.w(prefix + ".weight"), self.w(prefix + ".bias")],
                       axis=-1, epsilon=eps)

    def rms_norm(self, x, weight, eps):
        """LlamaRMSNorm / T5LayerNorm: w * (x * rsqrt(mean(x^2) + eps)); no mean, no bias."""
        var = self.op("ReduceMean", [self.op("Mul", [x, x])], axes=[-1], keepdims=1)
        inv = self.op("Reciprocal", [self.op("Sqrt", [self.op("Add", [var, self.const(eps)])])])
        return self.op("Mul", [self.w(weight), self.op("Mul", [x, inv])])

    def gelu_erf(self, x):
        """nn.functional.gelu (HF "gelu"): 0.5 x (1 + erf(x / sqrt 2))."""
        e = self.op("Erf", [self.op("Div", [x, self.const(math.sqrt(2.0))])])
        return self.op("Mul", [self.op("Mul", [x, self.const(0.5)]),
                               self.op("Add", [e, self.const(1.0)])])

    def gelu_tanh(self, x):
        """HF's NewGELUActivation ("gelu_new"):
        0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
        x3 = self.op("Pow", [x, self.const(3.0)])
        inner = self.op("Add", [x, self.op("Mul", [x3, self.const(0.044715)])])
        t = self.op("Tanh", [self.op("Mul", [inner, self.const(math.sqrt(2.0 / math.pi))])])
        return self.op("Mul", [self.op("Mul", [x, self.const(0.5)]),
                               self.op("Add", [t, self.const(1.0)])])

    def silu(self, x):
        return self.op("Mul", [x, self.op("Sigmoid", [x])])

    def activation(self, x, name):
        """ACT2FN[name] for the activations attune's frontend accepts."""
        if name == "gelu":
            return self.gelu_erf(x)
        if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
            # gelu_fast writes the same tanh formula with the constants folded differently.
            return self.gelu_tanh(x)
        if name == "relu":
            return self.op("Relu", [x])
        if name in ("silu", "swish"):
            return self.silu(x)
        raise NotImplementedError("activation %r" % name)

    def positions(self, ids):
        """arange(S) as int64 [S], S from the input's shape, so the graph takes any length."""
        s = self.op("Gather", [self.op("Shape", [ids]), self.const(1, np.int64)], axis=0)
        return self.op("Range", [self.const(0, np.int64), s, self.const(1, np.int64)])

    def causal_mask(self, pos, window=None):
        """HF's eager causal mask, [S, S] float: 0 where key j is visible to query i, finfo.min
        elsewhere. Visible: j <= i, and with a sliding window w also j > i - w."""
        i = self.op("Unsqueeze", [pos, self.const([1], np.int64)])
        j = self.op("Unsqueeze", [pos, self.const([0], np.int64)])
        visible = self.op("LessOrEqual", [j, i])
        if window is not None:
            inside = self.op("Greater", [j, self.op("Sub", [i, self.const(window, np.int64)])])
            visible = self.op("And", [visible, inside])
        return self.op("Where", [visible, self.const(0.0), self.const(F32_MIN)])

    def padding_mask(self, attention_mask):
        """HF's bidirectional eager mask from a [B, S] 0/1 attention_mask: [B, 1, 1, S] float,
        0 for kept keys, finfo(float32).min for padded ones (queries are never masked)."""
        keep = self.op("Cast", [attention_mask], to=self.TP.BOOL)
        m = self.op("Where", [keep, self.const(0.0), self.const(F32_MIN)])
        return self.op("Unsqueeze", [m, self.const([1, 2], np.int64)])

    def split_heads(self, x, heads, head_dim):
        """[B, S, heads*head_dim] -> [B, S, heads, head_dim]."""
        return self.op("Reshape", [x, self.const([0, 0, heads, head_dim], np.int64)])

    def attention(self, q, k, v, heads, kv_heads, head_dim, scale, biases=()):
        """softmax(q k^T * scale + biases...) v, with q [B,S,H,D] and k, v [B,S,KV,D] (after any
        RoPE). Grouped-query attention as HF's repeat_kv: query head h reads kv head h // (H/KV);
        written by viewing the query heads as [KV, H/KV] and broadcasting k and v over the
        second axis. Returns [B, S, H*D]."""
        rep = heads // kv_heads
        q = self.op("Reshape", [q, self.const([0, 0, kv_heads, rep, head_dim], np.int64)])
        q = self.op("Transpose", [q], perm=[0, 2, 3, 1, 4])           # [B, KV, R, S, D]
        kt = self.op("Transpose", [k], perm=[0, 2, 3, 1])             # [B, KV, D, S]
        kt = self.op("Unsqueeze", [kt, self.const([2], np.int64)])    # [B, KV, 1, D, S]
        v = self.op("Transpose", [v], perm=[0, 2, 1, 3])              # [B, KV, S, D]
        v = self.op("Unsqueeze", [v, self.const([2], np.int64)])      # [B, KV, 1, S, D]
        scores = self.op("MatMul", [q, kt])                           # [B, KV, R, S, S]
        if scale != 1.0:
            scores = self.op("Mul", [scores, self.const(scale)])
        for b in biases:  # each broadcastable to [B, H, S, S]; reshaped to [B, KV, R, S, S]
            scores = self.op("Add", [scores, b])
        p = self.op("Softmax", [scores], axis=-1)
        o = self.op("MatMul", [p, v])                                 # [B, KV, R, S, D]
        o = self.op("Transpose", [o], perm=[0, 3, 1, 2, 4])           # [B, S, KV, R, D]
        return self.op("Reshape", [o, self.const([0, 0, heads * head_dim], np.int64)])

    def rope(self, x, cos, sin):
        """HF's apply_rotary_pos_emb on x [B, S, H, D] with cos, sin [S, 1, D]:
        x cos + rotate_half(x) sin, rotate_half(x) = cat(-x[D/2:], x[:D/2])."""
        x1, x2 = self.op("Split", [x], n_out=2, axis=-1)
        rot = self.op("Concat", [self.op("Neg", [x2]), x1], axis=-1)
        return self.op("Add", [self.op("Mul", [x, cos]), self.op("Mul", [rot, sin])])

    def rope_tables(self, pos, inv_freq):
        """LlamaRotaryEmbedding.forward: freqs = pos * inv_freq (float32), emb = cat(freqs,
        freqs), cos/sin of it; returned as [S, 1, D] to broadcast over [B, S, H, D]."""
        p = self.op("Unsqueeze", [self.op("Cast", [pos], to=self.TP.FLOAT), self.const([1], np.int64)])
        freqs = self.op("Mul", [p, self.const(inv_freq)])                 # [S, D/2]
        emb = self.op("Concat", [freqs, freqs], axis=-1)                  # [S, D]
        emb = self.op("Unsqueeze", [emb, self.const([1], np.int64)])      # [S, 1, D]
        return self.op("Cos", [emb]), self.op("Sin", [emb])


# --------------------------------------------------------------------------------------------
# The architectures: one graph builder each, from config.json's keys and the checkpoint's
# tensors. They serve the tiny fixtures below and any folder of the same architecture
# (onnx_for_folder); sizes come from the config, never from the fixtures.

def _require(cfg, key):
    if cfg.get(key) is None:
        raise ValueError("config.json has no %r (this architecture needs it)" % key)
    return cfg[key]


def bert_graph(cfg, w, prefix="", pool=False, normalize=False):
    """BertModel (last_hidden_state), optionally followed by sentence-transformers' mean
    Pooling (sentence_embedding) and Normalize. `prefix`: "" (BertModel) or "bert."
    (BertFor... heads); the heads themselves are not built."""
    D, H = _require(cfg, "hidden_size"), _require(cfg, "num_attention_heads")
    L = _require(cfg, "num_hidden_layers")
    eps = cfg.get("layer_norm_eps", 1e-12)
    act = cfg.get("hidden_act", "gelu")
    pet = cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        raise NotImplementedError("bert position_embedding_type %r (only 'absolute')" % pet)
    if normalize and not pool:
        raise NotImplementedError("Normalize without Pooling")
    P = prefix
    g = Graph(w)
    TP = g.TP
    x_ids = g.input("input_ids", TP.INT64, ["batch", "seq"])
    x_types = g.input("token_type_ids", TP.INT64, ["batch", "seq"])
    x_mask = g.input("attention_mask", TP.INT64, ["batch", "seq"])
    pos = g.positions(x_ids)
    # BertEmbeddings: (word + token_type) + position, then LayerNorm.
    e = g.op("Add", [g.op("Gather", [g.w(P + "embeddings.word_embeddings.weight"), x_ids], axis=0),
                     g.op("Gather", [g.w(P + "embeddings.token_type_embeddings.weight"), x_types],
                          axis=0)])
    e = g.op("Add", [e, g.op("Gather", [g.w(P + "embeddings.position_embeddings.weight"), pos],
                             axis=0)])
    h = g.layer_norm(e, P + "embeddings.LayerNorm", eps)
    # [B,1,1,S] -> [B,1,1,1,S] for attention()'s [B, KV, R, S, S] scores.
    bias = g.op("Unsqueeze", [g.padding_mask(x_mask), g.const([1], np.int64)])
    hd = D // H
    for i in range(L):
        p = P + "encoder.layer.%d." % i
        q = g.split_heads(g.linear(h, p + "attention.self.query"), H, hd)
        k = g.split_heads(g.linear(h, p + "attention.self.key"), H, hd)
        v = g.split_heads(g.linear(h, p + "attention.self.value"), H, hd)
        a = g.attention(q, k, v, H, H, hd, hd ** -0.5, [bias])
        # BertSelfOutput: LayerNorm(dense(a) + h); BertOutput: LayerNorm(dense(act(...)) + a)
        h = g.layer_norm(g.op("Add", [g.linear(a, p + "attention.output.dense"), h]),
                         p + "attention.output.LayerNorm", eps)
        f = g.linear(g.activation(g.linear(h, p + "intermediate.dense"), act), p + "output.dense")
        h = g.layer_norm(g.op("Add", [f, h]), p + "output.LayerNorm", eps)
    g.output(h, "last_hidden_state", TP.FLOAT, ["batch", "seq", D])
    if not pool:
        return g
    # sentence-transformers: Pooling (mean over tokens with attention_mask 1), then Normalize.
    m = g.op("Unsqueeze", [g.op("Cast", [x_mask], to=TP.FLOAT), g.const([2], np.int64)])  # [B,S,1]
    total = g.op("ReduceSum", [g.op("Mul", [h, m]), g.const([1], np.int64)], keepdims=0)   # [B,D]
    count = g.op("Max", [g.op("ReduceSum", [m, g.const([1], np.int64)], keepdims=0),
                         g.const(1e-9)])                                                    # clamp(min=1e-9)
    mean = g.op("Div", [total, count])
    if not normalize:
        g.output(mean, "sentence_embedding", TP.FLOAT, ["batch", D])
        return g
    # F.normalize(p=2, dim=1, eps=1e-12): x / max(||x||_2, eps)
    norm = g.op("Max", [g.op("ReduceL2", [mean], axes=[1], keepdims=1), g.const(1e-12)])
    g.output(g.op("Div", [mean, norm]), "sentence_embedding", TP.FLOAT, ["batch", D])
    return g


def gpt2_graph(cfg, w, prefix=""):
    """GPT2LMHeadModel's logits. `prefix`: "" (as GPT2Model saves) or "transformer."
    (GPT2LMHeadModel). The head is tied to wte unless tie_word_embeddings is false."""
    D, H = _require(cfg, "n_embd"), _require(cfg, "n_head")
    L, V = _require(cfg, "n_layer"), _require(cfg, "vocab_size")
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    act = cfg.get("activation_function", "gelu_new")
    P = prefix
    g = Graph(w)
    TP = g.TP
    ids = g.input("input_ids", TP.INT64, ["batch", "seq"])
    pos = g.positions(ids)
    h = g.op("Add", [g.op("Gather", [g.w(P + "wte.weight"), ids], axis=0),
                     g.op("Gather", [g.w(P + "wpe.weight"), pos], axis=0)])
    causal = g.causal_mask(pos)
    hd = D // H
    for i in range(L):
        p = P + "h.%d." % i
        # GPT2Attention: q k^T / sqrt(hd) when scale_attn_weights, and / (layer + 1) when
        # scale_attn_by_inverse_layer_idx.
        scale = hd ** -0.5 if cfg.get("scale_attn_weights", True) else 1.0
        if cfg.get("scale_attn_by_inverse_layer_idx", False):
            scale /= float(i + 1)
        qkv = g.conv1d(g.layer_norm(h, p + "ln_1", eps), p + "attn.c_attn")
        q, k, v = g.op("Split", [qkv], n_out=3, axis=-1)   # c_attn's output is [q | k | v]
        a = g.attention(g.split_heads(q, H, hd), g.split_heads(k, H, hd), g.split_heads(v, H, hd),
                        H, H, hd, scale, [causal])
        h = g.op("Add", [h, g.conv1d(a, p + "attn.c_proj")])
        f = g.activation(g.conv1d(g.layer_norm(h, p + "ln_2", eps), p + "mlp.c_fc"), act)
        h = g.op("Add", [h, g.conv1d(f, p + "mlp.c_proj")])
    h = g.layer_norm(h, P + "ln_f", eps)
    # logits = h @ W^T with W the tied wte, or lm_head (nn.Linear [V, D], never prefixed).
    head = P + "wte.weight" if cfg.get("tie_word_embeddings", True) else "lm_head.weight"
    logits = g.op("MatMul", [h, g.op("Transpose", [g.w(head)], perm=[1, 0])])
    g.output(logits, "logits", TP.FLOAT, ["batch", "seq", V])
    return g


def default_inv_freq(theta, dim):
    """_compute_default_rope_parameters, in float32 as torch computes it:
    1 / theta ** (arange(0, dim, 2) / dim)."""
    exponent = np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / np.float32(dim)
    return (np.float32(1.0) / np.power(np.float32(theta), exponent)).astype(np.float32)


def llama3_inv_freq(theta, dim, scaling):
    """transformers' _compute_llama3_parameters, step by step, in float32 like torch."""
    inv_freq = default_inv_freq(theta, dim)
    factor = np.float32(scaling["factor"])
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor     # python floats, as in HF
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = (np.float32(2 * math.pi) / inv_freq).astype(np.float32)
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq).astype(np.float32)
    smooth_factor = ((np.float32(old_context_len) / wavelen - np.float32(low_freq_factor))
                     / np.float32(high_freq_factor - low_freq_factor)).astype(np.float32)
    smoothed = ((np.float32(1) - smooth_factor) * inv_freq_llama / factor
                + smooth_factor * inv_freq_llama).astype(np.float32)
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, inv_freq_llama).astype(np.float32)


def rope_inv_freq(cfg, head_dim):
    """RoPE's inverse frequencies from config.json: rope_theta and rope_scaling (transformers
    4) or rope_parameters (transformers 5), type default, linear or llama3."""
    key = "rope_parameters" if cfg.get("rope_parameters") else "rope_scaling"
    params = cfg.get(key) or {}
    theta = params.get("rope_theta", cfg.get("rope_theta", 10000.0))
    kind = params.get("rope_type", params.get("type", "default"))
    if cfg.get("partial_rotary_factor", 1.0) != 1.0:
        raise NotImplementedError("partial_rotary_factor %r" % cfg["partial_rotary_factor"])
    if kind == "default":
        return default_inv_freq(theta, head_dim)
    if kind == "linear":  # _compute_linear_scaling_rope_parameters: inv_freq /= factor
        return (default_inv_freq(theta, head_dim) / np.float32(params["factor"])).astype(np.float32)
    if kind == "llama3":
        return llama3_inv_freq(theta, head_dim, params)
    raise NotImplementedError("rope type %r (default, linear, llama3)" % kind)


def llama_graph(cfg, w, prefix="model."):
    """LlamaForCausalLM / MistralForCausalLM logits (the same tensor names and forward; Mistral
    adds its sliding window to the causal mask). `prefix`: "model." (...ForCausalLM) or ""
    (a bare LlamaModel); lm_head is never prefixed and is the token embeddings when
    tie_word_embeddings is true."""
    D, H = _require(cfg, "hidden_size"), _require(cfg, "num_attention_heads")
    L, V, F = (_require(cfg, "num_hidden_layers"), _require(cfg, "vocab_size"),
               _require(cfg, "intermediate_size"))
    KV = cfg.get("num_key_value_heads") or H
    hd = cfg.get("head_dim") or D // H
    eps = cfg.get("rms_norm_eps", 1e-6)
    act = cfg.get("hidden_act", "silu")
    if cfg.get("attention_bias") or cfg.get("mlp_bias"):
        raise NotImplementedError("attention_bias / mlp_bias")
    window = cfg.get("sliding_window") if cfg.get("model_type") == "mistral" else None
    inv_freq = rope_inv_freq(cfg, hd)
    P = prefix

    g = Graph(w)
    TP = g.TP
    ids = g.input("input_ids", TP.INT64, ["batch", "seq"])
    pos = g.positions(ids)
    cos, sin = g.rope_tables(pos, inv_freq)
    mask = g.causal_mask(pos, window)
    h = g.op("Gather", [g.w(P + "embed_tokens.weight"), ids], axis=0)
    for i in range(L):
        p = P + "layers.%d." % i
        x = g.rms_norm(h, p + "input_layernorm.weight", eps)
        q = g.rope(g.split_heads(g.linear(x, p + "self_attn.q_proj", bias=False), H, hd), cos, sin)
        k = g.rope(g.split_heads(g.linear(x, p + "self_attn.k_proj", bias=False), KV, hd), cos, sin)
        v = g.split_heads(g.linear(x, p + "self_attn.v_proj", bias=False), KV, hd)
        a = g.attention(q, k, v, H, KV, hd, hd ** -0.5, [mask])
        h = g.op("Add", [h, g.linear(a, p + "self_attn.o_proj", bias=False)])
        x = g.rms_norm(h, p + "post_attention_layernorm.weight", eps)
        gate = g.activation(g.linear(x, p + "mlp.gate_proj", bias=False), act)
        up = g.linear(x, p + "mlp.up_proj", bias=False)
        h = g.op("Add", [h, g.linear(g.op("Mul", [gate, up]), p + "mlp.down_proj", bias=False)])
    h = g.rms_norm(h, P + "norm.weight", eps)
    head = P + "embed_tokens.weight" if cfg.get("tie_word_embeddings", False) else "lm_head.weight"
    logits = g.op("MatMul", [h, g.op("Transpose", [g.w(head)], perm=[1, 0])])
    g.output(logits, "logits", TP.FLOAT, ["batch", "seq", V])
    return g


def t5_activation(cfg):
    """T5Config: feed_forward_proj "[gated-]ACT"; "gated-gelu" means gelu_new."""
    ffp = cfg.get("feed_forward_proj", "relu")
    gated = ffp.startswith("gated-")
    act = ffp.split("-")[-1]
    return gated, "gelu_new" if ffp == "gated-gelu" else act


def t5_encoder_graph(cfg, w, prefix=""):
    """T5EncoderModel's last_hidden_state (the encoder of any T5 checkpoint; a decoder's
    tensors are not read)."""
    D, H, hd = _require(cfg, "d_model"), _require(cfg, "num_heads"), _require(cfg, "d_kv")
    L = _require(cfg, "num_layers")
    NB = cfg.get("relative_attention_num_buckets", 32)
    MD = cfg.get("relative_attention_max_distance", 128)
    eps = cfg.get("layer_norm_epsilon", 1e-6)
    gated, act = t5_activation(cfg)
    P = prefix

    g = Graph(w)
    TP = g.TP
    x_ids = g.input("input_ids", TP.INT64, ["batch", "seq"])
    x_mask = g.input("attention_mask", TP.INT64, ["batch", "seq"])
    pos = g.positions(x_ids)
    # T5Attention.compute_bias / _relative_position_bucket (bidirectional), in-graph:
    # relative_position = memory_position - query_position = j - i.
    i_ = g.op("Unsqueeze", [pos, g.const([1], np.int64)])
    j_ = g.op("Unsqueeze", [pos, g.const([0], np.int64)])
    rel = g.op("Sub", [j_, i_])                                                     # [S, S]
    half = NB // 2
    buckets = g.op("Mul", [g.op("Cast", [g.op("Greater", [rel, g.const(0, np.int64)])], to=TP.INT64),
                           g.const(half, np.int64)])
    rp = g.op("Abs", [rel])
    max_exact = half // 2
    is_small = g.op("Less", [rp, g.const(max_exact, np.int64)])
    # max_exact + (log(rp.float() / max_exact) / log(max_distance / max_exact)
    #              * (num_buckets - max_exact)).to(long), all float32; .to(long) truncates.
    lg = g.op("Log", [g.op("Div", [g.op("Cast", [rp], to=TP.FLOAT), g.const(float(max_exact))])])
    lg = g.op("Mul", [g.op("Div", [lg, g.const(math.log(MD / max_exact))]),
                      g.const(float(half - max_exact))])
    # rp = 0 gives log 0 = -inf, cast to int64 is undefined; like HF, Where discards that lane,
    # but clip first so the Cast sees a finite value.
    lg = g.op("Max", [lg, g.const(0.0)])
    large = g.op("Add", [g.const(max_exact, np.int64), g.op("Cast", [lg], to=TP.INT64)])
    large = g.op("Min", [large, g.const(half - 1, np.int64)])
    buckets = g.op("Add", [buckets, g.op("Where", [is_small, rp, large])])
    rel_w = P + "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
    pbias = g.op("Gather", [g.w(rel_w), buckets], axis=0)                           # [S, S, H]
    pbias = g.op("Transpose", [pbias], perm=[2, 0, 1])                              # [H, S, S]
    pbias = g.op("Unsqueeze", [pbias, g.const([0, 2], np.int64)])                   # [1,KV=H,R=1,S,S]
    mask = g.op("Unsqueeze", [g.padding_mask(x_mask), g.const([1], np.int64)])      # [B,1,1,1,S]

    h = g.op("Gather", [g.w(P + "shared.weight"), x_ids], axis=0)
    for i in range(L):
        p = P + "encoder.block.%d.layer." % i
        x = g.rms_norm(h, p + "0.layer_norm.weight", eps)
        sa = p + "0.SelfAttention."
        q = g.split_heads(g.linear(x, sa + "q", bias=False), H, hd)
        k = g.split_heads(g.linear(x, sa + "k", bias=False), H, hd)
        v = g.split_heads(g.linear(x, sa + "v", bias=False), H, hd)
        # No 1/sqrt(d) scaling in T5; block 0's position bias is reused by every block.
        a = g.attention(q, k, v, H, H, hd, 1.0, [pbias, mask])
        h = g.op("Add", [h, g.linear(a, sa + "o", bias=False)])
        x = g.rms_norm(h, p + "1.layer_norm.weight", eps)
        ff = p + "1.DenseReluDense."
        if gated:  # T5DenseGatedActDense: act(wi_0 x) * wi_1 x
            hidden = g.op("Mul", [g.activation(g.linear(x, ff + "wi_0", bias=False), act),
                                  g.linear(x, ff + "wi_1", bias=False)])
        else:      # T5DenseActDense: act(wi x)
            hidden = g.activation(g.linear(x, ff + "wi", bias=False), act)
        h = g.op("Add", [h, g.linear(hidden, ff + "wo", bias=False)])
    h = g.rms_norm(h, P + "encoder.final_layer_norm.weight", eps)
    g.output(h, "last_hidden_state", TP.FLOAT, ["batch", "seq", D])
    return g


class Architecture:
    """What a folder of one model_type needs: its graph builder, the token embeddings' name
    (which tells the prefix the checkpoint saved its names under) and those prefixes, tried in
    order, as attune's frontend (compiler/frontends/HuggingFace.cpp) tries them."""

    def __init__(self, build, tokens, prefixes):
        self.build, self.tokens, self.prefixes = build, tokens, prefixes


ARCHITECTURES = {
    "bert": Architecture(bert_graph, "embeddings.word_embeddings.weight", ("", "bert.")),
    "gpt2": Architecture(gpt2_graph, "wte.weight", ("", "transformer.")),
    "llama": Architecture(llama_graph, "embed_tokens.weight", ("model.", "")),
    "mistral": Architecture(llama_graph, "embed_tokens.weight", ("model.", "")),
    "t5": Architecture(t5_encoder_graph, "shared.weight", ("",)),
}


# --------------------------------------------------------------------------------------------
# Any checkpoint folder

def read_config(folder):
    with open(os.path.join(folder, "config.json")) as f:
        return json.load(f)


def read_checkpoint(folder):
    """Every floating-point tensor of the folder's model.safetensors, or of the shards its
    model.safetensors.index.json lists, widened to float32 (integer buffers such as BERT's
    position_ids are not weights and are left out)."""
    single = os.path.join(folder, "model.safetensors")
    if os.path.exists(single):
        files = [single]
    else:
        with open(os.path.join(folder, "model.safetensors.index.json")) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        files = [os.path.join(folder, s) for s in shards]
    out = {}
    for path in files:
        for name, value in read_safetensors(path, floats_only=True).items():
            if name in out:
                raise ValueError("tensor %r is in two shards" % name)
            out[name] = value
    return out


def sentence_modules(folder):
    """(pool, normalize) from sentence-transformers' modules.json: whether the model is followed
    by mean Pooling and by Normalize. The frontend accepts the same and nothing else."""
    path = os.path.join(folder, "modules.json")
    if not os.path.exists(path):
        return False, False
    with open(path) as f:
        modules = json.load(f)
    pool = normalize = False
    for m in modules:
        kind = m["type"]
        if kind == "sentence_transformers.models.Transformer":
            continue
        if kind == "sentence_transformers.models.Normalize":
            normalize = True
            continue
        if kind != "sentence_transformers.models.Pooling":
            raise NotImplementedError("sentence-transformers module %r" % kind)
        with open(os.path.join(folder, m.get("path") or "1_Pooling", "config.json")) as f:
            modes = {k for k, v in json.load(f).items() if k.startswith("pooling_mode_") and v is True}
        if modes != {"pooling_mode_mean_tokens"}:
            raise NotImplementedError("pooling modes %s (only mean tokens)" % sorted(modes))
        pool = True
    return pool, normalize


def graph_for_folder(folder, weights=None):
    """(config, Graph) for a Hugging Face checkpoint folder of a supported architecture, its
    weights read from the folder unless `weights` (name -> float32 array) is given."""
    cfg = read_config(folder)
    kind = cfg.get("model_type")
    if kind not in ARCHITECTURES:
        raise NotImplementedError("model_type %r (supported: %s)" % (kind, ", ".join(ARCHITECTURES)))
    arch = ARCHITECTURES[kind]
    w = weights if weights is not None else read_checkpoint(folder)
    prefix = next((p for p in arch.prefixes if p + arch.tokens in w), None)
    if prefix is None:
        raise ValueError("%s: no %r, with or without a prefix %s"
                         % (folder, arch.tokens, list(arch.prefixes)))
    if kind == "bert":
        pool, normalize = sentence_modules(folder)
        return cfg, arch.build(cfg, w, prefix, pool=pool, normalize=normalize)
    return cfg, arch.build(cfg, w, prefix)


def onnx_for_folder(folder, weights=None):
    """The ONNX model (onnx.ModelProto) of a Hugging Face checkpoint folder: the same
    transcription of the modeling code the tiny fixtures use, with the folder's sizes from
    config.json and its weights from model.safetensors (initializers under the checkpoint's
    names). Checkpoint tensors the forward pass does not read (BERT's pooler, a T5
    decoder) are left out."""
    cfg, g = graph_for_folder(folder, weights)
    return g.model(cfg["model_type"])


# --------------------------------------------------------------------------------------------
# The tiny fixtures: a config, seeded weights and inputs; the graph is the architecture's.

def bert_weights(cfg, seed, linear_std=None):
    """A BertModel's tensors, seeded: embeddings N(0, 0.3^2), norm scales near 1, biases
    N(0, 0.1^2), and each linear weight N(0, linear_std(n_in)^2) (default: Weights.linear's
    1.6/sqrt(n_in))."""
    D, L, F = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"]
    V, P, T = cfg["vocab_size"], cfg["max_position_embeddings"], cfg["type_vocab_size"]
    std = linear_std or (lambda n_in: None)
    w = Weights(seed=seed)
    w.normal("embeddings.word_embeddings.weight", (V, D), 0.3)
    w.normal("embeddings.position_embeddings.weight", (P, D), 0.3)
    w.normal("embeddings.token_type_embeddings.weight", (T, D), 0.3)
    w.gamma("embeddings.LayerNorm.weight", D)
    w.beta("embeddings.LayerNorm.bias", D)
    for i in range(L):
        p = "encoder.layer.%d." % i
        for n in ("query", "key", "value"):
            w.linear(p + "attention.self." + n, D, D, std=std(D))
        w.linear(p + "attention.output.dense", D, D, std=std(D))
        w.gamma(p + "attention.output.LayerNorm.weight", D)
        w.beta(p + "attention.output.LayerNorm.bias", D)
        w.linear(p + "intermediate.dense", D, F, std=std(D))
        w.linear(p + "output.dense", F, D, std=std(F))
        w.gamma(p + "output.LayerNorm.weight", D)
        w.beta(p + "output.LayerNorm.bias", D)
    return w


def gpt2_weights(cfg, seed, linear_std=None):
    """A GPT2Model's tensors (Conv1D weights [in, out]), seeded: embeddings N(0, 0.2^2) and
    each linear weight N(0, linear_std(n_in)^2) (default: 0.2, and 0.1 for the MLP's output
    projection)."""
    D, L, V, P = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"], cfg["n_positions"]
    F = cfg.get("n_inner") or 4 * D
    std = linear_std or (lambda n_in: 0.1 if n_in == F else 0.2)
    w = Weights(seed=seed)
    w.normal("wte.weight", (V, D), 0.2)
    w.normal("wpe.weight", (P, D), 0.2)
    for i in range(L):
        p = "h.%d." % i
        w.gamma(p + "ln_1.weight", D)
        w.beta(p + "ln_1.bias", D)
        w.normal(p + "attn.c_attn.weight", (D, 3 * D), std(D))   # Conv1D: [in, out]
        w.beta(p + "attn.c_attn.bias", 3 * D)
        w.normal(p + "attn.c_proj.weight", (D, D), std(D))
        w.beta(p + "attn.c_proj.bias", D)
        w.gamma(p + "ln_2.weight", D)
        w.beta(p + "ln_2.bias", D)
        w.normal(p + "mlp.c_fc.weight", (D, F), std(D))
        w.beta(p + "mlp.c_fc.bias", F)
        w.normal(p + "mlp.c_proj.weight", (F, D), std(F))
        w.beta(p + "mlp.c_proj.bias", D)
    w.gamma("ln_f.weight", D)
    w.beta("ln_f.bias", D)
    return w


def llama_weights(cfg, seed, dtype="F32", linear_std=None):
    """LlamaForCausalLM / MistralForCausalLM tensors (an lm_head unless tie_word_embeddings),
    seeded: embeddings N(0, 0.3^2), each linear weight N(0, linear_std(n_in)^2) (default:
    Weights.linear's 1.6/sqrt(n_in))."""
    V, D = cfg["vocab_size"], cfg["hidden_size"]
    H, KV, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    F, L = cfg["intermediate_size"], cfg["num_hidden_layers"]
    std = linear_std or (lambda n_in: None)
    w = Weights(seed=seed, dtype=dtype)
    w.normal("model.embed_tokens.weight", (V, D), 0.3)
    for i in range(L):
        p = "model.layers.%d." % i
        w.gamma(p + "input_layernorm.weight", D)
        w.linear(p + "self_attn.q_proj", D, H * hd, bias=False, std=std(D))
        w.linear(p + "self_attn.k_proj", D, KV * hd, bias=False, std=std(D))
        w.linear(p + "self_attn.v_proj", D, KV * hd, bias=False, std=std(D))
        w.linear(p + "self_attn.o_proj", H * hd, D, bias=False, std=std(H * hd))
        w.gamma(p + "post_attention_layernorm.weight", D)
        w.linear(p + "mlp.gate_proj", D, F, bias=False, std=std(D))
        w.linear(p + "mlp.up_proj", D, F, bias=False, std=std(D))
        w.linear(p + "mlp.down_proj", F, D, bias=False, std=std(F))
    w.gamma("model.norm.weight", D)
    if not cfg["tie_word_embeddings"]:
        w.linear("lm_head", D, V, bias=False, std=std(D))
    return w


def bert_tiny():
    cfg = {
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 128,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 64,
        "model_type": "bert",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "torch_dtype": "float32",
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": 99,
    }
    V = cfg["vocab_size"]
    w = bert_weights(cfg, seed=1001)

    rng = np.random.default_rng(2001)
    ids = rng.integers(1, V, size=(BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[1, -2:] = 0
    ids[mask == 0] = cfg["pad_token_id"]
    types = np.zeros((BATCH, SEQ), np.int64)  # a sentence pair: the second segment is type 1
    types[0, 3:] = 1
    types[1, 3:5] = 1
    inputs = {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}

    g = bert_graph(cfg, w, pool=True, normalize=True)
    extra = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "sentence_bert_config.json": {"max_seq_length": 64, "do_lower_case": False},
        "1_Pooling/config.json": {
            "word_embedding_dimension": cfg["hidden_size"],
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
        # A WordPiece vocabulary of the model's 99 ids, so sentence-transformers (which always
        # loads a tokenizer) can open the folder; the fixtures feed token ids, never text.
        "vocab.txt": "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                               + ["tok%d" % i for i in range(5, V)]) + "\n",
        "tokenizer_config.json": {"do_lower_case": True, "model_max_length": 64,
                                  "tokenizer_class": "BertTokenizer"},
    }
    return cfg, w, inputs, g, extra


def gpt2_cfg(**over):
    cfg = {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": 98,
        "embd_pdrop": 0.1,
        "eos_token_id": 98,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_embd": 64,
        "n_head": 4,
        "n_inner": None,
        "n_layer": 2,
        "n_positions": 64,
        "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": 99,
    }
    cfg.update(over)
    return dict(sorted(cfg.items()))


def gpt2_tiny():
    cfg = gpt2_cfg()
    V = cfg["vocab_size"]
    w = gpt2_weights(cfg, seed=1002)

    rng = np.random.default_rng(2002)
    inputs = {"input_ids": rng.integers(0, V, size=(BATCH, SEQ)).astype(np.int64)}
    return cfg, w, inputs, gpt2_graph(cfg, w), {}


def llama_like(cfg, seed, dtype):
    """LlamaForCausalLM / MistralForCausalLM weights and inputs (the same tensor names; an
    lm_head unless tie_word_embeddings)."""
    V = cfg["vocab_size"]
    w = llama_weights(cfg, seed, dtype)

    rng = np.random.default_rng(seed + 1000)
    inputs = {"input_ids": rng.integers(0, V, size=(BATCH, SEQ)).astype(np.int64)}
    return cfg, w, inputs, llama_graph(cfg, w), {}


def llama_cfg(**over):
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": 16,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 96,
        "max_position_embeddings": 64,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "vocab_size": 99,
    }
    cfg.update(over)
    return dict(sorted(cfg.items()))


def llama_tiny():
    return llama_like(llama_cfg(), seed=1003, dtype="BF16")


def llama3_scaled_tiny():
    # original_max_position_embeddings 64 (not 16): with head_dim 16 and theta 500000 the
    # wavelengths 2*pi/inv_freq are 6.3, 32.4, 167, ...; against 64 / high_freq_factor = 16 and
    # 64 / low_freq_factor = 64 that puts one frequency in each of llama3's three bands (kept,
    # smoothed, divided by factor). 16 would leave the "kept" band empty.
    cfg = llama_cfg(
        max_position_embeddings=512,
        rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 64, "rope_type": "llama3"},
        rope_theta=500000.0,
        torch_dtype="float32",
    )
    return llama_like(cfg, seed=1005, dtype="F32")


def mistral_tiny():
    cfg = {
        "architectures": ["MistralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": 16,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 96,
        "max_position_embeddings": 64,
        "model_type": "mistral",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06,
        "rope_theta": 10000.0,
        "sliding_window": 4,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": 99,
    }
    return llama_like(cfg, seed=1004, dtype="F32")


def t5_encoder_weights(cfg, seed, qk_std=0.1):
    """A T5EncoderModel's tensors, seeded: the shared embedding N(0, 0.3^2), q and k
    N(0, qk_std^2) (small by default: T5 does not scale q k^T by 1/sqrt(d_kv); None gives
    Weights.linear's default), the first layer's relative attention bias N(0, 0.5^2)."""
    V, D, H = cfg["vocab_size"], cfg["d_model"], cfg["num_heads"]
    hd, F, L = cfg["d_kv"], cfg["d_ff"], cfg["num_layers"]
    NB = cfg["relative_attention_num_buckets"]
    w = Weights(seed=seed)
    w.normal("shared.weight", (V, D), 0.3)
    for i in range(L):
        p = "encoder.block.%d.layer." % i
        w.linear(p + "0.SelfAttention.q", D, H * hd, bias=False, std=qk_std)
        w.linear(p + "0.SelfAttention.k", D, H * hd, bias=False, std=qk_std)
        w.linear(p + "0.SelfAttention.v", D, H * hd, bias=False)
        w.linear(p + "0.SelfAttention.o", H * hd, D, bias=False)
        if i == 0:
            w.normal(p + "0.SelfAttention.relative_attention_bias.weight", (NB, H), 0.5)
        w.gamma(p + "0.layer_norm.weight", D)
        w.linear(p + "1.DenseReluDense.wi_0", D, F, bias=False)
        w.linear(p + "1.DenseReluDense.wi_1", D, F, bias=False)
        w.linear(p + "1.DenseReluDense.wo", F, D, bias=False)
        w.gamma(p + "1.layer_norm.weight", D)
    w.gamma("encoder.final_layer_norm.weight", D)
    return w


def t5_encoder_tiny():
    # relative_attention_num_buckets 8 and max_distance 16 (not T5's 32 and 128): with 32
    # buckets every |j - i| < 8 has its own bucket, so a 7-token input would never reach the
    # logarithmic buckets. With 8 buckets (4 a direction, 2 exact) |j - i| = 0..6 land in
    # buckets 0, 1, 2, 2, 2, 2, 3 (+4 for j > i): both halves of _relative_position_bucket run,
    # and no distance sits on a float rounding boundary of the log formula.
    cfg = {
        "architectures": ["T5EncoderModel"],
        "classifier_dropout": 0.0,
        "d_ff": 96,
        "d_kv": 16,
        "d_model": 64,
        "decoder_start_token_id": 0,
        "dense_act_fn": "gelu_new",
        "dropout_rate": 0.1,
        "eos_token_id": 1,
        "feed_forward_proj": "gated-gelu",
        "initializer_factor": 1.0,
        "is_encoder_decoder": True,
        "is_gated_act": True,
        "layer_norm_epsilon": 1e-06,
        "model_type": "t5",
        "num_decoder_layers": 2,
        "num_heads": 4,
        "num_layers": 2,
        "pad_token_id": 0,
        "relative_attention_max_distance": 16,
        "relative_attention_num_buckets": 8,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": 99,
    }
    V = cfg["vocab_size"]
    w = t5_encoder_weights(cfg, seed=1006)

    rng = np.random.default_rng(2006)
    ids = rng.integers(2, V, size=(BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[1, -2:] = 0
    ids[mask == 0] = cfg["pad_token_id"]
    inputs = {"input_ids": ids, "attention_mask": mask}
    return cfg, w, inputs, t5_encoder_graph(cfg, w), {}


MODELS = {
    "bert-tiny": bert_tiny,
    "gpt2-tiny": gpt2_tiny,
    "llama-tiny": llama_tiny,
    "mistral-tiny": mistral_tiny,
    "llama3-scaled-tiny": llama3_scaled_tiny,
    "t5-encoder-tiny": t5_encoder_tiny,
}


# --------------------------------------------------------------------------------------------
# Writing a folder

def run_ort(model, inputs):
    import onnxruntime as ort
    opts = ort.SessionOptions()  # graph optimisations at their default level
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def make(name, out_root, keep_onnx):
    import onnx
    cfg, w, inputs, g, extra = MODELS[name]()
    folder = os.path.join(out_root, name)
    # Start from an empty folder so nothing stale survives a change of contract.
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    write_json(os.path.join(folder, "config.json"), cfg)
    st = os.path.join(folder, "model.safetensors")
    write_safetensors(st, w.list(), metadata={"format": "pt"})
    # The file must give back exactly the values the ONNX graph uses.
    back = read_safetensors(st)
    assert sorted(back) == sorted(w.tensors), name
    for k, t in w.tensors.items():
        assert np.array_equal(back[k], t.value), k
    for rel, content in extra.items():
        path = os.path.join(folder, rel)
        if isinstance(content, str):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
        else:
            write_json(path, content)

    model = g.model(name.replace("-", "_"))
    onnx.checker.check_model(model, full_check=True)
    unused = set(w.tensors) - set(g.inits)
    assert not unused, "checkpoint tensors the graph never reads: %s" % sorted(unused)
    outputs = run_ort(model, inputs)
    for sub, arrays in (("inputs", inputs), ("reference", outputs)):
        os.makedirs(os.path.join(folder, sub))
        for k, a in arrays.items():
            assert a.dtype.kind != "f" or np.all(np.isfinite(a)), (name, k)
            np.save(os.path.join(folder, sub, k + ".npy"), a)
    if keep_onnx:
        onnx.save(model, os.path.join(folder, "model.onnx"))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
    shapes = ", ".join("%s %s%s" % (k, v.dtype, list(v.shape)) for k, v in outputs.items())
    print("%-20s %7.1f KiB  %s" % (name, size / 1024.0, shapes))


# --------------------------------------------------------------------------------------------
# --check-with-transformers

def check_with_transformers(names, out_root):
    """Loads each folder with transformers (eager and sdpa attention) and compares with
    reference/. Returns the worst relative error seen."""
    import torch
    import transformers

    classes = {
        "bert-tiny": transformers.BertModel,
        "gpt2-tiny": transformers.GPT2LMHeadModel,
        "llama-tiny": transformers.LlamaForCausalLM,
        "mistral-tiny": transformers.MistralForCausalLM,
        "llama3-scaled-tiny": transformers.LlamaForCausalLM,
        "t5-encoder-tiny": transformers.T5EncoderModel,
    }
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    print("transformers %s, torch %s" % (transformers.__version__, torch.__version__))
    ok = True

    def compare(label, got, want):
        nonlocal ok
        got = np.asarray(got, dtype=np.float32)
        err = np.abs(got - want)
        rel = err / np.maximum(np.abs(want), 1e-6)
        l2 = np.linalg.norm(got - want) / np.linalg.norm(want)
        good = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
        ok = ok and good
        print("  %-40s max abs %.2e  max rel %.2e  rel l2 %.2e  (max |ref| %.2f) %s"
              % (label, err.max(), rel.max(), l2, np.abs(want).max(), "ok" if good else "MISMATCH"))

    for name in names:
        folder = os.path.join(out_root, name)
        inputs = {f[:-4]: np.load(os.path.join(folder, "inputs", f))
                  for f in sorted(os.listdir(os.path.join(folder, "inputs")))}
        refs = {f[:-4]: np.load(os.path.join(folder, "reference", f))
                for f in sorted(os.listdir(os.path.join(folder, "reference")))}
        # A second, longer input through a freshly built graph: checks the graph beyond the
        # committed shapes (T5's clamped buckets, the window and the causal mask at length 40).
        _, _, _, g, _ = MODELS[name]()
        long_inputs = {}
        rng = np.random.default_rng(7)
        for k, v in inputs.items():
            if k == "attention_mask":
                a = np.ones((BATCH, 40), np.int64)
                a[1, 29:] = 0
            elif k == "token_type_ids":
                a = (np.arange(40)[None, :] >= 20).astype(np.int64).repeat(BATCH, 0)
            else:
                a = rng.integers(1, 99, size=(BATCH, 40)).astype(np.int64)
            long_inputs[k] = a
        long_refs = run_ort(g.model(name), long_inputs)
        print(name)
        for impl in ("eager", "sdpa"):
            model, info = classes[name].from_pretrained(
                folder, dtype=torch.float32, attn_implementation=impl, output_loading_info=True)
            model.eval()
            problems = {k: sorted(v) for k, v in info.items() if v}
            missing = set(problems.get("missing_keys", ()))
            if missing and missing <= {"pooler.dense.weight", "pooler.dense.bias"}:
                del problems["missing_keys"]  # BertModel's pooler: not in the checkpoint, by design
            if problems:
                ok = False
                print("  loading (%s): %s" % (impl, problems))
            for tag, x, want in (("", inputs, refs), (", S=40", long_inputs, long_refs)):
                with torch.no_grad():
                    out = model(**{k: torch.from_numpy(v) for k, v in x.items()})
                for key in want:
                    if key == "sentence_embedding":
                        continue
                    compare("%s (%s%s)" % (key, impl, tag), getattr(out, key).numpy(), want[key])
        if name == "bert-tiny":
            from sentence_transformers import SentenceTransformer
            st = SentenceTransformer(folder, device="cpu")
            st.eval()
            with torch.no_grad():
                feats = st.forward({k: torch.from_numpy(v) for k, v in inputs.items()})
            compare("sentence_embedding (SentenceTransformer)",
                    feats["sentence_embedding"].numpy(), refs["sentence_embedding"])
            compare("last_hidden_state (SentenceTransformer)",
                    feats["token_embeddings"].numpy(), refs["last_hidden_state"])
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", help="which (default: all): " + ", ".join(MODELS))
    ap.add_argument("--out", default=DEFAULT_OUT, help="where the folders go (default tests/models)")
    ap.add_argument("--keep-onnx", action="store_true", help="also write model.onnx in each folder")
    ap.add_argument("--check-with-transformers", action="store_true",
                    help="after writing, load each folder with transformers and compare")
    ap.add_argument("--check-only", action="store_true",
                    help="compare the existing folders with transformers; write nothing")
    args = ap.parse_args()
    names = args.models or list(MODELS)
    for n in names:
        if n not in MODELS:
            ap.error("unknown model %r; known: %s" % (n, ", ".join(MODELS)))
    if not args.check_only:
        for n in names:
            make(n, args.out, args.keep_onnx)
    if args.check_with_transformers or args.check_only:
        if not check_with_transformers(names, args.out):
            print("transformers disagrees with the references")
            return 1
        print("transformers agrees with every reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
