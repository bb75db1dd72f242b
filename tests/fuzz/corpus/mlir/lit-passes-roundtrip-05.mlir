func.func @static_key_padding_dynamic_keys(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %kpm: tensor<?x128xi1>) -> tensor<?x4x?x16xf32> {
  %o = tfm.attention %q, %k, %v key_padding_mask(%kpm : tensor<?x128xi1>) {scale = 0.25 : f64, causal = true} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
