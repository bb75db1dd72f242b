//===- Pipeline.h - attune's graph pass pipeline ----------------*- C++ -*-===//
//
// The passes a model goes through between the parser and host code
// generation, and the options attune-compile exposes for them. Kept apart
// from the tool so tests and other drivers build exactly the same pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_PIPELINE_PIPELINE_H
#define ATTUNE_COMPILER_PIPELINE_PIPELINE_H

#include "compiler/support/ScalarType.h"
#include "mlir/Pass/PassManager.h"

#include <map>
#include <string>
#include <vector>

namespace attune::pipeline {

/// Options of the graph pipeline (the subset of attune-compile's flags that
/// change which passes run or what they write).
struct CompileOptions {
  /// Raise decomposed attention to tfm.attention. When false, attention that
  /// the model writes as tfm.attention is decomposed instead, so one model
  /// can be built both ways and compared.
  bool fuseAttention = true;
  /// Raise exporters' spellings of RoPE, ALiBi and T5's bias to attune's
  /// ops before fusing (tfm-raise-encodings). Off keeps them as written:
  /// the raised ops compute RoPE's angles in double where an exporter's
  /// graph rounds them to f32, so outputs move by up to about position *
  /// 2^-24 rad, and a user comparing bit-closely with the graph may want it.
  bool raiseEncodings = true;
  /// Fold activations into the linear before them (tfm-fuse-epilogues), in
  /// fused and unfused attention builds alike: it is independent of
  /// attention, and the two builds stay comparable. Off by default: on
  /// all-MiniLM-L6-v2 and the GPT-2 block (AMD EPYC Zen 5) it was no faster
  /// with AVX-512 (GELU is compute-bound, and its separate pass reads what
  /// the GEMM just left in cache) and 2-3% slower with AVX2, whose GEMM
  /// tile gives up a row to make room for the activation.
  bool fuseEpilogues = false;
  /// The activations tfm-fuse-epilogues may fold (the target's
  /// epilogueActivations()); empty: all.
  std::vector<std::string> epilogueActivations;
  /// Fold the residual add before a norm into the norm's kernel
  /// (tfm-fuse-residual-norm), in fused and unfused builds alike.
  bool fuseResidualNorms = true;
  /// Fold the transposes that split and merge heads into tfm.attention's
  /// layout (tfm-propagate-layouts). Fused builds only: the unfused one has
  /// no tfm.attention, and its batched matmuls read [B, H, S, D].
  bool propagateLayouts = true;
  /// Merge the q, k and v projections of one input into one linear whose
  /// result attention reads through views (tfm-merge-projections). Off by
  /// default: on the CPU it was no faster (GPT-2 block at 128 and 512
  /// tokens within noise; all-MiniLM-L6-v2 at 512 tokens 2-4% slower, its
  /// attention reading rows three times further apart; Intel Xeon).
  bool mergeProjections = false;
  /// Store linear weights in the GEMM's panel layout (tfm-pack-weights)
  /// with panels of this many columns (the target's weightPanelWidth());
  /// 0 stores them as the model has them.
  int64_t weightPanelWidth = 96;
  /// Store those panels as bf16 pairs (tfm-pack-weights' bf16 option): the
  /// linears then multiply in bf16 with f32 accumulation (--precision=bf16).
  bool bf16Weights = false;
  /// Mark the fused attentions' products BF16 or F16 (tfm-attention-
  /// products) without storing weights in bf16: --precision=bf16 or f16 on
  /// a target that rounds the products' operands as it computes them
  /// (CUDA). F32: none (bf16Weights marks them bf16).
  ScalarType attentionProducts = ScalarType::F32;
  /// Where the fuse pass writes its JSON report of every softmax site; empty
  /// writes none. Ignored when fuseAttention is false (see
  /// writeFusionDisabledReport).
  std::string fusionReportPath;
};

/// Adds the graph passes to `pm` (anchored on builtin.module), in order:
///   canonicalize, cse, [tfm-raise-encodings, tfm-fuse-attention] |
///   tfm-decompose-attention, [tfm-propagate-layouts], [tfm-fuse-epilogues],
///   [tfm-fuse-residual-norm], [tfm-merge-projections], tfm-pack-weights,
///   cse.
/// The verifier runs on the parsed module and after every pass (the pass
/// manager's default), which is where shapes are checked: every tfm op infers
/// its result type and the verifier compares it with the written one.
void buildGraphPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// The report --fusion-report writes when fusion is turned off: the same
/// shape as the fuse pass's report, with no sites and `"fusion": "disabled"`.
/// Returns an empty string on success, else a message naming the problem.
std::string writeFusionDisabledReport(llvm::StringRef path);

/// Marks in the fusion report at `path` the sites a target then decomposed
/// (TargetBackend::unfusedAttentionReasonFor): each site whose location is
/// a key of `reasons` becomes unfused, with "fused, then decomposed for the
/// target: <reason>", and the counts follow. Returns "" or a message.
std::string markTargetUnfusedSites(llvm::StringRef path,
                                   const std::map<std::string, std::string> &reasons);

} // namespace attune::pipeline

#endif // ATTUNE_COMPILER_PIPELINE_PIPELINE_H
