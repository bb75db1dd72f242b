// fuzz-dims:
// fuzz-expect: either
// fuzz-input-seed: 1126004801
// spellings: static b1 h2/1 sq7 sk7 d16 dv16 self-block x2 mqa scale-mul mqa no-scale where-keep-i1-1e9 add-mask[2]
// attune-fuzz-graphs --seed=1126, graph 1422: mismatch
// fused vs reference: output 0: 64 of 448 elements outside |got - ref| <= 0.0001 + 0.001|ref|; worst at flat index 161: got 8.26361847, ref 4.13766861
// shrunk from 64 to 27 ops (the failure above is the original's)
// fixed: the same as seed1127-2546 (where(keep, s, -1e9) fused as an additive
// -1e9 that large scores shift), in an MQA block.
module {
  func.func @fuzz(%arg0: tensor<1x7x64xf32> {tfm.dim_names = ["", "", ""], tfm.name = "x"}, %arg1: tensor<7x7xi1> {tfm.dim_names = ["", ""], tfm.name = "keep0"}, %arg2: tensor<1x2x7x7xf32> {tfm.dim_names = ["", "", "", ""], tfm.name = "addmask1"}) -> (tensor<1x7x64xf32> {tfm.name = "out0"}) {
    %0 = tfm.weight "l1.q.weight" {std = 2.500000e-01 : f64} : tensor<64x32xf32>
    %1 = tfm.linear %arg0, %0 : tensor<1x7x64xf32>, tensor<64x32xf32> -> tensor<1x7x32xf32>
    %2 = tfm.reshape %1 : tensor<1x7x32xf32> -> tensor<1x7x2x16xf32>
    %3 = tfm.transpose %2 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x7x2x16xf32> -> tensor<1x2x7x16xf32>
    %4 = tfm.weight "l1.k.weight" {std = 2.500000e-01 : f64} : tensor<64x16xf32>
    %5 = tfm.weight "l1.k.bias" {std = 2.500000e-01 : f64} : tensor<16xf32>
    %6 = tfm.linear %arg0, %4, %5 : tensor<1x7x64xf32>, tensor<64x16xf32>, tensor<16xf32> -> tensor<1x7x16xf32>
    %7 = tfm.reshape %6 : tensor<1x7x16xf32> -> tensor<1x7x1x16xf32>
    %8 = tfm.transpose %7 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x7x1x16xf32> -> tensor<1x1x7x16xf32>
    %9 = tfm.weight "l1.v.weight" {std = 2.500000e-01 : f64} : tensor<64x16xf32>
    %10 = tfm.linear %arg0, %9 : tensor<1x7x64xf32>, tensor<64x16xf32> -> tensor<1x7x16xf32>
    %11 = tfm.reshape %10 : tensor<1x7x16xf32> -> tensor<1x7x1x16xf32>
    %12 = tfm.transpose %11 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x7x1x16xf32> -> tensor<1x1x7x16xf32>
    %13 = tfm.repeat_interleave %8 {axis = 1 : i64, repeats = 2 : i64} : tensor<1x1x7x16xf32> -> tensor<1x2x7x16xf32>
    %14 = tfm.repeat_interleave %12 {axis = 1 : i64, repeats = 2 : i64} : tensor<1x1x7x16xf32> -> tensor<1x2x7x16xf32>
    %15 = tfm.transpose %13 {permutation = array<i64: 0, 1, 3, 2>} : tensor<1x2x7x16xf32> -> tensor<1x2x16x7xf32>
    %16 = tfm.matmul %3, %15 : tensor<1x2x7x16xf32>, tensor<1x2x16x7xf32> -> tensor<1x2x7x7xf32>
    %cst = arith.constant dense<-1.000000e+09> : tensor<f32>
    %17 = tfm.where %arg1, %16, %cst : tensor<7x7xi1>, tensor<1x2x7x7xf32>, tensor<f32> -> tensor<1x2x7x7xf32>
    %18 = tfm.softmax %17 {axis = 3 : i64} : tensor<1x2x7x7xf32> -> tensor<1x2x7x7xf32>
    %19 = tfm.matmul %18, %14 : tensor<1x2x7x7xf32>, tensor<1x2x7x16xf32> -> tensor<1x2x7x16xf32>
    %20 = tfm.transpose %19 {permutation = array<i64: 0, 2, 1, 3>} : tensor<1x2x7x16xf32> -> tensor<1x7x2x16xf32>
    %21 = tfm.reshape %20 : tensor<1x7x2x16xf32> -> tensor<1x7x32xf32>
    %22 = tfm.weight "l1.o.weight" {std = 2.500000e-01 : f64} : tensor<32x64xf32>
    %23 = tfm.weight "l1.o.bias" {std = 2.500000e-01 : f64} : tensor<64xf32>
    %24 = tfm.linear %21, %22, %23 : tensor<1x7x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<1x7x64xf32>
    %25 = tfm.add %arg0, %24 : tensor<1x7x64xf32>, tensor<1x7x64xf32> -> tensor<1x7x64xf32>
    return %25 : tensor<1x7x64xf32>
  }
}
