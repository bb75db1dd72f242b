func.func @value_not_swapped(%q: tensor<1x?x4x16xf32>, %k: tensor<1x?x4x16xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %qh = tfm.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %kh = tfm.transpose %k {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x?x4x16xf32> -> tensor<1x4x?x16xf32>
  %o = tfm.attention %qh, %kh, %v {scale = 0.25 : f64}
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
