// RUN: attune-opt %s -split-input-file -tfm-fuse-epilogues | FileCheck %s
// RUN: attune-opt %s -split-input-file -tfm-fuse-epilogues="activations=relu,gelu_tanh" 2>%t.remarks | FileCheck %s --check-prefix=CUDA
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

/// An activation whose input is a linear's only use becomes the linear's
/// `activation`; the element-wise op is gone.
// CHECK-LABEL: func.func @gelu_after_linear
/// A target whose GEMM has no erf GELU (cuBLASLt) keeps the op and says why.
// CUDA-LABEL: func.func @gelu_after_linear
// CUDA: tfm.gelu %{{.*}} {tfm.unfused_epilogue = "the target's matmul has no gelu epilogue (it has relu, gelu_tanh)"}
// REMARK: remark: activation left unfused: the target's matmul has no gelu epilogue (it has relu, gelu_tanh)
// CHECK-NEXT: %[[Y:.+]] = tfm.linear %arg0, %arg1, %arg2 {activation = #tfm.activation<gelu>}
// CHECK-NOT: tfm.gelu
// CHECK-NEXT: return %[[Y]]
func.func @gelu_after_linear(%x: tensor<1x?x8xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<1x?x32xf32> {
  %h = tfm.linear %x, %w, %b : tensor<1x?x8xf32>, tensor<8x32xf32>, tensor<32xf32> -> tensor<1x?x32xf32>
  %a = tfm.gelu %h : tensor<1x?x32xf32> -> tensor<1x?x32xf32>
  return %a : tensor<1x?x32xf32>
}

// -----

/// GPT-2's tanh approximation keeps its name.
// CHECK-LABEL: func.func @gelu_tanh
// CUDA-LABEL: func.func @gelu_tanh
// CUDA: tfm.linear %arg0, %arg1 {activation = #tfm.activation<gelu_tanh>}
// CHECK: tfm.linear %arg0, %arg1 {activation = #tfm.activation<gelu_tanh>}
// CHECK-NOT: tfm.gelu
func.func @gelu_tanh(%x: tensor<4x8xf32>, %w: tensor<8x32xf32>) -> tensor<4x32xf32> {
  %h = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %a = tfm.gelu %h {approximate = #tfm.gelu_approx<tanh>} : tensor<4x32xf32> -> tensor<4x32xf32>
  return %a : tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func.func @relu
// CHECK: tfm.linear %arg0, %arg1 {activation = #tfm.activation<relu>}
// CHECK-NOT: tfm.relu
func.func @relu(%x: tensor<4x8xf32>, %w: tensor<8x32xf32>) -> tensor<4x32xf32> {
  %h = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  %a = tfm.relu %h : tensor<4x32xf32> -> tensor<4x32xf32>
  return %a : tensor<4x32xf32>
}

// -----

/// SwiGLU (LLaMA's MLP): silu of the gate projection folds into it; the
/// product with the up projection stays.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[G:.+]] = tfm.linear %arg0, %arg1 {activation = #tfm.activation<silu>}
// CHECK: %[[U:.+]] = tfm.linear %arg0, %arg2 :
// CHECK-NOT: tfm.silu
// CHECK: tfm.mul %[[G]], %[[U]]
func.func @swiglu(%x: tensor<1x?x8xf32>, %wg: tensor<8x16xf32>, %wu: tensor<8x16xf32>) -> tensor<1x?x16xf32> {
  %g = tfm.linear %x, %wg : tensor<1x?x8xf32>, tensor<8x16xf32> -> tensor<1x?x16xf32>
  %s = tfm.silu %g : tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  %u = tfm.linear %x, %wu : tensor<1x?x8xf32>, tensor<8x16xf32> -> tensor<1x?x16xf32>
  %m = tfm.mul %s, %u : tensor<1x?x16xf32>, tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  return %m : tensor<1x?x16xf32>
}

// -----

/// negative: the linear's result has another user, so it must be stored
/// as it is; the activation stays an op.
// CHECK-LABEL: func.func @negative_linear_used_twice
// CHECK: %[[H:.+]] = tfm.linear %arg0, %arg1 :
// CHECK: tfm.gelu %[[H]]
// CHECK: tfm.add %{{.+}}, %[[H]]
func.func @negative_linear_used_twice(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = tfm.gelu %h : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tfm.add %a, %h : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

/// negative: a linear that already applies an activation keeps the second
/// one as an op (the attribute holds one function).
// CHECK-LABEL: func.func @negative_second_activation
// CHECK: %[[H:.+]] = tfm.linear %arg0, %arg1 {activation = #tfm.activation<gelu>}
// CHECK: tfm.relu %[[H]]
func.func @negative_second_activation(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h = tfm.linear %x, %w {activation = #tfm.activation<gelu>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = tfm.relu %h : tensor<4x8xf32> -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

/// negative: only a linear's epilogue is fused; an activation of anything
/// else (here a matmul) stays.
// CHECK-LABEL: func.func @negative_not_linear
// CHECK: tfm.matmul
// CHECK: tfm.gelu
func.func @negative_not_linear(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %m = tfm.matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %g = tfm.gelu %m : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %g : tensor<2x4x4xf32>
}
