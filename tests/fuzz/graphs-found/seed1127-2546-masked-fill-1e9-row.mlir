// fuzz-dims: seq=10
// fuzz-expect: fuse
// fuzz-input-seed: 1127005928
// spellings: dynamic b2 h1/1 sq10 sk10 d16 dv16 no-scale transpose_b where-keep-i1-1e9 merge-heads
// attune-fuzz-graphs --seed=1127, graph 2546: mismatch
// fused vs reference: output 0: 96 of 320 elements outside |got - ref| <= 0.0001 + 0.001|ref|; worst at flat index 19: got 1.339921, ref -0.568803012
// shrunk from 10 to 7 ops (the failure above is the original's)
// fixed: where(keep, s, -1e9) alone. The graph replaces a masked score by -1e9,
// so a row with every key masked is uniform; the fused op added the mask as
// where(keep, 0, -1e9), and s - 1e9 is not -1e9 once |s| >= 32 (f32's step
// there is 64). The mask is now written with finfo.min, which absorbs any score
// (FuseAttention.cpp, buildMask).
module {
  func.func @fuzz(%arg0: tensor<2x1x?x16xf32> {tfm.dim_names = ["", "", "seq", ""], tfm.name = "q"}, %arg1: tensor<2x1x?x16xf32> {tfm.dim_names = ["", "", "seq", ""], tfm.name = "k"}, %arg2: tensor<2x1x?x16xf32> {tfm.dim_names = ["", "", "seq", ""], tfm.name = "v"}, %arg3: tensor<?x?xi1> {tfm.dim_names = ["seq", "seq"], tfm.name = "keep0"}) -> (tensor<2x?x16xf32> {tfm.name = "out0"}) {
    %0 = tfm.matmul %arg0, %arg1 {transpose_b = true} : tensor<2x1x?x16xf32>, tensor<2x1x?x16xf32> -> tensor<2x1x?x?xf32>
    %cst = arith.constant dense<-1.000000e+09> : tensor<f32>
    %1 = tfm.where %arg3, %0, %cst : tensor<?x?xi1>, tensor<2x1x?x?xf32>, tensor<f32> -> tensor<2x1x?x?xf32>
    %2 = tfm.softmax %1 {axis = 3 : i64} : tensor<2x1x?x?xf32> -> tensor<2x1x?x?xf32>
    %3 = tfm.matmul %2, %arg2 : tensor<2x1x?x?xf32>, tensor<2x1x?x16xf32> -> tensor<2x1x?x16xf32>
    %4 = tfm.transpose %3 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x1x?x16xf32> -> tensor<2x?x1x16xf32>
    %5 = tfm.reshape %4 : tensor<2x?x1x16xf32> -> tensor<2x?x16xf32>
    return %5 : tensor<2x?x16xf32>
  }
}
