// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --emit=mlir -o %t.mlir --graph=%t.dot && FileCheck %s --input-file=%t.dot
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --emit=mlir -o %t.unfused.mlir --no-fuse-attention --graph=%t.unfused.dot && FileCheck %s --input-file=%t.unfused.dot --check-prefix=UNFUSED
// RUN: attune-compile %s --emit=mlir -o %t.names.mlir --graph=%t.names.dot && FileCheck %s --input-file=%t.names.dot --check-prefix=ESCAPE
// RUN: not attune-compile %s --emit=mlir --graph=%t.png 2>&1 | FileCheck %s --check-prefix=EXTENSION
// RUN: not attune-compile %s --emit=input --graph=%t.dot 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: rm -rf %t.no-dot && mkdir -p %t.no-dot
// RUN: env PATH=%t.no-dot not attune-compile %s --emit=mlir --graph=%t.svg 2>&1 | FileCheck %s --check-prefix=NODOT

/// --graph draws the model after the graph passes as Graphviz DOT: ops with
/// their result shapes, weights by name, SSA edges, inputs and outputs by
/// their tfm.name, and the fused attention marked. The unfused build of the
/// same model has no fused marking. SVG needs Graphviz's `dot`; with PATH
/// pointing at an empty folder the compile stops, before any work, with an
/// error naming the package; the DOT path never needs Graphviz, so no case
/// here depends on it being installed.

// CHECK:      digraph "gpt2_block" {
// CHECK-NEXT: graph [label="@gpt2_block after the graph passes: 1 fused attention site"
// CHECK:      [[IDS:in0]] [label="ids\n?x?xi32", shape=invhouse
// CHECK:      [[WTE:n[0-9]+]] [label="weight\nwte\n50257x768xf32"
// CHECK:      [[EMB:n[0-9]+]] [label="embedding\n?x?x768xf32"]
// CHECK:      [[ATT:n[0-9]+]] [label="attention\n?x?x12x64xf32\ncausal, scale 0.125, [B, S, H, D]", fillcolor="#f4a261", penwidth=2, class="fused_attention"];
// CHECK:      [[OUT:out0]] [label="hidden_states\n?x?x768xf32", shape=house
// CHECK-DAG:  [[WTE]] -> [[EMB]];
// CHECK-DAG:  [[IDS]] -> [[EMB]];
// CHECK-DAG:  -> [[ATT]] [label="q"];
// CHECK-DAG:  -> [[ATT]] [label="k"];
// CHECK-DAG:  -> [[ATT]] [label="v"];
// CHECK-DAG:  [[ATT]] -> n{{[0-9]+}};
// CHECK-DAG:  n{{[0-9]+}} -> [[OUT]];
// CHECK:      subgraph cluster_legend {
// CHECK:      legend_attention [label="fused attention (tfm.attention)", fillcolor="#f4a261"
// CHECK:      }
// CHECK-NEXT: }

// UNFUSED:     graph [label="@gpt2_block after the graph passes: 0 fused attention sites"
// UNFUSED-NOT: fused_attention
// UNFUSED:     [label="softmax\n?x12x?x?xf32"]
// UNFUSED-NOT: fused_attention
// UNFUSED-NOT: legend_attention

/// Names from the model reach the labels escaped: quotes and backslashes get
/// a backslash, a control byte is shown as \xNN.
// ESCAPE: in0 [label="x \"in\"\n4xf32"
// ESCAPE: n0 [label="weight\nw\"q\\\\x1b\n4xf32"
// ESCAPE: n1 [label="add\n4xf32"]
// ESCAPE: out0 [label="output 0\n4xf32"
// ESCAPE: in0 -> n1;
// ESCAPE: n0 -> n1;
// ESCAPE: n1 -> out0;

// EXTENSION: attune-compile: error: --graph: expected a file ending in .dot (Graphviz source) or .svg (drawn by Graphviz's dot), got '{{.*}}.png'
// INPUT: attune-compile: error: --graph draws the model after the graph passes, which --emit=input stops before; use --emit=mlir
// NODOT: attune-compile: error: --graph: drawing '{{.*}}.svg' needs Graphviz's 'dot' program, which is not on PATH: install Graphviz (apt-get install graphviz), or write a .dot file and render it elsewhere

func.func @names(%x: tensor<4xf32> {tfm.name = "x \"in\""}) -> tensor<4xf32> {
  %w = tfm.weight "w\"q\\\1B" : tensor<4xf32>
  %y = tfm.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
