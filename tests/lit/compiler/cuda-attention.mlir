// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=host-mlir | FileCheck %s
// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=mlir --verbose 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: attune-compile %s --target=cuda --emit=mlir 2>&1 | FileCheck %s --check-prefix=F32
// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=mlir -o %t.mlir --fusion-report=%t.json && FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: env ATTUNE_NVCC=/nonexistent/nvcc not attune-compile %s --target=cuda --precision=bf16 --no-kernel-cache -o %t.so 2>&1 | FileCheck %s --check-prefix=NONVCC

/// --target=cuda --precision=bf16: an attention the GPU kernel takes (GPT-2's
/// causal one) stays fused and its call goes to the runtime's attention
/// entry with a descriptor naming the library's fatbin and kernels; one with
/// a score modifier the kernel does not evaluate (T5's bucket table) is
/// decomposed, and --verbose says why. In f32 both are decomposed. (Patterns use {{...}}
/// so that they cannot match their own text in the embedded source IR.)

/// The fatbin is the kernel object's, the RoPE-free descriptor holds the
/// kernel and combine names, the head sizes and the scale.
// CHECK-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f32_d64_{{.*}}_causal_bf16products_image()
// CHECK-DAG: llvm.mlir.global private constant @__attune_str_{{[0-9]+}}("attune_{{attention}}_f32_d64_{{.*}}_causal_bf16products_combine\00")
// CHECK-DAG: llvm.mlir.global private constant @__attune_{{attention}}()
// CHECK-DAG: llvm.mlir.constant(1.250000e-01 : f64) : f64
// CHECK-NOT: llvm.func @attune_{{attention}}_
/// Two linears and the fused attention go to the runtime; the T5
/// attention's two products too.
// CHECK-COUNT-5: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-NOT: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32

// GRAPH: attune-compile: attention at {{.*}}cuda-attention.mlir{{.*}} unfused: its score modifier t5 reads a table (the GPU kernel evaluates biases linear in the distance, as ALiBi's, and windows)
// GRAPH: tfm.attention {{.*}}causal = true{{.*}}product_type = bf16
// GRAPH-NOT: tfm.attention

// F32-NOT: tfm.attention

/// The fusion report says which attention the target decomposed after the
/// fuse pass, and why.
// REPORT-DAG: "fused": 1,
// REPORT-DAG: "not_fused": 1,
// REPORT-DAG: "reason": "fused, then decomposed for the target: its score modifier t5 reads a table (the GPU kernel evaluates biases linear in the distance, as ALiBi's, and windows)"

/// Building the kernel needs nvcc; without one the error says so.
// NONVCC: attune-compile: error: cannot compile kernel 'attune_{{attention}}_f32_d64_{{.*}}_bf16products': nvcc '/nonexistent/nvcc' (from ATTUNE_NVCC) is not an executable
func.func @block(%x: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
  %wq = tfm.weight "q.weight" : tensor<64x64xf32>
  %wo = tfm.weight "o.weight" : tensor<64x64xf32>
  %t5 = tfm.weight "t5.table" : tensor<32x1xf32>
  %q = tfm.linear %x, %wq : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  %q4 = tfm.reshape %q : tensor<1x?x64xf32> -> tensor<1x1x?x64xf32>
  %o = tfm.attention %q4, %q4, %q4 {scale = 0.125 : f64, causal = true}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %a = tfm.attention %o, %o, %o modifier_operands(%t5 : tensor<32x1xf32>)
      {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %r = tfm.reshape %a : tensor<1x1x?x64xf32> -> tensor<1x?x64xf32>
  %y = tfm.linear %r, %wo : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  return %y : tensor<1x?x64xf32>
}
