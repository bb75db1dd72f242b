// RUN: attune-opt %s -split-input-file -tfm-decompose-attention -tfm-fuse-attention | FileCheck %s

/// Decomposing and fusing again gives back the same tfm.attention: the
/// decomposed form is exactly what the fusion recognises. Each case checks
/// the function body is the original op and nothing else.

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x6x16xf32>, %[[V:[^:]+]]: tensor<2x4x6x32xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @plain(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x32xf32>) -> tensor<2x4x8x32xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @all_modifiers
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x?x16xf16>, %[[K:[^:]+]]: tensor<?x4x?x16xf16>, %[[V:[^:]+]]: tensor<?x4x?x16xf16>, %[[M:[^:]+]]: tensor<1x1x?x?xf16>, %[[KPM:[^:]+]]: tensor<?x?xi1>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x1x?x?xf16>) key_padding_mask(%[[KPM]] : tensor<?x?xi1>) {causal = true, scale = 2.500000e-01 : f64} : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
// CHECK-NEXT: return %[[O]]
func.func @all_modifiers(%q: tensor<?x4x?x16xf16>, %k: tensor<?x4x?x16xf16>, %v: tensor<?x4x?x16xf16>, %mask: tensor<1x1x?x?xf16>, %kpm: tensor<?x?xi1>) -> tensor<?x4x?x16xf16> {
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x?x?xf16>) key_padding_mask(%kpm : tensor<?x?xi1>) {scale = 0.25 : f64, causal = true} : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
  return %o : tensor<?x4x?x16xf16>
}

// -----

// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x2x?x64xf32>, %[[V:[^:]+]]: tensor<1x2x?x64xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f64} : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @gqa_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// Multi-query attention (one shared k/v head) with a key padding mask and
/// two attention layers in sequence.
// CHECK-LABEL: func.func @mqa_two_layers
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x1x8x16xf32>, %[[V:[^:]+]]: tensor<2x1x8x16xf32>, %[[KPM:[^:]+]]: tensor<2x8xi32>)
// CHECK-NEXT: %[[A:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] key_padding_mask(%[[KPM]] : tensor<2x8xi32>) {scale = 2.500000e-01 : f64} : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: %[[B:.+]] = tfm.attention %[[A]], %[[K]], %[[V]] {causal = true, scale = 5.000000e-01 : f64} : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[B]]
func.func @mqa_two_layers(%q: tensor<2x4x8x16xf32>, %k: tensor<2x1x8x16xf32>, %v: tensor<2x1x8x16xf32>, %kpm: tensor<2x8xi32>) -> tensor<2x4x8x16xf32> {
  %a = tfm.attention %q, %k, %v key_padding_mask(%kpm : tensor<2x8xi32>) {scale = 0.25 : f64} : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
  %b = tfm.attention %a, %k, %v {scale = 0.5 : f64, causal = true} : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x4x8x16xf32>
  return %b : tensor<2x4x8x16xf32>
}

// -----

/// A static mask against dynamic keys: the decomposed scores are pinned to
/// 128 keys, the fusion accepts that refinement, and the same op comes back.
// CHECK-LABEL: func.func @static_mask_dynamic_keys
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x12x?x64xf32>, %[[K:[^:]+]]: tensor<1x12x?x64xf32>, %[[V:[^:]+]]: tensor<1x12x?x64xf32>, %[[M:[^:]+]]: tensor<1x1x1x128xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x1x1x128xf32>) {scale = 1.250000e-01 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @static_mask_dynamic_keys(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %mask: tensor<1x1x1x128xf32>) -> tensor<1x12x?x64xf32> {
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x1x128xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// -----

/// A static key padding length against a dynamic Sk, with causal.
// CHECK-LABEL: func.func @static_key_padding_dynamic_keys
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x?x16xf32>, %[[K:[^:]+]]: tensor<?x4x?x16xf32>, %[[V:[^:]+]]: tensor<?x4x?x16xf32>, %[[KPM:[^:]+]]: tensor<?x128xi1>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] key_padding_mask(%[[KPM]] : tensor<?x128xi1>) {causal = true, scale = 2.500000e-01 : f64} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @static_key_padding_dynamic_keys(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %kpm: tensor<?x128xi1>) -> tensor<?x4x?x16xf32> {
  %o = tfm.attention %q, %k, %v key_padding_mask(%kpm : tensor<?x128xi1>) {scale = 0.25 : f64, causal = true} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

/// Score modifiers come back in order, with their operands.
// CHECK-LABEL: func.func @score_modifiers
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x8x?x64xf32>, %[[V:[^:]+]]: tensor<1x8x?x64xf32>, %[[T:[^:]+]]: tensor<32x8xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] modifier_operands(%[[T]] : tensor<32x8xf32>) {causal = true, modifiers = [{kind = "alibi", max_bias = 4.000000e+00 : f64}, {bidirectional = false, kind = "t5"}, {kind = "sliding_window", window = 9 : i64}], scale = 1.250000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @score_modifiers(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %t: tensor<32x8xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%t : tensor<32x8xf32>)
      {scale = 0.125 : f64, causal = true,
       modifiers = [{kind = "alibi", max_bias = 4.0 : f64}, {kind = "t5", bidirectional = false},
                    {kind = "sliding_window", window = 9 : i64}]}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// RoPE comes back as the op's `rope`: tfm.rope on q (aligned to k) and k
/// with equal parameters fold into it.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x2x?x64xf32>, %[[V:[^:]+]]: tensor<1x2x?x64xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, rope = {base = 1.000000e+04 : f64, interleaved = true, position_offset = 3 : i64, rotary_dims = 32 : i64}, scale = 1.250000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @rope(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v
      {scale = 0.125 : f64, causal = true,
       rope = {base = 10000.0 : f64, rotary_dims = 32 : i64, interleaved = true, position_offset = 3 : i64}}
      : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// Shaw: the content term (score_bias reading q and k) and the value term
/// (score_values added to P x V) fuse back into one modifier.
// CHECK-LABEL: func.func @shaw
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x3x7x16xf32>, %[[K:[^:]+]]: tensor<2x3x9x16xf32>, %[[V:[^:]+]]: tensor<2x3x9x24xf32>, %[[RK:[^:]+]]: tensor<7x16xf32>, %[[RV:[^:]+]]: tensor<7x24xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] modifier_operands(%[[RK]], %[[RV]] : tensor<7x16xf32>, tensor<7x24xf32>) {modifiers = [{kind = "shaw", max_distance = 3 : i64}], scale = 2.500000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @shaw(%q: tensor<2x3x7x16xf32>, %k: tensor<2x3x9x16xf32>, %v: tensor<2x3x9x24xf32>, %rk: tensor<7x16xf32>, %rv: tensor<7x24xf32>) -> tensor<2x3x7x24xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%rk, %rv : tensor<7x16xf32>, tensor<7x24xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 3 : i64}]}
      : tensor<2x3x7x16xf32>, tensor<2x3x9x16xf32>, tensor<2x3x9x24xf32> -> tensor<2x3x7x24xf32>
  return %o : tensor<2x3x7x24xf32>
}

// -----

/// Transformer-XL with a memory (Sq < Sk), causal, with GQA: the content
/// terms read the repeated k, and still fold back.
// CHECK-LABEL: func.func @xl
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x5x16xf32>, %[[K:[^:]+]]: tensor<1x2x9x16xf32>, %[[V:[^:]+]]: tensor<1x2x9x16xf32>, %[[U:[^:]+]]: tensor<4x16xf32>, %[[W:[^:]+]]: tensor<4x16xf32>, %[[R:[^:]+]]: tensor<9x4x16xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] modifier_operands(%[[U]], %[[W]], %[[R]] : tensor<4x16xf32>, tensor<4x16xf32>, tensor<9x4x16xf32>) {causal = true, modifiers = [{kind = "xl", max_distance = 8 : i64}], scale = 2.500000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @xl(%q: tensor<1x4x5x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x9x16xf32>, %u: tensor<4x16xf32>, %w: tensor<4x16xf32>, %r: tensor<9x4x16xf32>) -> tensor<1x4x5x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<4x16xf32>, tensor<4x16xf32>, tensor<9x4x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 8 : i64}]}
      : tensor<1x4x5x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x5x16xf32>
  return %o : tensor<1x4x5x16xf32>
}

// -----

/// DeBERTa-v2 log buckets with a key padding mask beside them.
// CHECK-LABEL: func.func @deberta
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x11x16xf32>, %[[V:[^:]+]]: tensor<2x2x11x16xf32>, %[[KP:[^:]+]]: tensor<8x2x16xf32>, %[[QP:[^:]+]]: tensor<8x2x16xf32>, %[[PAD:[^:]+]]: tensor<2x11xi1>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[Q]], %[[V]] key_padding_mask(%[[PAD]] : tensor<2x11xi1>) modifier_operands(%[[KP]], %[[QP]] : tensor<8x2x16xf32>, tensor<8x2x16xf32>) {modifiers = [{kind = "deberta", max_position = 12 : i64, span = 4 : i64}], scale = 0.1443375{{[0-9]+}} : f64}
// CHECK-NEXT: return %[[O]]
func.func @deberta(%q: tensor<2x2x11x16xf32>, %v: tensor<2x2x11x16xf32>, %kp: tensor<8x2x16xf32>, %qp: tensor<8x2x16xf32>, %pad: tensor<2x11xi1>) -> tensor<2x2x11x16xf32> {
  %o = tfm.attention %q, %q, %v key_padding_mask(%pad : tensor<2x11xi1>) modifier_operands(%kp, %qp : tensor<8x2x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.14433756729740643 : f64, modifiers = [{kind = "deberta", span = 4 : i64, max_position = 12 : i64}]}
      : tensor<2x2x11x16xf32>, tensor<2x2x11x16xf32>, tensor<2x2x11x16xf32> -> tensor<2x2x11x16xf32>
  return %o : tensor<2x2x11x16xf32>
}

// -----

/// Softcapping decomposes to c * tanh(s / c) after the scale and before the
/// mask, and fuses back with the same cap and scale.
// CHECK-LABEL: func.func @softcap
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x?x16xf32>, %[[K:[^:]+]]: tensor<1x2x?x16xf32>, %[[V:[^:]+]]: tensor<1x2x?x16xf32>, %[[M:[^:]+]]: tensor<1x1x?x?xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x1x?x?xf32>) {causal = true, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @softcap(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<1x2x?x16xf32> {
  %o = tfm.attention %q, %k, %v mask(%m : tensor<1x1x?x?xf32>) {scale = 0.25 : f64, causal = true, softcap = 50.0 : f64} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
