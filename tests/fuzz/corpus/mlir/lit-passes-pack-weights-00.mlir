func.func @linear(%x: tensor<?x?x384xf32>) -> tensor<?x?x1536xf32> {
  %w = tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32>
  %b = tfm.weight "fc.bias" : tensor<1536xf32>
  %y = tfm.linear %x, %w, %b : tensor<?x?x384xf32>, tensor<384x1536xf32>, tensor<1536xf32> -> tensor<?x?x1536xf32>
  return %y : tensor<?x?x1536xf32>
}
