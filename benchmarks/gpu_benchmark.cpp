//===- gpu_benchmark.cpp - cuBLASLt linears and Halide GPU kernels --------===//
//
// The figures issue 9 asks for, on whatever NVIDIA GPU this runs on:
//  - BM_Linear: cuBLASLt linear layers at GPT-2 sizes (768 → 3072 and back
//    at 512 and 4096 tokens, the fused QKV projection) in bf16, f16, tf32 and
//    f32, with the weight as attune stores it ([K, N]) and once as PyTorch
//    does ([N, K], `wT`), and at 4096×768×3072 cuBLASLt's heuristic answers
//    ranked 1 to 7 beside its first (`rank<r>`), as TFLOP/s and as a fraction of the GPU's dense tensor-core peak
//    (`peak`: 989 TFLOP/s bf16/f16 and 495 tf32 on an H100 or H200 SXM; f32
//    rows against the 67 TFLOP/s of its CUDA cores).
//  - BM_HalideKernel: the AOT-compiled Halide GPU kernels of
//    tests/unit/cuda/GpuSamples.h that move the most bytes (norms, softmax,
//    elementwise) at sizes larger than L2, as GB/s of bytes read plus
//    written, against the HBM bandwidth of the data sheet (`of_hbm`) and
//    against a device-to-device copy measured in the same run (`of_copy`).
//  - BM_DeviceCopy: that copy.
//  - BM_BatchedScores: attention's q·kᵀ for 12 heads as one batched cuBLASLt
//    product, the way unfused attention would run on a GPU.
//  - BM_Model: libraries compiled with --target=cuda (ATTUNE_CUDA_MODEL,
//    comma-separated; models with one [1, seq] token input and one output,
//    as gpt2_block, f32 or --precision=bf16), one
//    attune_model_run_device per iteration on buffers already on the GPU, at
//    seq 128, 512, 1024 and 2048 (the bundle's GPT-2 block has 2048
//    positions; a library with fewer skips that row with the runtime's
//    error): wall time of a whole run, synchronisation included.
// Times come from CUDA events around `kRepeats` back-to-back launches on the
// device's stream (manual time, per launch), so launch gaps count.
//
// Runs on a GPU machine as it is (it links no Halide compiler, MLIR or
// LLVM): scripts/gpu-bundle.sh carries it there. Without a GPU every row
// is skipped with the reason.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/HalideCuda.h"
#include "tests/unit/cuda/GpuSampleManifest.h"
#include "tests/unit/cuda/GpuTestSupport.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace attune::cuda;
using namespace attune::cuda::gputest;

namespace {

constexpr int kRepeats = 20;

struct Gpu {
  std::unique_ptr<Device> device;
  std::unique_ptr<CublasLt> lt;
  std::unique_ptr<HalideOnDevice> halide; // released before the device
  std::string why; // why there is no device, or ""
};

Gpu &gpu() {
  static Gpu g = [] {
    Gpu g;
    g.why = openFirstDevice(&g.device);
    if (g.why.empty() && CublasLt::open(*g.device, &g.lt) != ATTUNE_OK)
      g.why = attune::runtime::statusMessage();
    if (g.why.empty()) {
      g.halide = std::make_unique<HalideOnDevice>(*g.device);
      benchmark::AddCustomContext("gpu", g.device->name());
      benchmark::AddCustomContext("cublasLt", std::to_string(g.lt->version()));
    }
    return g;
  }();
  return g;
}

/// Data-sheet figures of the GPUs this project measures on (0 if unknown).
double tensorPeakTflops(MatmulType type) {
  const std::string &name = gpu().device->name();
  if (name.find("H100") == std::string::npos && name.find("H200") == std::string::npos)
    return 0;
  switch (type) {
  case MatmulType::BF16:
  case MatmulType::F16:
    return 989;
  case MatmulType::TF32:
    return 494.7;
  case MatmulType::F32:
    return 66.9;
  }
  return 0;
}

double hbmBytesPerSecond() {
  const std::string &name = gpu().device->name();
  if (name.find("H200") != std::string::npos)
    return 4.8e12;
  if (name.find("H100") != std::string::npos)
    return name.find("PCIe") != std::string::npos ? 2.0e12 : 3.35e12;
  return 0;
}

double measuredCopyBytesPerSecond = 0; // set by BM_DeviceCopy, which runs first

/// `elements` random floats in [-1, 1] (or, for 16-bit types, their bf16/f16
/// encodings) in new device memory, so that timings see realistic data; 0
/// when the device refuses the allocation or the copy.
api::CUdeviceptr randomDeviceBuffer(size_t elements, MatmulType type) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> values(elements);
  for (float &v : values)
    v = uniform(rng);
  const std::vector<unsigned char> bytes = encode(type, values);
  api::CUdeviceptr pointer = 0;
  if (gpu().device->alloc(bytes.size(), &pointer) != ATTUNE_OK)
    return 0;
  if (gpu().device->upload(pointer, bytes.data(), bytes.size()) != ATTUNE_OK) {
    gpu().device->free(pointer);
    return 0;
  }
  return pointer;
}

/// Times `launch` in batches of kRepeats between two events; each batch
/// counts as kRepeats iterations, so the reported time is per launch and
/// the minimum time applies to time on the device. The mean seconds per
/// launch over the timed batches (0 if none ran).
template <typename Launch> double timeOnDevice(benchmark::State &state, Launch launch) {
  Device::Timer timer(*gpu().device);
  for (int i = 0; i < 3; ++i) // warm up: module loads, clocks
    if (!launch())
      return 0;
  gpu().device->synchronize();
  double total = 0;
  int64_t launches = 0;
  while (state.KeepRunningBatch(kRepeats)) {
    float ms = 0;
    timer.start();
    for (int i = 0; i < kRepeats; ++i)
      if (!launch())
        return 0;
    if (timer.stop(&ms) != ATTUNE_OK) {
      state.SkipWithError(attune::runtime::statusMessage());
      return 0;
    }
    state.SetIterationTime(ms / 1e3);
    total += ms / 1e3;
    launches += kRepeats;
  }
  return launches ? total / launches : 0;
}

void BM_DeviceCopy(benchmark::State &state) {
  if (!gpu().why.empty())
    return state.SkipWithError(("no GPU: " + gpu().why).c_str());
  const size_t bytes = size_t(1) << 30;
  api::CUdeviceptr a = 0, b = 0;
  if (gpu().device->alloc(bytes, &a) != ATTUNE_OK || gpu().device->alloc(bytes, &b) != ATTUNE_OK)
    return state.SkipWithError(attune::runtime::statusMessage());
  double seconds =
      timeOnDevice(state, [&] { return gpu().device->copy(b, a, bytes) == ATTUNE_OK; });
  // Bytes read plus written per copy.
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (seconds > 0)
    measuredCopyBytesPerSecond = 2.0 * bytes / seconds;
  gpu().device->free(a);
  gpu().device->free(b);
}

/// Times one cuBLASLt product of `shape` (dense batches) on random data:
/// TFLOP/s, and `peak` where the GPU's is known.
void timeLinear(benchmark::State &state, const LinearShape &shape) {
  if (!gpu().why.empty())
    return state.SkipWithError(("no GPU: " + gpu().why).c_str());
  std::unique_ptr<LinearPlan> plan;
  if (LinearPlan::create(*gpu().lt, shape, &plan) != ATTUNE_OK)
    return state.SkipWithError(attune::runtime::statusMessage());
  const MatmulType type = shape.type;
  api::CUdeviceptr x = randomDeviceBuffer(shape.batch * shape.m * shape.k, type);
  api::CUdeviceptr w = randomDeviceBuffer(shape.batch * shape.k * shape.n, type);
  api::CUdeviceptr b = randomDeviceBuffer(shape.n, type);
  api::CUdeviceptr y = randomDeviceBuffer(shape.batch * shape.m * shape.n, type);
  if (!x || !w || !b || !y) {
    state.SkipWithError(attune::runtime::statusMessage());
    for (api::CUdeviceptr p : {x, w, b, y})
      gpu().device->free(p); // free(0) is a no-op
    return;
  }
  timeOnDevice(state, [&] {
    if (plan->run(x, w, b, y) == ATTUNE_OK)
      return true;
    state.SkipWithError(attune::runtime::statusMessage());
    return false;
  });
  state.counters["TFLOP/s"] =
      benchmark::Counter(plan->flops() / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  if (double peak = tensorPeakTflops(type))
    state.counters["peak"] = benchmark::Counter(plan->flops() / 1e12 / peak,
                                                benchmark::Counter::kIsIterationInvariantRate);
  for (api::CUdeviceptr p : {x, w, b, y})
    gpu().device->free(p);
}

void BM_Linear(benchmark::State &state, MatmulType type, Epilogue epilogue,
               bool weightTransposed, int heuristicRank) {
  LinearShape shape;
  shape.m = state.range(0), shape.k = state.range(1), shape.n = state.range(2);
  shape.type = type, shape.epilogue = epilogue, shape.weightTransposed = weightTransposed;
  shape.heuristicRank = heuristicRank;
  timeLinear(state, shape);
}

/// Attention's q·kᵀ as one batched cuBLASLt product over B·H heads: S×S
/// scores of D-wide rows, k transposed, scaled by 1/√D.
void BM_BatchedScores(benchmark::State &state, MatmulType type) {
  LinearShape shape;
  shape.m = shape.n = state.range(0);
  shape.k = state.range(1);
  shape.batch = state.range(2);
  shape.type = type, shape.weightTransposed = true;
  shape.alpha = 1.f / std::sqrt(static_cast<float>(shape.k));
  timeLinear(state, shape);
}

const GpuSample *findSample(const char *name) {
  for (const GpuSample &sample : kGpuSamples)
    if (std::strcmp(sample.name, name) == 0)
      return &sample;
  return nullptr;
}

/// Runs the sample `name` at `shapes` (its inputs', then its output's).
void BM_HalideKernel(benchmark::State &state, const char *name,
                     std::vector<std::vector<int>> shapes) {
  if (!gpu().why.empty())
    return state.SkipWithError(("no GPU: " + gpu().why).c_str());
  const GpuSample *sample = findSample(name);
  if (!sample || shapes.size() != sample->inputs.size() + 1)
    return state.SkipWithError("no such sample, or the wrong number of shapes");
  std::vector<DeviceTensor> tensors;
  std::vector<api::CUdeviceptr> pointers;
  double bytes = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const halide_type_t type = i < sample->inputs.size() ? sample->inputs[i].type
                                                         : sample->output.type;
    size_t elements = 1;
    for (int extent : shapes[i])
      elements *= extent;
    // Every input of these samples is f32 data.
    pointers.push_back(randomDeviceBuffer(elements, MatmulType::F32));
    if (!pointers.back()) {
      state.SkipWithError(attune::runtime::statusMessage());
      for (api::CUdeviceptr p : pointers)
        gpu().device->free(p);
      return;
    }
    tensors.emplace_back(pointers.back(), type, shapes[i].data(), (int)shapes[i].size());
    bytes += elements * ((type.bits + 7) / 8);
  }
  std::vector<void *> args;
  for (DeviceTensor &tensor : tensors)
    args.push_back(tensor.get());
  timeOnDevice(state, [&] {
    if (sample->cuda(args.data()) == 0)
      return true;
    state.SkipWithError(lastHalideError());
    return false;
  });
  state.counters["GB/s"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (double hbm = hbmBytesPerSecond())
    state.counters["of_hbm"] =
        benchmark::Counter(bytes / hbm, benchmark::Counter::kIsIterationInvariantRate);
  if (measuredCopyBytesPerSecond > 0)
    state.counters["of_copy"] = benchmark::Counter(bytes / measuredCopyBytesPerSecond,
                                                   benchmark::Counter::kIsIterationInvariantRate);
  for (api::CUdeviceptr p : pointers)
    gpu().device->free(p);
}

/// One run of the model at ATTUNE_CUDA_MODEL per iteration, on device
/// buffers; ms per run and tokens per second.
void BM_Model(benchmark::State &state, std::string path) {
  if (!gpu().why.empty())
    return state.SkipWithError(("no GPU: " + gpu().why).c_str());
  attune_model_t *model = nullptr;
  if (attune_model_open(path.c_str(), &model) != ATTUNE_OK)
    return state.SkipWithError(attune_status_message());
  attune_tensor_info_t ids, out;
  attune_model_input_info(model, 0, &ids);
  attune_model_output_info(model, 0, &out);
  const int64_t seq = state.range(0);
  std::vector<int32_t> tokens(seq);
  for (int64_t i = 0; i < seq; ++i)
    tokens[i] = static_cast<int32_t>((i * 7919) % ids.index_bound);
  attune_tensor_t input{nullptr, ATTUNE_DTYPE_I32, 2, {1, seq}};
  attune_tensor_t output{nullptr, out.dtype, out.rank, {1, seq, out.dims[2]}};
  const size_t outBytes = seq * out.dims[2] * attune_dtype_size(out.dtype);
  api::CUdeviceptr dIds = 0, dOut = 0;
  if (gpu().device->alloc(seq * sizeof(int32_t), &dIds) != ATTUNE_OK ||
      gpu().device->alloc(outBytes, &dOut) != ATTUNE_OK ||
      gpu().device->upload(dIds, tokens.data(), seq * sizeof(int32_t)) != ATTUNE_OK) {
    state.SkipWithError(attune::runtime::statusMessage());
  } else {
    input.data = reinterpret_cast<void *>(dIds);
    output.data = reinterpret_cast<void *>(dOut);
    // The first run uploads the weights and loads the kernels.
    bool ok = attune_model_run_device(model, &input, 1, &output, 1) == ATTUNE_OK;
    for (auto _ : state)
      if (!ok || attune_model_run_device(model, &input, 1, &output, 1) != ATTUNE_OK) {
        state.SkipWithError(attune_status_message());
        break;
      }
    state.counters["tokens/s"] =
        benchmark::Counter(static_cast<double>(seq), benchmark::Counter::kIsIterationInvariantRate);
  }
  gpu().device->free(dIds);
  gpu().device->free(dOut);
  attune_model_close(model);
}

void registerAll() {
  benchmark::RegisterBenchmark("BM_DeviceCopy/1GiB", BM_DeviceCopy)->UseManualTime();
  struct LinearSize {
    int64_t m, k, n;
  };
  // GPT-2 small: MLP up (768 → 3072) and down, QKV (768 → 2304), at 512 and
  // 4096 tokens; the figure is the first row at 4096.
  const LinearSize sizes[] = {
      {4096, 768, 3072}, {4096, 3072, 768}, {4096, 768, 2304}, {512, 768, 3072}};
  for (MatmulType type : {MatmulType::BF16, MatmulType::F16, MatmulType::TF32, MatmulType::F32})
    for (const LinearSize &size : sizes) {
      if (type != MatmulType::BF16 && size.m != 4096)
        continue;
      for (Epilogue epilogue : {Epilogue::None, Epilogue::BiasGelu}) {
        if (epilogue == Epilogue::BiasGelu && (type != MatmulType::BF16 || size.n != 3072))
          continue;
        std::string name = std::string("BM_Linear/") + matmulTypeName(type) + "/" +
                           epilogueName(epilogue);
        benchmark::RegisterBenchmark(name.c_str(), BM_Linear, type, epilogue, false, 0)
            ->Args({size.m, size.k, size.n})
            ->ArgNames({"M", "K", "N"})
            ->UseManualTime();
      }
    }
  // The weight as PyTorch stores it ([N, K], cuBLASLt's A transposed), the
  // layout torch.nn.functional.linear hands cuBLASLt.
  benchmark::RegisterBenchmark("BM_Linear/bf16/none/wT", BM_Linear, MatmulType::BF16,
                               Epilogue::None, true, 0)
      ->Args({4096, 768, 3072})
      ->ArgNames({"M", "K", "N"})
      ->UseManualTime();
  // cuBLASLt's other heuristic answers for the shape, both weight
  // layouts: whether timing them at plan creation would beat the first.
  for (bool transposed : {false, true})
    for (int rank = 1; rank < 8; ++rank)
      benchmark::RegisterBenchmark((std::string("BM_Linear/bf16/none/") +
                                    (transposed ? "wT/" : "") + "rank" + std::to_string(rank))
                                       .c_str(),
                                   BM_Linear, MatmulType::BF16, Epilogue::None, transposed, rank)
          ->Args({4096, 768, 3072})
          ->ArgNames({"M", "K", "N"})
          ->UseManualTime();
  // The scores of 12 heads at S = 2048, D = 64, as unfused attention would
  // compute them on a GPU.
  for (MatmulType type : {MatmulType::BF16, MatmulType::F32})
    benchmark::RegisterBenchmark(
        (std::string("BM_BatchedScores/") + matmulTypeName(type)).c_str(), BM_BatchedScores, type)
        ->Args({2048, 64, 12})
        ->ArgNames({"S", "D", "heads"})
        ->UseManualTime();
  // Bandwidth-bound kernels above the 50-60 MB of L2: 32768 tokens of 768
  // (100 MB a tensor), softmax over 12 heads of 2048×2048 scores, GELU on
  // 16384 tokens of 3072.
  const int tokens = 32768, width = 768;
  auto halide = [](const char *label, const char *sample, std::vector<std::vector<int>> shapes) {
    benchmark::RegisterBenchmark((std::string("BM_HalideKernel/") + label).c_str(),
                                 BM_HalideKernel, sample, shapes)
        ->UseManualTime();
  };
  halide("layer_norm/768x32768", "layer_norm",
         {{width, tokens}, {width}, {width}, {width, tokens}});
  halide("rms_norm/768x32768", "rms_norm", {{width, tokens}, {width}, {width, tokens}});
  halide("softmax/2048x2048x12", "softmax", {{2048, 2048 * 12}, {2048, 2048 * 12}});
  halide("gelu_erf/3072x16384", "unary_gelu", {{3072 * 16384}, {3072 * 16384}});
  halide("add/768x32768", "binary_add",
         {{width, tokens, 1}, {width, tokens, 1}, {width, tokens, 1}});
  // ATTUNE_CUDA_MODEL: libraries separated by commas, one row set each,
  // named by the library's file name (BM_Model/gpt2_block_cuda/seq:128).
  if (const char *models = std::getenv("ATTUNE_CUDA_MODEL"); models && *models) {
    std::string list = models;
    for (size_t start = 0; start < list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string::npos)
        end = list.size();
      std::string path = list.substr(start, end - start);
      start = end + 1;
      if (path.empty())
        continue;
      std::string name = path.substr(path.rfind('/') + 1);
      name = name.substr(0, name.rfind(".so"));
      benchmark::RegisterBenchmark(("BM_Model/" + name).c_str(), BM_Model, path)
          ->ArgName("seq")
          ->Arg(128)
          ->Arg(512)
          ->Arg(1024)
          ->Arg(2048)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  gpu(); // opens the device now, so that its name is in the printed context
  registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
