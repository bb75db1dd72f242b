// RUN: not attune-compile %s --split-input-file --emit=mlir 2>&1 | FileCheck %s

/// Every malformed model is a diagnostic at the offending line and one
/// "attune-compile: error:" line, never a crash.

/// negative_malformed: not valid MLIR syntax.
// CHECK: errors.mlir{{.*}}: error: expected non-function type
// CHECK: attune-compile: error: cannot compile '{{.*}}errors.mlir': it is not a valid tfm model
func.func @negative_malformed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tfm.relu %x : tensor<4xf32> ->
}

// -----

/// negative_unknown_op: an op the tfm dialect does not have.
// CHECK: error: custom op 'tfm.frobnicate' is unknown
// CHECK: attune-compile: error: cannot compile
func.func @negative_unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tfm.frobnicate %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// negative_wrong_shapes: the verifier rejects a linear whose weight does not
/// match the input's last dimension.
// CHECK: error: 'tfm.linear' op expected 'weight' dim 0 (in features) to be 8 as the last dim of 'input', got 9
// CHECK: attune-compile: error: cannot compile
func.func @negative_wrong_shapes(%x: tensor<2x8xf32>, %w: tensor<9x4xf32>) -> tensor<2x4xf32> {
  %y = tfm.linear %x, %w : tensor<2x8xf32>, tensor<9x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
