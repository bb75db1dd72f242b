func.func @negative_gather_elements_index_type(%x: tensor<2x8xf32>, %i: tensor<2x3xf32>) {
  %0 = tfm.gather_elements %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
