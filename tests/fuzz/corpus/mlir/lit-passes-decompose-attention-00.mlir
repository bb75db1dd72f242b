func.func @plain(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x32xf32>) -> tensor<2x4x8x32xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32> -> tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}
