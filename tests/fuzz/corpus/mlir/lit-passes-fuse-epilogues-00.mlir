func.func @gelu_after_linear(%x: tensor<1x?x8xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<1x?x32xf32> {
  %h = tfm.linear %x, %w, %b : tensor<1x?x8xf32>, tensor<8x32xf32>, tensor<32xf32> -> tensor<1x?x32xf32>
  %a = tfm.gelu %h : tensor<1x?x32xf32> -> tensor<1x?x32xf32>
  return %a : tensor<1x?x32xf32>
}
