#!/usr/bin/env python3
"""Writes the seed corpus of the ONNX importer fuzz target.

    python3 tests/fuzz/make_onnx_corpus.py tests/fuzz/corpus/onnx

Needs numpy and the onnx package (build/ort-venv has both). The valid seeds
are the graphs scripts/hf_fixtures.py transcribes from the Hugging Face
modeling code (BERT with mean pooling and L2 normalisation, GPT-2, Llama with
grouped heads, Mistral's sliding window, the T5 encoder), built by its
builders over tiny random weights (width 8, one layer, so each file is a few
KB), plus hand-written graphs for what those do not cover: attention as
torch.onnx writes it (rank-4 heads, the reshape target from Shape, Gather,
Unsqueeze and Concat, a padding mask through Equal, ConstantOfShape, Where),
opset 20's Gelu, RoPE through Slice, Gemm, the logical ops, every Constant
attribute and initializer storage (raw_data, float_data, int64_data,
int32_data, BOOL), an initializer held as external data, opset 23, a FLOAT16
input, FLOAT16 and BFLOAT16 initializers with Casts to and from FLOAT16. Each
invalid seed breaks one rule the importer checks: a truncated
file, an empty one, a cycle, an unknown op, the opset-23 Attention,
RotaryEmbedding and RMSNormalization and the Trilu/Expand causal mask (which
the importer does not support), opset 16, external data outside the folder
or past the end of its file, raw_data too short (FLOAT and FLOAT16), FLOAT16
bits in int32_data beyond 16 bits, a graph input without a
shape, a STRING initializer, an output defined twice, an input nothing
produces, a graph without outputs, dims of 2^40. Last, the inputs that
crashed the importer before it was fixed, as the fuzz target found them: a
Mul with one input, SiLU over a value that fails to convert, Unsqueeze with
an axis twice, a Reshape to 2^62 rows, a Slice step near 2^63, and
LayerNormalization without a bias over a dynamic last dim.

External data is read from weights.bin beside the model: the fuzz target
(OnnxFuzzer.cpp) writes that file into its scratch folder, 64 float32 values
(k - 32) / 16 for k = 0..63, and a copy as sub/weights.bin. The output is
fixed by this script: running it again must leave `git status` clean.
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import hf_fixtures  # noqa: E402  (the graph builders, not copied)

PRODUCER = "attune tests/fuzz/make_onnx_corpus.py"
# The IR version each opset came with; the checker refuses older ones.
IR_VERSION = {17: 8, 18: 8, 20: 9, 23: 11}
INT64_MAX = 2**63 - 1


def model(nodes, inputs, outputs, inits=(), opset=17, name="g", check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name=PRODUCER)
    m.ir_version = IR_VERSION.get(opset, 8)
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


def f32(name, shape, seed, scale=0.5):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(
        (rng.normal(0.0, scale, size=shape)).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def scalar(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


# --------------------------------------------------------------------------------------------
# Tiny weights under Hugging Face's names, for hf_fixtures' graph builders.

D, HEADS, V, F, POS = 8, 2, 11, 12, 16


def bert_weights():
    w = hf_fixtures.Weights(seed=11)
    w.normal("embeddings.word_embeddings.weight", (V, D), 0.3)
    w.normal("embeddings.position_embeddings.weight", (POS, D), 0.3)
    w.normal("embeddings.token_type_embeddings.weight", (2, D), 0.3)
    w.gamma("embeddings.LayerNorm.weight", D)
    w.beta("embeddings.LayerNorm.bias", D)
    p = "encoder.layer.0."
    for n in ("query", "key", "value"):
        w.linear(p + "attention.self." + n, D, D)
    w.linear(p + "attention.output.dense", D, D)
    w.gamma(p + "attention.output.LayerNorm.weight", D)
    w.beta(p + "attention.output.LayerNorm.bias", D)
    w.linear(p + "intermediate.dense", D, F)
    w.linear(p + "output.dense", F, D)
    w.gamma(p + "output.LayerNorm.weight", D)
    w.beta(p + "output.LayerNorm.bias", D)
    cfg = {"hidden_size": D, "num_attention_heads": HEADS, "num_hidden_layers": 1,
           "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    return hf_fixtures.bert_graph(cfg, w, pool=True, normalize=True)


def gpt2_weights():
    w = hf_fixtures.Weights(seed=12)
    w.normal("wte.weight", (V, D), 0.2)
    w.normal("wpe.weight", (POS, D), 0.2)
    p = "h.0."
    for ln in ("ln_1", "ln_2"):
        w.gamma(p + ln + ".weight", D)
        w.beta(p + ln + ".bias", D)
    for name, n_in, n_out in (("attn.c_attn", D, 3 * D), ("attn.c_proj", D, D),
                              ("mlp.c_fc", D, F), ("mlp.c_proj", F, D)):
        w.normal(p + name + ".weight", (n_in, n_out), 0.2)  # Conv1D: [in, out]
        w.beta(p + name + ".bias", n_out)
    w.gamma("ln_f.weight", D)
    w.beta("ln_f.bias", D)
    cfg = {"n_embd": D, "n_head": HEADS, "n_layer": 1, "vocab_size": V,
           "activation_function": "gelu_new"}
    return hf_fixtures.gpt2_graph(cfg, w)


def llama_graph(**over):
    cfg = hf_fixtures.llama_cfg(hidden_size=D, num_attention_heads=HEADS, num_key_value_heads=1,
                                head_dim=4, intermediate_size=F, num_hidden_layers=1,
                                vocab_size=V, **over)
    return hf_fixtures.llama_like(cfg, seed=13, dtype="F32")[3]


def t5_weights():
    cfg = {"vocab_size": V, "d_model": D, "num_heads": HEADS, "d_kv": D // HEADS, "d_ff": F,
           "num_layers": 1, "relative_attention_num_buckets": 8,
           "relative_attention_max_distance": 16, "feed_forward_proj": "gated-gelu"}
    w = hf_fixtures.t5_encoder_weights(cfg, seed=14, qk_std=None)
    return hf_fixtures.t5_encoder_graph(cfg, w)


def from_builder(g, name):
    m = g.model(name)
    onnx.checker.check_model(m, full_check=True)
    return m


# --------------------------------------------------------------------------------------------
# Hand-written graphs

def attention_torch_export():
    """One BERT-like layer as torch.onnx writes it: heads as rank-4 [B, H, S, hd] tensors,
    reshape targets from Shape/Gather/Unsqueeze/Concat, the padding mask through Equal,
    ConstantOfShape and Where, scores divided by sqrt(hd), opset 20's Gelu."""
    hd = D // HEADS
    nodes = [
        node("Shape", ["x"], ["x_shape"]),
        node("Gather", ["x_shape", "zero"], ["batch"], axis=0),
        node("Gather", ["x_shape", "one"], ["seq"], axis=0),
        node("Unsqueeze", ["batch", "axes0"], ["batch_1"]),
        node("Unsqueeze", ["seq", "axes0"], ["seq_1"]),
        node("Concat", ["batch_1", "seq_1", "heads_hd"], ["split_shape"], axis=0),
        node("Concat", ["batch_1", "seq_1", "hidden"], ["merge_shape"], axis=0),
    ]
    for n in "qkv":
        nodes += [
            node("MatMul", ["x", "w" + n], [n + "_mm"]),
            node("Add", [n + "_mm", "b" + n], [n + "_lin"]),
            node("Reshape", [n + "_lin", "split_shape"], [n + "_heads"]),
        ]
    nodes += [
        node("Transpose", ["q_heads"], ["q"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k_heads"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v_heads"], ["v"], perm=[0, 2, 1, 3]),
        node("MatMul", ["q", "kt"], ["scores"]),
        node("Constant", [], ["sqrt_hd"], value=helper.make_tensor("", TP.FLOAT, [], [math.sqrt(hd)])),
        node("Div", ["scores", "sqrt_hd"], ["scaled"]),
        # mask [B, S] int64: 0 marks padding.
        node("ConstantOfShape", ["one_elem"], ["zero_i64"],
             value=helper.make_tensor("", TP.INT64, [1], [0])),
        node("Equal", ["mask", "zero_i64"], ["padded"]),
        node("Where", ["padded", "neg_big", "zero_f"], ["bias2"]),
        node("Unsqueeze", ["bias2", "axes12"], ["bias"]),
        node("Add", ["scaled", "bias"], ["biased"]),
        node("Softmax", ["biased"], ["probs"], axis=-1),
        node("MatMul", ["probs", "v"], ["ctx_heads"]),
        node("Transpose", ["ctx_heads"], ["ctx_t"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx_t", "merge_shape"], ["ctx"]),
        node("MatMul", ["ctx", "wo"], ["o_mm"]),
        node("Add", ["o_mm", "x"], ["res"]),
        node("LayerNormalization", ["res", "ln_g", "ln_b"], ["h"], axis=-1, epsilon=1e-5),
        node("MatMul", ["h", "w1"], ["f1"]),
        node("Gelu", ["f1"], ["g1"]),
        node("MatMul", ["g1", "w2"], ["f2"]),
        node("Gelu", ["f2"], ["g2"], approximate="tanh"),
        node("Add", ["g2", "h"], ["y"]),
    ]
    inits = [f32("w" + n, (D, D), 20 + k) for k, n in enumerate("qkvo")]
    inits += [f32("b" + n, (D,), 30 + k, 0.1) for k, n in enumerate("qkv")]
    inits += [f32("w1", (D, F), 40), f32("w2", (F, D), 41),
              f32("ln_g", (D,), 42, 0.1), f32("ln_b", (D,), 43, 0.1),
              i64("zero", 0), i64("one", 1), i64("axes0", [0]), i64("axes12", [1, 2]),
              i64("heads_hd", [HEADS, hd]), i64("hidden", [D]), i64("one_elem", [1]),
              scalar("neg_big", -1e9), scalar("zero_f", 0.0)]
    return model(nodes, [vi("x", TP.FLOAT, ["batch", "seq", D]),
                         vi("mask", TP.INT64, ["batch", "seq"])],
                 [vi("y", TP.FLOAT, ["batch", "seq", D])], inits, opset=20, name="attention")


def rope_slice():
    """rotate_half through Slice (opset 13+ inputs, with axes and steps), Neg and Concat;
    cos and sin tables as float_data initializers; a constant index Gather, Squeeze, Flatten."""
    S, hd = 5, 4
    pos = np.arange(S, dtype=np.float32)[:, None] * np.array([1.0, 0.1], np.float32)[None, :]
    emb = np.concatenate([pos, pos], axis=-1)
    cos = helper.make_tensor("cos", TP.FLOAT, [S, hd], np.cos(emb).flatten().tolist())
    sin = helper.make_tensor("sin", TP.FLOAT, [S, hd], np.sin(emb).flatten().tolist())
    nodes = [
        node("Slice", ["x", "start0", "half", "axis3"], ["x1"]),
        node("Slice", ["x", "half", "end_max", "axis3", "step1"], ["x2"]),
        node("Neg", ["x2"], ["neg_x2"]),
        node("Concat", ["neg_x2", "x1"], ["rot"], axis=-1),
        node("Mul", ["x", "cos"], ["xc"]),
        node("Mul", ["rot", "sin"], ["rs"]),
        node("Add", ["xc", "rs"], ["roped"]),
        node("Gather", ["roped", "zero"], ["head0"], axis=1),          # [1, S, hd]
        node("Squeeze", ["head0", "axis0"], ["head0_2d"]),            # [S, hd]
        node("Slice", ["roped", "start0", "two", "axis2", "two"], ["every_other"]),
        node("Flatten", ["every_other"], ["flat"], axis=2),           # [2, hd]
        node("Identity", ["head0_2d"], ["y"]),
        node("Identity", ["flat"], ["z"]),
    ]
    inits = [cos, sin, i64("start0", [0]), i64("half", [hd // 2]), i64("end_max", [INT64_MAX]),
             i64("axis3", [3]), i64("step1", [1]), i64("zero", 0), i64("axis0", [0]),
             i64("two", [2]), i64("axis2", [2])]
    return model(nodes, [vi("x", TP.FLOAT, [1, 2, S, hd])],
                 [vi("y", TP.FLOAT, [S, hd]), vi("z", TP.FLOAT, [2, hd])],
                 inits, opset=18, name="rope_slice")


def gemm_constants():
    """Gemm with transB and a bias, every Constant attribute, integer initializers stored as
    int64_data and int32_data, a BOOL initializer, Range over constants, Split by sizes,
    Pow(x, 2), ReduceSum over the last two axes, Cast, Min and Max."""
    bool_t = helper.make_tensor("keep", TP.BOOL, [4], [1, 0, 1, 1])
    i32 = helper.make_tensor("offsets", TP.INT32, [4], [3, -1, 0, 7])
    nodes = [
        node("Gemm", ["x", "w", "b"], ["lin"], transB=1),
        node("Constant", [], ["c_f"], value_float=0.5),
        node("Constant", [], ["c_fs"], value_floats=[1.0, 2.0, 3.0, 4.0]),
        node("Constant", [], ["c_i"], value_int=2),
        node("Constant", [], ["c_is"], value_ints=[2, 2]),
        node("Mul", ["lin", "c_f"], ["half"]),
        node("Add", ["half", "c_fs"], ["shifted"]),
        node("Pow", ["shifted", "c_two"], ["sq"]),
        node("Relu", ["sq"], ["r"]),
        node("Split", ["r", "c_is"], ["s0", "s1"], axis=1),
        node("Max", ["s0", "s1"], ["mx"]),
        node("Min", ["mx", "c_f"], ["mn"]),
        node("Sub", ["mx", "mn"], ["diff"]),
        node("ReduceSum", ["diff", "axis_last"], ["rs_last"], keepdims=1),
        node("ReduceSum", ["r", "axis_rows"], ["rs_rows"], keepdims=0),
        node("Range", ["r0", "c_i_scalar", "r1"], ["rng"]),
        node("Cast", ["rng"], ["rng_f"], to=TP.FLOAT),
        node("Cast", ["offsets"], ["off_i64"], to=TP.INT64),
        node("Cast", ["off_i64"], ["off_f"], to=TP.FLOAT),
        node("Where", ["keep", "off_f", "c_fs"], ["picked"]),
        node("Add", ["rs_rows", "picked"], ["z0"]),
        node("Abs", ["z0"], ["z1"]),
        node("Log", ["z1"], ["z2"]),
        node("Cos", ["z2"], ["z3"]),
        node("Sin", ["z3"], ["z"]),
        node("Identity", ["rs_last"], ["y"]),
        node("Identity", ["rng_f"], ["ranged"]),
    ]
    inits = [f32("w", (4, 6), 50), f32("b", (4,), 51, 0.1), bool_t, i32,
             helper.make_tensor("axis_last", TP.INT64, [1], [-1]),
             helper.make_tensor("axis_rows", TP.INT64, [1], [0]),
             helper.make_tensor("r0", TP.INT64, [], [0]),
             helper.make_tensor("r1", TP.INT64, [], [1]),
             helper.make_tensor("c_i_scalar", TP.INT64, [], [3]),
             scalar("c_two", 2.0)]
    return model(nodes, [vi("x", TP.FLOAT, [3, 6])],
                 [vi("y", TP.FLOAT, [3, 1]), vi("z", TP.FLOAT, [4]),
                  vi("ranged", TP.FLOAT, [3])], inits, opset=18, name="gemm_constants")


def logical():
    """Comparisons and the boolean ops, which the importer writes as i32 arithmetic."""
    nodes = [
        node("Greater", ["a", "b"], ["gt"]),
        node("LessOrEqual", ["a", "b"], ["le"]),
        node("GreaterOrEqual", ["a", "zero"], ["ge"]),
        node("Less", ["b", "zero"], ["lt"]),
        node("And", ["gt", "ge"], ["and"]),
        node("Or", ["le", "lt"], ["or"]),
        node("Xor", ["and", "or"], ["xor"]),
        node("Not", ["xor"], ["not"]),
        node("Cast", ["not"], ["not_f"], to=TP.FLOAT),
        node("Equal", ["not_f", "flag"], ["eq"]),   # tfm.compare takes no booleans
        node("Cast", ["eq"], ["y"], to=TP.FLOAT),
    ]
    return model(nodes, [vi("a", TP.FLOAT, ["n", 4]), vi("b", TP.FLOAT, ["n", 4]),
                         vi("flag", TP.FLOAT, [4])],
                 [vi("y", TP.FLOAT, ["n", 4])], [scalar("zero", 0.0)], opset=17,
                 name="logical")


def external(location="weights.bin", offset=64, length=64, name="external"):
    """MatMul by a 4x4 initializer held in weights.bin at `offset`."""
    w = TP()
    w.name = "w"
    w.data_type = TP.FLOAT
    w.dims.extend([4, 4])
    w.data_location = TP.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = w.external_data.add()
        e.key, e.value = key, value
    nodes = [node("MatMul", ["x", "w"], ["y"])]
    return model(nodes, [vi("x", TP.FLOAT, ["batch", 4])], [vi("y", TP.FLOAT, ["batch", 4])],
                 [w], name=name, check=False)


def opset23():
    """Opset 23 (the newest the importer takes) with Reshape's allowzero, Unsqueeze and
    Squeeze by inputs, Shape with start and end."""
    nodes = [
        node("Shape", ["x"], ["tail"], start=-1),
        node("Concat", ["lead", "tail"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["r"], allowzero=0),
        node("Unsqueeze", ["r", "ax0"], ["u"]),
        node("Squeeze", ["u", "ax0"], ["s"]),
        node("Transpose", ["s"], ["t"]),
        node("Sigmoid", ["t"], ["sig"]),
        node("Mul", ["t", "sig"], ["y"]),   # SiLU
    ]
    return model(nodes, [vi("x", TP.FLOAT, [2, 3, 4])], [vi("y", TP.FLOAT, [4, 6])],
                 [i64("lead", [6]), i64("ax0", [0])], opset=23, name="opset23")


def half_initializers():
    """An fp16 graph as exporters write one: FLOAT16 initializers in raw_data and in
    int32_data, a BFLOAT16 one, Casts to FLOAT16 and back, a FLOAT16 Constant."""
    rng = np.random.default_rng(90)
    w = helper.make_tensor("w", TP.FLOAT16, [4, 3], rng.standard_normal((4, 3)).astype(np.float16))
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float16), "b")
    w2 = helper.make_tensor("w2", TP.BFLOAT16, [3, 3], rng.standard_normal(9).tolist())
    nodes = [node("Cast", ["x"], ["x16"], to=TP.FLOAT16),
             node("MatMul", ["x16", "w"], ["xw"]),
             node("Constant", [], ["half"], value=numpy_helper.from_array(
                 np.array(0.5, np.float16), "half")),
             node("Mul", ["xw", "half"], ["h"]),
             node("Add", ["h", "b"], ["hb"]),
             node("Cast", ["hb"], ["h32"], to=TP.FLOAT),
             node("Cast", ["w2"], ["w2f"], to=TP.FLOAT),
             node("MatMul", ["h32", "w2f"], ["y"])]
    return model(nodes, [vi("x", TP.FLOAT, [2, 4])], [vi("y", TP.FLOAT, [2, 3])], [w, b, w2],
                 name="half")


def f16_input():
    """FLOAT16 graph inputs: LayerNormalization without a bias, then Relu."""
    nodes = [node("LayerNormalization", ["x", "g"], ["n"], axis=-1),
             node("Relu", ["n"], ["y"])]
    return model(nodes, [vi("x", TP.FLOAT16, [2, 4]), vi("g", TP.FLOAT16, [4])],
                 [vi("y", TP.FLOAT16, [2, 4])], opset=17, name="f16")


# Invalid ----------------------------------------------------------------------------------

def one_op(op, inputs=("x",), opset=17, name=None, inits=(), domain="", **attrs):
    n = helper.make_node(op, list(inputs), ["y"], name=name or op.lower(), domain=domain, **attrs)
    m = model([n], [vi("x", TP.FLOAT, [1, 2, 3, 4])], [vi("y", TP.FLOAT, None)], inits,
              opset=opset, name=op.lower(), check=False)
    return m


def opset23_fused():
    """What an opset-23 exporter may fuse: RMSNormalization, RotaryEmbedding, Attention."""
    hd = 4
    nodes = [
        node("RMSNormalization", ["x", "g"], ["n"], axis=-1, epsilon=1e-6),
        node("RotaryEmbedding", ["n", "cos", "sin"], ["q"], num_heads=2),
        node("Attention", ["q", "q", "q"], ["y"], q_num_heads=2, kv_num_heads=2, is_causal=1),
    ]
    inits = [f32("g", (D,), 60), f32("cos", (1, 5, hd // 2), 61), f32("sin", (1, 5, hd // 2), 62)]
    return model(nodes, [vi("x", TP.FLOAT, [1, 5, D])], [vi("y", TP.FLOAT, [1, 5, D])], inits,
                 opset=23, name="opset23_fused", check=False)


def trilu_expand_mask():
    """The causal mask some exporters write: ones, Trilu, Expand to the batch, Where."""
    nodes = [
        node("ConstantOfShape", ["ss"], ["ones"], value=helper.make_tensor("", TP.FLOAT, [1], [1.0])),
        node("Trilu", ["ones"], ["lower"], upper=0),
        node("Cast", ["lower"], ["keep"], to=TP.BOOL),
        node("Expand", ["keep", "bss"], ["keep_b"]),
        node("Where", ["keep_b", "x", "neg_big"], ["y"]),
    ]
    return model(nodes, [vi("x", TP.FLOAT, [2, 5, 5])], [vi("y", TP.FLOAT, [2, 5, 5])],
                 [i64("ss", [5, 5]), i64("bss", [2, 5, 5]), scalar("neg_big", -1e9)],
                 name="trilu_mask", check=False)


def cycle():
    nodes = [node("Add", ["x", "b"], ["a"]), node("Relu", ["a"], ["b"]),
             node("Neg", ["b"], ["y"])]
    return model(nodes, [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [4])], name="cycle",
                 check=False)


def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {}

    def put(name, m):
        seeds[name] = m.SerializeToString()

    put("valid_bert_pool_normalize", from_builder(bert_weights(), "bert"))
    put("valid_gpt2", from_builder(gpt2_weights(), "gpt2"))
    put("valid_llama_gqa_rope", from_builder(llama_graph(), "llama"))
    put("valid_mistral_window", from_builder(
        llama_graph(model_type="mistral", sliding_window=2, tie_word_embeddings=True), "mistral"))
    put("valid_t5_encoder", from_builder(t5_weights(), "t5"))
    put("valid_attention_torch_export", attention_torch_export())
    put("valid_rope_slice", rope_slice())
    put("valid_gemm_constants", gemm_constants())
    put("valid_logical", logical())
    put("valid_external_data", external())
    put("valid_opset23", opset23())
    put("valid_f16_input", f16_input())
    put("valid_half_initializers", half_initializers())

    seeds["invalid_truncated"] = seeds["valid_llama_gqa_rope"][:len(seeds["valid_llama_gqa_rope"]) // 2]
    seeds["invalid_empty"] = b""
    put("invalid_cycle", cycle())
    put("invalid_unknown_op", one_op("HardSwish"))
    put("invalid_custom_domain", one_op("Gelu", domain="com.microsoft"))
    put("invalid_opset23_fused", opset23_fused())
    put("invalid_trilu_expand_mask", trilu_expand_mask())
    put("invalid_opset16", one_op("Relu", opset=16))
    put("invalid_external_escape", external(location="../../etc/passwd", name="escape"))
    put("invalid_external_past_end", external(offset=224, name="past_end"))
    short = f32("w", (4, 4), 70)
    short.raw_data = short.raw_data[:40]
    put("invalid_raw_data_short", model([node("MatMul", ["x", "w"], ["y"])],
                                        [vi("x", TP.FLOAT, [2, 4])], [vi("y", TP.FLOAT, [2, 4])],
                                        [short], name="short", check=False))
    short16 = numpy_helper.from_array(np.ones((4, 4), np.float16), "w")
    short16.raw_data = short16.raw_data[:20]
    put("invalid_f16_raw_data_short", model([node("MatMul", ["x", "w"], ["y"])],
                                            [vi("x", TP.FLOAT16, [2, 4])],
                                            [vi("y", TP.FLOAT16, [2, 4])], [short16],
                                            name="short16", check=False))
    bits = helper.make_tensor("w", TP.FLOAT16, [2], [0.5, 1.0])
    bits.int32_data[1] = 70000
    put("invalid_f16_bits", model([node("Add", ["x", "w"], ["y"])], [vi("x", TP.FLOAT16, [2])],
                                  [vi("y", TP.FLOAT16, [2])], [bits], name="bits16",
                                  check=False))
    no_shape = helper.make_tensor_value_info("x", TP.FLOAT, None)
    put("invalid_input_no_shape", model([node("Relu", ["x"], ["y"])], [no_shape],
                                        [vi("y", TP.FLOAT, [4])], name="no_shape", check=False))
    put("invalid_string_initializer", one_op(
        "Add", inputs=("x", "s"), inits=[helper.make_tensor("s", TP.STRING, [1], [b"abc"])]))
    put("invalid_output_twice", model([node("Relu", ["x"], ["y"], name="r1"),
                                       node("Neg", ["x"], ["y"], name="r2")],
                                      [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [4])],
                                      name="twice", check=False))
    put("invalid_missing_input", one_op("Add", inputs=("x", "bias")))
    put("invalid_no_outputs", model([node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT, [4])], [],
                                    name="no_outputs", check=False))
    huge = TP()
    huge.name, huge.data_type = "w", TP.FLOAT
    huge.dims.extend([2**40])
    put("invalid_dims_2_40", one_op("Add", inputs=("x", "w"), inits=[huge]))

    # What the fuzz target found, as it found it (OnnxImporter.cpp now rejects
    # or imports each; README.md lists the fixes).
    put("invalid_mul_one_input", one_op("Mul"))
    x4 = [vi("x", TP.FLOAT, [2, 4])]
    put("invalid_silu_of_a_failure", model(
        [node("Reshape", ["x", "missing_shape"], ["t"]), node("Sigmoid", ["t"], ["s"]),
         node("Mul", ["t", "s"], ["y"])], x4, [vi("y", TP.FLOAT, [2, 4])],
        name="silu_failure", check=False))
    put("invalid_unsqueeze_axis_twice", model(
        [node("Unsqueeze", ["x", "axes"], ["y"])], x4, [vi("y", TP.FLOAT, None)],
        [i64("axes", [0, 0])], name="unsqueeze_twice", check=False))
    put("invalid_reshape_2_62", model(
        [node("Reshape", ["x", "target"], ["y"])], [vi("x", TP.FLOAT, ["n", 4])],
        [vi("y", TP.FLOAT, None)], [i64("target", [2**62, 4, -1])], name="reshape_2_62",
        check=False))
    put("valid_slice_step_2_63", model(
        [node("Slice", ["x", "start0", "end_max", "axis1", "step_max"], ["y"])], x4,
        [vi("y", TP.FLOAT, [2, 1])],
        [i64("start0", [0]), i64("end_max", [INT64_MAX]), i64("axis1", [1]),
         i64("step_max", [INT64_MAX - 1])], opset=18, name="slice_step"))
    put("valid_layernorm_dynamic_no_bias", model(
        [node("LayerNormalization", ["x", "g"], ["y"], axis=-1)],
        [vi("x", TP.FLOAT, ["n", "d"])], [vi("y", TP.FLOAT, ["n", "d"])],
        [f32("g", (4,), 80)], name="layernorm_dynamic", check=False))

    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(data)
    total = sum(len(d) for d in seeds.values())
    print("%d seeds, %d bytes in all, the largest %d" % (len(seeds), total,
                                                         max(len(d) for d in seeds.values())))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1])
