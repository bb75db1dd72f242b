module {
  func.func @attention_rope_exported(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
      %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %inv = arith.constant dense<[1.0, 0.7498942017555237, 0.5623413324356079, 0.4216965138912201, 0.3162277638912201, 0.23713737726211548, 0.17782793939113617, 0.1333521455526352, 0.10000000149011612, 0.0749894231557846, 0.05623413249850273, 0.04216964915394783, 0.03162277489900589, 0.023713737726211548, 0.017782794311642647, 0.013335213996469975, 0.009999999776482582, 0.007498942315578461, 0.005623413249850273, 0.0042169648222625256, 0.003162277629598975, 0.0023713738191872835, 0.0017782794311642647, 0.0013335214462131262, 0.0010000000474974513, 0.0007498941849917173, 0.000562341301701963, 0.0004216965171508491, 0.0003162277571391314, 0.00023713737027719617, 0.00017782794020604342, 0.0001333521504420787]> : tensor<32xf32>
    %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
    %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
    %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
    %a4 = tfm.reshape %a : tensor<?x64xf32> -> tensor<1x1x?x64xf32>
    %cos = tfm.cos %a4 : tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
    %sin = tfm.sin %a4 : tensor<1x1x?x64xf32> -> tensor<1x1x?x64xf32>
    %qq1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 32 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
    %qq2 = tfm.slice %q {axis = 3 : i64, start = 32 : i64, end = 64 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
    %qqn = tfm.neg %qq2 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
    %qqh = tfm.concat %qqn, %qq1 {axis = 3 : i64} : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
    %qqc = tfm.mul %q, %cos : tensor<1x12x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x12x?x64xf32>
    %qqs = tfm.mul %qqh, %sin : tensor<1x12x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x12x?x64xf32>
    %qqr = tfm.add %qqc, %qqs : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    %kk1 = tfm.slice %k {axis = 3 : i64, start = 0 : i64, end = 32 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
    %kk2 = tfm.slice %k {axis = 3 : i64, start = 32 : i64, end = 64 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
    %kkn = tfm.neg %kk2 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
    %kkh = tfm.concat %kkn, %kk1 {axis = 3 : i64} : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
    %kkc = tfm.mul %k, %cos : tensor<1x12x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x12x?x64xf32>
    %kks = tfm.mul %kkh, %sin : tensor<1x12x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x12x?x64xf32>
    %kkr = tfm.add %kkc, %kks : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    %s = tfm.matmul %qqr, %kkr {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    %c = arith.constant dense<0.125> : tensor<f32>
    %t = tfm.mul %s, %c : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %m = tfm.causal_mask %t : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
