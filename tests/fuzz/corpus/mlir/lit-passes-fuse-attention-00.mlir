func.func @transpose_b(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
