func.func @negative_complex_embedding_ids_rank(%i: tensor<?xi32>, %t: tensor<100x64xf32>) {
  %0 = tfm.complex_embedding %i, %t, %t, %t : tensor<?xi32>, tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32> -> tensor<?x128xf32>
  return
}
