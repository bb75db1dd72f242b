//===- model_benchmark.cpp - a compiled model's latency, through the runtime ===//
//
// Times whole models as attune-compile writes them (any library: a Hugging
// Face checkpoint folder compiled with `attune-compile DIR -o lib.so`, an
// .mlir model), through the runtime's C API, one row per library, shape and
// thread count:
//
//   model_benchmark LIB [LIB...] --dim=seq=128 --dim=batch=1 --threads=1
//                   [Google Benchmark flags]
//
//   BM_Model/<library>/batch:1/seq:128/T:1
//
// `--dim=NAME=N[,N...]` gives every dynamic dimension the library's inputs
// name (attune_tensor_info_t::dim_names); `--threads=T[,T...]`. Lists make a
// grid, so fused and unfused builds, lengths and thread counts can sit side
// by side in one run. <library> is the file name without "lib" and ".so".
//
// Inputs are random and valid, from the library's own input descriptions:
// integer inputs that index a table (index_bound > 0: token ids, token type
// ids) are uniform in [0, index_bound); other integer and bool inputs are 1
// (an attention mask that keeps every position); float inputs are N(0, 1).
// The seed is fixed (--seed=N changes it).
//
// Counters: `items_per_second` counts the product of the dynamic dimensions
// (batch x seq: tokens) per second. The context records each library's
// model name and the instruction-set level its kernels will run at; at the
// end, stderr says the level they did run at.
//
// Checked before timed: the first run of every row must succeed and give
// finite outputs (there is no reference here: scripts/compare_hf_ort.py
// compares the outputs with ONNX Runtime); otherwise the row is skipped with
// the runtime's message and the binary exits 1.
//
// One handle per library; attune_model_set_num_threads is called only when
// a row's thread count differs from the last one, so no timed run restarts
// the library's thread pool.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "compiler/support/PanelLayout.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

/// Set when a row fails: main then exits non-zero.
bool gFailed = false;

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "model_benchmark: %s\n", message.c_str());
  std::exit(1);
}

/// One opened library and the thread count its pool was last set to.
struct Library {
  std::string path, label;
  attune_model_t *model = nullptr;
  int threads = -1;
};

/// A dynamic dimension's name and the values to run it at.
using Dims = std::vector<std::pair<std::string, int64_t>>;

/// Inputs and outputs of one library at one shape, the buffers the runtime
/// reads and writes.
struct Problem {
  std::vector<attune_tensor_t> inputs, outputs;
  std::vector<std::vector<uint8_t>> inputData, outputData;
  int64_t items = 1;
};

/// Shapes from the library's descriptions and `dims`; "" or what is wrong.
std::string shapeInputs(attune_model_t *model, const Dims &dims,
                        std::vector<attune_tensor_t> &inputs,
                        std::vector<attune_tensor_info_t> &infos) {
  int32_t n = attune_model_num_inputs(model);
  inputs.assign(n, attune_tensor_t{});
  infos.assign(n, attune_tensor_info_t{});
  for (int32_t i = 0; i < n; ++i) {
    if (attune_model_input_info(model, i, &infos[i]) != ATTUNE_OK)
      return attune_status_message();
    const attune_tensor_info_t &info = infos[i];
    attune_tensor_t &t = inputs[i];
    t.dtype = info.dtype;
    t.rank = info.rank;
    for (int32_t d = 0; d < info.rank; ++d) {
      if (info.dims[d] >= 0) {
        t.shape[d] = info.dims[d];
        continue;
      }
      bool found = false;
      for (const auto &[name, value] : dims)
        if (name == info.dim_names[d]) {
          t.shape[d] = value;
          found = true;
        }
      if (!found)
        return std::string("input '") + info.name + "' has a dynamic dimension '" +
               info.dim_names[d] + "': pass --dim=" + info.dim_names[d] + "=N";
    }
  }
  return "";
}

/// Allocates and fills a problem (see the file header for the values).
std::string makeProblem(attune_model_t *model, const Dims &dims, unsigned seed,
                        Problem &p) {
  std::vector<attune_tensor_info_t> infos;
  if (std::string error = shapeInputs(model, dims, p.inputs, infos); !error.empty())
    return error;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  p.inputData.resize(p.inputs.size());
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    attune_tensor_t &t = p.inputs[i];
    int64_t count = 1;
    for (int32_t d = 0; d < t.rank; ++d)
      count *= t.shape[d];
    p.inputData[i].assign(count * attune_dtype_size(t.dtype), 0);
    t.data = p.inputData[i].data();
    int64_t bound = infos[i].index_bound;
    std::uniform_int_distribution<int64_t> ids(0, bound > 0 ? bound - 1 : 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t id = bound > 0 ? ids(rng) : 1;
      switch (t.dtype) {
      case ATTUNE_DTYPE_F32:
        static_cast<float *>(t.data)[e] = normal(rng);
        break;
      case ATTUNE_DTYPE_BF16:
        static_cast<uint16_t *>(t.data)[e] = attune::floatToBf16(normal(rng));
        break;
      case ATTUNE_DTYPE_I64:
        static_cast<int64_t *>(t.data)[e] = id;
        break;
      case ATTUNE_DTYPE_I32:
        static_cast<int32_t *>(t.data)[e] = int32_t(id);
        break;
      case ATTUNE_DTYPE_I8:
      case ATTUNE_DTYPE_BOOL:
        static_cast<int8_t *>(t.data)[e] = int8_t(bound > 0 ? id : 1);
        break;
      default:
        return std::string("input '") + infos[i].name + "' has dtype " +
               attune_dtype_name(t.dtype) + ", which this benchmark does not fill";
      }
    }
  }
  for (const auto &dim : dims)
    p.items *= dim.second;
  int32_t n = attune_model_num_outputs(model);
  p.outputs.assign(n, attune_tensor_t{});
  p.outputData.resize(n);
  for (int32_t o = 0; o < n; ++o) {
    // Also checks the input shapes against the library (symbol maxima such
    // as the maximum positions), before anything runs.
    if (attune_model_output_shape(model, p.inputs.data(), int32_t(p.inputs.size()), o,
                                  &p.outputs[o]) != ATTUNE_OK)
      return attune_status_message();
    int64_t count = 1;
    for (int32_t d = 0; d < p.outputs[o].rank; ++d)
      count *= p.outputs[o].shape[d];
    p.outputData[o].assign(count * attune_dtype_size(p.outputs[o].dtype), 0);
    p.outputs[o].data = p.outputData[o].data();
  }
  return "";
}

attune_status_t run(attune_model_t *model, Problem &p) {
  return attune_model_run(model, p.inputs.data(), int32_t(p.inputs.size()),
                          p.outputs.data(), int32_t(p.outputs.size()));
}

/// "" when every float output (f32, bf16) is finite.
std::string checkFinite(attune_model_t *model, const Problem &p) {
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const attune_tensor_t &t = p.outputs[o];
    if (t.dtype != ATTUNE_DTYPE_F32 && t.dtype != ATTUNE_DTYPE_BF16)
      continue;
    const bool bf16 = t.dtype == ATTUNE_DTYPE_BF16;
    size_t n = p.outputData[o].size() / (bf16 ? 2 : 4);
    auto element = [&](size_t i) {
      return bf16 ? attune::bf16ToFloat(
                        reinterpret_cast<const uint16_t *>(p.outputData[o].data())[i])
                  : reinterpret_cast<const float *>(p.outputData[o].data())[i];
    };
    for (size_t i = 0; i < n; ++i)
      if (float x = element(i); !std::isfinite(x)) {
        attune_tensor_info_t info;
        attune_model_output_info(model, int32_t(o), &info);
        return std::string("output '") + info.name + "' element " + std::to_string(i) +
               " is " + std::to_string(x);
      }
  }
  return "";
}

unsigned gSeed = 1;

void BM_Model(benchmark::State &state, Library *lib, std::string row, Dims dims,
              int threads) {
  auto skip = [&](const std::string &why) {
    gFailed = true;
    std::fprintf(stderr, "model_benchmark: %s: %s\n", lib->label.c_str(), why.c_str());
    state.SkipWithError(why.c_str());
  };
  if (lib->threads != threads) {
    if (attune_model_set_num_threads(lib->model, threads) != ATTUNE_OK)
      return skip(attune_status_message());
    lib->threads = threads;
  }
  // One problem at a time: Google Benchmark calls a row several times while
  // it sizes the iteration count; a model's outputs (logits) can be large.
  static std::string cachedKey;
  static std::unique_ptr<Problem> cached;
  std::string key = lib->path + "/" + row;
  if (cachedKey != key) {
    cached.reset();
    auto p = std::make_unique<Problem>();
    if (std::string error = makeProblem(lib->model, dims, gSeed, *p); !error.empty())
      return skip(error);
    // Checked before timed (and warm: the first run touches the weights).
    if (run(lib->model, *p) != ATTUNE_OK)
      return skip(attune_status_message());
    if (std::string error = checkFinite(lib->model, *p); !error.empty())
      return skip(error);
    cached = std::move(p);
    cachedKey = key;
  }
  Problem &p = *cached;
  for (auto _ : state) {
    if (run(lib->model, p) != ATTUNE_OK)
      return skip(attune_status_message());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * p.items);
}

/// "a,b,c" -> values; exits on anything but positive integers.
std::vector<int64_t> parseList(const std::string &flag, const std::string &text) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    char *tail = nullptr;
    long long v = std::strtoll(item.c_str(), &tail, 10);
    if (item.empty() || *tail != '\0' || v <= 0)
      die(flag + " expects positive integers separated by commas, got '" + text + "'");
    values.push_back(v);
    start = end + 1;
  }
  return values;
}

std::string label(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.rfind("lib", 0) == 0)
    name = name.substr(3);
  if (size_t dot = name.find(".so"); dot != std::string::npos)
    name = name.substr(0, dot);
  return name;
}

} // namespace

int main(int argc, char **argv) {
  // Our flags first; what is left (the program name and Google Benchmark's
  // flags) goes to benchmark::Initialize.
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::vector<int64_t>>> dimLists;
  std::vector<int64_t> threadList = {1};
  std::vector<char *> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--dim=", 0) == 0) {
      std::string kv = arg.substr(6);
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        die("--dim expects NAME=N[,N...], got '" + kv + "'");
      dimLists.emplace_back(kv.substr(0, eq), parseList("--dim", kv.substr(eq + 1)));
    } else if (arg.rfind("--threads=", 0) == 0) {
      threadList = parseList("--threads", arg.substr(10));
    } else if (arg.rfind("--seed=", 0) == 0) {
      gSeed = unsigned(parseList("--seed", arg.substr(7)).front());
    } else if (arg.rfind("--", 0) == 0) {
      rest.push_back(argv[i]);
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty())
    die("usage: model_benchmark LIB [LIB...] --dim=NAME=N[,N...] "
        "[--threads=T[,T...]] [--seed=N] [Google Benchmark flags]");

  std::vector<std::unique_ptr<Library>> libraries;
  for (const std::string &path : paths) {
    auto lib = std::make_unique<Library>();
    lib->path = path;
    lib->label = label(path);
    if (attune_model_open(path.c_str(), &lib->model) != ATTUNE_OK)
      die(attune_status_message());
    benchmark::AddCustomContext("model:" + lib->label, attune_model_name(lib->model));
    // Before any run, the level the kernels will choose (the host's, capped
    // by ATTUNE_CPU and by the variants the library has).
    attune_isa_t isa;
    if (attune_model_isa(lib->model, &isa) == ATTUNE_OK)
      benchmark::AddCustomContext("attune_isa:" + lib->label, attune_isa_name(isa));
    libraries.push_back(std::move(lib));
  }

  // Every combination of the --dim lists, in the order given.
  std::vector<Dims> grid = {{}};
  for (const auto &[name, values] : dimLists) {
    std::vector<Dims> next;
    for (const Dims &dims : grid)
      for (int64_t v : values) {
        Dims d = dims;
        d.emplace_back(name, v);
        next.push_back(d);
      }
    grid = std::move(next);
  }
  for (const auto &lib : libraries)
    for (const Dims &dims : grid)
      for (int64_t threads : threadList) {
        std::string name = "BM_Model/" + lib->label;
        for (const auto &[dim, value] : dims)
          name += "/" + dim + ":" + std::to_string(value);
        name += "/T:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Model, lib.get(), name, dims,
                                     int(threads))
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }

  int restArgc = int(rest.size());
  benchmark::Initialize(&restArgc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(restArgc, rest.data()))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const auto &lib : libraries) {
    attune_isa_t isa;
    if (attune_model_isa(lib->model, &isa) == ATTUNE_OK)
      std::fprintf(stderr, "model_benchmark: %s ran at %s\n", lib->label.c_str(),
                   attune_isa_name(isa));
    attune_model_close(lib->model);
  }
  if (gFailed) {
    std::fprintf(stderr, "model_benchmark: FAILED: a row gave an error or a "
                         "non-finite output (see above); it carries no timing\n");
    return 1;
  }
  return 0;
}
