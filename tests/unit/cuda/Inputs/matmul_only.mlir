// Only products: a linear over embedded constants with bias and ReLU, a
// product with a weight transposed, a linear with tanh GELU. Compiled with
// --target=cuda it calls no Halide kernel, so cuda_device_test runs it
// through the runtime on the stand-in driver and cuBLASLt.
func.func @matmuls(%x: tensor<?x4xf32> {tfm.name = "x", tfm.dim_names = ["tokens", "features"]})
    -> (tensor<?x5xf32> {tfm.name = "y"}) {
  %w = arith.constant dense<[[1.0, -2.0, 0.5], [0.25, 1.0, -1.0],
                             [2.0, 0.0, 1.0], [-0.5, 1.5, 3.0]]> : tensor<4x3xf32>
  %b = arith.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32>
  %h = tfm.linear %x, %w, %b {activation = #tfm.activation<relu>}
      : tensor<?x4xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<?x3xf32>
  %v = tfm.weight "v" : tensor<2x3xf32>
  %m = tfm.matmul %h, %v {transpose_b = true} : tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x2xf32>
  %w2 = tfm.weight "w2" : tensor<2x5xf32>
  %y = tfm.linear %m, %w2 {activation = #tfm.activation<gelu_tanh>}
      : tensor<?x2xf32>, tensor<2x5xf32> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
