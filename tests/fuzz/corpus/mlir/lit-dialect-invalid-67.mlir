func.func @negative_matmul_element_type(%a: tensor<4x8xf32>, %b: tensor<8x4xf16>) {
  %0 = tfm.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf16> -> tensor<4x4xf32>
  return
}
