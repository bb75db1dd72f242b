func.func @negative_value_term_alone(%q: tensor<1x2x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %rk: tensor<5x16xf32>, %rv: tensor<5x16xf32>) -> tensor<1x2x6x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x6xf32>
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %pv = tfm.matmul %p, %v : tensor<1x2x6x6xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  %r = tfm.score_values %p modifier_operands(%rk, %rv : tensor<5x16xf32>, tensor<5x16xf32>)
      {modifier = {kind = "shaw", max_distance = 2 : i64}} : tensor<1x2x6x6xf32> -> tensor<1x2x6x16xf32>
  %o = tfm.add %pv, %r : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x6x16xf32>
  return %o : tensor<1x2x6x16xf32>
}
