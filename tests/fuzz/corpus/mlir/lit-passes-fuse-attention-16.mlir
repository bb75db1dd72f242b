func.func @constant_mask_not_causal(%q: tensor<1x2x2x16xf32>, %k: tensor<1x2x3x16xf32>, %v: tensor<1x2x3x16xf32>) -> tensor<1x2x2x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x2x16xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x3xf32>
  %c = arith.constant dense<[[0, 1, 1], [0, 0, 1]]> : tensor<2x3xi8>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %c, %ninf, %s : tensor<2x3xi8>, tensor<f32>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x2x3xf32>, tensor<1x2x3x16xf32> -> tensor<1x2x2x16xf32>
  return %o : tensor<1x2x2x16xf32>
}
