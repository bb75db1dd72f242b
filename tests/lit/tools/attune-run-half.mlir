// RUN: attune-compile %s -o %t.so
// RUN: attune-run %t.so --random-inputs --dim n=5 --check-reference | FileCheck %s

/// attune-run makes, prints and checks f16 and bf16 tensors: random inputs
/// rounded to the type, outputs read exactly.

// CHECK: input 'h' f16[2x5]
// CHECK: input 'b' bf16[2x5]
// CHECK: output 'h_relu' f16[2x5]: mean
// CHECK: output 'b_relu' bf16[2x5]: mean
// CHECK: reference 'h_relu': {{.*}}: ok)
// CHECK: reference 'b_relu': {{.*}}: ok)

func.func @half(%h: tensor<2x?xf16> {tfm.name = "h", tfm.dim_names = ["two", "n"]},
                %b: tensor<2x?xbf16> {tfm.name = "b", tfm.dim_names = ["two", "n"]})
    -> (tensor<2x?xf16> {tfm.name = "h_relu"}, tensor<2x?xbf16> {tfm.name = "b_relu"}) {
  %hr = tfm.relu %h : tensor<2x?xf16> -> tensor<2x?xf16>
  %br = tfm.relu %b : tensor<2x?xbf16> -> tensor<2x?xbf16>
  return %hr, %br : tensor<2x?xf16>, tensor<2x?xbf16>
}
