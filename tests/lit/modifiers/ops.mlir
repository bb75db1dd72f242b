// RUN: attune-opt %s -split-input-file | attune-opt -split-input-file | FileCheck %s

/// Score modifiers on tfm.attention and tfm.score_bias print and parse back
/// unchanged; omitted parameters stay omitted (their defaults are the
/// registry's).

// CHECK-LABEL: func.func @alibi
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, modifiers = [{kind = "alibi"}], scale = 1.250000e-01 : f64}
func.func @alibi(%q: tensor<1x6x?x64xf32>, %k: tensor<1x6x?x64xf32>, %v: tensor<1x6x?x64xf32>) -> tensor<1x6x?x64xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true, modifiers = [{kind = "alibi"}]}
      : tensor<1x6x?x64xf32>, tensor<1x6x?x64xf32>, tensor<1x6x?x64xf32> -> tensor<1x6x?x64xf32>
  return %o : tensor<1x6x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @t5_and_window
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} modifier_operands(%{{.+}} : tensor<32x8xf32>) {modifiers = [{kind = "t5", max_distance = 128 : i64, num_buckets = 32 : i64}, {kind = "sliding_window", window = 16 : i64}], scale = 1.000000e+00 : f64}
func.func @t5_and_window(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %t: tensor<32x8xf32>) -> tensor<1x8x?x64xf32> {
  %o = tfm.attention %q, %k, %v modifier_operands(%t : tensor<32x8xf32>)
      {scale = 1.0 : f64, modifiers = [{kind = "t5", num_buckets = 32 : i64, max_distance = 128 : i64},
                                       {kind = "sliding_window", window = 16 : i64}]}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @score_bias
// CHECK: tfm.score_bias %{{.+}} modifier_operands(%{{.+}} : tensor<32x8xf32>) {modifier = {bidirectional = false, kind = "t5"}} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
func.func @score_bias(%s: tensor<1x8x?x?xf32>, %t: tensor<32x8xf32>) -> tensor<1x8x?x?xf32> {
  %b = tfm.score_bias %s modifier_operands(%t : tensor<32x8xf32>) {modifier = {kind = "t5", bidirectional = false}}
      : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  return %b : tensor<1x8x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @rope
// CHECK: tfm.rope %{{.+}} align(%{{.+}} : tensor<1x4x?x64xf32>) {base = 5.000000e+05 : f64, interleaved = true, rotary_dims = 32 : i64} : tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {rope = {base = 1.000000e+04 : f64, rotary_dims = 64 : i64}, scale = 1.250000e-01 : f64}
func.func @rope(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>) -> (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) {
  %r = tfm.rope %q align(%k : tensor<1x4x?x64xf32>) {base = 500000.0 : f64, rotary_dims = 32 : i64, interleaved = true}
      : tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  %o = tfm.attention %q, %k, %k {scale = 0.125 : f64, rope = {base = 10000.0 : f64, rotary_dims = 64 : i64}}
      : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  return %r, %o : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>
}

// -----

/// Content modifiers: Shaw, Transformer-XL and DeBERTa take their tables as
/// modifier operands; their decomposed forms read q and k (content) and,
/// for Shaw, add a value term to the output.
// CHECK-LABEL: func.func @content_modifiers
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} modifier_operands(%{{.+}}, %{{.+}} : tensor<9x16xf32>, tensor<9x32xf32>) {modifiers = [{kind = "shaw", max_distance = 4 : i64}], scale = 2.500000e-01 : f64}
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} modifier_operands(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x16xf32>, tensor<2x16xf32>, tensor<10x2x16xf32>) {causal = true, modifiers = [{kind = "xl", max_distance = 9 : i64}], scale = 2.500000e-01 : f64}
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} modifier_operands(%{{.+}}, %{{.+}} : tensor<8x2x16xf32>, tensor<8x2x16xf32>) {modifiers = [{kind = "deberta", max_position = 64 : i64, span = 4 : i64}], scale = 1.443380e-01 : f64}
// CHECK: tfm.score_bias %{{.+}} content(%{{.+}}, %{{.+}} : tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32>) modifier_operands(%{{.+}}, %{{.+}} : tensor<9x16xf32>, tensor<9x32xf32>) {modifier = {kind = "shaw", max_distance = 4 : i64}, scale = 2.500000e-01 : f64} : tensor<1x2x10x10xf32> -> tensor<1x2x10x10xf32>
// CHECK: tfm.score_values %{{.+}} modifier_operands(%{{.+}}, %{{.+}} : tensor<9x16xf32>, tensor<9x32xf32>) {modifier = {kind = "shaw", max_distance = 4 : i64}} : tensor<1x2x10x10xf32> -> tensor<1x2x10x32xf32>
func.func @content_modifiers(%q: tensor<1x2x10x16xf32>, %k: tensor<1x2x10x16xf32>, %v: tensor<1x2x10x32xf32>,
                             %rk: tensor<9x16xf32>, %rv: tensor<9x32xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>,
                             %r: tensor<10x2x16xf32>, %kp: tensor<8x2x16xf32>, %qp: tensor<8x2x16xf32>, %s: tensor<1x2x10x10xf32>)
    -> (tensor<1x2x10x32xf32>, tensor<1x2x10x32xf32>, tensor<1x2x10x32xf32>, tensor<1x2x10x10xf32>, tensor<1x2x10x32xf32>) {
  %a = tfm.attention %q, %k, %v modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x32xf32>)
      {scale = 0.25 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32>, tensor<1x2x10x32xf32> -> tensor<1x2x10x32xf32>
  %b = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<2x16xf32>, tensor<2x16xf32>, tensor<10x2x16xf32>)
      {scale = 0.25 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 9 : i64}]}
      : tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32>, tensor<1x2x10x32xf32> -> tensor<1x2x10x32xf32>
  %c = tfm.attention %q, %k, %v modifier_operands(%kp, %qp : tensor<8x2x16xf32>, tensor<8x2x16xf32>)
      {scale = 0.144338 : f64, modifiers = [{kind = "deberta", span = 4 : i64, max_position = 64 : i64}]}
      : tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32>, tensor<1x2x10x32xf32> -> tensor<1x2x10x32xf32>
  %d = tfm.score_bias %s content(%q, %k : tensor<1x2x10x16xf32>, tensor<1x2x10x16xf32>)
      modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x32xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}, scale = 0.25 : f64}
      : tensor<1x2x10x10xf32> -> tensor<1x2x10x10xf32>
  %e = tfm.score_values %s modifier_operands(%rk, %rv : tensor<9x16xf32>, tensor<9x32xf32>)
      {modifier = {kind = "shaw", max_distance = 4 : i64}}
      : tensor<1x2x10x10xf32> -> tensor<1x2x10x32xf32>
  return %a, %b, %c, %d, %e : tensor<1x2x10x32xf32>, tensor<1x2x10x32xf32>, tensor<1x2x10x32xf32>, tensor<1x2x10x10xf32>, tensor<1x2x10x32xf32>
}
