// RUN: attune-compile %s --target=cuda --emit=mlir --verbose 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: attune-compile %s --target=cuda --emit=host-mlir | FileCheck %s
// RUN: sed 's/f16>/bf16>/g' %s > %t.bf16.mlir
// RUN: attune-compile %t.bf16.mlir --target=cuda --emit=host-mlir | FileCheck %s --check-prefix=BF16
// RUN: sed 's/causal = true}/causal = true, product_type = bf16}/' %s > %t.pb.mlir
// RUN: attune-compile %t.pb.mlir --target=cuda --emit=host-mlir | FileCheck %s --check-prefix=PRODUCTS
// RUN: attune-compile %s --target=cuda --no-kernel-cache -o %t.so --fusion-report=%t.json
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT

/// --target=cuda on a model that computes in f16 (or bf16): its attentions
/// multiply in their own type (tfm.attention), so the GPU kernel takes them
/// without --precision: f16 operands on f16 tensor cores, bf16 on bf16. The
/// one with Shaw's content terms, which the kernel does not evaluate, is
/// decomposed and says why; so would an f32 attention beside them. (Patterns
/// use {{...}} so that they cannot match their own text in the embedded
/// source IR.)

// GRAPH: attune-compile: attention at {{.*}}cuda-attention-half.mlir{{.*}} unfused: its score modifier shaw adds content terms
// GRAPH-NOT: attention unfused: the CUDA target
// GRAPH: tfm.attention {{.*}}causal = true{{.*}}xf16>
// GRAPH-NOT: product_type
// GRAPH-NOT: tfm.attention

/// The kernel is the f16 configuration (f16 storage, f16 products), its
/// fatbin in the library.
// CHECK-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f16_d64_{{.*}}_causal_image()
// CHECK-DAG: llvm.mlir.global private constant @__attune_str_{{[0-9]+}}("attune_{{attention}}_f16_d64_{{.*}}_causal_combine\00")
// BF16-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_bf16_d64_{{.*}}_causal_image()
/// product_type = bf16 on f16 operands: their own kernel, which rounds them
/// to bf16.
// PRODUCTS-DAG: llvm.mlir.global external hidden constant @attune_{{attention}}_f16_d64_{{.*}}_causal_bf16products_image()

// REPORT-DAG: "fused": 1,
// REPORT-DAG: "not_fused": 1,
// REPORT-DAG: "reason": "fused, then decomposed for the target: its score modifier shaw adds content terms
func.func @block(%x: tensor<1x?x64xf16>) -> tensor<1x?x64xf16> {
  %wq = tfm.weight "q.weight" : tensor<64x64xf16>
  %shawk = tfm.weight "shaw.key" : tensor<9x64xf16>
  %shawv = tfm.weight "shaw.value" : tensor<9x64xf16>
  %q = tfm.linear %x, %wq : tensor<1x?x64xf16>, tensor<64x64xf16> -> tensor<1x?x64xf16>
  %q4 = tfm.reshape %q : tensor<1x?x64xf16> -> tensor<1x1x?x64xf16>
  %o = tfm.attention %q4, %q4, %q4 {scale = 0.125 : f64, causal = true}
      : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  %s = tfm.attention %o, %o, %o modifier_operands(%shawk, %shawv : tensor<9x64xf16>, tensor<9x64xf16>)
      {scale = 0.125 : f64, modifiers = [{kind = "shaw", max_distance = 4 : i64}]}
      : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16> -> tensor<1x1x?x64xf16>
  %r = tfm.reshape %s : tensor<1x1x?x64xf16> -> tensor<1x?x64xf16>
  return %r : tensor<1x?x64xf16>
}
