//===- ModelDevice.cpp - a CUDA model's memory and run on its GPU ---------===//

#include "runtime/cuda/ModelDevice.h"

#include "runtime/cuda/FusedAttention.h"
#include "runtime/src/Status.h"

// Only for halide_buffer_t, the C struct the generated code passes to
// matmul(); nothing of the Halide runtime is called from here.
#include "HalideRuntime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace attune::cuda {

using runtime::fail;
using namespace api;

attune_status_t ModelDevice::open(const attune_model_abi_t &abi, const void *weights,
                                  std::unique_ptr<ModelDevice> *out) noexcept {
  std::unique_ptr<ModelDevice> model(new (std::nothrow) ModelDevice(abi));
  if (!model)
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  if (attune_status_t status = Device::open(0, &model->device_))
    return status;
  if (attune_status_t status = CublasLt::open(*model->device_, &model->lt_))
    return status;
  if (const char *profile = std::getenv("ATTUNE_CUDA_PROFILE");
      profile && std::string(profile) == "1")
    model->profile_.reset(new (std::nothrow) Profile);
  size_t bytes = static_cast<size_t>(abi.weights_size);
  if (attune_status_t status = model->reserve(model->weights_, bytes))
    return status;
  if (bytes)
    if (attune_status_t status = model->device_->upload(model->weights_.pointer, weights, bytes))
      return status;
  *out = std::move(model);
  return ATTUNE_OK;
}

ModelDevice::~ModelDevice() {
  if (!device_)
    return;
  // The kernels' modules and cached allocations live in the context, which
  // outlives this handle (it is the device's primary context).
  device_->synchronize();
  if (profile_) {
    printProfile();
    Device::Scope scope(*device_);
    for (CUevent event : profile_->events)
      device_->driver().cuEventDestroy(event);
  }
  if (releaseKernels_)
    abi_.release_device(device_->context());
  plans_.clear();
  modules_.clear();
  for (auto &[host, buffer] : constantArrays_)
    device_->free(buffer.pointer);
  device_->free(attentionSplits_.pointer);
  for (Buffer *buffer : {&weights_, &workspace_})
    device_->free(buffer->pointer);
  for (Buffer &buffer : staging_)
    device_->free(buffer.pointer);
}

attune_status_t ModelDevice::reserve(Buffer &buffer, size_t bytes) noexcept {
  if (bytes <= buffer.capacity)
    return ATTUNE_OK;
  CUdeviceptr grown = 0;
  if (attune_status_t status = device_->alloc(bytes, &grown))
    return status;
  device_->free(buffer.pointer);
  buffer.pointer = grown;
  buffer.capacity = bytes;
  return ATTUNE_OK;
}

attune_status_t ModelDevice::run(const int64_t *symbols, int64_t workspaceBytes,
                                 void *const *inputs, void *const *outputs) noexcept {
  size_t bytes = static_cast<size_t>(workspaceBytes);
  if (bytes > workspace_.capacity)
    constantsLoaded_ = false;
  if (attune_status_t status = reserve(workspace_, bytes))
    return status;
  // Symbols the generated run() refuses (their sizes overflow) get a
  // workspace size of 0, and run() fails before reading anything.
  if (!constantsLoaded_ && abi_.constants_size > 0 &&
      workspace_.capacity >= static_cast<size_t>(abi_.constants_size)) {
    if (attune_status_t status = device_->upload(workspace_.pointer, abi_.constants,
                                                 static_cast<size_t>(abi_.constants_size)))
      return status;
    constantsLoaded_ = true;
  }

  attune_abi_device_t binding;
  binding.context = device_->context();
  binding.stream = device_->stream();
  binding.matmul = &ModelDevice::matmul;
  binding.user = this;
  binding.mark = &ModelDevice::mark;
  binding.attention = &ModelDevice::attention;
  matmulStatus_ = ATTUNE_OK;
  if (profile_)
    profile_->names.clear();
  auto address = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  int32_t code = abi_.run(inputs, outputs, symbols, address(workspace_.pointer),
                          address(weights_.pointer), &binding);
  if (code == ATTUNE_ABI_DEVICE_CALL_FAILED && matmulStatus_ != ATTUNE_OK) {
    // The matmul recorded its message on this thread; wait for what was
    // queued before it, keeping that message.
    attune_status_t status = matmulStatus_;
    device_->synchronize();
    return status;
  }
  if (code != 0) {
    device_->synchronize();
    return runtime::kernelFailure(abi_, code);
  }
  if (attune_status_t status = device_->synchronize())
    return status;
  return profile_ ? collectProfile() : ATTUNE_OK;
}

void ModelDevice::mark(void *user, const char *name) {
  auto *self = static_cast<ModelDevice *>(user);
  Profile *profile = self->profile_.get();
  if (!profile)
    return;
  const Driver &driver = self->device_->driver();
  Device::Scope scope(*self->device_);
  size_t index = profile->names.size();
  try {
    if (index == profile->events.size()) {
      CUevent event = nullptr;
      if (driver.cuEventCreate(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        return;
      profile->events.push_back(event);
    }
    profile->names.push_back(name);
  } catch (const std::bad_alloc &) {
    return; // a profile with a gap, not a failed run
  }
  driver.cuEventRecord(profile->events[index], self->device_->stream());
}

attune_status_t ModelDevice::collectProfile() noexcept {
  Profile &profile = *profile_;
  const Driver &driver = device_->driver();
  Device::Scope scope(*device_);
  try {
    for (size_t i = 0; i + 1 < profile.names.size(); ++i) {
      float ms = 0;
      if (attune_status_t status = driver.check(
              driver.cuEventElapsedTime(&ms, profile.events[i], profile.events[i + 1]),
              "cuEventElapsedTime"))
        return status;
      auto &[total, calls] = profile.totals[profile.names[i] ? profile.names[i] : "?"];
      total += ms;
      ++calls;
    }
  } catch (const std::bad_alloc &) {
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
  ++profile.runs;
  return ATTUNE_OK;
}

void ModelDevice::printProfile() const {
  const Profile &profile = *profile_;
  if (profile.runs == 0)
    return;
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> rows(profile.totals.begin(),
                                                                      profile.totals.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.first > b.second.first; });
  double all = 0;
  for (const auto &row : rows)
    all += row.second.first;
  std::fprintf(stderr,
               "attune: GPU time of model '%s' by kernel over %lld runs (CUDA events between "
               "calls, ATTUNE_CUDA_PROFILE=1)\n%12s %7s %10s  %s\n",
               abi_.name, static_cast<long long>(profile.runs), "ms/run", "share", "calls/run",
               "kernel");
  for (const auto &[name, time] : rows)
    std::fprintf(stderr, "%12.4f %6.1f%% %10.1f  %s\n", time.first / profile.runs,
                 all > 0 ? 100 * time.first / all : 0.0,
                 static_cast<double>(time.second) / profile.runs, name.c_str());
  std::fprintf(stderr, "%12.4f %6.1f%% %10s  total\n", all / profile.runs, 100.0, "");
}

attune_status_t ModelDevice::runHost(const int64_t *symbols, int64_t workspaceBytes,
                                     const attune_tensor_t *inputs, attune_tensor_t *outputs,
                                     const std::vector<size_t> &bytes) noexcept {
  const size_t numInputs = static_cast<size_t>(abi_.num_inputs);
  const size_t count = numInputs + static_cast<size_t>(abi_.num_outputs);
  try {
    staging_.resize(count);
    addresses_.resize(count);
  } catch (const std::bad_alloc &) {
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
  void **addresses = addresses_.data();
  for (size_t i = 0; i < count; ++i) {
    // A zero-byte tensor still needs an address distinct from the others.
    if (attune_status_t status = reserve(staging_[i], bytes[i] ? bytes[i] : 64))
      return status;
    addresses[i] = reinterpret_cast<void *>(staging_[i].pointer);
    if (i < numInputs && bytes[i])
      if (attune_status_t status = device_->upload(staging_[i].pointer, inputs[i].data, bytes[i]))
        return status;
  }
  if (attune_status_t status =
          run(symbols, workspaceBytes, addresses, addresses + numInputs))
    return status;
  for (size_t o = 0; o + numInputs < count; ++o)
    if (size_t size = bytes[numInputs + o])
      if (attune_status_t status =
              device_->download(outputs[o].data, staging_[numInputs + o].pointer, size))
        return status;
  return ATTUNE_OK;
}

int32_t ModelDevice::matmul(void *user, const attune_abi_matmul_t *op,
                            halide_buffer_t *const *args, int32_t numArgs) {
  auto *self = static_cast<ModelDevice *>(user);
  attune_status_t status = self->runMatmul(*op, args, numArgs);
  if (status == ATTUNE_OK)
    return 0;
  self->matmulStatus_ = status;
  return 1;
}

namespace {

/// The cuBLASLt type of a halide_type_t, or false for one it has none for.
bool matmulType(const halide_type_t &type, MatmulType &out) {
  if (type.code == halide_type_float && type.bits == 32)
    out = MatmulType::F32;
  else if (type.code == halide_type_float && type.bits == 16)
    out = MatmulType::F16;
  else if (type.code == halide_type_bfloat && type.bits == 16)
    out = MatmulType::BF16;
  else
    return false;
  return true;
}

Epilogue epilogueOf(const attune_abi_matmul_t &op, bool &known) {
  known = true;
  switch (op.activation) {
  case ATTUNE_ABI_ACTIVATION_NONE:
    return op.has_bias ? Epilogue::Bias : Epilogue::None;
  case ATTUNE_ABI_ACTIVATION_RELU:
    return op.has_bias ? Epilogue::BiasRelu : Epilogue::Relu;
  case ATTUNE_ABI_ACTIVATION_GELU_TANH:
    return op.has_bias ? Epilogue::BiasGelu : Epilogue::Gelu;
  }
  known = false;
  return Epilogue::None;
}

} // namespace

attune_status_t ModelDevice::runMatmul(const attune_abi_matmul_t &op, halide_buffer_t *const *args,
                                       int32_t numArgs) noexcept {
  const bool linear = op.kind == ATTUNE_ABI_MATMUL_LINEAR;
  const int rank = linear ? 2 : 3;
  const int32_t expectedArgs = linear && op.has_bias ? 4 : 3;
  if ((!linear && op.kind != ATTUNE_ABI_MATMUL_BATCHED) || numArgs != expectedArgs ||
      (linear && (op.transpose_a || op.transpose_b)) || (!linear && op.has_bias))
    return fail(ATTUNE_INVALID_LIBRARY,
                "model '%s' asked for a matmul of kind %d with %d operands (bias %d, "
                "transposes %d/%d), which the runtime does not have",
                abi_.name, op.kind, numArgs, op.has_bias, op.transpose_a, op.transpose_b);
  const halide_buffer_t &a = *args[0], &b = *args[1], &y = *args[numArgs - 1];
  for (const halide_buffer_t *buffer : {&a, &b, &y})
    if (buffer->dimensions != rank || buffer->dim[0].stride != 1)
      return fail(ATTUNE_INVALID_LIBRARY,
                  "model '%s': a matmul operand has %d dimensions and inner stride %d; "
                  "expected %d and 1",
                  abi_.name, buffer->dimensions, buffer->dimensions ? buffer->dim[0].stride : 0,
                  rank);
  LinearShape shape;
  bool knownEpilogue;
  shape.epilogue = epilogueOf(op, knownEpilogue);
  if (!knownEpilogue || !matmulType(y.type, shape.type))
    return fail(ATTUNE_INVALID_LIBRARY,
                "model '%s' asked for a matmul with activation %d on type code %d bits %d, which "
                "cuBLASLt is not given here",
                abi_.name, op.activation, y.type.code, y.type.bits);
  if (op.products != ATTUNE_ABI_PRODUCTS_F32 && op.products != ATTUNE_ABI_PRODUCTS_BF16 &&
      op.products != ATTUNE_ABI_PRODUCTS_F16)
    return fail(ATTUNE_INVALID_LIBRARY, "model '%s' asked for products of kind %d", abi_.name,
                op.products);
  shape.bf16Products = op.products == ATTUNE_ABI_PRODUCTS_BF16;
  shape.f16Products = op.products == ATTUNE_ABI_PRODUCTS_F16;
  shape.inputTransposed = op.transpose_a;
  shape.weightTransposed = op.transpose_b;
  shape.m = y.dim[1].extent;
  shape.n = y.dim[0].extent;
  shape.k = a.dim[op.transpose_a ? 1 : 0].extent;
  shape.ldX = a.dim[1].stride;
  shape.ldW = b.dim[1].stride;
  shape.ldY = y.dim[1].stride;
  if (!linear) {
    shape.batch = y.dim[2].extent;
    // An operand of one matrix is shared whatever its stride says.
    auto batchStride = [](const halide_buffer_t &t) -> int64_t {
      return t.dim[2].extent == 1 ? 0 : t.dim[2].stride;
    };
    shape.batchStrideX = batchStride(a);
    shape.batchStrideW = batchStride(b);
    shape.batchStrideY = y.dim[2].stride;
  }
  // The plan's algorithm must suit pointers that start inside an
  // allocation (a slice, a workspace slot): 64 bytes or less.
  const CUdeviceptr bias = expectedArgs == 4 ? args[2]->device : 0;
  CUdeviceptr bits = a.device | b.device | y.device | bias | 256;
  shape.alignment = static_cast<uint32_t>(bits & (~bits + 1));
  std::vector<int64_t> key;
  try {
    key = {op.kind,     op.transpose_a, op.transpose_b, op.has_bias,     op.activation,
           op.products,
           y.type.code, y.type.bits,    shape.m,        shape.n,         shape.k,
           shape.ldX,   shape.ldW,      shape.ldY,      shape.batch,     shape.batchStrideX,
           shape.batchStrideW, shape.batchStrideY, shape.alignment};
    auto found = plans_.find(key);
    if (found == plans_.end()) {
      std::unique_ptr<LinearPlan> plan;
      if (attune_status_t status = LinearPlan::create(*lt_, shape, &plan))
        return status;
      found = plans_.emplace(std::move(key), std::move(plan)).first;
    }
    return found->second->run(a.device, b.device, bias, y.device);
  } catch (const std::bad_alloc &) {
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
}

int32_t ModelDevice::attention(void *user, const attune_abi_attention_t *op,
                               halide_buffer_t *const *args, int32_t numArgs) {
  auto *self = static_cast<ModelDevice *>(user);
  attune_status_t status = self->runAttention(*op, args, numArgs);
  if (status == ATTUNE_OK)
    return 0;
  self->matmulStatus_ = status;
  return 1;
}

namespace {

/// The storage type of an attention operand as the kernels read it, f32,
/// bf16 or f16: its type's code and bits in one number (equal for the same
/// type only), or 0 for a type the kernels do not read.
int attentionStorage(const halide_type_t &type) {
  const bool read = type.lanes == 1 &&
                    ((type.code == halide_type_float && (type.bits == 32 || type.bits == 16)) ||
                     (type.code == halide_type_bfloat && type.bits == 16));
  return read ? type.code << 8 | type.bits : 0;
}

} // namespace

attune_status_t ModelDevice::constantBytes(const void *host, size_t size,
                                           const void **device) {
  Buffer &buffer = constantArrays_[host];
  if (!buffer.pointer) {
    if (attune_status_t status = reserve(buffer, size))
      return status;
    if (attune_status_t status = device_->upload(buffer.pointer, host, size))
      return status;
  }
  *device = reinterpret_cast<const void *>(buffer.pointer);
  return ATTUNE_OK;
}

attune_status_t ModelDevice::runAttention(const attune_abi_attention_t &op,
                                          halide_buffer_t *const *args,
                                          int32_t numArgs) noexcept {
  const int32_t expectedArgs =
      4 + (op.has_mask != 0) + (op.has_key_padding != 0) + (op.has_bias_table != 0);
  if (numArgs != expectedArgs || !op.image || !op.kernel || !op.combine ||
      (op.has_bias_table && (!op.bias_rows || op.bias_row_count < 1)))
    return fail(ATTUNE_INVALID_LIBRARY,
                "model '%s' asked for an attention with %d operands (mask %d, key padding %d, "
                "bias table %d) or without its kernels or bias rows, which the runtime does not "
                "run",
                abi_.name, numArgs, op.has_mask, op.has_key_padding, op.has_bias_table);
  const halide_buffer_t &q = *args[0], &k = *args[1], &v = *args[2], &y = *args[numArgs - 1];
  const int storage = attentionStorage(y.type);
  const halide_buffer_t *tensors[] = {&q, &k, &v, &y};
  const int64_t innerSizes[] = {op.head_dim, op.head_dim, op.value_dim, op.value_dim};
  for (int i = 0; i < 4; ++i) {
    const halide_buffer_t &t = *tensors[i];
    if (t.dimensions != 4 || t.dim[0].stride != 1 || t.dim[0].extent != innerSizes[i] ||
        attentionStorage(t.type) != storage || storage == 0)
      return fail(ATTUNE_INVALID_LIBRARY,
                  "model '%s': attention operand %d has %d dimensions, inner stride %d, head "
                  "size %d and type code %d bits %d; expected 4, 1, %lld and f32, bf16 or f16 "
                  "like the result",
                  abi_.name, i, t.dimensions, t.dimensions ? t.dim[0].stride : 0,
                  t.dimensions ? t.dim[0].extent : 0, t.type.code, t.type.bits,
                  static_cast<long long>(innerSizes[i]));
  }
  gpu::AttentionParams p{};
  auto address = [](const halide_buffer_t &t) { return reinterpret_cast<void *>(t.device); };
  p.query = address(q), p.key = address(k), p.value = address(v), p.result = address(y);
  // Halide's dimensions are innermost first: [D, S, H, B].
  auto strides = [](const halide_buffer_t &t, gpu::i64 out[3]) {
    out[0] = t.dim[3].stride, out[1] = t.dim[2].stride, out[2] = t.dim[1].stride;
  };
  strides(q, p.queryStride);
  strides(k, p.keyStride);
  strides(v, p.valueStride);
  strides(y, p.resultStride);
  p.batch = q.dim[3].extent, p.heads = q.dim[2].extent, p.kvHeads = k.dim[2].extent;
  p.querySeq = q.dim[1].extent, p.keySeq = k.dim[1].extent;
  p.scale = static_cast<float>(op.scale);
  p.softcap = static_cast<float>(op.softcap);
  p.deltaLow = op.delta_low, p.deltaHigh = op.delta_high;
  int next = 3;
  if (op.has_mask) {
    const halide_buffer_t &mask = *args[next++];
    if (mask.dimensions != 4 || attentionStorage(mask.type) != storage)
      return fail(ATTUNE_INVALID_LIBRARY,
                  "model '%s': an attention mask is not 4-d of the result's type", abi_.name);
    p.mask = address(mask);
    for (int d = 0; d < 4; ++d)
      p.maskStride[3 - d] = mask.dim[d].stride;
  }
  if (op.has_key_padding) {
    const halide_buffer_t &padding = *args[next++];
    const int bits = padding.type.bits;
    if (padding.dimensions != 2 || padding.dim[0].stride != 1 ||
        (bits != 1 && bits != 8 && bits != 32 && bits != 64) ||
        (padding.type.code != halide_type_int && padding.type.code != halide_type_uint))
      return fail(ATTUNE_INVALID_LIBRARY,
                  "model '%s': an attention key padding mask is not [B, Sk] of bool, i8, i32 "
                  "or i64",
                  abi_.name);
    p.keyPadding = address(padding);
    p.keyPaddingStride = padding.dim[1].stride;
    p.keyPaddingBytes = bits == 1 ? 1 : bits / 8;
  }
  if (op.has_bias_table) {
    // [H, R] innermost first (T5's [num_buckets, H] row-major), in q's type.
    const halide_buffer_t &table = *args[next++];
    if (table.dimensions != 2 || attentionStorage(table.type) != storage ||
        table.dim[0].extent != p.heads)
      return fail(ATTUNE_INVALID_LIBRARY,
                  "model '%s': an attention bias table is not [%d heads, rows] in q's type",
                  abi_.name, p.heads);
    for (int32_t x = 0; x < op.bias_row_count; ++x)
      if (op.bias_rows[x] < 0 || op.bias_rows[x] >= table.dim[1].extent)
        return fail(ATTUNE_INVALID_LIBRARY,
                    "model '%s': an attention bias row is %d, outside its table's %d rows",
                    abi_.name, op.bias_rows[x], table.dim[1].extent);
    p.biasTable = address(table);
    p.biasHeadStride = table.dim[0].stride, p.biasRowStride = table.dim[1].stride;
    p.biasRowLow = op.bias_row_low, p.biasRowCount = op.bias_row_count;
  }
  try {
    if (op.rotary_dims > 0) {
      if (!op.rope_theta)
        return fail(ATTUNE_INVALID_LIBRARY, "model '%s': an attention with RoPE has no angles",
                    abi_.name);
      if (attune_status_t status = constantArray(op.rope_theta, op.rotary_dims / 2, &p.ropeTheta))
        return status;
      p.ropeOffset = static_cast<int>(op.rope_offset);
    }
    if (op.has_bias_table) {
      static_assert(sizeof(int) == sizeof(int32_t), "the kernel reads the rows as int");
      if (attune_status_t status = constantArray(reinterpret_cast<const int *>(op.bias_rows),
                                                 op.bias_row_count, &p.biasRows))
        return status;
    }
    if (op.bias_slopes) {
      // One slope per query head.
      if (attune_status_t status = constantArray(op.bias_slopes, p.heads, &p.biasSlopes))
        return status;
      p.biasAbsolute = op.bias_absolute;
    }
    std::unique_ptr<CudaModule> &module = modules_[op.image];
    if (!module)
      if (attune_status_t status = CudaModule::load(*device_, op.image, &module))
        return status;
    // Query heads sharing a key/value head with few queries (GQA decoding)
    // share its blocks, which then read its K and V once.
    p.packedGroup = attentionPackedGroup(p);
    // Few blocks of queries against many keys (decoding): split the keys.
    p.keySplits = attentionKeySplits(p, device_->multiprocessors());
    if (p.keySplits > 1) {
      p.splitKeys = attentionSplitKeys(p);
      // partialResult's rows of value_dim floats, then partialStats' of 2.
      size_t floats = attentionPartialFloats(p, op.value_dim);
      if (attune_status_t status = reserve(attentionSplits_, floats * sizeof(float)))
        return status;
      p.partialResult = reinterpret_cast<float *>(attentionSplits_.pointer);
      p.partialStats = p.partialResult + floats / (op.value_dim + 2) * op.value_dim;
    }
  } catch (const std::bad_alloc &) {
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
  return launchAttention(*device_, *modules_[op.image], op.kernel, op.combine, op.head_dim,
                         op.value_dim, p);
}

} // namespace attune::cuda
