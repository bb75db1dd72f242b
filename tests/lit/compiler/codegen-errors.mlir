// RUN: not attune-compile %s --split-input-file --emit=host-mlir 2>&1 | FileCheck %s

/// Models the verifier accepts but host code generation cannot build: a
/// diagnostic on the op that needs what is missing, then one
/// "attune-compile: error:" line, never a crash.

/// negative_concat_dynamic_axis: each operand is copied to a static offset
/// in the result, so a joined dim that only the runtime knows is refused.
// CHECK: codegen-errors.mlir{{.*}}: error: 'tfm.concat' op expected a static joined dim 1 in every input for code generation, got ? in 'inputs #1'
// CHECK: attune-compile: error: cannot generate host code
func.func @negative_concat_dynamic_axis(%x: tensor<2x3xf32>, %y: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %c = tfm.concat %x, %y {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  return %c : tensor<2x?xf32>
}

// -----

/// negative_arange_i32_start: an i32 result cannot start past 2^31 - 1.
// CHECK: error: 'tfm.arange' op has no valid kernel: arange: expected a start that fits i32, got 3000000000
// CHECK: attune-compile: error: cannot generate host code
func.func @negative_arange_i32_start(%x: tensor<?xf32>) -> tensor<?xi32> {
  %c = tfm.arange %x {axis = 0 : i64, start = 3000000000 : i64} : tensor<?xf32> -> tensor<?xi32>
  return %c : tensor<?xi32>
}
