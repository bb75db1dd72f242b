// RUN: attune-compile %s --emit=host-mlir | FileCheck %s

/// --emit=host-mlir prints the host code in the LLVM dialect: the exported
/// descriptor and one call per kernel, fused attention included; the model
/// function itself is gone. (Patterns use {{...}} so that they cannot match
/// their own text in the embedded source IR.)

// CHECK-DAG: llvm.func @{{attune_model_abi}}()
// CHECK-DAG: llvm.call @attune_{{layer_norm}}_
// CHECK-DAG: llvm.call @attune_{{attention}}_
/// The library installs its own Halide error handler, so a kernel error
/// becomes a status, not an abort.
// CHECK-DAG: llvm.call @{{halide_set_error_handler}}
// CHECK-NOT: {{^ *}}func.func
func.func @block(%x: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
  %g = tfm.weight "ln.weight" {init = #tfm.init<ones>} : tensor<64xf32>
  %b = tfm.weight "ln.bias" {init = #tfm.init<zeros>} : tensor<64xf32>
  %h = tfm.layer_norm %x, %g, %b : tensor<1x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x?x64xf32>
  %h4 = tfm.reshape %h : tensor<1x?x64xf32> -> tensor<1x?x1x64xf32>
  %hh = tfm.transpose %h4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x1x64xf32> -> tensor<1x1x?x64xf32>
  %o = tfm.attention %hh, %hh, %hh {scale = 0.125 : f64, causal = true}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x1x?x64xf32> -> tensor<1x?x1x64xf32>
  %r = tfm.reshape %ot : tensor<1x?x1x64xf32> -> tensor<1x?x64xf32>
  return %r : tensor<1x?x64xf32>
}
