func.func @negative_unknown_kind(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = tfm.attention %q, %q, %q {scale = 1.0 : f64, modifiers = [{kind = "rope_typo"}]}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
