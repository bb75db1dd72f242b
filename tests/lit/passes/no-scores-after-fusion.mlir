// RUN: attune-opt %s -split-input-file -tfm-decompose-attention -tfm-fuse-attention | FileCheck %s --implicit-check-not='tensor<1x4x10x13x'

/// After fusion no [B, H, Sq, Sk] tensor (here tensor<1x4x10x13x..>) is
/// left for any score modifier or mask: decomposing materialises the
/// scores, fusing folds every term back into tfm.attention, which evaluates
/// them per tile. One function per modifier, Sq = 10 queries at the end of
/// Sk = 13 keys.

// CHECK-LABEL: func.func @plain_masks
// CHECK: tfm.attention
func.func @plain_masks(%q: tensor<1x4x10x16xf32>, %k: tensor<1x4x13x16xf32>, %v: tensor<1x4x13x16xf32>, %pad: tensor<1x13xi1>) -> tensor<1x4x10x16xf32> {
  %o = tfm.attention %q, %k, %v key_padding_mask(%pad : tensor<1x13xi1>) {scale = 0.25 : f64, causal = true}
      : tensor<1x4x10x16xf32>, tensor<1x4x13x16xf32>, tensor<1x4x13x16xf32> -> tensor<1x4x10x16xf32>
  return %o : tensor<1x4x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @bias_modifiers
// CHECK: tfm.attention
func.func @bias_modifiers(%q: tensor<1x4x10x16xf32>, %k: tensor<1x4x13x16xf32>, %v: tensor<1x4x13x16xf32>, %t: tensor<32x4xf32>) -> tensor<1x4x10x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%t : tensor<32x4xf32>)
      {scale = 0.25 : f64, causal = true, rope = {base = 10000.0 : f64, rotary_dims = 16 : i64},
       modifiers = [{kind = "alibi"}, {kind = "t5", bidirectional = false}, {kind = "sliding_window", window = 5 : i64}]}
      : tensor<1x4x10x16xf32>, tensor<1x4x13x16xf32>, tensor<1x4x13x16xf32> -> tensor<1x4x10x16xf32>
  return %o : tensor<1x4x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @shaw
// CHECK: tfm.attention
func.func @shaw(%q: tensor<1x4x10x16xf32>, %k: tensor<1x4x13x16xf32>, %v: tensor<1x4x13x16xf32>, %rk: tensor<9x16xf32>, %rv: tensor<9x16xf32>) -> tensor<1x4x10x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x16xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x4x10x16xf32>, tensor<1x4x13x16xf32>, tensor<1x4x13x16xf32> -> tensor<1x4x10x16xf32>
  return %o : tensor<1x4x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @xl
// CHECK: tfm.attention
func.func @xl(%q: tensor<1x4x10x16xf32>, %k: tensor<1x4x13x16xf32>, %v: tensor<1x4x13x16xf32>, %u: tensor<4x16xf32>, %w: tensor<4x16xf32>, %r: tensor<13x4x16xf32>) -> tensor<1x4x10x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<4x16xf32>, tensor<4x16xf32>, tensor<13x4x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 12 : i64}]}
      : tensor<1x4x10x16xf32>, tensor<1x4x13x16xf32>, tensor<1x4x13x16xf32> -> tensor<1x4x10x16xf32>
  return %o : tensor<1x4x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @deberta
// CHECK: tfm.attention
func.func @deberta(%q: tensor<1x4x10x16xf32>, %k: tensor<1x4x13x16xf32>, %v: tensor<1x4x13x16xf32>, %kp: tensor<16x4x16xf32>, %qp: tensor<16x4x16xf32>) -> tensor<1x4x10x16xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%kp, %qp : tensor<16x4x16xf32>, tensor<16x4x16xf32>)
      {scale = 0.14433756729740643 : f64, modifiers = [{kind = "deberta", span = 8 : i64, max_position = 20 : i64}]}
      : tensor<1x4x10x16xf32>, tensor<1x4x13x16xf32>, tensor<1x4x13x16xf32> -> tensor<1x4x10x16xf32>
  return %o : tensor<1x4x10x16xf32>
}
