// RUN: attune-opt %s -tfm-fuse-attention=report-file=%t.missing-dir/report.json -verify-diagnostics -o /dev/null

/// A report that cannot be written is an error naming the file, not a crash
/// and not a silently missing report.

// expected-error @+1 {{cannot write the fusion report to '}}
module {
  func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
    %o = tfm.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
    return %o : tensor<2x4x8x16xf32>
  }
}
