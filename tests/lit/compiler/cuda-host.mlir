// RUN: attune-compile %s --target=cuda --emit=host-mlir | FileCheck %s
// RUN: attune-compile %s --target=cuda --emit=mlir --fuse-epilogues | FileCheck %s --check-prefix=GRAPH
// RUN: attune-compile %s --target=cuda --emit=mlir --fuse-epilogues --verbose 2>&1 | FileCheck %s --check-prefix=VERBOSE

/// --target=cuda: the same model as host code for a GPU. In f32, attention
/// runs unfused (the fused GPU kernel multiplies bf16; cuda-attention.mlir
/// has --precision=bf16); its products and the linears go to the runtime's
/// cuBLASLt through the device's matmul entry, so no matmul or attention kernel is declared; the
/// norms and the softmax are Halide kernels called with device buffers (the
/// CUDA device interface, no host pointer); the run enters the runtime's
/// context and stream first. (Patterns use {{...}} so that they cannot match
/// their own text in the embedded source IR.)

// CHECK-NOT: llvm.func @attune_{{linear}}_
// CHECK-NOT: llvm.func @attune_{{matmul}}_
// CHECK-NOT: llvm.func @attune_{{attention}}_
// CHECK-DAG: llvm.func @attune_{{layer_norm}}_
// CHECK-DAG: llvm.func @attune_{{softmax}}_
// CHECK-DAG: llvm.call @{{attune_cuda_enter}}
// CHECK-DAG: llvm.call @{{halide_cuda_device_interface}}()
/// Two linears (q and the output projection) and two batched products.
// CHECK-COUNT-4: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-NOT: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32
/// The descriptor names the library's device release.
// CHECK-DAG: llvm.mlir.addressof @{{attune_cuda_release}}

/// cuBLASLt has no erf GELU epilogue: the activation stays an op and says why.
// GRAPH: tfm.gelu %{{.*}} {tfm.unfused_epilogue = "the target's matmul has no gelu epilogue (it has relu, gelu_tanh)"}

// VERBOSE: attune-compile: attention unfused: the CUDA target's fused attention computes bf16 or f16 products (build with --precision=bf16 or --precision=f16)
// VERBOSE: remark: activation left unfused: the target's matmul has no gelu epilogue
// VERBOSE-NOT: tfm.attention
func.func @block(%x: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
  %g = tfm.weight "ln.weight" {init = #tfm.init<ones>} : tensor<64xf32>
  %b = tfm.weight "ln.bias" {init = #tfm.init<zeros>} : tensor<64xf32>
  %wq = tfm.weight "q.weight" : tensor<64x64xf32>
  %bq = tfm.weight "q.bias" {init = #tfm.init<zeros>} : tensor<64xf32>
  %wo = tfm.weight "o.weight" : tensor<64x64xf32>
  %h = tfm.layer_norm %x, %g, %b : tensor<1x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x?x64xf32>
  %q = tfm.linear %h, %wq, %bq : tensor<1x?x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<1x?x64xf32>
  %qa = tfm.gelu %q : tensor<1x?x64xf32> -> tensor<1x?x64xf32>
  %q4 = tfm.reshape %qa : tensor<1x?x64xf32> -> tensor<1x1x?x64xf32>
  %o = tfm.attention %q4, %q4, %q4 {scale = 0.125 : f64, causal = true}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %r = tfm.reshape %o : tensor<1x1x?x64xf32> -> tensor<1x?x64xf32>
  %y = tfm.linear %r, %wo : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  return %y : tensor<1x?x64xf32>
}
