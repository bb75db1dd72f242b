// RUN: attune-opt %s -split-input-file -tfm-merge-projections | FileCheck %s

/// q, k and v of one input, each read as attention heads: one linear over
/// the concatenated weights and biases (parts in the linears' order), one
/// slice per projection, the parts' tfm.weight ops gone.
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: %[[W:.+]] = tfm.weight "q.w|k.w|v.w" {part_sizes = array<i64: 48, 48, 48>, transpose} : tensor<48x144xf32>
// CHECK-DAG: %[[B:.+]] = tfm.weight "q.b|k.b|v.b" {init = #tfm.init<zeros>, part_sizes = array<i64: 48, 48, 48>} : tensor<144xf32>
// CHECK: %[[L:.+]] = tfm.linear %arg0, %[[W]], %[[B]] : tensor<2x?x48xf32>, tensor<48x144xf32>, tensor<144xf32> -> tensor<2x?x144xf32>
// CHECK-DAG: %[[Q:.+]] = tfm.slice %[[L]] {axis = 2 : i64, end = 48 : i64, start = 0 : i64} : tensor<2x?x144xf32> -> tensor<2x?x48xf32>
// CHECK-DAG: %[[K:.+]] = tfm.slice %[[L]] {axis = 2 : i64, end = 96 : i64, start = 48 : i64}
// CHECK-DAG: %[[V:.+]] = tfm.slice %[[L]] {axis = 2 : i64, end = 144 : i64, start = 96 : i64}
// CHECK-DAG: tfm.reshape %[[Q]]
// CHECK-DAG: tfm.reshape %[[K]]
// CHECK-DAG: tfm.reshape %[[V]]
// CHECK-NOT: tfm.linear
// CHECK-NOT: "q.w"
func.func @qkv(%x: tensor<2x?x48xf32>) -> tensor<2x?x3x16xf32> {
  %wq = tfm.weight "q.w" {transpose} : tensor<48x48xf32>
  %bq = tfm.weight "q.b" {init = #tfm.init<zeros>} : tensor<48xf32>
  %q = tfm.linear %x, %wq, %bq : tensor<2x?x48xf32>, tensor<48x48xf32>, tensor<48xf32> -> tensor<2x?x48xf32>
  %wk = tfm.weight "k.w" {transpose} : tensor<48x48xf32>
  %bk = tfm.weight "k.b" {init = #tfm.init<zeros>} : tensor<48xf32>
  %k = tfm.linear %x, %wk, %bk : tensor<2x?x48xf32>, tensor<48x48xf32>, tensor<48xf32> -> tensor<2x?x48xf32>
  %wv = tfm.weight "v.w" {transpose} : tensor<48x48xf32>
  %bv = tfm.weight "v.b" {init = #tfm.init<zeros>} : tensor<48xf32>
  %v = tfm.linear %x, %wv, %bv : tensor<2x?x48xf32>, tensor<48x48xf32>, tensor<48xf32> -> tensor<2x?x48xf32>
  %q4 = tfm.reshape %q : tensor<2x?x48xf32> -> tensor<2x?x3x16xf32>
  %k4 = tfm.reshape %k : tensor<2x?x48xf32> -> tensor<2x?x3x16xf32>
  %v4 = tfm.reshape %v : tensor<2x?x48xf32> -> tensor<2x?x3x16xf32>
  %o = tfm.attention %q4, %k4, %v4 {scale = 0.25 : f64, layout = #tfm.head_layout<bshd>}
      : tensor<2x?x3x16xf32>, tensor<2x?x3x16xf32>, tensor<2x?x3x16xf32> -> tensor<2x?x3x16xf32>
  return %o : tensor<2x?x3x16xf32>
}

// -----

/// Cross attention with GQA: k and v (two heads, no bias) share the
/// encoder's output and merge; q reads another input and stays.
// CHECK-LABEL: func.func @cross_kv
// CHECK: %[[Q:.+]] = tfm.linear %arg0, %{{.+}} : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
// CHECK: %[[W:.+]] = tfm.weight "k|v" {part_sizes = array<i64: 32, 32>} : tensor<64x64xf32>
// CHECK: %[[L:.+]] = tfm.linear %arg1, %[[W]] : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
// CHECK-COUNT-2: tfm.slice %[[L]]
func.func @cross_kv(%x: tensor<1x?x64xf32>, %enc: tensor<1x?x64xf32>) -> tensor<1x?x4x16xf32> {
  %wq = tfm.weight "q" : tensor<64x64xf32>
  %q = tfm.linear %x, %wq : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  %wk = tfm.weight "k" : tensor<64x32xf32>
  %k = tfm.linear %enc, %wk : tensor<1x?x64xf32>, tensor<64x32xf32> -> tensor<1x?x32xf32>
  %wv = tfm.weight "v" : tensor<64x32xf32>
  %v = tfm.linear %enc, %wv : tensor<1x?x64xf32>, tensor<64x32xf32> -> tensor<1x?x32xf32>
  %q4 = tfm.reshape %q : tensor<1x?x64xf32> -> tensor<1x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %o = tfm.attention %q4, %k4, %v4 {scale = 0.25 : f64, layout = #tfm.head_layout<bshd>}
      : tensor<1x?x4x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x4x16xf32>
  return %o : tensor<1x?x4x16xf32>
}

// -----

/// What keeps linears apart. k's result has a user besides the attention
/// (a slice of the merged result would be a copy); v's weight is packed;
/// q2's weight has another init than q's, q4's another std; q3 is the only
/// one with a bias; q5's weight name contains the part separator. Nothing
/// merges.
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-7: tfm.linear
// CHECK-NOT: tfm.slice
// CHECK-NOT: part_sizes
func.func @not_merged(%x: tensor<1x?x32xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x?x32xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>) {
  %wq = tfm.weight "q" : tensor<32x32xf32>
  %q = tfm.linear %x, %wq : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %wk = tfm.weight "k" : tensor<32x32xf32>
  %k = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %wv = tfm.weight "v" : tensor<32x32xf32, #tfm.panels<96>>
  %v = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32, #tfm.panels<96>> -> tensor<1x?x32xf32>
  %q4 = tfm.reshape %q : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %k4 = tfm.reshape %k : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %o = tfm.attention %q4, %k4, %v4 {scale = 0.25 : f64, layout = #tfm.head_layout<bshd>}
      : tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x2x16xf32>
  %wq2 = tfm.weight "q2" {init = #tfm.init<ones>} : tensor<32x32xf32>
  %q2 = tfm.linear %x, %wq2 : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %bq3 = tfm.weight "q3.b" : tensor<32xf32>
  %q3 = tfm.linear %x, %wq, %bq3 : tensor<1x?x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x?x32xf32>
  %wq5 = tfm.weight "q5|x" : tensor<32x32xf32>
  %q5 = tfm.linear %x, %wq5 : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %wq4 = tfm.weight "q4" {std = 5.000000e-01 : f64} : tensor<32x32xf32>
  %q4b = tfm.linear %x, %wq4 : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %a = tfm.reshape %q2 : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %b = tfm.reshape %q3 : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %c = tfm.reshape %q5 : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %o2 = tfm.attention %a, %b, %c {scale = 0.25 : f64, layout = #tfm.head_layout<bshd>}
      : tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x2x16xf32>
  %d = tfm.reshape %q4b : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %o3 = tfm.attention %d, %d, %d {scale = 0.25 : f64, layout = #tfm.head_layout<bshd>}
      : tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x2x16xf32>
  return %o, %k, %o2, %o3 : tensor<1x?x2x16xf32>, tensor<1x?x32xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>
}

// -----

/// The bhsd layout reads heads through a transpose copy, not a view: left
/// alone (tfm-propagate-layouts gives fused attentions bshd first).
// CHECK-LABEL: func.func @bhsd_left
// CHECK-COUNT-2: tfm.linear
// CHECK-NOT: tfm.slice
func.func @bhsd_left(%x: tensor<1x?x32xf32>) -> tensor<1x2x?x16xf32> {
  %wk = tfm.weight "k" : tensor<32x32xf32>
  %k = tfm.linear %x, %wk : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %wv = tfm.weight "v" : tensor<32x32xf32>
  %v = tfm.linear %x, %wv : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %k4 = tfm.reshape %k : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<1x?x32xf32> -> tensor<1x?x2x16xf32>
  %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x16xf32> -> tensor<1x2x?x16xf32>
  %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x16xf32> -> tensor<1x2x?x16xf32>
  %o = tfm.attention %kh, %kh, %vh {scale = 0.25 : f64}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
