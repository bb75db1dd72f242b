//===- GpuScheduleTest.cpp - the kernel builders' CUDA schedules ----------===//
//
// Every kernel kind but the matmuls and fused attention has a GPU schedule
// beside its CPU one (compiler/codegen/halide, `isGpuTarget`). Here, for one
// sample spec of each kind:
//
//  - CompileToPtx (runs everywhere): the builder's GPU schedule compiles
//    ahead of time for sm_80, as a library's kernel object would, and the
//    object carries the PTX; the kinds without a GPU schedule are refused
//    with a message that names them.
//  - MatchCpuOnDevice (needs an NVIDIA GPU and its driver, found as the
//    runtime finds them; skipped with the reason elsewhere, failed instead
//    under ATTUNE_REQUIRE_GPU=1, which scripts/gpu-test.sh sets): the sample
//    runs JIT-compiled on the GPU and on the CPU, on the same random inputs,
//    and the outputs agree (SampleChecks.h, as in gpu_kernel_test). The CPU kernels
//    are checked against the reference evaluator in kernel_test; Halide
//    schedules do not change what a pipeline computes, so the comparison
//    checks the GPU code path, not the algorithm, and the tolerance only
//    allows for the GPU's own exp/sin/cos (libdevice) and sums in another
//    order.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/cuda/GpuSamples.h"
#include "tests/unit/cuda/SampleChecks.h"
#include "compiler/codegen/halide/KernelBuilders.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <regex>
#include <string>
#include <unistd.h>
#include <vector>

using namespace attune::codegen;
namespace gputest = attune::cuda::gputest;
using Halide::Buffer;
using attune::codegen::samples::makeSpec;
using attune::codegen::samples::Sample;


namespace {

/// The device code attune builds: PTX for sm_80 (which the driver also
/// compiles for sm_90), host code for any x86-64.
Halide::Target aotGpuTarget() {
  return Halide::Target("x86-64-linux-cuda-cuda_capability_80-no_runtime");
}


std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The buffers a lowered statement copies to the host, by name (without the
/// `$n` Halide appends to make names unique).
std::vector<std::string> copiedToHost(const std::string &lowered) {
  static const std::regex call(
      R"(halide_copy_to_host\((?:\(struct halide_buffer_t \*\))?([A-Za-z_][A-Za-z_0-9]*))");
  std::vector<std::string> names;
  for (std::sregex_iterator it(lowered.begin(), lowered.end(), call), end; it != end; ++it)
    names.push_back((*it)[1]);
  return names;
}

/// Runs `sample` JIT-compiled for `target` on `inputs`; the output, on the
/// host.
Buffer<> run(const Sample &sample, const std::vector<Buffer<>> &inputs,
             const Halide::Target &target) {
  detail::BuiltKernel kernel = detail::buildKernel(sample.spec, target);
  for (size_t i = 0; i < inputs.size(); ++i)
    kernel.inputs[i].set(inputs[i]);
  Halide::Realization result = kernel.jit().realize(sample.outputShape, target);
  Buffer<> out = result[0];
  out.copy_to_host();
  return out;
}

TEST(GpuSchedule, CompileToPtx) {
  char dir[] = "/tmp/attune-gpu-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const Sample &sample : samples::samples()) {
    SCOPED_TRACE(sample.name);
    const std::string object = std::string(dir) + "/" + sample.name + ".o";
    const std::string stmt = std::string(dir) + "/" + sample.name + ".stmt";
    std::vector<std::string> buffers = {"out"};
    try {
      detail::BuiltKernel kernel = detail::buildKernel(sample.spec, aotGpuTarget());
      std::vector<Halide::Argument> args(kernel.inputs.begin(), kernel.inputs.end());
      Halide::Pipeline pipeline(kernel.output);
      pipeline.compile_to_object(object, args, sample.spec.symbolName(), aotGpuTarget());
      pipeline.compile_to_lowered_stmt(stmt, args, Halide::StmtOutputFormat::Text, aotGpuTarget());
      for (const Halide::ImageParam &input : kernel.inputs)
        buffers.push_back(input.name());
    } catch (const Halide::Error &error) {
      ADD_FAILURE() << "building for CUDA: " << error.what();
      continue;
    }
    // Halide embeds the device code as PTX text in the host object.
    std::string bytes = readFile(object);
    EXPECT_NE(bytes.find(".target sm_80"), std::string::npos) << "no sm_80 PTX in the object";
    EXPECT_NE(bytes.find(".entry"), std::string::npos) << "no kernel entry in the PTX";
    // Every stage that reads an input or writes the output runs on the
    // device: a library's buffers live in device memory only, so a copy of
    // one of them to the host would fail there. (Small intermediates may
    // come back, as gather_elements' per-row index checks do.)
    for (const std::string &name : copiedToHost(readFile(stmt)))
      EXPECT_EQ(std::count(buffers.begin(), buffers.end(), name), 0)
          << name << " is read or written on the host";
    std::remove(object.c_str());
    std::remove(stmt.c_str());
  }
  rmdir(dir);

  // The kinds without a GPU schedule say so, by name.
  const std::pair<KernelKind, const char *> refused[] = {
      {KernelKind::Linear, "linear: no GPU schedule"},
      {KernelKind::Matmul, "matmul: no GPU schedule"},
      {KernelKind::ComplexLinear, "complex_linear: no GPU schedule"},
      {KernelKind::Attention, "attention: no GPU schedule"}};
  for (auto [kind, message] : refused) {
    KernelSpec spec = makeSpec(kind, [](KernelSpec &k) { k.headDim = 64; });
    try {
      detail::buildKernel(spec, aotGpuTarget());
      ADD_FAILURE() << spec.symbolName() << " built for CUDA";
    } catch (const Halide::Error &error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  }
}

TEST(GpuSchedule, MatchCpuOnDevice) {
  REQUIRE_DEVICE(device);
  const Halide::Target cpu = attune::targets::cpu::jitTarget();
  const Halide::Target gpu =
      cpu.with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability80);
  std::mt19937 rng(7);
  for (const Sample &sample : samples::samples()) {
    SCOPED_TRACE(sample.name);
    std::vector<KernelArg> signature = kernelSignature(sample.spec);
    ASSERT_EQ(signature.size(), sample.inputShapes.size() + 1);
    std::vector<Buffer<>> inputs;
    for (size_t i = 0; i < sample.inputShapes.size(); ++i) {
      inputs.emplace_back(detail::toHalideType(signature[i].type), sample.inputShapes[i]);
      gputest::fillRandom(*inputs.back().get(), sample.indexLimit, rng);
    }
    Buffer<> want, got;
    try {
      want = run(sample, inputs, cpu);
      got = run(sample, inputs, gpu);
    } catch (const Halide::Error &error) {
      ADD_FAILURE() << error.what();
      continue;
    }
    gputest::expectSameOutputs(*got.get(), *want.get());
  }
}

} // namespace
