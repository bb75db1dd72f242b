// Every tests/models checkpoint's ONNX graph (model.onnx, written by
// scripts/hf_fixtures.py --keep-onnx: the modeling code transcribed node by
// node, with the checkpoint's weights as initializers) imported by
// attune-compile, compiled fused (the default) and unfused, run on the
// committed inputs and compared with ONNX Runtime's outputs for that same
// graph. Criterion: |attune - ort| <= 1e-5 + 1e-4 |ort| for every element
// (compare_npy.py). The importer leaves attention decomposed; the fusion
// reports must list every site as fused.

// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %attune_src_root/tests/lit/frontends/Inputs/run_models.py --onnx %t %attune_src_root/tests/models bert-tiny gpt2-tiny llama-tiny mistral-tiny llama3-scaled-tiny t5-encoder-tiny | FileCheck %s

// CHECK: bert-tiny fused: 2 of 2 attention sites fused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: sentence_embedding.npy{{ +}}ok
// CHECK: bert-tiny unfused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: sentence_embedding.npy{{ +}}ok
// CHECK: gpt2-tiny fused: 2 of 2 attention sites fused
// CHECK: logits.npy{{ +}}ok
// CHECK: gpt2-tiny unfused
// CHECK: logits.npy{{ +}}ok
// CHECK: llama-tiny fused: 2 of 2 attention sites fused
// CHECK: logits.npy{{ +}}ok
// CHECK: llama-tiny unfused
// CHECK: logits.npy{{ +}}ok
// CHECK: mistral-tiny fused: 2 of 2 attention sites fused
// CHECK: logits.npy{{ +}}ok
// CHECK: mistral-tiny unfused
// CHECK: logits.npy{{ +}}ok
// CHECK: llama3-scaled-tiny fused: 2 of 2 attention sites fused
// CHECK: logits.npy{{ +}}ok
// CHECK: llama3-scaled-tiny unfused
// CHECK: logits.npy{{ +}}ok
// CHECK: t5-encoder-tiny fused: 2 of 2 attention sites fused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: t5-encoder-tiny unfused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: all models match
