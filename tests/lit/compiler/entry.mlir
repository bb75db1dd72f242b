// RUN: attune-compile %s --emit=host-mlir --entry=silu_model --name=my_model | FileCheck %s
// RUN: not attune-compile %s --emit=host-mlir 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// RUN: attune-compile %s --entry=silu_model -o %t.so && attune-run %t.so --random-inputs --check-reference | FileCheck %s --check-prefix=LIB

/// With several public functions, --entry picks the model and --name renames
/// it in the library; without --entry the choice is an error, not a guess.
/// The other functions are not compiled, and a library is built and runs
/// (before, their tfm ops reached LLVM IR translation and failed it).

// LIB: (|err| <= {{.+}}: ok)
/// (Patterns use {{...}} where the embedded source IR would match itself.)

// CHECK-NOT: @attune_unary_f32_{{relu}}
// CHECK: llvm.call @attune_unary_f32_silu
// CHECK-NOT: @attune_unary_f32_{{relu}}
// CHECK: llvm.mlir.global {{.*}}("my_model\00")

// AMBIGUOUS: error: expected exactly one public model function, got 2
// AMBIGUOUS: attune-compile: error: cannot generate host code for
func.func @relu_model(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tfm.relu %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @silu_model(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tfm.silu %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
