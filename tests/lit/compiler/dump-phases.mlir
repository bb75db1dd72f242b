// RUN: rm -rf %t && attune-compile %s --emit=llvm -o %t.ll --dump-phases-to=%t && ls %t | FileCheck %s && FileCheck %s --input-file=%t/04-tfm-fuse-attention.mlir --check-prefix=FUSE

/// --dump-phases-to writes one numbered file per phase, in the order they
/// ran: the input, each graph pass, the host code, its memory plan, the
/// schedule each kernel got from the tuning database and the LLVM IR. The names are fixed so scripts and diffs can rely on them.

// CHECK:      00-input.mlir
// CHECK-NEXT: 01-canonicalize.mlir
// CHECK-NEXT: 02-cse.mlir
// CHECK-NEXT: 03-tfm-raise-encodings.mlir
// CHECK-NEXT: 04-tfm-fuse-attention.mlir
// CHECK-NEXT: 05-tfm-propagate-layouts.mlir
// CHECK-NEXT: 06-tfm-fuse-residual-norm.mlir
// CHECK-NEXT: 07-tfm-pack-weights.mlir
// CHECK-NEXT: 08-cse.mlir
// CHECK-NEXT: 09-host-llvm.mlir
// CHECK-NEXT: 10-memory-plan.txt
// CHECK-NEXT: 11-tuning.txt
// CHECK-NEXT: 12-llvm.ll
// CHECK-NOT: {{.}}

// FUSE-LABEL: func.func @attention
// FUSE: tfm.attention
func.func @attention(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                     %v: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x?xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x?x?xf32>, tensor<f32> -> tensor<1x2x?x?xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}
