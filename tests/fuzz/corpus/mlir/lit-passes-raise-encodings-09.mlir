func.func @alibi(%q: tensor<1x4x?x8xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %pq = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %pk = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xf32>
  %i = tfm.reshape %pq : tensor<?xf32> -> tensor<?x1xf32>
  %j = tfm.reshape %pk : tensor<?xf32> -> tensor<1x?xf32>
  %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %m = arith.constant dense<[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]]]> : tensor<4x1x1xf32>
  %b = tfm.mul %d, %m : tensor<?x?xf32>, tensor<4x1x1xf32> -> tensor<4x?x?xf32>
  %y = tfm.add %s, %b : tensor<1x4x?x?xf32>, tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}
