// RUN: attune-opt %s -split-input-file -tfm-propagate-layouts | FileCheck %s

/// Rule "attention operands": heads split by reshape + transpose and merged
/// by transpose + reshape. The attention reads the reshapes in the bshd
/// layout; the transpose it adds on its result cancels against the merge's,
/// so no tfm.transpose is left.
// CHECK-LABEL: func.func @split_and_merge
// CHECK-DAG: %[[Q:.+]] = tfm.reshape %arg0 : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
// CHECK-DAG: %[[K:.+]] = tfm.reshape %arg1
// CHECK-DAG: %[[V:.+]] = tfm.reshape %arg2
// CHECK: %[[O:.+]] = tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, layout = #tfm.head_layout<bshd>, scale = 1.250000e-01 : f64}
// CHECK-SAME: -> tensor<2x?x3x32xf32>
// CHECK-NEXT: %[[M:.+]] = tfm.reshape %[[O]] : tensor<2x?x3x32xf32> -> tensor<2x?x96xf32>
// CHECK-NEXT: return %[[M]]
// CHECK-NOT: tfm.transpose
func.func @split_and_merge(%q: tensor<2x?x96xf32>, %k: tensor<2x?x96xf32>, %v: tensor<2x?x96xf32>) -> tensor<2x?x96xf32> {
  %q4 = tfm.reshape %q : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %k4 = tfm.reshape %k : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %v4 = tfm.reshape %v : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %o = tfm.attention %qh, %kh, %vh {scale = 0.125 : f64, causal = true}
      : tensor<2x3x?x32xf32>, tensor<2x3x?x32xf32>, tensor<2x3x?x32xf32> -> tensor<2x3x?x32xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x3x?x32xf32> -> tensor<2x?x3x32xf32>
  %m = tfm.reshape %ot : tensor<2x?x3x32xf32> -> tensor<2x?x96xf32>
  return %m : tensor<2x?x96xf32>
}

// -----

/// GQA (2 key/value heads for 4 query heads), a key padding mask and an
/// additive mask: the masks keep their [B, Sk] and [B, H, Sq, Sk] shapes.
/// A user that wants [B, H, S, D] gets the transpose back.
// CHECK-LABEL: func.func @gqa_masks_result_kept
// CHECK: %[[O:.+]] = tfm.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x4x?x?xf32>) key_padding_mask(%arg4 : tensor<1x?xi1>) {layout = #tfm.head_layout<bshd>, scale = 2.500000e-01 : f64}
// CHECK-SAME: : tensor<1x?x4x16xf32>, tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32> -> tensor<1x?x4x16xf32>
// CHECK-NEXT: %[[T:.+]] = tfm.transpose %[[O]] {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
// CHECK-NEXT: return %[[T]]
func.func @gqa_masks_result_kept(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x2x16xf32>, %v: tensor<1x?x2x16xf32>,
                                 %mask: tensor<1x4x?x?xf32>, %pad: tensor<1x?xi1>) -> tensor<1x4x?x16xf32> {
  %qh = tfm.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %kh = tfm.transpose %k {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x16xf32> -> tensor<1x2x?x16xf32>
  %vh = tfm.transpose %v {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x16xf32> -> tensor<1x2x?x16xf32>
  %o = tfm.attention %qh, %kh, %vh mask(%mask : tensor<1x4x?x?xf32>) key_padding_mask(%pad : tensor<1x?xi1>) {scale = 0.25 : f64}
      : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

/// An operand that is not a head swap (here v, read as it is) keeps the
/// layout: swapping would add a transpose on v for the two it removes on q
/// and k, and a fused kernel reads all three the same way.
// CHECK-LABEL: func.func @value_not_swapped
// CHECK-COUNT-2: tfm.transpose
// CHECK: tfm.attention
// CHECK-NOT: layout
func.func @value_not_swapped(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x4x16xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %qh = tfm.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %kh = tfm.transpose %k {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %o = tfm.attention %qh, %kh, %v {scale = 0.25 : f64}
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

/// A transpose to another order (K^T, [B, H, D, S]) is not a head swap.
// CHECK-LABEL: func.func @other_permutation
// CHECK: tfm.attention
// CHECK-NOT: layout
func.func @other_permutation(%q: tensor<1x4x?x16xf32>, %kt: tensor<1x4x16x?xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %k = tfm.transpose %kt {permutation = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x?xf32> -> tensor<1x4x?x16xf32>
  %o = tfm.attention %q, %k, %v {scale = 0.25 : f64}
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

/// A head swap with another user stays for that user; the attention reads
/// the unswapped tensor all the same.
// CHECK-LABEL: func.func @swap_shared
// CHECK: %[[QH:.+]] = tfm.transpose %arg0
// CHECK: tfm.attention %arg0, %arg1, %arg2 {layout = #tfm.head_layout<bshd>
// CHECK: return %{{.+}}, %[[QH]]
func.func @swap_shared(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x4x16xf32>, %v: tensor<1x?x4x16xf32>) -> (tensor<1x?x4x16xf32>, tensor<1x4x?x16xf32>) {
  %qh = tfm.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %kh = tfm.transpose %k {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %vh = tfm.transpose %v {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %o = tfm.attention %qh, %kh, %vh {scale = 0.25 : f64}
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x4x?x16xf32> -> tensor<1x?x4x16xf32>
  return %ot, %qh : tensor<1x?x4x16xf32>, tensor<1x4x?x16xf32>
}
