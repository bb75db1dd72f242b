func.func @negative_mask_scaled(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %m = tfm.add %s, %mask : tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %m, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
