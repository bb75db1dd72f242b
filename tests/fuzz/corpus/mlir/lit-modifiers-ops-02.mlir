func.func @score_bias(%s: tensor<1x8x?x?xf32>, %t: tensor<32x8xf32>) -> tensor<1x8x?x?xf32> {
  %b = tfm.score_bias %s modifier_operands(%t : tensor<32x8xf32>) {modifier = {kind = "t5", bidirectional = false}}
      : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  return %b : tensor<1x8x?x?xf32>
}
