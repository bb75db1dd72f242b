// RUN: attune-opt %s -split-input-file -canonicalize | FileCheck %s

/// The folders of the data-movement ops: what exporters leave behind around
/// attention (a no-op transpose, a reshape back and forth, repeats of 1) goes
/// away so fusion sees the values it matches on.

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<?x12x?x64xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32> {
  %0 = tfm.transpose %x {permutation = array<i64: 0, 1, 2, 3>} : tensor<?x12x?x64xf32> -> tensor<?x12x?x64xf32>
  return %0 : tensor<?x12x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_kept
// CHECK: tfm.transpose
func.func @transpose_kept(%x: tensor<?x12x?x64xf32>) -> tensor<?x?x12x64xf32> {
  %0 = tfm.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
  return %0 : tensor<?x?x12x64xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x768xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %1 = tfm.reshape %0 : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  return %1 : tensor<?x?x768xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = tfm.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = tfm.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = tfm.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @repeat_once
// CHECK-SAME: (%[[K:.+]]: tensor<1x2x?x64xf32>)
// CHECK-NEXT: return %[[K]]
func.func @repeat_once(%k: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %0 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 1 : i64} : tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}

// -----

/// A FLOATER encoding of a static sequence with constant parameters is the
/// same table on every run: it is evaluated here, and the scan disappears.
/// D = 1, H = 2, T = 0.5: h(t, p) = [relu(2p + t), relu(-p - 0.5), t] .
/// [1, 4, 0.5] + 0.25, so p_1 = 1 + 0.5 * (2 + 0.25) = 2.125 and
/// p_2 = 2.125 + 0.5 * (4.75 + 0.25 + 0.25) = 4.75 (the second hidden unit
/// is clipped by the ReLU throughout).
// CHECK-LABEL: func.func @recursive_position_constant
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x1xf32>)
// CHECK: %[[TABLE:.+]] = arith.constant dense<{{\[}}[1.000000e+00], [2.125000e+00], [4.750000e+00]]> : tensor<3x1xf32>
// CHECK: %[[Y:.+]] = tfm.learned_position %[[X]], %[[TABLE]] : tensor<2x3x1xf32>, tensor<3x1xf32> -> tensor<2x3x1xf32>
// CHECK-NOT: tfm.recursive_position
// CHECK: return %[[Y]]
func.func @recursive_position_constant(%x: tensor<2x3x1xf32>) -> tensor<2x3x1xf32> {
  %p0 = arith.constant dense<[1.0]> : tensor<1xf32>
  %w1 = arith.constant dense<[[2.0, -1.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %b1 = arith.constant dense<[0.0, -0.5]> : tensor<2xf32>
  %w2 = arith.constant dense<[[1.0], [4.0], [0.5]]> : tensor<3x1xf32>
  %b2 = arith.constant dense<[0.25]> : tensor<1xf32>
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.5 : f64} : tensor<2x3x1xf32>, tensor<1xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<3x1xf32>, tensor<1xf32> -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}

// -----

/// The length of the table is the run's: a dynamic one is scanned at run time.
// CHECK-LABEL: func.func @recursive_position_dynamic_length
// CHECK: tfm.recursive_position
func.func @recursive_position_dynamic_length(%x: tensor<2x?x1xf32>) -> tensor<2x?x1xf32> {
  %p0 = arith.constant dense<[1.0]> : tensor<1xf32>
  %w1 = arith.constant dense<[[2.0], [1.0]]> : tensor<2x1xf32>
  %b1 = arith.constant dense<[0.0]> : tensor<1xf32>
  %w2 = arith.constant dense<[[1.0], [0.5]]> : tensor<2x1xf32>
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %p0 : tensor<2x?x1xf32>, tensor<1xf32>, tensor<2x1xf32>, tensor<1xf32>, tensor<2x1xf32>, tensor<1xf32> -> tensor<2x?x1xf32>
  return %0 : tensor<2x?x1xf32>
}

// -----

/// Parameters from the weights file are not constants of the IR.
// CHECK-LABEL: func.func @recursive_position_weights
// CHECK: tfm.recursive_position
func.func @recursive_position_weights(%x: tensor<2x3x1xf32>) -> tensor<2x3x1xf32> {
  %p0 = tfm.weight "p0" : tensor<1xf32>
  %w1 = arith.constant dense<[[2.0], [1.0]]> : tensor<2x1xf32>
  %b1 = arith.constant dense<[0.0]> : tensor<1xf32>
  %w2 = arith.constant dense<[[1.0], [0.5]]> : tensor<2x1xf32>
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %p0 : tensor<2x3x1xf32>, tensor<1xf32>, tensor<2x1xf32>, tensor<1xf32>, tensor<2x1xf32>, tensor<1xf32> -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}
