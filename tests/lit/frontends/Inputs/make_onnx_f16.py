#!/usr/bin/env python3
"""Writes the fp16 ONNX graphs of tests/lit/frontends/onnx-f16-vs-ort.mlir and
ONNX Runtime's outputs for them (committed; rerun after a change to a model):

  build/ort-venv/bin/python tests/lit/frontends/Inputs/make_onnx_f16.py

For each NAME below, tests/models/NAME/model.onnx (an fp32 graph) becomes
Inputs/onnx-f16/NAME.onnx, the graph torch.onnx.export writes for a model
after .half(): every FLOAT initializer, Constant, ConstantOfShape value, Cast
target and graph input or output becomes FLOAT16 (values beyond fp16's range
clamp to +-65504, as the exporters' masks do). ONNX Runtime 1.32 (CPU, all
optimisations) runs it on tests/models/NAME/inputs (integer ids and masks)
and its outputs go to Inputs/onnx-f16/NAME/reference/*.npy.

onnxconverter-common's convert_float_to_float16 was tried first: for three
of these graphs it writes models that ONNX Runtime refuses (a Cast whose
output is declared float, a name defined twice).
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx-f16")
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "models")
NAMES = ["bert-tiny", "gpt2-tiny", "llama-tiny", "t5-encoder-tiny"]


def half_tensor(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    a = numpy_helper.to_array(t)
    return numpy_helper.from_array(np.clip(a, -65504, 65504).astype(np.float16), t.name)


def to_half(model):
    g = model.graph
    inits = [half_tensor(t) for t in g.initializer]
    del g.initializer[:]
    g.initializer.extend(inits)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(half_tensor(a.t))
            elif n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
            elif a.name in ("value_float", "value_floats"):
                sys.exit("%s: %s's %s has no fp16 form" % (g.name, n.name, a.name))
    onnx.checker.check_model(model)
    return model


def main():
    for name in NAMES:
        model = to_half(onnx.load(os.path.join(MODELS, name, "model.onnx")))
        path = os.path.join(HERE, name + ".onnx")
        onnx.save(model, path)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in session.get_inputs():
            value = np.load(os.path.join(MODELS, name, "inputs", i.name + ".npy"))
            if value.dtype.kind == "f":
                sys.exit("%s: input %s is a float; the test feeds the fp32 inputs" % (name, i.name))
            feeds[i.name] = value
        reference = os.path.join(HERE, name, "reference")
        os.makedirs(reference, exist_ok=True)
        names = [o.name for o in session.get_outputs()]
        for key, value in zip(names, session.run(names, feeds)):
            np.save(os.path.join(reference, key + ".npy"), value)
        print("wrote", path)


if __name__ == "__main__":
    main()
