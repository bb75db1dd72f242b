// RUN: attune-compile %s --fuse-epilogues --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s
// RUN: attune-compile %s --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s --check-prefix=UNFUSED
// RUN: attune-compile %s --fuse-epilogues -o %t.so && attune-run %t.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s -o %t-unfused.so && attune-run %t-unfused.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --fuse-epilogues --no-pack-weights -o %t-plain.so && attune-run %t-plain.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF

/// An MLP with each activation a linear can apply: with --fuse-epilogues
/// every one is computed in its linear's kernel and no unary kernel is
/// called; by default they are kernels of their own. Both libraries match
/// the reference evaluator on the model as written (attune-run's default
/// tolerance, 1e-5 + 1e-4 |ref|), at a sequence length that leaves partial
/// register tiles. (The library embeds this file as a global, whose check
/// lines would match themselves: globals are filtered out.)

// CHECK-DAG: llvm.call @attune_linear_f32_bias_gelu_{{erf}}
// CHECK-DAG: llvm.call @attune_linear_f32_nobias_gelu_{{tanh}}
// CHECK-DAG: llvm.call @attune_linear_f32_bias_{{relu}}
// CHECK-DAG: llvm.call @attune_linear_f32_nobias_{{silu}}
// CHECK-NOT: llvm.call @attune_{{unary}}

// UNFUSED-DAG: llvm.call @attune_{{unary}}_f32_gelu_{{erf}}
// UNFUSED-DAG: llvm.call @attune_{{unary}}_f32_gelu_{{tanh}}
// UNFUSED-DAG: llvm.call @attune_{{unary}}_f32_{{relu}}
// UNFUSED-DAG: llvm.call @attune_{{unary}}_f32_{{silu}}
// UNFUSED-NOT: llvm.call @attune_linear_f32_{{[a-z]+}}_{{(gelu|relu|silu)}}

// REF: (|err| <= {{.+}}: ok)
func.func @mlp(%x: tensor<?x?x48xf32> {tfm.dim_names = ["batch", "seq", "hidden"]}) -> tensor<?x?x48xf32> {
  %w1 = tfm.weight "w1" : tensor<48x96xf32>
  %b1 = tfm.weight "b1" : tensor<96xf32>
  %h1 = tfm.linear %x, %w1, %b1 : tensor<?x?x48xf32>, tensor<48x96xf32>, tensor<96xf32> -> tensor<?x?x96xf32>
  %a1 = tfm.gelu %h1 : tensor<?x?x96xf32> -> tensor<?x?x96xf32>
  %w2 = tfm.weight "w2" : tensor<96x80xf32>
  %h2 = tfm.linear %a1, %w2 : tensor<?x?x96xf32>, tensor<96x80xf32> -> tensor<?x?x80xf32>
  %a2 = tfm.gelu %h2 {approximate = #tfm.gelu_approx<tanh>} : tensor<?x?x80xf32> -> tensor<?x?x80xf32>
  %w3 = tfm.weight "w3" : tensor<80x64xf32>
  %b3 = tfm.weight "b3" : tensor<64xf32>
  %h3 = tfm.linear %a2, %w3, %b3 : tensor<?x?x80xf32>, tensor<80x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %a3 = tfm.relu %h3 : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %w4 = tfm.weight "w4" : tensor<64x48xf32>
  %h4 = tfm.linear %a3, %w4 : tensor<?x?x64xf32>, tensor<64x48xf32> -> tensor<?x?x48xf32>
  %a4 = tfm.silu %h4 : tensor<?x?x48xf32> -> tensor<?x?x48xf32>
  return %a4 : tensor<?x?x48xf32>
}
