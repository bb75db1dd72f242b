// RUN: attune-opt %s -split-input-file -tfm-fuse-residual-norm | FileCheck %s

/// Post-LN Add & Norm: the add's only user is the norm, so the norm takes
/// its operands as input + residual and the add goes; RMS norm alike.
// CHECK-LABEL: func.func @post_ln
// CHECK: %[[Y:.+]] = tfm.layer_norm %arg0, %arg2, %arg3 residual(%arg1 : tensor<?x?x32xf32>) {epsilon = {{.+}} : f64}
// CHECK: tfm.rms_norm %[[Y]], %arg2 residual(%arg1 : tensor<?x?x32xf32>)
// CHECK-NOT: tfm.add
func.func @post_ln(%x: tensor<?x?x32xf32>, %attn: tensor<?x?x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %s = tfm.add %x, %attn : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %y = tfm.layer_norm %s, %g, %b {epsilon = 1.0e-12 : f64} : tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  %s2 = tfm.add %y, %attn : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %z = tfm.rms_norm %s2, %g : tensor<?x?x32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  return %z : tensor<?x?x32xf32>
}

// -----

/// Pre-LN: the sum is also the next residual (two users), so it is stored
/// by its own kernel and the norm reads it.
// CHECK-LABEL: func.func @pre_ln
// CHECK: %[[S:.+]] = tfm.add %arg0, %arg1
// CHECK: tfm.layer_norm %[[S]], %arg2, %arg2 :
func.func @pre_ln(%x: tensor<?x?x32xf32>, %attn: tensor<?x?x32xf32>, %g: tensor<32xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %s = tfm.add %x, %attn : tensor<?x?x32xf32>, tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  %y = tfm.layer_norm %s, %g, %g : tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
  return %s, %y : tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// -----

/// An add that broadcasts (a bias, a [1, S, D] position table) is not a
/// residual stream; an add read as gamma is not the norm's input.
// CHECK-LABEL: func.func @not_residuals
// CHECK-COUNT-2: tfm.add
// CHECK-NOT: residual(
func.func @not_residuals(%x: tensor<2x?x32xf32>, %p: tensor<1x?x32xf32>, %g: tensor<32xf32>) -> (tensor<2x?x32xf32>, tensor<2x?x32xf32>) {
  %s = tfm.add %x, %p : tensor<2x?x32xf32>, tensor<1x?x32xf32> -> tensor<2x?x32xf32>
  %y = tfm.layer_norm %s, %g, %g : tensor<2x?x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x?x32xf32>
  %g2 = tfm.add %g, %g : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %z = tfm.rms_norm %x, %g2 : tensor<2x?x32xf32>, tensor<32xf32> -> tensor<2x?x32xf32>
  return %y, %z : tensor<2x?x32xf32>, tensor<2x?x32xf32>
}
