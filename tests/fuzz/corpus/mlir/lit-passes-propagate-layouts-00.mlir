func.func @split_and_merge(%q: tensor<2x?x96xf32>, %k: tensor<2x?x96xf32>, %v: tensor<2x?x96xf32>) -> tensor<2x?x96xf32> {
  %q4 = tfm.reshape %q : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %k4 = tfm.reshape %k : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %v4 = tfm.reshape %v : tensor<2x?x96xf32> -> tensor<2x?x3x32xf32>
  %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x32xf32> -> tensor<2x3x?x32xf32>
  %o = tfm.attention %qh, %kh, %vh {scale = 0.125 : f64, causal = true}
      : tensor<2x3x?x32xf32>, tensor<2x3x?x32xf32>, tensor<2x3x?x32xf32> -> tensor<2x3x?x32xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x3x?x32xf32> -> tensor<2x?x3x32xf32>
  %m = tfm.reshape %ot : tensor<2x?x3x32xf32> -> tensor<2x?x96xf32>
  return %m : tensor<2x?x96xf32>
}
