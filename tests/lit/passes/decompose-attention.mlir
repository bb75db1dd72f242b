// RUN: attune-opt %s -split-input-file -tfm-decompose-attention -verify-diagnostics | FileCheck %s

/// Scale only: matmul with transpose_b, mul by the splat scale, softmax over
/// the last axis, matmul with v.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x6x16xf32>, %[[V:[^:]+]]: tensor<2x4x6x32xf32>)
// CHECK-NEXT: %[[S:.+]] = tfm.matmul %[[Q]], %[[K]] {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT: %[[C:.+]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[T:.+]] = tfm.mul %[[S]], %[[C]] : tensor<2x4x8x6xf32>, tensor<f32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT: %[[P:.+]] = tfm.softmax %[[T]] : tensor<2x4x8x6xf32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT: %[[O:.+]] = tfm.matmul %[[P]], %[[V]] : tensor<2x4x8x6xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @plain(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x32xf32>) -> tensor<2x4x8x32xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}

// -----

/// Every modifier at once, in the canonical order: scale, additive mask,
/// key padding (reshaped to [B, 1, 1, Sk], -inf where zero), causal.
// CHECK-LABEL: func.func @all_modifiers
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x?x16xf16>, %[[K:[^:]+]]: tensor<?x4x?x16xf16>, %[[V:[^:]+]]: tensor<?x4x?x16xf16>, %[[M:[^:]+]]: tensor<1x1x?x?xf16>, %[[KPM:[^:]+]]: tensor<?x?xi1>)
// CHECK: %[[S:.+]] = tfm.matmul %[[Q]], %[[K]] {transpose_b = true} : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x?xf16>
// CHECK: %[[C:.+]] = arith.constant dense<2.500000e-01> : tensor<f16>
// CHECK: %[[T:.+]] = tfm.mul %[[S]], %[[C]]
// CHECK: %[[A:.+]] = tfm.add %[[T]], %[[M]] : tensor<?x4x?x?xf16>, tensor<1x1x?x?xf16> -> tensor<?x4x?x?xf16>
// CHECK: %[[COND:.+]] = tfm.reshape %[[KPM]] : tensor<?x?xi1> -> tensor<?x1x1x?xi1>
// CHECK: %[[NINF:.+]] = arith.constant dense<0xFC00> : tensor<f16>
// CHECK: %[[W:.+]] = tfm.where %[[COND]], %[[A]], %[[NINF]] : tensor<?x1x1x?xi1>, tensor<?x4x?x?xf16>, tensor<f16> -> tensor<?x4x?x?xf16>
// CHECK: %[[CM:.+]] = tfm.causal_mask %[[W]] : tensor<?x4x?x?xf16> -> tensor<?x4x?x?xf16>
// CHECK: %[[P:.+]] = tfm.softmax %[[CM]]
// CHECK: tfm.matmul %[[P]], %[[V]] : tensor<?x4x?x?xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
// CHECK-NOT: tfm.attention
func.func @all_modifiers(%q: tensor<?x4x?x16xf16>, %k: tensor<?x4x?x16xf16>, %v: tensor<?x4x?x16xf16>, %mask: tensor<1x1x?x?xf16>, %kpm: tensor<?x?xi1>) -> tensor<?x4x?x16xf16> {
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x?x?xf16>) key_padding_mask(%kpm : tensor<?x?xi1>) {scale = 0.25 : f64, causal = true} : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
  return %o : tensor<?x4x?x16xf16>
}

// -----

/// Grouped-query attention: k and v repeated H / Hkv = 4 times on the head
/// axis before the matmuls.
// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x2x?x64xf32>, %[[V:[^:]+]]: tensor<1x2x?x64xf32>)
// CHECK: %[[K4:.+]] = tfm.repeat_interleave %[[K]] {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
// CHECK: %[[V4:.+]] = tfm.repeat_interleave %[[V]] {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
// CHECK: tfm.matmul %[[Q]], %[[K4]] {transpose_b = true} : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x?xf32>
// CHECK: tfm.causal_mask
// CHECK: %[[P:.+]] = tfm.softmax
// CHECK: tfm.matmul %[[P]], %[[V4]] : tensor<1x8x?x?xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
func.func @gqa(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// The number of repeats for GQA must be known when the IR is written.
func.func @negative_dynamic_heads(%q: tensor<1x?x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x?x8x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected static head counts with 'key' heads dividing 'query' heads to decompose, got ? query heads and 2 key/value heads}}
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x?x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x?x8x64xf32>
  return %o : tensor<1x?x8x64xf32>
}

// -----

/// A mask that is static where k is dynamic pins the key length of the
/// scores; every op's type is the one its verifier infers, and the result
/// keeps the declared type (the key length does not reach it).
// CHECK-LABEL: func.func @static_mask_dynamic_keys
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x12x?x64xf32>, %[[K:[^:]+]]: tensor<1x12x?x64xf32>, %[[V:[^:]+]]: tensor<1x12x?x64xf32>, %[[M:[^:]+]]: tensor<1x1x1x128xf32>)
// CHECK: %[[S:.+]] = tfm.matmul %[[Q]], %[[K]] {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
// CHECK: %[[T:.+]] = tfm.mul %[[S]], %{{.+}} : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
// CHECK: %[[A:.+]] = tfm.add %[[T]], %[[M]] : tensor<1x12x?x?xf32>, tensor<1x1x1x128xf32> -> tensor<1x12x?x128xf32>
// CHECK: %[[P:.+]] = tfm.softmax %[[A]] {{.*}}: tensor<1x12x?x128xf32> -> tensor<1x12x?x128xf32>
// CHECK: %[[O:.+]] = tfm.matmul %[[P]], %[[V]] : tensor<1x12x?x128xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
// CHECK: return %[[O]] : tensor<1x12x?x64xf32>
func.func @static_mask_dynamic_keys(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %mask: tensor<1x1x1x128xf32>) -> tensor<1x12x?x64xf32> {
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x1x128xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// -----

/// A key padding mask with a static length against a dynamic Sk: the where
/// pins the key length, causal_mask and softmax follow it.
// CHECK-LABEL: func.func @static_key_padding_dynamic_keys
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x?x16xf32>, %[[K:[^:]+]]: tensor<?x4x?x16xf32>, %[[V:[^:]+]]: tensor<?x4x?x16xf32>, %[[KPM:[^:]+]]: tensor<?x128xi1>)
// CHECK: %[[COND:.+]] = tfm.reshape %[[KPM]] : tensor<?x128xi1> -> tensor<?x1x1x128xi1>
// CHECK: %[[W:.+]] = tfm.where %[[COND]], %{{.+}}, %{{.+}} : tensor<?x1x1x128xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x128xf32>
// CHECK: %[[CM:.+]] = tfm.causal_mask %[[W]] : tensor<?x4x?x128xf32> -> tensor<?x4x?x128xf32>
// CHECK: %[[P:.+]] = tfm.softmax %[[CM]] {{.*}}: tensor<?x4x?x128xf32> -> tensor<?x4x?x128xf32>
// CHECK: %[[O:.+]] = tfm.matmul %[[P]], %[[V]] : tensor<?x4x?x128xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
// CHECK: return %[[O]] : tensor<?x4x?x16xf32>
func.func @static_key_padding_dynamic_keys(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %kpm: tensor<?x128xi1>) -> tensor<?x4x?x16xf32> {
  %o = tfm.attention %q, %k, %v key_padding_mask(%kpm : tensor<?x128xi1>) {scale = 0.25 : f64, causal = true} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

/// A mask that is static where q is dynamic pins Sq of the scores, and so of
/// the decomposed result, which tfm.attention's type leaves `?`. No tfm op
/// makes a static dimension dynamic again, so this is an error naming the
/// mask, not IR that fails to verify.
func.func @negative_static_mask_dynamic_queries(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %mask: tensor<1x1x128x128xf32>) -> tensor<1x12x?x64xf32> {
  // expected-error @+1 {{'tfm.attention' op expected the decomposed result to have the declared shape [1, 12, ?, 64], got [1, 12, 128, 64]: 'mask' [1, 1, 128, 128] fixes dimensions that q, k and v leave dynamic}}
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x128x128xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// -----

/// Score modifiers become one tfm.score_bias each, after the scale and the
/// additive mask, before key padding and causal masking.
// CHECK-LABEL: func.func @score_modifiers
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x8x?x64xf32>, %[[V:[^:]+]]: tensor<1x8x?x64xf32>, %[[T:[^:]+]]: tensor<32x8xf32>)
// CHECK: %[[S:.+]] = tfm.matmul %[[Q]], %[[K]] {transpose_b = true}
// CHECK: %[[M:.+]] = tfm.mul %[[S]]
// CHECK-NEXT: %[[B0:.+]] = tfm.score_bias %[[M]] {modifier = {kind = "alibi"}} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
// CHECK-NEXT: %[[B1:.+]] = tfm.score_bias %[[B0]] modifier_operands(%[[T]] : tensor<32x8xf32>) {modifier = {kind = "t5"}} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
// CHECK-NEXT: %[[C:.+]] = tfm.causal_mask %[[B1]]
// CHECK-NEXT: %[[P:.+]] = tfm.softmax %[[C]]
func.func @score_modifiers(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %t: tensor<32x8xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%t : tensor<32x8xf32>)
      {scale = 0.125 : f64, causal = true, modifiers = [{kind = "alibi"}, {kind = "t5"}]}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// Shaw: the content term reads the q and k of the scores, scaled like them;
/// the value term is added to P x V.
// CHECK-LABEL: func.func @shaw
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x7x16xf32>, %[[K:[^:]+]]: tensor<1x2x9x16xf32>, %[[V:[^:]+]]: tensor<1x2x9x8xf32>, %[[RK:[^:]+]]: tensor<5x16xf32>, %[[RV:[^:]+]]: tensor<5x8xf32>)
// CHECK: %[[S:.+]] = tfm.matmul %[[Q]], %[[K]] {transpose_b = true}
// CHECK: %[[M:.+]] = tfm.mul %[[S]]
// CHECK-NEXT: %[[B:.+]] = tfm.score_bias %[[M]] content(%[[Q]], %[[K]] : tensor<1x2x7x16xf32>, tensor<1x2x9x16xf32>) modifier_operands(%[[RK]], %[[RV]] : tensor<5x16xf32>, tensor<5x8xf32>) {modifier = {kind = "shaw", max_distance = 2 : i64}, scale = 2.500000e-01 : f64}
// CHECK-NEXT: %[[C:.+]] = tfm.causal_mask %[[B]]
// CHECK-NEXT: %[[P:.+]] = tfm.softmax %[[C]]
// CHECK-NEXT: %[[PV:.+]] = tfm.matmul %[[P]], %[[V]]
// CHECK-NEXT: %[[T:.+]] = tfm.score_values %[[P]] modifier_operands(%[[RK]], %[[RV]] : tensor<5x16xf32>, tensor<5x8xf32>) {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x7x9xf32> -> tensor<1x2x7x8xf32>
// CHECK-NEXT: %[[O:.+]] = tfm.add %[[PV]], %[[T]]
// CHECK-NEXT: return %[[O]]
func.func @shaw(%q: tensor<1x2x7x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x9x8xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x8xf32>) -> tensor<1x2x7x8xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x8xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "shaw", max_distance = 2 : i64}]}
      : tensor<1x2x7x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x8xf32> -> tensor<1x2x7x8xf32>
  return %o : tensor<1x2x7x8xf32>
}

// -----

/// Transformer-XL with GQA: the content terms read k after its heads are
/// repeated, as the scores do.
// CHECK-LABEL: func.func @xl_gqa
// CHECK: %[[KR:.+]] = tfm.repeat_interleave %{{.+}} {axis = 1 : i64, repeats = 2 : i64}
// CHECK: tfm.score_bias %{{.+}} content(%{{.+}}, %[[KR]] : tensor<1x4x5x16xf32>, tensor<1x4x9x16xf32>)
func.func @xl_gqa(%q: tensor<1x4x5x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x9x16xf32>, %u: tensor<4x16xf32>, %w: tensor<4x16xf32>, %r: tensor<9x4x16xf32>) -> tensor<1x4x5x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<4x16xf32>, tensor<4x16xf32>, tensor<9x4x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 8 : i64}]}
      : tensor<1x4x5x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x5x16xf32>
  return %o : tensor<1x4x5x16xf32>
}

// -----

/// DeBERTa (v1 clipping and v2 log buckets).
// CHECK-LABEL: func.func @deberta
// CHECK-COUNT-2: tfm.score_bias %{{.+}} content(
func.func @deberta(%q: tensor<1x2x13x16xf32>, %k: tensor<1x2x13x16xf32>, %v: tensor<1x2x13x16xf32>, %kp: tensor<8x2x16xf32>, %qp: tensor<8x2x16xf32>) -> (tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32>) {
  %a = tfm.attention %q, %k, %v modifier_operands(%kp, %qp : tensor<8x2x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.14433756729740643 : f64, modifiers = [{kind = "deberta", span = 4 : i64}]}
      : tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32> -> tensor<1x2x13x16xf32>
  %b = tfm.attention %q, %k, %v modifier_operands(%kp, %qp : tensor<8x2x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.14433756729740643 : f64, modifiers = [{kind = "deberta", span = 4 : i64, max_position = 10 : i64}]}
      : tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32> -> tensor<1x2x13x16xf32>
  return %a, %b : tensor<1x2x13x16xf32>, tensor<1x2x13x16xf32>
}
