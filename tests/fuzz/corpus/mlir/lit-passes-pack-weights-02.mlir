func.func @tied(%ids: tensor<1x?xi64>, %h: tensor<1x?x50xf32>) -> (tensor<1x?x16xf32>, tensor<1x?x16xf32>) {
  %t = tfm.weight "wte" : tensor<50x16xf32>
  %e = tfm.embedding %t, %ids : tensor<50x16xf32>, tensor<1x?xi64> -> tensor<1x?x16xf32>
  %y = tfm.linear %h, %t : tensor<1x?x50xf32>, tensor<50x16xf32> -> tensor<1x?x16xf32>
  return %e, %y : tensor<1x?x16xf32>, tensor<1x?x16xf32>
}
