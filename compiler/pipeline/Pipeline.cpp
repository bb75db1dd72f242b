//===- Pipeline.cpp - attune's graph pass pipeline ------------------------===//

#include "compiler/pipeline/Pipeline.h"

#include "passes/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace attune::pipeline {

void buildGraphPipeline(OpPassManager &pm, const CompileOptions &options) {
  // Verification is not a pass here: the parser verifies the module it
  // returns, and the pass manager re-verifies after every pass, so a pass
  // that breaks a shape contract is caught at the pass that did it.

  // Canonicalize first: folds constants and cleans up what an exporter wrote
  // (identity reshapes and transposes, duplicate splat constants), so the
  // attention matcher sees one canonical form instead of every spelling.
  pm.addPass(createCanonicalizerPass());
  // CSE before fusion: a Q, K or V computed twice would look like a value
  // with users outside the pattern, and the matcher refuses those.
  pm.addPass(createCSEPass());

  if (options.fuseAttention) {
    // Exporters' spellings of RoPE and ALiBi become the ops fusion folds
    // into the kernel (after CSE: q's and k's rotations share one table).
    if (options.raiseEncodings)
      pm.addPass(createRaiseEncodings());
    // Fusion runs on the cleaned-up graph and before anything that would
    // lower the ops it matches; its report records every softmax site.
    FuseAttentionOptions fuseOptions;
    fuseOptions.reportFile = options.fusionReportPath;
    pm.addPass(createFuseAttention(fuseOptions));
    // On the fused ops: the transposes around them become their layout.
    if (options.propagateLayouts)
      pm.addPass(createPropagateLayouts());
  } else {
    // Unfused build: expand any tfm.attention the model was written with, so
    // the same model is compiled without the fused kernel whichever way it
    // was written.
    pm.addPass(createDecomposeAttention());
  }

  // After attention: the attention matcher never looks at linears, and the
  // activations it leaves are what this folds.
  if (options.fuseEpilogues) {
    FuseEpiloguesOptions epilogueOptions;
    epilogueOptions.activations.assign(options.epilogueActivations.begin(),
                                       options.epilogueActivations.end());
    pm.addPass(createFuseEpilogues(epilogueOptions));
  }
  if (options.fuseResidualNorms)
    pm.addPass(createFuseResidualNorm());
  // After layouts, whose bshd attentions are what lets the merged result be
  // read through views; after epilogues, so an activation is merged with
  // its linear; before packing, so the merged weight is what is packed.
  if (options.mergeProjections)
    pm.addPass(createMergeProjections());
  // Last: it changes how weights are stored, which no graph pass reads.
  if (options.weightPanelWidth > 0) {
    PackWeightsOptions packOptions;
    packOptions.panelWidth = options.weightPanelWidth;
    packOptions.bf16 = options.bf16Weights;
    pm.addPass(createPackWeights(packOptions));
  }
  // --precision for the attentions (fused ones; unfused ones are matmuls,
  // which stay f32 on the CPU and follow HostLoweringOptions::
  // matmulProducts on the GPU).
  if ((options.bf16Weights || options.attentionProducts != ScalarType::F32) &&
      options.fuseAttention) {
    AttentionProductsOptions productOptions;
    productOptions.productType =
        options.attentionProducts == ScalarType::F16 ? "f16" : "bf16";
    pm.addPass(createAttentionProducts(productOptions));
  }

  // Fusion and decomposition both leave duplicate constants and shared
  // reshapes behind; CSE removes them before the host code plans memory.
  pm.addPass(createCSEPass());
}

std::string writeFusionDisabledReport(llvm::StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return ("cannot write fusion report '" + path + "': " + ec.message()).str();
  // Same layout as the fuse pass's report (llvm::json, sorted keys, two-space
  // indent), so one reader handles both.
  llvm::json::Object report{{"fusion", "disabled"},
                            {"fused", 0},
                            {"not_fused", 0},
                            {"sites", llvm::json::Array()}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  os.close();
  if (os.has_error())
    return ("cannot write fusion report '" + path + "'").str();
  return "";
}

std::string markTargetUnfusedSites(llvm::StringRef path,
                                   const std::map<std::string, std::string> &reasons) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return ("cannot read fusion report '" + path + "'").str();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return ("fusion report '" + path + "': " + llvm::toString(parsed.takeError())).str();
  llvm::json::Object *report = parsed->getAsObject();
  llvm::json::Array *sites = report ? report->getArray("sites") : nullptr;
  if (!sites)
    return ("fusion report '" + path + "' has no sites").str();
  int64_t moved = 0;
  for (llvm::json::Value &value : *sites) {
    llvm::json::Object *site = value.getAsObject();
    std::optional<llvm::StringRef> location = site ? site->getString("location") : std::nullopt;
    auto found = location ? reasons.find(location->str()) : reasons.end();
    if (found == reasons.end() || site->getBoolean("fused") != true)
      continue;
    (*site)["fused"] = false;
    (*site)["reason"] = "fused, then decomposed for the target: " + found->second;
    // Scale, causal and mask describe a fused op (as the pass writes them).
    site->erase("scale");
    site->erase("causal");
    site->erase("mask");
    ++moved;
  }
  (*report)["fused"] = report->getInteger("fused").value_or(0) - moved;
  (*report)["not_fused"] = report->getInteger("not_fused").value_or(0) + moved;
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return ("cannot write fusion report '" + path + "': " + ec.message()).str();
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*parsed))) << "\n";
  os.close();
  if (os.has_error())
    return ("cannot write fusion report '" + path + "'").str();
  return "";
}

} // namespace attune::pipeline
