// RUN: attune-opt %attune_src_root/examples/attention/attention_rope_exported.mlir -canonicalize -cse -tfm-raise-encodings -tfm-fuse-attention | FileCheck %s --check-prefix=ROPE
// RUN: attune-opt %attune_src_root/examples/attention/attention_alibi_exported.mlir -canonicalize -cse -tfm-raise-encodings -tfm-fuse-attention | FileCheck %s --check-prefix=ALIBI
// RUN: attune-opt %attune_src_root/examples/attention/attention_deberta_exported.mlir -canonicalize -cse -tfm-raise-encodings -tfm-fuse-attention | FileCheck %s --check-prefix=DEBERTA

/// The benchmark's exporter-written examples become the same single fused
/// attention as their hand-written forms (attention_rope.mlir,
/// attention_alibi.mlir, attention_deberta.mlir: its tables are the inputs
/// themselves, the scale 1/sqrt(192) as the graph rounds sqrt(192) to f32). q and k are separate inputs whose sequence dims
/// share the name "seq" (tfm.dim_names), which the runtime requires equal:
/// that is what lets RoPE's positions and ALiBi's j - i be aligned.

// ROPE-LABEL: func.func @attention_rope_exported
// ROPE-NEXT: %[[O:.+]] = tfm.attention %arg0, %arg1, %arg2 {causal = true, rope = {base = 1.000000e+04 : f64, rotary_dims = 64 : i64}, scale = 1.250000e-01 : f64}
// ROPE-NEXT: return %[[O]]

// ALIBI-LABEL: func.func @attention_alibi_exported
// ALIBI-NEXT: %[[O:.+]] = tfm.attention %arg0, %arg1, %arg2 {causal = true, modifiers = [{kind = "alibi", max_bias = 8.000000e+00 : f64}], scale = 1.250000e-01 : f64}
// ALIBI-NEXT: return %[[O]]

// DEBERTA-LABEL: func.func @attention_deberta_exported
// DEBERTA-NEXT: %[[O:.+]] = tfm.attention %arg0, %arg1, %arg2 modifier_operands(%arg3, %arg4 : tensor<512x12x64xf32>, tensor<512x12x64xf32>) {modifiers = [{kind = "deberta", max_position = 512 : i64, span = 256 : i64}], scale = 0.072168784944005276 : f64}
// DEBERTA-NEXT: return %[[O]]
