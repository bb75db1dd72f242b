func.func @negative_weight_dynamic_shape() {
  %0 = tfm.weight "w" : tensor<?x4xf32>
  return
}
