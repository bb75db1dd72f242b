#!/usr/bin/env python3
"""Writes the small ONNX graphs of tests/lit/frontends/onnx-ops.mlir, their
inputs and ONNX Runtime's outputs for them (committed; rerun after a change):

  build/ort-venv/bin/python tests/lit/frontends/Inputs/make_onnx_ops.py

Each graph GRAPH gets Inputs/onnx-ops/GRAPH.onnx, GRAPH/inputs/NAME.npy and
GRAPH/reference/NAME.npy (ONNX Runtime 1.32, CPU, all optimisations):

  rmsnorm        RMSNormalization (opset 23) over a dynamic number of rows
  trilu          Trilu, upper with k = 1 and lower with k = -1, of an input
                 whose two dims are dynamic (kept as tfm.arange masks)
  causal_mask    Trilu of a ConstantOfShape (folded at compile time) as the
                 multiplicative causal mask exporters write
  expand         Expand of a [?, 1, 16] input to [?, 4, 16], and of a
                 constant row (folded), added together

  attention_causal    Attention (opset 23), GQA 4 over 2 heads, is_causal
                      with query and key lengths dynamic and different
                      (ONNX keeps key j <= query i, the upper-left triangle)
  attention_static    the same with both lengths 8: tfm's causal attribute
  attention_mask      Attention with an additive float mask and a scale
  attention_3d        Attention on 3-D [1, S, heads * 16] inputs, q_num_heads
                      4 over kv_num_heads 2, a bool mask, is_causal
  rope                RotaryEmbedding (opset 23) on [1, 2, S, 16], halves,
                      cos/sin caches [32, 8] gathered by position_ids
  rope_3d             RotaryEmbedding on [1, S, 4 * 16] with num_heads,
                      interleaved pairs over the first 8 dims, positions 5..
  attention_past      Attention with past_key/past_value and the present
                      outputs, every length dynamic, fewer new keys than
                      queries, is_causal
  attention_step      a decoding step on 3-D inputs against a cache
  attention_softcap   Attention with softcap = 2 (well inside the scores'
                      range), GQA, an additive mask and a scale
  attention_qk_mode{0,1,2,3}
                      the same with qk_matmul_output wanted in each mode
                      (scaled q.k, softcapped, masked, softmax), a mask
                      that hides every key of one query row
  einsum_attention    attention written with two Einsums (bhqd,bhkd->bhqk
                      and bhqk,bhkd->bhqd), a scale and a Softmax
  half_types          FLOAT16 and BFLOAT16 initializers (raw_data and
                      int32_data), Casts to and from FLOAT16 and a tanh GELU
                      in fp16 around f32 inputs and outputs
  einsum              Einsum's other forms, one output each: x W with W an
                      initializer (as stored and transposed), a batched
                      product in another order, "..." dims, two contracted
                      indices, a vector operand, one operand's transpose
                      an implicit output and RoPE's outer product
                      (i,j->ij) of positions and frequencies

and, for the importer's errors (no reference: ONNX Runtime rejects them
too), bad_expand.onnx ([?, 3, 16] to [1, 4, 16]), trilu_dynamic_k.onnx
(k a graph input, not a constant) and attention_3d_bad_heads.onnx
(q_num_heads not dividing q's hidden size), einsum_diagonal.onnx (ii->i)
and einsum_sum.onnx (ij,jk->i sums k over one operand).

With arguments, only the generators named run (`... make_onnx_ops.py
attention_softcap`), so that adding one does not rewrite the others.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx-ops")
RNG = np.random.default_rng(23)


def save(name, graph, opset, inputs):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(HERE, name, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(HERE, name, "reference"), exist_ok=True)
    path = os.path.join(HERE, name + ".onnx")
    onnx.save(model, path)
    for key, value in inputs.items():
        np.save(os.path.join(HERE, name, "inputs", key + ".npy"), value)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for key, value in zip(names, session.run(names, inputs)):
        np.save(os.path.join(HERE, name, "reference", key + ".npy"), value)
    print("wrote", path)


def rmsnorm():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 16])
    scale = numpy_helper.from_array(RNG.uniform(0.5, 1.5, 16).astype(np.float32), "scale")
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="norm",
                            axis=-1, epsilon=1e-6)
    save("rmsnorm", helper.make_graph([node], "rmsnorm", [x], [y], [scale]), 23,
         {"x": RNG.standard_normal((5, 16)).astype(np.float32)})


def trilu():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "rows", "cols"])
    up = helper.make_tensor_value_info("upper", TensorProto.FLOAT, [2, "rows", "cols"])
    lo = helper.make_tensor_value_info("lower", TensorProto.FLOAT, [2, "rows", "cols"])
    k1 = numpy_helper.from_array(np.array(1, np.int64), "k1")
    km1 = numpy_helper.from_array(np.array(-1, np.int64), "km1")
    nodes = [helper.make_node("Trilu", ["x", "k1"], ["upper"], name="triu", upper=1),
             helper.make_node("Trilu", ["x", "km1"], ["lower"], name="tril", upper=0)]
    save("trilu", helper.make_graph(nodes, "trilu", [x], [up, lo], [k1, km1]), 17,
         {"x": RNG.standard_normal((2, 6, 9)).astype(np.float32)})


def causal_mask():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8, 8])
    shape = numpy_helper.from_array(np.array([8, 8], np.int64), "shape")
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["ones"], name="ones",
                              value=numpy_helper.from_array(np.array([1.0], np.float32))),
             helper.make_node("Trilu", ["ones"], ["mask"], name="tril", upper=0),
             helper.make_node("Mul", ["x", "mask"], ["y"], name="masked")]
    save("causal_mask", helper.make_graph(nodes, "causal_mask", [x], [y], [shape]), 17,
         {"x": RNG.standard_normal((4, 8, 8)).astype(np.float32)})


def expand():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, 16])
    shape = numpy_helper.from_array(np.array([1, 4, 16], np.int64), "shape")
    row_shape = numpy_helper.from_array(np.array([4, 16], np.int64), "row_shape")
    row = numpy_helper.from_array(RNG.standard_normal(16).astype(np.float32), "row")
    nodes = [helper.make_node("Expand", ["x", "shape"], ["wide"], name="expand_x"),
             helper.make_node("Expand", ["row", "row_shape"], ["rows"], name="expand_row"),
             helper.make_node("Add", ["wide", "rows"], ["y"], name="add")]
    save("expand", helper.make_graph(nodes, "expand", [x], [y], [shape, row_shape, row]),
         17, {"x": RNG.standard_normal((3, 1, 16)).astype(np.float32)})


def attention_graph(name, q_seq, k_seq, inputs, attrs, with_mask=False):
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 4, q_seq, 16])
    k = helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 2, k_seq, 16])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 2, k_seq, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, q_seq, 16])
    ins = [q, k, v]
    names = ["q", "k", "v"]
    if with_mask:
        ins.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT,
                                                 [1, 1, q_seq, k_seq]))
        names.append("mask")
    node = helper.make_node("Attention", names, ["y"], name="attn", **attrs)
    save(name, helper.make_graph([node], name, ins, [y]), 23, inputs)


def attention():
    def qkv(sq, sk):
        return {"q": RNG.standard_normal((1, 4, sq, 16)).astype(np.float32),
                "k": RNG.standard_normal((1, 2, sk, 16)).astype(np.float32),
                "v": RNG.standard_normal((1, 2, sk, 16)).astype(np.float32)}
    attention_graph("attention_causal", "sq", "sk", qkv(5, 9), {"is_causal": 1})
    attention_graph("attention_static", 8, 8, qkv(8, 8), {"is_causal": 1})
    inputs = qkv(6, 7)
    mask = RNG.standard_normal((1, 1, 6, 7)).astype(np.float32)
    mask[0, 0, :, 3] = -np.inf  # one key masked for every query
    inputs["mask"] = mask
    attention_graph("attention_mask", "sq", "sk", inputs, {"scale": 0.2}, with_mask=True)
    # 3-D: [1, S, heads * 16]; a bool mask (True: attend) beside is_causal.
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, "sq", 64])
    k = helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, "sk", 32])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, "sk", 32])
    m = helper.make_tensor_value_info("mask", TensorProto.BOOL, ["sq", "sk"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "sq", 64])
    node = helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="attn3d",
                            q_num_heads=4, kv_num_heads=2, is_causal=1)
    mask = RNG.random((7, 7)) < 0.8
    mask[:, 0] = True  # every query keeps key 0 (the causal triangle's corner)
    save("attention_3d", helper.make_graph([node], "attention_3d", [q, k, v, m], [y]), 23,
         {"q": RNG.standard_normal((1, 7, 64)).astype(np.float32),
          "k": RNG.standard_normal((1, 7, 32)).astype(np.float32),
          "v": RNG.standard_normal((1, 7, 32)).astype(np.float32), "mask": mask})


def rope_caches(rotary, base=10000.0, positions=32):
    inv = base ** (-np.arange(0, rotary, 2, dtype=np.float64) / rotary)
    angles = np.arange(positions)[:, None] * inv[None, :]
    return (numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos_cache"),
            numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin_cache"))


def rope():
    cos, sin = rope_caches(16)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "s", 16])
    pos = helper.make_tensor_value_info("pos", TensorProto.INT64, [1, "s"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "s", 16])
    node = helper.make_node("RotaryEmbedding", ["x", "cos_cache", "sin_cache", "pos"], ["y"],
                            name="rope")
    save("rope", helper.make_graph([node], "rope", [x, pos], [y], [cos, sin]), 23,
         {"x": RNG.standard_normal((1, 2, 6, 16)).astype(np.float32),
          "pos": np.arange(6, dtype=np.int64)[None, :]})
    cos, sin = rope_caches(8)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "s", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "s", 64])
    node = helper.make_node("RotaryEmbedding", ["x", "cos_cache", "sin_cache", "pos"], ["y"],
                            name="rope3d", num_heads=4, rotary_embedding_dim=8, interleaved=1)
    save("rope_3d", helper.make_graph([node], "rope_3d", [x, pos], [y], [cos, sin]), 23,
         {"x": RNG.standard_normal((1, 5, 64)).astype(np.float32),
          "pos": np.arange(5, 10, dtype=np.int64)[None, :]})


def einsum():
    # Attention as einsum exporters write it: q k^T, scale, softmax, p v.
    info = helper.make_tensor_value_info
    q, k, v = (info(x, TensorProto.FLOAT, [1, 2, "s", 16]) for x in "qkv")
    out = info("out", TensorProto.FLOAT, [1, 2, "s", 16])
    scale = numpy_helper.from_array(np.array(0.25, np.float32), "scale")
    nodes = [helper.make_node("Einsum", ["q", "k"], ["scores"], name="qk",
                              equation="bhqd,bhkd->bhqk"),
             helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale_mul"),
             helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
             helper.make_node("Einsum", ["probs", "v"], ["out"], name="pv",
                              equation="bhqk,bhkd->bhqd")]
    save("einsum_attention", helper.make_graph(nodes, "einsum_attention", [q, k, v], [out],
                                               [scale]), 17,
         {x: RNG.standard_normal((1, 2, 7, 16)).astype(np.float32) for x in "qkv"})
    # The other forms: x W (a linear, W as stored and transposed), a batched
    # product written out of order, "..." batch dims, two contracted indices
    # merged, a vector operand, a transpose of one operand, an implicit
    # output, and RoPE's angles as an outer product of positions and
    # frequencies.
    w = numpy_helper.from_array(RNG.standard_normal((8, 12)).astype(np.float32), "w")
    wt = numpy_helper.from_array(RNG.standard_normal((12, 8)).astype(np.float32), "wt")
    inv_freq = numpy_helper.from_array(
        (10000.0 ** (-np.arange(0, 8, 2) / 8)).astype(np.float32), "inv_freq")
    inputs = {"x": RNG.standard_normal((2, 5, 8)).astype(np.float32),
              "y": RNG.standard_normal((2, 8, 6)).astype(np.float32),
              "z": RNG.standard_normal((3, 4, 5)).astype(np.float32),
              "z2": RNG.standard_normal((3, 4, 7)).astype(np.float32),
              "u": RNG.standard_normal((2, 8)).astype(np.float32),
              "a": RNG.standard_normal((4, 5)).astype(np.float32),
              "c": RNG.standard_normal((5, 3)).astype(np.float32),
              "t": np.arange(6, dtype=np.float32)}
    shapes = {"x": [2, "s", 8], "y": [2, 8, 6], "z": [3, 4, 5], "z2": [3, 4, 7],
              "u": [2, 8], "a": [4, 5], "c": [5, 3], "t": ["n"]}
    equations = [("linear", "bsd,df->bsf", ["x", "w"], [2, "s", 12]),
                 ("linear_t", "bsd,fd->sbf", ["x", "wt"], ["s", 2, 12]),
                 ("batched", "bij,bjk->bki", ["x", "y"], [2, 6, "s"]),
                 ("ellipsis", "...ij,...jk->...ik", ["x", "y"], [2, "s", 6]),
                 ("two_contracted", "ijk,ijl->lk", ["z", "z2"], [7, 5]),
                 ("vector", "bsd,bd->bs", ["x", "u"], [2, "s"]),
                 ("transpose", "...ij->...ji", ["z"], [3, 5, 4]),
                 ("implicit", "ij,jk", ["a", "c"], [4, 3]),
                 ("outer", "i,j->ij", ["t", "inv_freq"], ["n", 4])]
    nodes = [helper.make_node("Einsum", args, [name], name=name, equation=eq)
             for name, eq, args, _ in equations]
    outs = [info(name, TensorProto.FLOAT, shape) for name, _, _, shape in equations]
    graph = helper.make_graph(nodes, "einsum", [info(x, TensorProto.FLOAT, shapes[x])
                                                for x in inputs], outs, [w, wt, inv_freq])
    save("einsum", graph, 17, inputs)


def attention_past():
    # A cache: past_key/past_value [1, 2, P, 16] joined with the new keys;
    # present_key/present_value out. 4-D with every length dynamic and the
    # new keys fewer than the queries' (is_causal: every past key visible,
    # the new ones up to the query's index), run with P = 6, Sq = 4, Sk = 3.
    info = helper.make_tensor_value_info
    f = TensorProto.FLOAT
    ins = [info("q", f, [1, 4, "sq", 16]), info("k", f, [1, 2, "sk", 16]),
           info("v", f, [1, 2, "sk", 16]), info("past_key", f, [1, 2, "p", 16]),
           info("past_value", f, [1, 2, "p", 16])]
    outs = [info("y", f, [1, 4, "sq", 16]), info("present_key", f, [1, 2, "t", 16]),
            info("present_value", f, [1, 2, "t", 16])]
    node = helper.make_node("Attention", ["q", "k", "v", "", "past_key", "past_value"],
                            ["y", "present_key", "present_value"], name="attn_past",
                            is_causal=1)
    save("attention_past", helper.make_graph([node], "attention_past", ins, outs), 23,
         {"q": RNG.standard_normal((1, 4, 4, 16)).astype(np.float32),
          "k": RNG.standard_normal((1, 2, 3, 16)).astype(np.float32),
          "v": RNG.standard_normal((1, 2, 3, 16)).astype(np.float32),
          "past_key": RNG.standard_normal((1, 2, 6, 16)).astype(np.float32),
          "past_value": RNG.standard_normal((1, 2, 6, 16)).astype(np.float32)})
    # A decoding step on 3-D inputs: one new token against P = 9 cached.
    ins = [info("q", f, [1, 1, 64]), info("k", f, [1, 1, 32]), info("v", f, [1, 1, 32]),
           info("past_key", f, [1, 2, "p", 16]), info("past_value", f, [1, 2, "p", 16])]
    outs = [info("y", f, [1, 1, 64]), info("present_key", f, [1, 2, "t", 16]),
            info("present_value", f, [1, 2, "t", 16])]
    node = helper.make_node("Attention", ["q", "k", "v", "", "past_key", "past_value"],
                            ["y", "present_key", "present_value"], name="attn_step",
                            is_causal=1, q_num_heads=4, kv_num_heads=2)
    save("attention_step", helper.make_graph([node], "attention_step", ins, outs), 23,
         {"q": RNG.standard_normal((1, 1, 64)).astype(np.float32),
          "k": RNG.standard_normal((1, 1, 32)).astype(np.float32),
          "v": RNG.standard_normal((1, 1, 32)).astype(np.float32),
          "past_key": RNG.standard_normal((1, 2, 9, 16)).astype(np.float32),
          "past_value": RNG.standard_normal((1, 2, 9, 16)).astype(np.float32)})


def errors():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, 16])
    shape = numpy_helper.from_array(np.array([1, 4, 16], np.int64), "shape")
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_x")
    model = helper.make_model(helper.make_graph([node], "bad_expand", [x], [y], [shape]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(HERE, "bad_expand.onnx"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])
    node = helper.make_node("Trilu", ["x", "k"], ["y"], name="triu")
    model = helper.make_model(helper.make_graph([node], "trilu_dynamic_k", [x, k], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(HERE, "trilu_dynamic_k.onnx"))
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, "s", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "s", 64])
    node = helper.make_node("Attention", ["q", "q", "q"], ["y"], name="attn3d",
                            q_num_heads=5, kv_num_heads=4)
    model = helper.make_model(helper.make_graph([node], "attention_3d_bad_heads", [q], [y]),
                              opset_imports=[helper.make_opsetid("", 23)])
    onnx.save(model, os.path.join(HERE, "attention_3d_bad_heads.onnx"))
    for name, eq in [("einsum_diagonal", "ii->i"), ("einsum_sum", "ij,jk->i")]:
        a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        node = helper.make_node("Einsum", ["a"] * eq.split("->")[0].count(",") + ["a"], ["y"],
                                name=name, equation=eq)
        model = helper.make_model(helper.make_graph([node], name, [a], [y]),
                                  opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(model, os.path.join(HERE, name + ".onnx"))


def attention_softcap():
    # Its own generator, so that the earlier fixtures keep their draws.
    rng = np.random.default_rng(2301)
    info = helper.make_tensor_value_info
    f = TensorProto.FLOAT

    def graph(name, outputs, attrs):
        ins = [info("q", f, [1, 4, "sq", 16]), info("k", f, [1, 2, "sk", 16]),
               info("v", f, [1, 2, "sk", 16]), info("mask", f, [1, 1, "sq", "sk"])]
        outs = [info("y", f, [1, 4, "sq", 16])]
        if len(outputs) > 1:
            # ORT 1.32 warns that it inferred a last dim of 0 for it.
            outs.append(info("qk", f, [1, 4, "sq", "sk"]))
        node = helper.make_node("Attention", ["q", "k", "v", "mask"], outputs,
                                name="attn_cap", **attrs)
        mask = rng.standard_normal((1, 1, 6, 7)).astype(np.float32)
        mask[0, 0, 2, :] = -np.inf  # query 2 sees no key
        mask[0, 0, :, 4] = -np.inf
        save(name, helper.make_graph([node], name, ins, outs), 23,
             {"q": 2 * rng.standard_normal((1, 4, 6, 16)).astype(np.float32),
              "k": 2 * rng.standard_normal((1, 2, 7, 16)).astype(np.float32),
              "v": rng.standard_normal((1, 2, 7, 16)).astype(np.float32), "mask": mask})

    graph("attention_softcap", ["y"], {"softcap": 2.0, "scale": 0.3})
    for mode in range(4):
        graph("attention_qk_mode%d" % mode, ["y", "", "", "qk"],
              {"softcap": 2.0, "scale": 0.3, "qk_matmul_output_mode": mode})
    # Errors (no reference; written without the checker, which knows no
    # better than ORT what a negative cap means).
    for name, attrs in [("attention_bad_softcap", {"softcap": -1.0}),
                        ("attention_bad_qk_mode", {"qk_matmul_output_mode": 7})]:
        ins = [info(x, f, [1, 2, 4, 16]) for x in "qkv"]
        node = helper.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"],
                                name="attn_bad", **attrs)
        outs = [info("y", f, [1, 2, 4, 16]), info("qk", f, [1, 2, 4, 4])]
        model = helper.make_model(helper.make_graph([node], name, ins, outs),
                                  opset_imports=[helper.make_opsetid("", 23)])
        onnx.save(model, os.path.join(HERE, name + ".onnx"))


def half_types():
    """16-bit float initializers and casts, as an fp16 export writes them."""
    rng = np.random.default_rng(1601)
    info = helper.make_tensor_value_info
    # f32 in and out around an fp16 body (onnxconverter-common's
    # keep_io_types): Cast to FLOAT16, a MatMul by an FLOAT16 initializer
    # held in int32_data (as onnx.helper.make_tensor stores it), a bias in
    # raw_data, a tanh GELU whose constants are fp16 (0.044715 is 0.04471
    # there), and a BFLOAT16 initializer cast to FLOAT before its MatMul.
    x = info("x", TensorProto.FLOAT, ["n", 16])
    y = info("y", TensorProto.FLOAT, ["n", 8])
    w = helper.make_tensor("w", TensorProto.FLOAT16, [16, 8],
                           rng.standard_normal((16, 8)).astype(np.float16))
    bias = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "bias")
    w2 = helper.make_tensor("w2", TensorProto.BFLOAT16, [8, 8],
                            rng.standard_normal(64).astype(np.float32).tolist())
    consts = {"half": 0.5, "one": 1.0, "three": 3.0, "k": 0.044715,
              "root": float(np.sqrt(2 / np.pi))}
    inits = [w, bias, w2] + [numpy_helper.from_array(np.array(v, np.float16), name)
                             for name, v in consts.items()]
    nodes = [helper.make_node("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16),
             helper.make_node("MatMul", ["x16", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "bias"], ["h"]),
             helper.make_node("Pow", ["h", "three"], ["h3"]),
             helper.make_node("Mul", ["h3", "k"], ["h3k"]),
             helper.make_node("Add", ["h", "h3k"], ["inner"]),
             helper.make_node("Mul", ["inner", "root"], ["scaled"]),
             helper.make_node("Tanh", ["scaled"], ["t"]),
             helper.make_node("Add", ["t", "one"], ["t1"]),
             helper.make_node("Mul", ["h", "half"], ["hh"]),
             helper.make_node("Mul", ["hh", "t1"], ["gelu"]),
             helper.make_node("Cast", ["gelu"], ["g32"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["w2"], ["w2f"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["g32", "w2f"], ["y"])]
    save("half_types", helper.make_graph(nodes, "half_types", [x], [y], inits), 17,
         {"x": rng.standard_normal((5, 16)).astype(np.float32)})
    # An error: FLOAT16 bits that do not fit in 16 bits.
    bad = helper.make_tensor("w", TensorProto.FLOAT16, [2], [0.5, 1.0])
    bad.int32_data[1] = 70000
    x = info("x", TensorProto.FLOAT16, [2])
    y = info("y", TensorProto.FLOAT16, [2])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")],
                          "half_bad_bits", [x], [y], [bad]),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(HERE, "half_bad_bits.onnx"))


GENERATORS = ["rmsnorm", "trilu", "causal_mask", "expand", "attention", "rope", "einsum",
              "attention_past", "errors", "attention_softcap", "half_types"]

if __name__ == "__main__" and len(sys.argv) > 1:
    for name in sys.argv[1:]:
        if name not in GENERATORS:
            sys.exit("unknown generator %r; expected one of %s" % (name, ", ".join(GENERATORS)))
        globals()[name]()
elif __name__ == "__main__":
    for name in GENERATORS:
        globals()[name]()
