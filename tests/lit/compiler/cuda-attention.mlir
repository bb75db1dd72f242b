// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=host-mlir | FileCheck %s
// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=mlir --verbose 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: attune-compile %s --target=cuda --emit=mlir 2>&1 | FileCheck %s --check-prefix=F32
// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=mlir -o %t.mlir --fusion-report=%t.json && FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: attune-compile %s --target=cuda --precision=f16 --emit=host-mlir | FileCheck %s --check-prefix=F16
// RUN: attune-compile %s --target=cuda --precision=f16 --emit=mlir 2>&1 | FileCheck %s --check-prefix=F16-GRAPH
// RUN: not attune-compile %s --target=cpu --precision=f16 --emit=mlir 2>&1 | FileCheck %s --check-prefix=F16-CPU
// RUN: env ATTUNE_NVCC=/nonexistent/nvcc not attune-compile %s --target=cuda --precision=bf16 --no-kernel-cache -o %t.so 2>&1 | FileCheck %s --check-prefix=NONVCC

/// --target=cuda --precision=bf16: the attentions the GPU kernel takes
/// (GPT-2's causal one, T5's encoder one with its bucket table) stay fused
/// and their calls go to the runtime's attention entry with a descriptor
/// naming the library's fatbin and kernels; one with a score modifier the
/// kernel does not evaluate (Shaw's content terms) is decomposed, and
/// --verbose says why. In f32 all are decomposed. (Patterns use {{...}} so
/// that they cannot match their own text in the embedded source IR.)

/// The fatbin is the kernel object's, the RoPE-free descriptor holds the
/// kernel and combine names, the head sizes and the scale.
// CHECK-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f32_d64_{{.*}}_causal_bf16products_image()
// CHECK-DAG: llvm.mlir.global private constant @__attune_str_{{[0-9]+}}("attune_{{attention}}_f32_d64_{{.*}}_causal_bf16products_combine\00")
// CHECK-DAG: llvm.mlir.global private constant @__attune_{{attention}}()
// CHECK-DAG: llvm.mlir.constant(1.250000e-01 : f64) : f64
/// T5's: the bucket of each distance in [-128, 128] (32 buckets, both
/// sides): 0 at -128, 16 + 15 = 31 at 128; the table is an operand.
// CHECK-DAG: llvm.mlir.global private constant @attune_{{attention}}_f32_d64_{{.*}}_t5_{{.*}}_bias_rows{{.*}}("\0F\00\00\00\0F\00\00\00
// CHECK-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f32_d64_{{.*}}_t5_{{.*}}_image()
// CHECK-NOT: llvm.func @attune_{{attention}}_
/// Two linears and the fused attentions go to the runtime; the Shaw
/// attention's two products too.
// CHECK-COUNT-6: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32
// CHECK-NOT: llvm.call {{%[0-9]+}}({{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> i32

// GRAPH: attune-compile: attention at {{.*}}cuda-attention.mlir{{.*}} unfused: its score modifier shaw adds content terms (the GPU kernel evaluates biases linear in the distance, as ALiBi's, bucketed bias tables, as T5's, and windows)
// GRAPH: tfm.attention {{.*}}causal = true{{.*}}product_type = bf16
// GRAPH: tfm.attention {{.*}}kind = "t5"{{.*}}product_type = bf16
// GRAPH-NOT: tfm.attention

// F32-NOT: tfm.attention

/// --precision=f16: the same, with f16 products (kernels of their own).
// F16-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f32_d64_{{.*}}_causal_f16products_image()
// F16-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f32_d64_{{.*}}_t5_{{.*}}_f16products_image()
// F16-NOT: llvm.mlir.global external hidden constant @attune_{{attention}}_{{.*}}bf16products_image
// F16-GRAPH: tfm.attention {{.*}}causal = true{{.*}}product_type = f16
// F16-GRAPH: tfm.attention {{.*}}kind = "t5"{{.*}}product_type = f16
// F16-CPU: error: --precision=f16 rounds the products' operands to f16 on tensor cores: it is for --target=cuda; --target=cpu takes --precision=f32 or bf16

/// The fusion report says which attention the target decomposed after the
/// fuse pass, and why.
// REPORT-DAG: "fused": 2,
// REPORT-DAG: "not_fused": 1,
// REPORT-DAG: "reason": "fused, then decomposed for the target: its score modifier shaw adds content terms (the GPU kernel evaluates biases linear in the distance, as ALiBi's, bucketed bias tables, as T5's, and windows)"

/// Building the kernel needs nvcc; without one the error says so.
// NONVCC: attune-compile: error: cannot compile kernel 'attune_{{attention}}_f32_d64_{{.*}}_bf16products': nvcc '/nonexistent/nvcc' (from ATTUNE_NVCC) is not an executable
func.func @block(%x: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
  %wq = tfm.weight "q.weight" : tensor<64x64xf32>
  %wo = tfm.weight "o.weight" : tensor<64x64xf32>
  %t5 = tfm.weight "t5.table" : tensor<32x1xf32>
  %shawk = tfm.weight "shaw.key" : tensor<9x64xf32>
  %shawv = tfm.weight "shaw.value" : tensor<9x64xf32>
  %q = tfm.linear %x, %wq : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  %q4 = tfm.reshape %q : tensor<1x?x64xf32> -> tensor<1x1x?x64xf32>
  %o = tfm.attention %q4, %q4, %q4 {scale = 0.125 : f64, causal = true}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %a = tfm.attention %o, %o, %o modifier_operands(%t5 : tensor<32x1xf32>)
      {scale = 1.0 : f64, modifiers = [{kind = "t5"}]}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %s = tfm.attention %a, %a, %a modifier_operands(%shawk, %shawv : tensor<9x64xf32>, tensor<9x64xf32>)
      {scale = 0.125 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
  %r = tfm.reshape %s : tensor<1x1x?x64xf32> -> tensor<1x?x64xf32>
  %y = tfm.linear %r, %wo : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  return %y : tensor<1x?x64xf32>
}
