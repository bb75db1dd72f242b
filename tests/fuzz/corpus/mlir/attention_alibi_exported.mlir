module {
  func.func @attention_alibi_exported(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
      %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    %c = arith.constant dense<0.125> : tensor<f32>
    %t = tfm.mul %s, %c : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %pi = tfm.arange %q {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
    %pj = tfm.arange %k {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
    %i = tfm.reshape %pi : tensor<?xf32> -> tensor<?x1xf32>
    %j = tfm.reshape %pj : tensor<?xf32> -> tensor<1x?xf32>
    %d = tfm.sub %j, %i : tensor<1x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
    %sl = arith.constant dense<[[[0.5]], [[0.25]], [[0.125]], [[0.0625]], [[0.03125]], [[0.015625]], [[0.0078125]], [[0.00390625]], [[0.7071067690849304]], [[0.3535533845424652]], [[0.1767766922712326]], [[0.0883883461356163]]]> : tensor<12x1x1xf32>
    %b = tfm.mul %sl, %d : tensor<12x1x1xf32>, tensor<?x?xf32> -> tensor<12x?x?xf32>
    %u = tfm.add %t, %b : tensor<1x12x?x?xf32>, tensor<12x?x?xf32> -> tensor<1x12x?x?xf32>
    %m = tfm.causal_mask %u : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
