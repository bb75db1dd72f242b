// fuzz-dims:
// fuzz-expect: either
// fuzz-input-seed: 100001646
// spellings: static b2 h1/1 sq10 sk10 d8 dv8 self-block x2 no-scale where-keep-i64-ninf add-mask[0] no-scale transpose_b key-padding-i1 causal-constant-ninf
// attune-fuzz-graphs --seed=100, graph 1345: mismatch
// fused vs reference: output 0: 252 of 1280 elements outside |got - ref| <= 0.0001 + 0.001|ref|; worst at flat index 434: got 0.240647271, ref 0.872178435
// shrunk from 62 to 27 ops (the failure above is the original's)
// fixed: a fully masked row (additive -1e9) is the softmax of q.k - 1e9 rounded
// to fp32's grid of 64; the kernel added m * log2(e) to base-2 scores, which
// rounds on a grid of 128, and gave another row. It now adds m first.
module {
  func.func @fuzz(%arg0: tensor<2x10x64xf32> {tfm.dim_names = ["", "", ""], tfm.name = "x"}, %arg1: tensor<10x10xi64> {tfm.dim_names = ["", ""], tfm.name = "keep0"}, %arg2: tensor<2x1x1x10xf32> {tfm.dim_names = ["", "", "", ""], tfm.name = "addmask1"}, %arg3: tensor<2x10xi1> {tfm.dim_names = ["", ""], tfm.name = "keep_kp2"}) -> (tensor<2x10x64xf32> {tfm.name = "out0"}) {
    %0 = tfm.weight "l0.ln.weight" {init = #tfm.init<ones>} : tensor<64xf32>
    %1 = tfm.weight "l0.ln.bias" {init = #tfm.init<zeros>} : tensor<64xf32>
    %2 = tfm.layer_norm %arg0, %0, %1 : tensor<2x10x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<2x10x64xf32>
    %3 = tfm.weight "l0.q.weight" {std = 2.500000e-01 : f64} : tensor<64x8xf32>
    %4 = tfm.linear %2, %3 : tensor<2x10x64xf32>, tensor<64x8xf32> -> tensor<2x10x8xf32>
    %5 = tfm.reshape %4 : tensor<2x10x8xf32> -> tensor<2x10x1x8xf32>
    %6 = tfm.transpose %5 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x1x8xf32> -> tensor<2x1x10x8xf32>
    %7 = tfm.weight "l0.k.weight" {std = 2.500000e-01 : f64} : tensor<64x8xf32>
    %8 = tfm.weight "l0.k.bias" {std = 2.500000e-01 : f64} : tensor<8xf32>
    %9 = tfm.linear %2, %7, %8 : tensor<2x10x64xf32>, tensor<64x8xf32>, tensor<8xf32> -> tensor<2x10x8xf32>
    %10 = tfm.reshape %9 : tensor<2x10x8xf32> -> tensor<2x10x1x8xf32>
    %11 = tfm.transpose %10 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x1x8xf32> -> tensor<2x1x10x8xf32>
    %12 = tfm.weight "l0.v.weight" {std = 2.500000e-01 : f64} : tensor<64x8xf32>
    %13 = tfm.weight "l0.v.bias" {std = 2.500000e-01 : f64} : tensor<8xf32>
    %14 = tfm.linear %2, %12, %13 : tensor<2x10x64xf32>, tensor<64x8xf32>, tensor<8xf32> -> tensor<2x10x8xf32>
    %15 = tfm.reshape %14 : tensor<2x10x8xf32> -> tensor<2x10x1x8xf32>
    %16 = tfm.transpose %15 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x1x8xf32> -> tensor<2x1x10x8xf32>
    %17 = tfm.transpose %11 {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x1x10x8xf32> -> tensor<2x1x8x10xf32>
    %18 = tfm.matmul %6, %17 : tensor<2x1x10x8xf32>, tensor<2x1x8x10xf32> -> tensor<2x1x10x10xf32>
    %19 = tfm.add %arg2, %18 : tensor<2x1x1x10xf32>, tensor<2x1x10x10xf32> -> tensor<2x1x10x10xf32>
    %20 = tfm.softmax %19 : tensor<2x1x10x10xf32> -> tensor<2x1x10x10xf32>
    %21 = tfm.matmul %20, %16 : tensor<2x1x10x10xf32>, tensor<2x1x10x8xf32> -> tensor<2x1x10x8xf32>
    %22 = tfm.transpose %21 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x1x10x8xf32> -> tensor<2x10x1x8xf32>
    %23 = tfm.reshape %22 : tensor<2x10x1x8xf32> -> tensor<2x10x8xf32>
    %24 = tfm.weight "l0.o.weight" {std = 2.500000e-01 : f64} : tensor<8x64xf32>
    %25 = tfm.linear %23, %24 : tensor<2x10x8xf32>, tensor<8x64xf32> -> tensor<2x10x64xf32>
    %26 = tfm.add %arg0, %25 : tensor<2x10x64xf32>, tensor<2x10x64xf32> -> tensor<2x10x64xf32>
    return %26 : tensor<2x10x64xf32>
  }
}
