// fp16 ONNX graphs, as torch.onnx.export writes a model after .half() (every
// float initializer, constant, cast and graph output FLOAT16; made from the
// tests/models graphs by Inputs/make_onnx_f16.py), imported, compiled fused
// and unfused, run on the committed inputs and compared with ONNX Runtime's
// outputs for the same fp16 graphs:
// |attune - ort| <= 2e-2 + 1e-2 |ort| for every element. The graphs' outputs
// are O(1) to O(10); ORT's own fp16 outputs differ from the fp32 graphs'
// by up to 1.1e-2 (measured when the fixtures were made), and attune's from
// ORT's by up to 1.3e-2.

// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %attune_src_root/tests/lit/frontends/Inputs/run_models.py --onnx-from %S/Inputs/onnx-f16 --rtol 1e-2 --atol 2e-2 %t %attune_src_root/tests/models bert-tiny gpt2-tiny llama-tiny t5-encoder-tiny | FileCheck %s

// RUN: attune-compile %S/Inputs/onnx-f16/gpt2-tiny.onnx --emit=mlir 2>/dev/null | FileCheck %s --check-prefix=IR
// IR: func.func @{{.+}} -> (tensor<?x?x99xf16> {tfm.name = "logits"})
// IR: tfm.attention {{.+}} -> tensor<?x?x4x16xf16>
// IR: tfm.gelu {{.+}} {approximate = #tfm.gelu_approx<tanh>} : tensor<{{.+}}xf16>

/// The same fp16 graph builds for the GPU with its attentions fused (the
/// CUDA target fuses a 16-bit model's attentions without --precision); it
/// runs only where a GPU is, so here it is built, not run.
// RUN: attune-compile %S/Inputs/onnx-f16/gpt2-tiny.onnx --target=cuda -o %t/gpt2-cuda.so --fusion-report=%t/gpt2-cuda.json 2>/dev/null
// RUN: FileCheck %s --input-file=%t/gpt2-cuda.json --check-prefix=CUDA
// CUDA: "fused": 2,
// CUDA: "not_fused": 0,

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
// CHECK: t5-encoder-tiny fused: 2 of 2 attention sites fused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: t5-encoder-tiny unfused
// CHECK: last_hidden_state.npy{{ +}}ok
// CHECK: all models match
