func.func @swiglu(%x: tensor<1x?x8xf32>, %wg: tensor<8x16xf32>, %wu: tensor<8x16xf32>) -> tensor<1x?x16xf32> {
  %g = tfm.linear %x, %wg : tensor<1x?x8xf32>, tensor<8x16xf32> -> tensor<1x?x16xf32>
  %s = tfm.silu %g : tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  %u = tfm.linear %x, %wu : tensor<1x?x8xf32>, tensor<8x16xf32> -> tensor<1x?x16xf32>
  %m = tfm.mul %s, %u : tensor<1x?x16xf32>, tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  return %m : tensor<1x?x16xf32>
}
