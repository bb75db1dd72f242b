// --precision=bf16: linear weights stored as bf16 pair panels, the rest f32;
// attune-run checks such a library by relative L2 error (2e-2 by default,
// what a bf16 product's rounding allows), not elementwise.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s --precision=bf16 --emit=mlir | FileCheck %s --check-prefix=IR
// RUN: attune-compile %s -o %t/mlp.so --precision=bf16
// RUN: attune-run %t/mlp.so --random-inputs --dim=n=37 --check-reference | FileCheck %s --check-prefix=CHECKED
// RUN: not attune-run %t/mlp.so --random-inputs --dim=n=37 --check-reference --l2-tol=1e-7 | FileCheck %s --check-prefix=TIGHT
// RUN: attune-compile %s -o %t/mlp32.so
// RUN: attune-run %t/mlp32.so --random-inputs --dim=n=37 --check-reference | FileCheck %s --check-prefix=F32
// RUN: not attune-compile %s -o %t/bad.so --precision=bf16 --no-pack-weights 2>&1 | FileCheck %s --check-prefix=UNPACKED
// RUN: not attune-compile %s -o %t/bad.so --precision=fp8 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// IR: tfm.weight "w1" : tensor<384x1536xf32, #tfm.panels<96, bf16>>
// IR: tfm.weight "b1" : tensor<1536xf32>
// IR: tfm.weight "w2" : tensor<1536x384xf32, #tfm.panels<96, bf16>>

// CHECKED: reference 'y': max abs err {{.*}}, rel l2 err {{.*}} (bf16 weights, rel l2 err <= 0.02: ok)
// TIGHT: (bf16 weights, rel l2 err <= 1e-07: FAIL)
// F32: reference 'y': {{.*}} (|err| <= 1e-05 + 0.0001|ref|: ok)
// UNPACKED: error: --precision=bf16 stores linear weights packed: it cannot be combined with --no-pack-weights
// UNKNOWN: Cannot find option named 'fp8'

func.func @mlp(%x: tensor<?x384xf32> {tfm.name = "x", tfm.dim_names = ["n", "d"]})
    -> (tensor<?x384xf32> {tfm.name = "y"}) {
  %w1 = tfm.weight "w1" : tensor<384x1536xf32>
  %b1 = tfm.weight "b1" : tensor<1536xf32>
  %w2 = tfm.weight "w2" : tensor<1536x384xf32>
  %h = tfm.linear %x, %w1, %b1 : tensor<?x384xf32>, tensor<384x1536xf32>, tensor<1536xf32> -> tensor<?x1536xf32>
  %g = tfm.gelu %h : tensor<?x1536xf32> -> tensor<?x1536xf32>
  %y = tfm.linear %g, %w2 : tensor<?x1536xf32>, tensor<1536x384xf32> -> tensor<?x384xf32>
  return %y : tensor<?x384xf32>
}
