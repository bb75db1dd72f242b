func.func @negative_rope_dynamic_head(%q: tensor<1x4x8x?xf32>) -> tensor<1x4x8x?xf32> {
  %r = tfm.rope %q : tensor<1x4x8x?xf32> -> tensor<1x4x8x?xf32>
  return %r : tensor<1x4x8x?xf32>
}
