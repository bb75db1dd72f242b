// RUN: attune-opt %s -split-input-file -tfm-fuse-attention -verify-diagnostics | FileCheck %s

/// The plainest export: q·kᵀ with transpose_b, a scale after the matmul.
// CHECK-LABEL: func.func @transpose_b
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @transpose_b(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// `q @ k.transpose(-2, -1)`: an explicit transpose of k, dynamic sequence,
/// the constant on the left of the mul, softmax with a positive axis.
// CHECK-LABEL: func.func @explicit_transpose
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x?x16xf32>, %[[K:[^:]+]]: tensor<1x4x?x16xf32>, %[[V:[^:]+]]: tensor<1x4x?x16xf32>)
// CHECK-NOT: tfm.transpose
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
// CHECK-NOT: tfm.softmax
func.func @explicit_transpose(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %kt = tfm.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : tensor<1x4x?x16xf32> -> tensor<1x4x16x?xf32>
  %s = tfm.matmul %q, %kt : tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %c, %s : tensor<f32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %t {axis = 3 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

/// `(q * scale) @ k.T`: the scale applied to q before the matmul.
// CHECK-LABEL: func.func @scale_on_q
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>)
// CHECK-NOT: tfm.mul
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
func.func @scale_on_q(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %qs = tfm.mul %q, %c : tensor<2x4x8x16xf32>, tensor<f32> -> tensor<2x4x8x16xf32>
  %s = tfm.matmul %qs, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Whisper-style: d^-1/4 on q and on k (before its transpose); the scales
/// multiply.
// CHECK-LABEL: func.func @scale_on_q_and_k
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>)
// CHECK-NOT: tfm.mul
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
func.func @scale_on_q_and_k(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %qs = tfm.mul %q, %c : tensor<2x4x8x16xf32>, tensor<f32> -> tensor<2x4x8x16xf32>
  %ks = tfm.mul %k, %c : tensor<2x4x8x16xf32>, tensor<f32> -> tensor<2x4x8x16xf32>
  %kt = tfm.transpose %ks {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = tfm.matmul %qs, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// `scores / math.sqrt(d)`: a div by a splat constant is a scale of 1/c.
// CHECK-LABEL: func.func @div
// CHECK-NOT: tfm.div
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 2.500000e-01 : f64}
func.func @div(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<4.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// No scale at all (T5): scale 1.
// CHECK-LABEL: func.func @no_scale
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f64}
func.func @no_scale(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// An additive float mask (`scores + attention_mask`), here on the left of
/// the add and broadcast over heads and queries.
// CHECK-LABEL: func.func @add_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>, %[[M:[^:]+]]: tensor<2x1x1x8xf32>)
// CHECK-NOT: tfm.add
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x1x8xf32>) {scale = 2.500000e-01 : f64}
func.func @add_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %m = tfm.add %mask, %t : tensor<2x1x1x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// A rank-2 [Sq, Sk] additive mask is reshaped to rank 4 for the fused op.
// CHECK-LABEL: func.func @add_mask_rank2
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x8xf32>)
// CHECK: %[[M4:.+]] = tfm.reshape %[[M]] : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M4]] : tensor<1x1x8x8xf32>) {scale = 1.000000e+00 : f64}
func.func @add_mask_rank2(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<8x8xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %m = tfm.add %s, %mask : tensor<2x4x8x8xf32>, tensor<8x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// `scores.masked_fill(mask, float('-inf'))` is where(mask, -inf, s); it
/// becomes the exact additive mask where(mask, -inf, 0).
// CHECK-LABEL: func.func @where_neg_inf
// CHECK-SAME: %[[C:[^:]+]]: tensor<1x1x8x8xi1>)
// CHECK-DAG: %[[FILL:.+]] = arith.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[M:.+]] = tfm.where %[[C]], %[[FILL]], %[[ZERO]] : tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x8x8xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x8x8xf32>) {scale = 2.500000e-01 : f64}
// CHECK-NOT: tfm.softmax
func.func @where_neg_inf(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %cond: tensor<1x1x8x8xi1>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %cond, %ninf, %t : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// `masked_fill(mask == 0, -1e9)` written as where(keep, s, -1e9) with an
/// [Sq, Sk] condition: masked where the condition is zero. The graph
/// replaces masked scores, the fused op adds its mask: -1e9 is written as
/// finfo.min, which absorbs any score (s - 1e9 does not once |s| >= 32, and
/// a row with every key masked would not be uniform as in the graph).
// CHECK-LABEL: func.func @masked_fill_neg_1e9
// CHECK-SAME: %[[C:[^:]+]]: tensor<8x8xi32>)
// CHECK-DAG: %[[FILL:.+]] = arith.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[M:.+]] = tfm.where %[[C]], %[[ZERO]], %[[FILL]] : tensor<8x8xi32>, tensor<f32>, tensor<f32> -> tensor<8x8xf32>
// CHECK: %[[M4:.+]] = tfm.reshape %[[M]] : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M4]] : tensor<1x1x8x8xf32>) {scale = 1.250000e-01 : f64}
func.func @masked_fill_neg_1e9(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %keep: tensor<8x8xi32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<8.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %fill = arith.constant dense<-1.000000e+09> : tensor<f32>
  %m = tfm.where %keep, %t, %fill : tensor<8x8xi32>, tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Hugging Face's `attention_mask` [B, Sk], reshaped to [B, 1, 1, Sk] and
/// kept where nonzero: the fused op's key_padding_mask.
// CHECK-LABEL: func.func @key_padding
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>, %[[KPM:[^:]+]]: tensor<2x8xi64>)
// CHECK-NOT: tfm.reshape
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] key_padding_mask(%[[KPM]] : tensor<2x8xi64>) {scale = 2.500000e-01 : f64}
// CHECK-NOT: tfm.where
func.func @key_padding(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %am: tensor<2x8xi64>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %cond = tfm.reshape %am : tensor<2x8xi64> -> tensor<2x1x1x8xi64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %cond, %t, %ninf : tensor<2x1x1x8xi64>, tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Several masks at once (T5-style bias, a masked_fill, key padding, causal):
/// the additive terms are summed into one mask, in walk order.
// CHECK-LABEL: func.func @several_masks
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>, %[[BIAS:[^:]+]]: tensor<1x4x8x8xf32>, %[[C:[^:]+]]: tensor<1x1x8x8xi1>, %[[KPM:[^:]+]]: tensor<2x8xi1>)
// CHECK: %[[W:.+]] = tfm.where %[[C]], %{{.+}}, %{{.+}} : tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x8x8xf32>
// CHECK: %[[M:.+]] = tfm.add %[[W]], %[[BIAS]] : tensor<1x1x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x4x8x8xf32>) key_padding_mask(%[[KPM]] : tensor<2x8xi1>) {causal = true, scale = 2.500000e-01 : f64}
// CHECK-NOT: tfm.softmax
func.func @several_masks(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %bias: tensor<1x4x8x8xf32>, %cond: tensor<1x1x8x8xi1>, %kpm: tensor<2x8xi1>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %b = tfm.add %t, %bias : tensor<2x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %kc = tfm.reshape %kpm : tensor<2x8xi1> -> tensor<2x1x1x8xi1>
  %kp = tfm.where %kc, %b, %ninf : tensor<2x1x1x8xi1>, tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %cm = tfm.causal_mask %kp : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mf = tfm.where %cond, %ninf, %cm : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %mf {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Hugging Face fills with torch.finfo(dtype).min, only -65504 in f16.
// CHECK-LABEL: func.func @where_finfo_min_f16
// CHECK: %[[FILL:.+]] = arith.constant dense<-6.550400e+04> : tensor<f16>
// CHECK: %[[M:.+]] = tfm.where %{{.+}}, %{{.+}}, %[[FILL]] : tensor<1x1x8x8xi1>, tensor<f16>, tensor<f16> -> tensor<1x1x8x8xf16>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x8x8xf16>) {scale = 2.500000e-01 : f64}
func.func @where_finfo_min_f16(%q: tensor<2x4x8x16xf16>, %k: tensor<2x4x8x16xf16>, %v: tensor<2x4x8x16xf16>, %keep: tensor<1x1x8x8xi1>) -> tensor<2x4x8x16xf16> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf16>, tensor<2x4x8x16xf16> -> tensor<2x4x8x8xf16>
  %c = arith.constant dense<2.500000e-01> : tensor<f16>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf16>, tensor<f16> -> tensor<2x4x8x8xf16>
  %min = arith.constant dense<-6.550400e+04> : tensor<f16>
  %m = tfm.where %keep, %t, %min : tensor<1x1x8x8xi1>, tensor<2x4x8x8xf16>, tensor<f16> -> tensor<2x4x8x8xf16>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf16> -> tensor<2x4x8x8xf16>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf16>, tensor<2x4x8x16xf16> -> tensor<2x4x8x16xf16>
  return %o : tensor<2x4x8x16xf16>
}

// -----

/// GPT-2's causal mask, then softmax in the model's scale order.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: tfm.causal_mask
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 1.250000e-01 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
func.func @causal(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// -----

/// GPT-2 (Hugging Face): where(bias[:, :, :S, :S], s, finfo.min) with the
/// constant lower-triangular buffer is the causal mask, not a tensor mask.
// CHECK-LABEL: func.func @constant_causal_keep
// CHECK-NOT: tfm.where
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 2.500000e-01 : f64} : tensor<1x2x4x16xf32>
// CHECK-NOT: mask(
func.func @constant_causal_keep(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %c = arith.constant dense<4.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %bias = arith.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m = tfm.where %bias, %t, %min : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// masked_fill(triu(ones(Sq, Sk), Sk - Sq + 1), -inf) with 2 queries over 3
/// keys (decoding with a cache): causal aligned at the last key, as
/// tfm.causal_mask defines it.
// CHECK-LABEL: func.func @constant_causal_triu
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 1.000000e+00 : f64}
func.func @constant_causal_triu(%q: tensor<1x2x2x16xf32>, %k: tensor<1x2x3x16xf32>, %v: tensor<1x2x3x16xf32>) -> tensor<1x2x2x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x2x16xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x3xf32>
  %triu = arith.constant dense<[[0, 0, 1], [0, 0, 0]]> : tensor<2x3xi8>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %triu, %ninf, %s : tensor<2x3xi8>, tensor<f32>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x2x3xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x16xf32>
  return %o : tensor<1x2x2x16xf32>
}

// -----

/// triu(ones(Sq, Sk), 1) aligns the first query with the first key
/// (PyTorch's is_causal), which differs from tfm's causal when Sq != Sk: it
/// stays a tensor mask.
// CHECK-LABEL: func.func @constant_mask_not_causal
// CHECK: %[[C:.+]] = arith.constant dense<{{\[}}[0, 1, 1], [0, 0, 1]]> : tensor<2x3xi8>
// CHECK: %[[M:.+]] = tfm.where %[[C]]
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<1x1x2x3xf32>) {scale = 1.000000e+00 : f64}
func.func @constant_mask_not_causal(%q: tensor<1x2x2x16xf32>, %k: tensor<1x2x3x16xf32>, %v: tensor<1x2x3x16xf32>) -> tensor<1x2x2x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x2x16xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x3xf32>
  %c = arith.constant dense<[[0, 1, 1], [0, 0, 1]]> : tensor<2x3xi8>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %c, %ninf, %s : tensor<2x3xi8>, tensor<f32>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x2x3xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x16xf32>
  return %o : tensor<1x2x2x16xf32>
}

// -----

/// Grouped-query attention (Llama): k and v heads repeated 4x on axis 1;
/// the fused op takes the 2 key/value heads themselves.
// CHECK-LABEL: func.func @gqa_repeat
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x2x?x64xf32>, %[[V:[^:]+]]: tensor<1x2x?x64xf32>)
// CHECK-NOT: tfm.repeat_interleave
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f64} : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
// CHECK-NOT: tfm.repeat_interleave
func.func @gqa_repeat(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %k4 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %v4 = tfm.repeat_interleave %v {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %kt = tfm.transpose %k4 {permutation = array<i64: 0, 1, 3, 2>} : tensor<1x8x?x64xf32> -> tensor<1x8x64x?xf32>
  %s = tfm.matmul %q, %kt : tensor<1x8x?x64xf32>, tensor<1x8x64x?xf32> -> tensor<1x8x?x?xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x8x?x?xf32>, tensor<f32> -> tensor<1x8x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %o = tfm.matmul %p, %v4 : tensor<1x8x?x?xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

/// P x V on heads merged into the batch, as Hugging Face's DeBERTa writes
/// it: bmm(probs.view(-1, Sq, Sk), v [B*H, Sk, Dv]) viewed back as [B, H,
/// Sq, Dv]. The same product on the [B, H] views, then fused; the views of
/// v and of the output go with it.
// CHECK-LABEL: func.func @merged_heads_pv
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x3x?x8xf32>, %[[K:[^:]+]]: tensor<2x3x?x8xf32>, %[[V:[^:]+]]: tensor<2x3x?x8xf32>)
// CHECK-NEXT: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {scale = 5.000000e-01 : f64} : tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32> -> tensor<2x3x?x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @merged_heads_pv(%q: tensor<2x3x?x8xf32>, %k: tensor<2x3x?x8xf32>, %v: tensor<2x3x?x8xf32>) -> tensor<2x3x?x8xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32> -> tensor<2x3x?x?xf32>
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x3x?x?xf32>, tensor<f32> -> tensor<2x3x?x?xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x3x?x?xf32> -> tensor<2x3x?x?xf32>
  %p3 = tfm.reshape %p : tensor<2x3x?x?xf32> -> tensor<6x?x?xf32>
  %v3 = tfm.reshape %v : tensor<2x3x?x8xf32> -> tensor<6x?x8xf32>
  %o3 = tfm.matmul %p3, %v3 : tensor<6x?x?xf32>, tensor<6x?x8xf32> -> tensor<6x?x8xf32>
  %o = tfm.reshape %o3 : tensor<6x?x8xf32> -> tensor<2x3x?x8xf32>
  return %o : tensor<2x3x?x8xf32>
}

// -----

/// The probabilities viewed with heads merged into the query rows, not the
/// batch ([B, H, Sq, Sk] -> [B, H*Sq, Sk]): not a product per head, left as
/// written.
// CHECK-LABEL: func.func @negative_merged_heads_pv_rows
// CHECK-NOT: tfm.attention
func.func @negative_merged_heads_pv_rows(%q: tensor<1x3x4x8xf32>, %k: tensor<1x3x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<1x12x8xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32> -> tensor<1x3x4x4xf32>
  // expected-remark @+1 {{attention not fused: probabilities feed tfm.reshape, not a matmul with V}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %p3 = tfm.reshape %p : tensor<1x3x4x4xf32> -> tensor<1x12x4xf32>
  %o = tfm.matmul %p3, %v : tensor<1x12x4xf32>, tensor<1x4x8xf32> -> tensor<1x12x8xf32>
  return %o : tensor<1x12x8xf32>
}

// -----

/// A whole self-attention block as exporters write it: linear projections,
/// heads split by reshape [B, S, H, D] + transpose [0, 2, 1, 3], attention,
/// heads merged by the inverse transpose + reshape, output projection. Only
/// the attention core is fused; the split/merge stays for layout propagation.
// CHECK-LABEL: func.func @block_with_head_split_merge
// CHECK: %[[QL:.+]] = tfm.linear
// CHECK: %[[QH:.+]] = tfm.reshape %[[QL]] : tensor<1x?x256xf32> -> tensor<1x?x4x64xf32>
// CHECK: %[[Q:.+]] = tfm.transpose %[[QH]] {permutation = array<i64: 0, 2, 1, 3>}
// CHECK: %[[KL:.+]] = tfm.linear
// CHECK: %[[KH:.+]] = tfm.reshape %[[KL]]
// CHECK: %[[K:.+]] = tfm.transpose %[[KH]] {permutation = array<i64: 0, 2, 1, 3>}
// CHECK: %[[VL:.+]] = tfm.linear
// CHECK: %[[VH:.+]] = tfm.reshape %[[VL]]
// CHECK: %[[V:.+]] = tfm.transpose %[[VH]] {permutation = array<i64: 0, 2, 1, 3>}
// CHECK-NOT: tfm.matmul
// CHECK: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f64} : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
// CHECK-NOT: tfm.softmax
// CHECK: %[[OT:.+]] = tfm.transpose %[[O]] {permutation = array<i64: 0, 2, 1, 3>}
// CHECK: %[[OM:.+]] = tfm.reshape %[[OT]] : tensor<1x?x4x64xf32> -> tensor<1x?x256xf32>
// CHECK: tfm.linear %[[OM]]
func.func @block_with_head_split_merge(%x: tensor<1x?x256xf32>, %wq: tensor<256x256xf32>, %wk: tensor<256x256xf32>, %wv: tensor<256x256xf32>, %wo: tensor<256x256xf32>, %b: tensor<256xf32>) -> tensor<1x?x256xf32> {
  %ql = tfm.linear %x, %wq, %b : tensor<1x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<1x?x256xf32>
  %qh = tfm.reshape %ql : tensor<1x?x256xf32> -> tensor<1x?x4x64xf32>
  %q = tfm.transpose %qh {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x64xf32> -> tensor<1x4x?x64xf32>
  %kl = tfm.linear %x, %wk, %b : tensor<1x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<1x?x256xf32>
  %kh = tfm.reshape %kl : tensor<1x?x256xf32> -> tensor<1x?x4x64xf32>
  %k = tfm.transpose %kh {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x64xf32> -> tensor<1x4x?x64xf32>
  %vl = tfm.linear %x, %wv, %b : tensor<1x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<1x?x256xf32>
  %vh = tfm.reshape %vl : tensor<1x?x256xf32> -> tensor<1x?x4x64xf32>
  %v = tfm.transpose %vh {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x64xf32> -> tensor<1x4x?x64xf32>
  %kt = tfm.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : tensor<1x4x?x64xf32> -> tensor<1x4x64x?xf32>
  %s = tfm.matmul %q, %kt : tensor<1x4x?x64xf32>, tensor<1x4x64x?xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<8.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %a = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  %at = tfm.transpose %a {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x4x?x64xf32> -> tensor<1x?x4x64xf32>
  %am = tfm.reshape %at : tensor<1x?x4x64xf32> -> tensor<1x?x256xf32>
  %y = tfm.linear %am, %wo, %b : tensor<1x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<1x?x256xf32>
  return %y : tensor<1x?x256xf32>
}

// -----

/// GPT-2's original split_heads(k, k=True) permutes [B, S, H, D] straight to
/// [B, H, D, S]; the fused op's k is the [0, 2, 1, 3] transpose of it.
// CHECK-LABEL: func.func @gpt2_key_permute
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x?x64xf32>, %[[KH:[^:]+]]: tensor<1x?x4x64xf32>, %[[V:[^:]+]]: tensor<1x4x?x64xf32>)
// CHECK: %[[K:.+]] = tfm.transpose %[[KH]] {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x64xf32> -> tensor<1x4x?x64xf32>
// CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f64}
// CHECK-NOT: array<i64: 0, 2, 3, 1>
func.func @gpt2_key_permute(%q: tensor<1x4x?x64xf32>, %kh: tensor<1x?x4x64xf32>, %v: tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %kt = tfm.transpose %kh {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x?x4x64xf32> -> tensor<1x4x64x?xf32>
  %s = tfm.matmul %q, %kt : tensor<1x4x?x64xf32>, tensor<1x4x64x?xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<8.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// -----

/// A softmax over another axis is not attention's row softmax.
// CHECK-LABEL: func.func @negative_softmax_axis
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_softmax_axis(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: softmax is not over the last axis (axis 2 of rank 4 scores)}}
  %p = tfm.softmax %s {axis = 2 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// A per-element (non-splat) scale cannot become the scalar `scale`.
// CHECK-LABEL: func.func @negative_non_splat_scale
// CHECK: tfm.mul
// CHECK-NOT: tfm.attention
func.func @negative_non_splat_scale(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<8xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: scale operand of tfm.mul is not a splat constant}}
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// The raw scores are also returned: fusing would not save computing them.
// CHECK-LABEL: func.func @negative_scores_other_user
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_scores_other_user(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: the scores computed by tfm.matmul have another user, func.return; fusing would not remove them}}
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o, %s : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}

// -----

/// output_attentions=True: the probabilities are a model output too.
// CHECK-LABEL: func.func @negative_probabilities_returned
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_probabilities_returned(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: the probabilities have another user, func.return; the fused op does not produce them}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o, %p : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}

// -----

/// The probabilities do not meet V in a matmul.
// CHECK-LABEL: func.func @negative_probabilities_not_matmul
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_probabilities_not_matmul(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %bias: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: probabilities feed tfm.add, not a matmul with V}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.add %p, %bias : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// -----

/// A fill of 0 is not a mask: where(c, 0, s) changes scores, it does not
/// remove them.
// CHECK-LABEL: func.func @negative_where_fill_not_mask
// CHECK: tfm.where
// CHECK-NOT: tfm.attention
func.func @negative_where_fill_not_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %cond: tensor<1x1x8x8xi1>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %m = tfm.where %cond, %zero, %s : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: tfm.where fills with 0, expected -inf or <= -1e9 (a mask)}}
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// (s + mask) * c scales the mask too, which tfm.attention cannot express.
// CHECK-LABEL: func.func @negative_mask_scaled
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_mask_scaled(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %m = tfm.add %s, %mask : tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %m, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: the additive mask is scaled along with the scores (tfm.add before the scale); tfm.attention scales only q·k}}
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Transformer-XL adds two matmuls (content and position terms): neither is
/// a mask, so the scores cannot be told apart.
// CHECK-LABEL: func.func @negative_two_score_terms
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_two_score_terms(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %r: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %ac = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %bd = tfm.matmul %q, %r {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %s = tfm.add %ac, %bd : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: both operands of tfm.add are computed from a matmul; cannot tell the scores from the mask}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// k given already as [B, H, D, Sk] with no transpose to look through: the
/// pass does not guess a layout for it.
// CHECK-LABEL: func.func @negative_key_not_transposed
// CHECK: tfm.softmax
// CHECK-NOT: tfm.attention
func.func @negative_key_not_transposed(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: k is not transposed: expected tfm.matmul {transpose_b} or a tfm.transpose of k into [B, H, D, Sk]}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

/// Rank-3 scores ([B*H, Sq, Sk], fairseq's bmm form) are not BHSD.
// CHECK-LABEL: func.func @negative_rank3
// CHECK-NOT: tfm.attention
func.func @negative_rank3(%q: tensor<8x8x16xf32>, %k: tensor<8x8x16xf32>, %v: tensor<8x8x16xf32>) -> tensor<8x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<8x8x16xf32>, tensor<8x8x16xf32> -> tensor<8x8x8xf32>
  // expected-remark @+1 {{attention not fused: the scores are rank 3, expected rank 4 [B, H, Sq, Sk]}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<8x8x8xf32> -> tensor<8x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<8x8x8xf32>, tensor<8x8x16xf32> -> tensor<8x8x16xf32>
  return %o : tensor<8x8x16xf32>
}

// -----

/// A mask with a static batch of 2 against q, k, v of dynamic batch: the
/// chain's result is [2, 4, ?, 16], tfm.attention's would be [?, 4, ?, 16]
/// (its batch comes from q, k and v), so fusing would change the type the
/// users see. The site stays as it was, including no leftover of the mask
/// the rewrite had started to build (the where(c, 0, fill) and its splats).
// CHECK-LABEL: func.func @negative_fused_type_differs
// CHECK-NOT: tfm.attention
// CHECK-NOT: dense<0.000000e+00>
// CHECK: %[[S:.+]] = tfm.matmul
// CHECK: tfm.where
// CHECK: tfm.softmax
// CHECK: %[[O:.+]] = tfm.matmul {{.*}} -> tensor<2x4x?x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @negative_fused_type_differs(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %c: tensor<2x1x1x?xi1>) -> tensor<2x4x?x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %w = tfm.where %c, %s, %ninf : tensor<2x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<2x4x?x?xf32>
  // expected-remark @+1 {{attention not fused: the fused result type [?, 4, ?, 16] differs from the decomposed one [2, 4, ?, 16]}}
  %p = tfm.softmax %w {axis = -1 : i64} : tensor<2x4x?x?xf32> -> tensor<2x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

/// q and k rotated with different bases: not one rotary embedding. The
/// fused op takes the rotated tensors as they are; both tfm.rope stay.
// CHECK-LABEL: func.func @rope_mismatch_not_folded
// CHECK: %[[QR:.+]] = tfm.rope %{{[^ ]+}} : tensor
// CHECK: %[[KR:.+]] = tfm.rope %{{.+}} {base = 5.000000e+05 : f64}
// CHECK: tfm.attention %[[QR]], %[[KR]], %{{.+}} {scale = 1.250000e-01 : f64}
// CHECK-NOT: rope =
func.func @rope_mismatch_not_folded(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x16x64xf32>, %v: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  %qr = tfm.rope %q {base = 10000.0 : f64} : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %kr = tfm.rope %k {base = 500000.0 : f64} : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %s = tfm.matmul %qr, %kr {transpose_b = true} : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x16xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x16x16xf32>, tensor<f32> -> tensor<1x4x16x16xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}

// -----

/// Static equal lengths need no `align`: positions start at 0 for both.
// CHECK-LABEL: func.func @rope_static_folded
// CHECK-NOT: tfm.rope
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {rope = {base = 1.000000e+04 : f64, rotary_dims = 64 : i64}, scale = 1.250000e-01 : f64}
func.func @rope_static_folded(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x16x64xf32>, %v: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  %qr = tfm.rope %q : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %kr = tfm.rope %k : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %s = tfm.matmul %qr, %kr {transpose_b = true} : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x16xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x16x16xf32>, tensor<f32> -> tensor<1x4x16x16xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}

// -----

/// Multiplying the scores by a 0/1 tensor is not masking: a zeroed score
/// still gets weight exp(0) after the softmax. Not fused, with a reason.
// CHECK-LABEL: func.func @negative_multiply_by_zero_one_mask
// CHECK: tfm.mul
// CHECK-NOT: tfm.attention
func.func @negative_multiply_by_zero_one_mask(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %m = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<4x4xf32>
  %t = tfm.mul %s, %m : tensor<1x2x4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not fused: tfm.mul multiplies the scores by a 0/1 tensor before the softmax, which is not a mask (a zeroed score still gets weight exp(0)); mask with tfm.where(cond, s, -inf) instead}}
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// Shaw's content term reads rows other than the scores' q: fusing would
/// compute it from the wrong rows. Not fused, with a reason.
// CHECK-LABEL: func.func @negative_content_other_rows
// CHECK: tfm.score_bias
// CHECK-NOT: tfm.attention
func.func @negative_content_other_rows(%q: tensor<1x2x6x16xf32>, %x: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %t content(%x, %k : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}, scale = 0.25 : f64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the content terms of modifier 'shaw' read other rows than the q and k of the scores}}
  %p = tfm.softmax %b {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %pv = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x16xf32>
  %o = tfm.add %pv, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// The content term scaled differently from q.k: tfm.attention has one scale.
// CHECK-LABEL: func.func @negative_content_scale
// CHECK-NOT: tfm.attention
func.func @negative_content_scale(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %kp: tensor<4x2x16xf32>, %qp: tensor<4x2x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %t content(%q, %k : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%kp, %qp : tensor<4x2x16xf32>, tensor<4x2x16xf32>)
      {modifier = {kind = "deberta", span = 2 : i64}, scale = 0.5 : f64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the content terms of modifier 'deberta' are scaled by 0.5, the scores by 0.25; tfm.attention scales both alike}}
  %p = tfm.softmax %b {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// Shaw's score term without its value term: the fused op has both.
// CHECK-LABEL: func.func @negative_value_term_missing
// CHECK-NOT: tfm.attention
func.func @negative_value_term_missing(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %t content(%q, %k : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}, scale = 0.25 : f64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: modifier 'shaw' has a value term the graph does not add to P x V (tfm.score_values with the same modifier)}}
  %p = tfm.softmax %b {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// A value term whose modifier is not on the scores.
// CHECK-LABEL: func.func @negative_value_term_alone
// CHECK-NOT: tfm.attention
func.func @negative_value_term_alone(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: tfm.score_values adds a value term whose modifier is not on the scores}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %pv = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x16xf32>
  %o = tfm.add %pv, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// The value term used elsewhere too: the fused op computes only the sum.
// CHECK-LABEL: func.func @negative_value_term_reused
// CHECK-NOT: tfm.attention
func.func @negative_value_term_reused(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> (tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %t content(%q, %k : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}, scale = 0.25 : f64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the modifier's value term (tfm.score_values) is not added to P x V alone; the fused op computes only their sum}}
  %p = tfm.softmax %b {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %pv = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x16xf32>
  %o = tfm.add %pv, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>
}

// -----

/// A dynamic head dim: the fused kernel is specialised on a static one, so
/// the chain stays as it is (it compiles unfused).
// CHECK-LABEL: func.func @negative_dynamic_head_dim
// CHECK-NOT: tfm.attention
func.func @negative_dynamic_head_dim(%q: tensor<1x2x6x?xf32>, %k: tensor<1x2x6x?xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x?xf32>, tensor<1x2x6x?xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the head dim of q is dynamic; the fused kernel is specialised on a static one}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// A value head dim beyond what the fused kernel takes.
// CHECK-LABEL: func.func @negative_huge_value_head_dim
// CHECK-NOT: tfm.attention
func.func @negative_huge_value_head_dim(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x2048xf32>) -> tensor<1x2x6x2048xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the head dim of v is 2048, beyond the fused kernel's 1024}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x2048xf32> -> tensor<1x2x6x2048xf32>
  return %o : tensor<1x2x6x2048xf32>
}

// -----

/// Shaw's content term added before the scale, (q.k + q.R) / sqrt(d), as
/// code that scales the logits last writes it: a modifier with only
/// content terms scales along with q.k, so it fuses with the scale after.
// CHECK-LABEL: func.func @content_before_scale
// CHECK: tfm.attention {{.+}} {modifiers = [{kind = "shaw", max_distance = 2 : i64}], scale = 2.500000e-01 : f64}
// CHECK-NOT: tfm.score_bias
func.func @content_before_scale(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %s content(%q, %k : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}, scale = 1.0 : f64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<4.0> : tensor<f32>
  %t = tfm.div %b, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %pv = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x16xf32>
  %o = tfm.add %pv, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// The same with ALiBi, which has a bias term: tfm.attention adds bias
/// terms after the scale, so one above it is not fused.
// CHECK-LABEL: func.func @negative_bias_before_scale
// CHECK-NOT: tfm.attention
func.func @negative_bias_before_scale(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %b = tfm.score_bias %s {modifier = {kind = "alibi"}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %c = arith.constant dense<4.0> : tensor<f32>
  %t = tfm.div %b, %c : tensor<1x2x6x6xf32>, tensor<f32> -> tensor<1x2x6x6xf32>
  // expected-remark @+1 {{attention not fused: the score modifier's bias is scaled along with the scores}}
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}

// -----

/// Two masked_fills with finfo.min (found by attune-fuzz-graphs, seed 2):
/// each where replaces the score, so a key masked by both is finfo.min and a
/// row with every key masked averages v uniformly. Summed as one additive
/// mask, finfo.min + finfo.min is -inf and that row would output 0. Not
/// fused, with a reason.
// CHECK-LABEL: func.func @negative_finite_fill_over_mask
// CHECK-NOT: tfm.attention
func.func @negative_finite_fill_over_mask(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>, %keep: tensor<1x1x?x?xi1>, %drop: tensor<1x1x?x?xi1>) -> tensor<1x2x?x32xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x?xf32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %a = tfm.where %keep, %s, %min : tensor<1x1x?x?xi1>, tensor<1x2x?x?xf32>, tensor<f32> -> tensor<1x2x?x?xf32>
  %b = tfm.where %drop, %min, %a : tensor<1x1x?x?xi1>, tensor<f32>, tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  // expected-remark @+1 {{attention not fused: tfm.where fills with -3.40282e+38 after another tfm.where masked the scores; the fused op would add the two, which differs from the fill on a row with every key masked}}
  %p = tfm.softmax %b {axis = -1 : i64} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  return %o : tensor<1x2x?x32xf32>
}

// -----

/// The same with -inf under a -1e9 fill: the graph's fill wins over the
/// additive mask below it, the fused sum would not.
// CHECK-LABEL: func.func @negative_finite_fill_over_additive
// CHECK-NOT: tfm.attention
func.func @negative_finite_fill_over_additive(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %mask: tensor<1x1x4x4xf32>, %drop: tensor<4x4xi1>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %m = tfm.add %s, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %fill = arith.constant dense<-1.0e+09> : tensor<f32>
  %w = tfm.where %drop, %fill, %m : tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not fused: tfm.where fills with -1e+09 after an additive mask masked the scores}}
  %p = tfm.softmax %w {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// A finite fill nearest the scores, an additive mask after it (GPT-2 in
/// Hugging Face: the causal where with finfo.min, then attention_mask):
/// finfo.min absorbs the score and the mask alike, so the sum is what the
/// graph computes, and it fuses.
// CHECK-LABEL: func.func @finite_fill_then_additive
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(
func.func @finite_fill_then_additive(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %mask: tensor<1x1x4x4xf32>, %drop: tensor<4x4xi1>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %fill = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %w = tfm.where %drop, %fill, %s : tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %m = tfm.add %w, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// The same with -1e9, which a score shifts (f32's step there is 64): on a
/// row whose every key the where masks, the graph weights the keys by the
/// additive mask (fill + mask), which the fused op cannot express (found by
/// attune-fuzz-graphs, seed 1127, graph 1985). Left unfused.
// CHECK-LABEL: func.func @negative_non_absorbing_fill_then_additive
// CHECK-NOT: tfm.attention
func.func @negative_non_absorbing_fill_then_additive(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %mask: tensor<1x1x4x4xf32>, %drop: tensor<4x4xi1>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %fill = arith.constant dense<-1.0e+09> : tensor<f32>
  %w = tfm.where %drop, %fill, %s : tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %m = tfm.add %w, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not fused: tfm.where fills with -1e+09, which a score can shift, and an additive term follows it}}
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// GPT-2's constant causal where with finfo.min, 4 queries over 2 keys (found
/// by attune-fuzz-graphs): the first two rows see no key, and the finite fill
/// averages them uniformly where causal (-inf) would output 0. Fused with the
/// fill as an additive mask, not as causal.
// CHECK-LABEL: func.func @constant_causal_finite_fill_more_queries
// CHECK: %[[M:.+]] = tfm.where %{{.+}} : tensor<1x1x4x2xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x4x2xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x4x2xf32>) {scale = 1.000000e+00 : f64}
// CHECK-NOT: causal
func.func @constant_causal_finite_fill_more_queries(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x2x16xf32>, %v: tensor<1x2x2x16xf32>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x4x2xf32>
  %c = arith.constant dense<[[[[false, false], [false, false], [true, false], [true, true]]]]> : tensor<1x1x4x2xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m = tfm.where %c, %s, %min : tensor<1x1x4x2xi1>, tensor<1x2x4x2xf32>, tensor<f32> -> tensor<1x2x4x2xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x2xf32> -> tensor<1x2x4x2xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x2xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// The same triangle with -inf: the rows without a key output 0 either way,
/// so it is causal.
// CHECK-LABEL: func.func @constant_causal_neg_inf_more_queries
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 1.000000e+00 : f64}
func.func @constant_causal_neg_inf_more_queries(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x2x16xf32>, %v: tensor<1x2x2x16xf32>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x4x2xf32>
  %c = arith.constant dense<[[[[false, false], [false, false], [true, false], [true, true]]]]> : tensor<1x1x4x2xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %c, %s, %ninf : tensor<1x1x4x2xi1>, tensor<1x2x4x2xf32>, tensor<f32> -> tensor<1x2x4x2xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x2xf32> -> tensor<1x2x4x2xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x2xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// tfm.causal_mask with a finite value on dynamic lengths (found by
/// attune-fuzz-graphs --replay of a 5-query, 3-key case): with Sq > Sk the
/// first queries see no key and the graph averages v there; the fused op's
/// causal (-inf) would output 0. Not fused, with a reason.
// CHECK-LABEL: func.func @negative_causal_finite_value_dynamic
// CHECK: tfm.causal_mask
// CHECK-NOT: tfm.attention
func.func @negative_causal_finite_value_dynamic(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x?xf32>
  %m = tfm.causal_mask %s {value = -1.0e+09 : f64} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  // expected-remark @+1 {{attention not fused: tfm.causal_mask fills with -1e+09 and Sq may exceed Sk: a query that sees no other key averages v over the causally masked ones, where causal attention outputs 0}}
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

/// The same with static Sq <= Sk: every query sees a key, so it is causal.
// CHECK-LABEL: func.func @causal_finite_value_static
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 1.000000e+00 : f64}
func.func @causal_finite_value_static(%q: tensor<1x2x3x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x3x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x3x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x3x5xf32>
  %m = tfm.causal_mask %s {value = -1.0e+09 : f64} : tensor<1x2x3x5xf32> -> tensor<1x2x3x5xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x3x5xf32> -> tensor<1x2x3x5xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x3x5xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x3x16xf32>
  return %o : tensor<1x2x3x16xf32>
}

// -----

/// A finite causal_mask with key padding after it (found by
/// attune-fuzz-graphs, seed 4, graph 23): a query whose past keys are all
/// padded still has its future keys at -1e9 and averages them; fused, causal
/// and key padding are both -inf and it would output 0. Not fused.
// CHECK-LABEL: func.func @negative_causal_finite_value_with_key_padding
// CHECK-NOT: tfm.attention
func.func @negative_causal_finite_value_with_key_padding(%q: tensor<1x1x8x32xf32>, %k: tensor<1x1x8x32xf32>, %v: tensor<1x1x8x8xf32>, %kp: tensor<1x8xi64>) -> tensor<1x1x8x8xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x1x8x32xf32>, tensor<1x1x8x32xf32> -> tensor<1x1x8x8xf32>
  %c = tfm.causal_mask %s {value = -1.000000e+09 : f64} : tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  %kc = tfm.reshape %kp : tensor<1x8xi64> -> tensor<1x1x1x8xi64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %kc, %c, %ninf : tensor<1x1x1x8xi64>, tensor<1x1x8x8xf32>, tensor<f32> -> tensor<1x1x8x8xf32>
  // expected-remark @+1 {{attention not fused: tfm.causal_mask fills with -1e+09 and another term masks the scores}}
  %p = tfm.softmax %m {axis = 3 : i64} : tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return %o : tensor<1x1x8x8xf32>
}

// -----

/// GPT-2's constant causal where with finfo.min and key padding after it:
/// for the same reason not causal, but the triangle stays an additive mask
/// of the fill beside the key padding, which is exact.
// CHECK-LABEL: func.func @constant_causal_finite_fill_with_key_padding
// CHECK: %[[M:.+]] = tfm.where %{{.+}} : tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x4x4xf32>
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<1x1x4x4xf32>) key_padding_mask(%{{.+}} : tensor<1x4xi1>) {scale = 1.000000e+00 : f64}
func.func @constant_causal_finite_fill_with_key_padding(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %kp: tensor<1x4xi1>) -> tensor<1x2x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x4xf32>
  %c = arith.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %w = tfm.where %c, %s, %min : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %kc = tfm.reshape %kp : tensor<1x4xi1> -> tensor<1x1x1x4xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %kc, %w, %ninf : tensor<1x1x1x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32> -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

/// A finite tfm.causal_mask over a -inf where replaces the -inf of the keys
/// both mask, like a finite where would.
// CHECK-LABEL: func.func @negative_causal_finite_value_over_where
// CHECK-NOT: tfm.attention
func.func @negative_causal_finite_value_over_where(%q: tensor<1x1x4x16xf32>, %k: tensor<1x1x4x16xf32>, %v: tensor<1x1x4x16xf32>, %drop: tensor<4x4xi1>) -> tensor<1x1x4x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x4xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %w = tfm.where %drop, %ninf, %s : tensor<4x4xi1>, tensor<f32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %c = tfm.causal_mask %w {value = -1.000000e+09 : f64} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  // expected-remark @+1 {{attention not fused: tfm.causal_mask fills with -1e+09 after another tfm.where masked the scores}}
  %p = tfm.softmax %c {axis = -1 : i64} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %o = tfm.matmul %p, %v : tensor<1x1x4x4xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}

// -----

/// Gemma 2's softcapping as exporters write it: (q·kᵀ · scale / c).tanh() · c,
/// then the causal mask. The cap folds into `softcap`, the scales around
/// the tanh into `scale` (50 · 0.125 / 50).
// CHECK-LABEL: func.func @softcap_gemma2
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 1.250000e-01 : f64, softcap = 5.000000e+01 : f64}
// CHECK-NOT: tfm.tanh
// CHECK-NOT: tfm.softmax
func.func @softcap_gemma2(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x8xf32>
  %scale = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %scale : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %cap = arith.constant dense<5.000000e+01> : tensor<f32>
  %d = tfm.div %t, %cap : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %h = tfm.tanh %d : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %c = tfm.mul %h, %cap : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %m = tfm.causal_mask %c : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

/// A mask added before the tanh is capped with the scores (-inf becomes
/// -c): not what tfm.attention's softcap computes, so it stays unfused.
// CHECK-LABEL: func.func @negative_mask_inside_softcap
// CHECK: tfm.tanh
// CHECK-NOT: tfm.attention
func.func @negative_mask_inside_softcap(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x8xf32>
  %a = tfm.add %s, %mask : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x4x8x8xf32>
  %cap = arith.constant dense<3.000000e+01> : tensor<f32>
  %d = tfm.div %a, %cap : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %h = tfm.tanh %d : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %c = tfm.mul %h, %cap : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: an additive mask is inside the softcap's tfm.tanh; tfm.attention caps the scaled q·k only and adds masks after}}
  %p = tfm.softmax %c {axis = -1 : i64} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

/// tanh not multiplied back (a capped score of at most 1) is still a
/// softcap, c = 1: tanh(s) = 1 · tanh(s / 1).
// CHECK-LABEL: func.func @softcap_unit
// CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f64, softcap = 1.000000e+00 : f64}
func.func @softcap_unit(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x8xf32>
  %h = tfm.tanh %s : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %p = tfm.softmax %h {axis = -1 : i64} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
