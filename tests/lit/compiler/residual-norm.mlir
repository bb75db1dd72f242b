// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s
// RUN: attune-compile %s --no-fuse-residual-norms --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s --check-prefix=KEPT
// RUN: attune-compile %s -o %t/fused.so && attune-run %t/fused.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference --output=%t/fused | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --no-fuse-residual-norms -o %t/kept.so && attune-run %t/kept.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference --output=%t/kept | FileCheck %s --check-prefix=REF
// RUN: cmp %t/fused/y.npy %t/kept/y.npy
// RUN: sed 's/f32/f16/g' %s > %t/half.mlir
// RUN: attune-compile %t/half.mlir -o %t/half.so 2>/dev/null && attune-run %t/half.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference --l2-tol=2e-3 --output=%t/half | FileCheck %s --check-prefix=HALF
// RUN: attune-compile %t/half.mlir --no-fuse-residual-norms -o %t/half-kept.so 2>/dev/null && attune-run %t/half-kept.so --random-inputs --dim=batch=2 --dim=seq=37 --output=%t/half-kept
// RUN: cmp %t/half/y.npy %t/half-kept/y.npy
// RUN: attune-compile %attune_src_root/tests/models/bert-tiny --emit=mlir | FileCheck %s --check-prefix=BERT
// RUN: attune-compile %attune_src_root/tests/models/bert-tiny -o %t/bert.so && attune-run %t/bert.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF

/// tfm-fuse-residual-norm in the compiler (on by default). Each post-LN
/// Add & Norm below is one norm kernel that adds the residual as it reads
/// the row: no add kernel is called, and --no-fuse-residual-norms keeps
/// them. The sum is rounded to the element type as the add stores it, so
/// both libraries give the same output bit for bit, in f32 and in f16 (the
/// same model with every f32 made f16), and match the reference evaluator
/// (attune-run's default tolerance, 1e-5 + 1e-4 |ref|; f16 by relative L2
/// error 2e-3, f16's epsilon being 9.8e-4). A Hugging Face BERT
/// checkpoint's embeddings and every layer's two Add & Norms fold.

// CHECK-DAG: llvm.call @attune_layer_norm_f32_{{.+}}_residual(
// CHECK-DAG: llvm.call @attune_rms_norm_f32_{{.+}}_residual(
// CHECK-NOT: llvm.call @attune_binary
// KEPT-COUNT-2: llvm.call @attune_binary_f32_add
// KEPT-NOT: _residual(

// REF-NOT: FAIL
// REF: (|err| <= {{.+}}: ok)
// HALF-NOT: FAIL
// HALF: (rel l2 err <= 0.002: ok)

// BERT-COUNT-5: tfm.layer_norm {{.+}} residual(
// BERT-NOT: tfm.layer_norm

func.func @post_ln(%x: tensor<?x?x48xf32> {tfm.dim_names = ["batch", "seq", "hidden"]}) -> (tensor<?x?x48xf32> {tfm.name = "y"}) {
  %w1 = tfm.weight "w1" : tensor<48x48xf32>
  %g1 = tfm.weight "ln1.g" {init = #tfm.init<ones>} : tensor<48xf32>
  %b1 = tfm.weight "ln1.b" {init = #tfm.init<zeros>} : tensor<48xf32>
  %h = tfm.linear %x, %w1 : tensor<?x?x48xf32>, tensor<48x48xf32> -> tensor<?x?x48xf32>
  %s = tfm.add %x, %h : tensor<?x?x48xf32>, tensor<?x?x48xf32> -> tensor<?x?x48xf32>
  %y = tfm.layer_norm %s, %g1, %b1 {epsilon = 1.0e-12 : f64} : tensor<?x?x48xf32>, tensor<48xf32>, tensor<48xf32> -> tensor<?x?x48xf32>
  %w2 = tfm.weight "w2" : tensor<48x48xf32>
  %g2 = tfm.weight "ln2.g" {std = 0.5 : f64} : tensor<48xf32>
  %h2 = tfm.linear %y, %w2 : tensor<?x?x48xf32>, tensor<48x48xf32> -> tensor<?x?x48xf32>
  %s2 = tfm.add %h2, %y : tensor<?x?x48xf32>, tensor<?x?x48xf32> -> tensor<?x?x48xf32>
  %z = tfm.rms_norm %s2, %g2 : tensor<?x?x48xf32>, tensor<48xf32> -> tensor<?x?x48xf32>
  return %z : tensor<?x?x48xf32>
}
