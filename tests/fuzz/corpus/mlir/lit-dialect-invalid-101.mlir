func.func @negative_reshape_dynamic_count(%x: tensor<?x?x768xf32>) {
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x768xf32>
  return
}
