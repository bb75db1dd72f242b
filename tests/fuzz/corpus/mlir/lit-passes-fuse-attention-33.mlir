func.func @rope_mismatch_not_folded(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x16x64xf32>, %v: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  %qr = tfm.rope %q {base = 10000.0 : f64} : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %kr = tfm.rope %k {base = 500000.0 : f64} : tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  %s = tfm.matmul %qr, %kr {transpose_b = true} : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x16xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x16x16xf32>, tensor<f32> -> tensor<1x4x16x16xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x64xf32> -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}
