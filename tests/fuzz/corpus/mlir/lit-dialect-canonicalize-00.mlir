func.func @transpose_identity(%x: tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32> {
  %0 = tfm.transpose %x {permutation = array<i64: 0, 1, 2, 3>} : tensor<?x12x?x64xf32> -> tensor<?x12x?x64xf32>
  return %0 : tensor<?x12x?x64xf32>
}
