//===- runtime.cpp - attune runtime C API ---------------------------------===//
//
// Opens a library produced by attune-compile, validates its model descriptor
// and runs it. Everything a caller passes is checked against the descriptor
// before a kernel sees it: a kernel compiled for fixed ranks and bounds would
// otherwise read out of bounds on a wrong shape or an out-of-range token id.
//
// C++ inside, C outside: every entry point catches everything, so no exception
// (std::bad_alloc included) crosses the boundary.
//
//===----------------------------------------------------------------------===//

// The build hides every symbol by default; only the C API is made visible.
#pragma GCC visibility push(default)
#include "attune/runtime.h"
#pragma GCC visibility pop

#include "runtime/cuda/ModelDevice.h"
#include "runtime/src/ExternalWeights.h"
#include "runtime/src/Status.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <vector>

namespace {

/// Largest count of inputs, outputs or symbols a descriptor may declare; far
/// above any real model, low enough that a corrupt count is caught before the
/// runtime walks garbage.
constexpr int32_t kMaxDescriptorCount = 1024;
/// Largest thread count attune_model_set_num_threads accepts.
constexpr int32_t kMaxThreads = 1024;
/// Alignment the ABI promises for the workspace.
constexpr size_t kWorkspaceAlignment = 64;

using attune::runtime::fail;

/// printf into a std::string, for message parts built before the status is
/// known (descriptor problems, shapes).
__attribute__((format(printf, 1, 2))) std::string
formatString(const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string result;
  if (length > 0) {
    result.resize(static_cast<size_t>(length) + 1);
    std::vsnprintf(&result[0], result.size(), format, args);
    result.resize(static_cast<size_t>(length));
  }
  va_end(args);
  return result;
}

/// Runs an entry point's body, turning any escaping exception into a status.
template <typename Body> attune_status_t guarded(Body &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(ATTUNE_INTERNAL, "internal error: %s", e.what());
  } catch (...) {
    return fail(ATTUNE_INTERNAL, "internal error: unknown exception");
  }
}

//===----------------------------------------------------------------------===//
// Dtypes and shapes
//===----------------------------------------------------------------------===//

/// A dtype a caller passed, as an integer: it may hold any value, and
/// loading one outside the enum as attune_dtype_t is undefined.
int32_t rawDtype(const attune_dtype_t &dtype) {
  static_assert(sizeof(dtype) == sizeof(int32_t), "attune_dtype_t is an int");
  int32_t raw;
  std::memcpy(&raw, &dtype, sizeof(raw));
  return raw;
}

int32_t callerDtype(const attune_tensor_t &t) { return rawDtype(t.dtype); }

bool isKnownDtype(int64_t dtype) {
  return dtype >= ATTUNE_DTYPE_F32 && dtype <= ATTUNE_DTYPE_BOOL;
}

/// Integer dtypes that may carry an index_bound.
bool isIndexDtype(int32_t dtype) {
  return dtype == ATTUNE_DTYPE_I32 || dtype == ATTUNE_DTYPE_I64 ||
         dtype == ATTUNE_DTYPE_I8;
}

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case ATTUNE_DTYPE_F32:
  case ATTUNE_DTYPE_I32:
    return 4;
  case ATTUNE_DTYPE_F16:
  case ATTUNE_DTYPE_BF16:
    return 2;
  case ATTUNE_DTYPE_I64:
    return 8;
  case ATTUNE_DTYPE_I8:
  case ATTUNE_DTYPE_BOOL:
    return 1;
  default:
    return 0;
  }
}

/// The short name of a known dtype, or null.
const char *knownDtypeName(int64_t dtype) {
  switch (dtype) {
  case ATTUNE_DTYPE_F32:
    return "f32";
  case ATTUNE_DTYPE_F16:
    return "f16";
  case ATTUNE_DTYPE_BF16:
    return "bf16";
  case ATTUNE_DTYPE_I32:
    return "i32";
  case ATTUNE_DTYPE_I64:
    return "i64";
  case ATTUNE_DTYPE_I8:
    return "i8";
  case ATTUNE_DTYPE_BOOL:
    return "bool";
  default:
    return nullptr;
  }
}

/// The dtype's short name, or "unknown dtype <n>" for a value outside the
/// enum (the caller's struct may hold anything); `buffer` backs the latter.
const char *dtypeName(int64_t dtype, char (&buffer)[32]) {
  if (const char *name = knownDtypeName(dtype))
    return name;
  std::snprintf(buffer, sizeof(buffer), "unknown dtype %" PRId64, dtype);
  return buffer;
}

/// "[2, 3, 4]"; `rank` must already be within 0..ATTUNE_MAX_RANK.
std::string shapeString(const int64_t *shape, int32_t rank) {
  std::string result = "[";
  for (int32_t d = 0; d < rank; ++d) {
    if (d)
      result += ", ";
    result += std::to_string(shape[d]);
  }
  return result + "]";
}

/// Number of elements of a dense buffer of this shape, or -1 if the shape's
/// byte size overflows (a corrupt or hostile shape, not a real tensor).
int64_t elementCount(const int64_t *shape, int32_t rank, size_t elementSize) {
  int64_t count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] < 0 || __builtin_mul_overflow(count, shape[d], &count))
      return -1;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(elementSize), &bytes))
    return -1;
  return count;
}

//===----------------------------------------------------------------------===//
// Descriptor validation
//===----------------------------------------------------------------------===//

/// Checks one input or output description; returns what is wrong, or "".
std::string validateTensor(const attune_model_abi_t &abi,
                           const attune_abi_tensor_t &t, const char *kind,
                           int32_t index, bool isInput) {
  if (!t.name)
    return formatString("%s %d has a NULL name", kind, index);
  char dtypeBuffer[32];
  if (!isKnownDtype(t.dtype))
    return formatString("%s %d ('%s') has %s", kind, index, t.name,
                        dtypeName(t.dtype, dtypeBuffer));
  if (t.rank < 0 || t.rank > ATTUNE_MAX_RANK)
    return formatString("%s %d ('%s') has rank %d, expected 0..%d", kind, index,
                        t.name, t.rank, ATTUNE_MAX_RANK);
  if (t.rank > 0 && !t.dims)
    return formatString("%s %d ('%s') has rank %d but NULL dims", kind, index,
                        t.name, t.rank);
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.dims[d] >= 0)
      continue;
    int64_t symbol = -1 - t.dims[d];
    if (symbol >= abi.num_symbols)
      return formatString("%s %d ('%s') dimension %d refers to symbol %" PRId64
                          ", but the model has %d symbols",
                          kind, index, t.name, d, symbol, abi.num_symbols);
  }
  if (t.index_bound < 0)
    return formatString("%s %d ('%s') has index_bound %" PRId64
                        ", expected >= 0",
                        kind, index, t.name, t.index_bound);
  if (t.index_bound > 0 && !isInput)
    return formatString("%s %d ('%s') has index_bound %" PRId64
                        ", but only inputs can be indices",
                        kind, index, t.name, t.index_bound);
  if (t.index_bound > 0 && !isIndexDtype(t.dtype))
    return formatString("%s %d ('%s') has index_bound %" PRId64
                        ", but its dtype %s is not i8, i32 or i64",
                        kind, index, t.name, t.index_bound,
                        dtypeName(t.dtype, dtypeBuffer));
  return "";
}

std::string validateTensorList(const attune_model_abi_t &abi,
                               const attune_abi_tensor_t *tensors,
                               int32_t count, const char *kind, bool isInput) {
  if (count < 0 || count > kMaxDescriptorCount)
    return formatString("num_%ss is %d, expected 0..%d", kind, count,
                        kMaxDescriptorCount);
  if (count > 0 && !tensors)
    return formatString("%ss is NULL with num_%ss = %d", kind, kind, count);
  for (int32_t i = 0; i < count; ++i) {
    std::string problem = validateTensor(abi, tensors[i], kind, i, isInput);
    if (!problem.empty())
      return problem;
    // Names identify tensors in every message, so they must be unambiguous.
    for (int32_t j = 0; j < i; ++j)
      if (std::strcmp(tensors[i].name, tensors[j].name) == 0)
        return formatString("%ss %d and %d are both named '%s'", kind, j, i,
                            tensors[i].name);
  }
  return "";
}

/// Returns what is wrong with a descriptor, or "" if the runtime can rely on
/// it. Everything later code dereferences or indexes is checked here.
std::string validateDescriptor(const attune_model_abi_t &abi) {
  if (abi.abi_version != ATTUNE_MODEL_ABI_VERSION)
    return formatString("abi_version is %u, expected %u", abi.abi_version,
                        ATTUNE_MODEL_ABI_VERSION);
  if (!abi.name)
    return "name is NULL";

  if (abi.num_symbols < 0 || abi.num_symbols > kMaxDescriptorCount)
    return formatString("num_symbols is %d, expected 0..%d", abi.num_symbols,
                        kMaxDescriptorCount);
  if (abi.num_symbols > 0 && !abi.symbol_names)
    return formatString("symbol_names is NULL with num_symbols = %d",
                        abi.num_symbols);
  if (abi.num_symbols > 0 && !abi.symbol_max)
    return formatString("symbol_max is NULL with num_symbols = %d",
                        abi.num_symbols);
  for (int32_t s = 0; s < abi.num_symbols; ++s) {
    const char *name = abi.symbol_names[s];
    if (!name)
      return formatString("symbol %d has a NULL name", s);
    // A dynamic dimension is at least 1, so a maximum below that could never
    // be met; -1 means unbounded.
    if (abi.symbol_max[s] != -1 && abi.symbol_max[s] < 1)
      return formatString("symbol %d ('%s') has maximum %" PRId64
                          ", expected -1 or at least 1",
                          s, name, abi.symbol_max[s]);
    for (int32_t t = 0; t < s; ++t)
      if (std::strcmp(abi.symbol_names[t], name) == 0)
        return formatString("symbols %d and %d are both named '%s'", t, s,
                            name);
  }

  if (abi.device != ATTUNE_ABI_DEVICE_CPU && abi.device != ATTUNE_ABI_DEVICE_CUDA)
    return formatString("device is %d, expected %d (cpu) or %d (cuda)", abi.device,
                        ATTUNE_ABI_DEVICE_CPU, ATTUNE_ABI_DEVICE_CUDA);
  if (abi.constants_size < 0 || (abi.constants_size > 0 && !abi.constants))
    return formatString("constants_size is %" PRId64 "%s", abi.constants_size,
                        abi.constants_size > 0 ? " with NULL constants" : "");
  if (abi.device == ATTUNE_ABI_DEVICE_CUDA && !abi.release_device)
    return "release_device is NULL in a CUDA library";

  std::string problem =
      validateTensorList(abi, abi.inputs, abi.num_inputs, "input", true);
  if (problem.empty())
    problem =
        validateTensorList(abi, abi.outputs, abi.num_outputs, "output", false);
  if (!problem.empty())
    return problem;

  // Sums: each defines a symbol from symbols bound before it (by an input or
  // an earlier sum), so evaluating them in order never reads an unbound one.
  if (abi.num_symbol_sums < 0 || abi.num_symbol_sums > abi.num_symbols)
    return formatString("num_symbol_sums is %d, expected 0..%d",
                        abi.num_symbol_sums, abi.num_symbols);
  if (abi.num_symbol_sums > 0 && !abi.symbol_sums)
    return formatString("symbol_sums is NULL with num_symbol_sums = %d",
                        abi.num_symbol_sums);
  auto boundByInput = [&](int32_t s) {
    for (int32_t i = 0; i < abi.num_inputs; ++i)
      for (int32_t d = 0; d < abi.inputs[i].rank; ++d)
        if (abi.inputs[i].dims[d] == -1 - static_cast<int64_t>(s))
          return true;
    return false;
  };
  for (int32_t k = 0; k < abi.num_symbol_sums; ++k) {
    const attune_abi_symbol_sum_t &sum = abi.symbol_sums[k];
    if (sum.symbol < 0 || sum.symbol >= abi.num_symbols)
      return formatString("symbol sum %d defines symbol %d, but the model has "
                          "%d symbols",
                          k, sum.symbol, abi.num_symbols);
    if (sum.num_terms < 1 || sum.num_terms > abi.num_symbols || !sum.terms)
      return formatString("symbol sum %d ('%s') has %d terms%s", k,
                          abi.symbol_names[sum.symbol], sum.num_terms,
                          sum.terms ? "" : " and NULL terms");
    if (sum.constant < 0)
      return formatString("symbol sum %d ('%s') has constant %" PRId64
                          ", expected >= 0",
                          k, abi.symbol_names[sum.symbol], sum.constant);
    for (int32_t t = 0; t < sum.num_terms; ++t) {
      int32_t term = sum.terms[t];
      bool earlier = false;
      for (int32_t j = 0; j < k && !earlier && term >= 0; ++j)
        earlier = abi.symbol_sums[j].symbol == term;
      if (term < 0 || term >= abi.num_symbols || term == sum.symbol ||
          !(earlier || boundByInput(term)))
        return formatString("symbol sum %d ('%s') adds symbol %d, which is "
                            "neither an input's nor defined by an earlier sum",
                            k, abi.symbol_names[sum.symbol], term);
    }
  }

  // Symbols take their values from input shapes or sums; one that neither
  // gives could never be bound, and an output or the workspace size would
  // read it.
  for (int32_t s = 0; s < abi.num_symbols; ++s) {
    bool bound = false;
    for (int32_t k = 0; k < abi.num_symbol_sums && !bound; ++k)
      bound = abi.symbol_sums[k].symbol == s;
    for (int32_t i = 0; i < abi.num_inputs && !bound; ++i)
      for (int32_t d = 0; d < abi.inputs[i].rank && !bound; ++d)
        bound = abi.inputs[i].dims[d] == -1 - static_cast<int64_t>(s);
    if (!bound)
      return formatString("symbol %d ('%s') appears in no input's shape and "
                          "no sum defines it, so it can never be bound",
                          s, abi.symbol_names[s]);
  }

  if (!abi.workspace_size)
    return "workspace_size is NULL";
  if (!abi.run)
    return "run is NULL";
  if (!abi.set_num_threads)
    return "set_num_threads is NULL";
  if (!abi.last_error)
    return "last_error is NULL";
  if (!abi.set_isa_cap)
    return "set_isa_cap is NULL";
  if (!abi.dispatched_isa)
    return "dispatched_isa is NULL";
  if (abi.weights_size < 0)
    return formatString("weights_size is %" PRId64 ", expected >= 0",
                        abi.weights_size);
  switch (abi.weights_storage) {
  case ATTUNE_WEIGHTS_EMBEDDED:
    if (abi.weights_size > 0 && !abi.weights)
      return formatString("weights is NULL with weights_size = %" PRId64,
                          abi.weights_size);
    return "";
  case ATTUNE_WEIGHTS_EXTERNAL:
    if (abi.weights)
      return "weights is not NULL with external weights";
    if (abi.weights_size == 0)
      return "weights_size is 0 with external weights";
    // A base name: the library says which file, the runtime (and its
    // caller) where; a path could point anywhere on the machine.
    if (!abi.weights_file || !*abi.weights_file ||
        std::strchr(abi.weights_file, '/') ||
        std::strcmp(abi.weights_file, ".") == 0 ||
        std::strcmp(abi.weights_file, "..") == 0)
      return formatString("weights_file is %s%s%s, expected a file name "
                          "without '/' for external weights",
                          abi.weights_file ? "'" : "",
                          abi.weights_file ? abi.weights_file : "NULL",
                          abi.weights_file ? "'" : "");
    return "";
  default:
    return formatString("weights_storage is %d, expected %d (embedded) or %d "
                        "(external)",
                        abi.weights_storage, ATTUNE_WEIGHTS_EMBEDDED,
                        ATTUNE_WEIGHTS_EXTERNAL);
  }
}

/// dlopen maps a library's segments straight from the file and trusts the
/// program headers: a segment past the end of a truncated file is mapped
/// anyway, and touching it raises SIGBUS instead of returning an error. So
/// before loading, check that the file is an ELF object whose loadable
/// segments lie inside it. Returns what is wrong, or "" when dlopen can be
/// trusted to judge the rest (class, machine, dependencies, symbols).
std::string checkElfFile(const char *path, uint64_t fileSize) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path, "rb"),
                                                        &std::fclose);
  if (!file)
    return formatString("cannot read it: %s", std::strerror(errno));
  unsigned char ident[EI_NIDENT] = {};
  size_t identSize = std::fread(ident, 1, EI_NIDENT, file.get());
  if (identSize < SELFMAG || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return "not an ELF file";
  // Other classes and byte orders are not this machine's; dlopen says so.
  bool native64 = sizeof(void *) == 8 && ident[EI_CLASS] == ELFCLASS64 &&
                  ident[EI_DATA] == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                         ? ELFDATA2LSB
                                         : ELFDATA2MSB);
  if (!native64)
    return "";
  Elf64_Ehdr header;
  if (fileSize < sizeof(header))
    return formatString(
        "the file has %" PRIu64 " bytes, fewer than an ELF header", fileSize);
  if (std::fseek(file.get(), 0, SEEK_SET) != 0 ||
      std::fread(&header, sizeof(header), 1, file.get()) != 1)
    return "cannot read its ELF header";
  if (header.e_phentsize != sizeof(Elf64_Phdr))
    return formatString("program header entries are %u bytes, expected %zu",
                        header.e_phentsize, sizeof(Elf64_Phdr));
  uint64_t tableEnd =
      header.e_phoff + uint64_t(header.e_phnum) * sizeof(Elf64_Phdr);
  if (header.e_phoff > fileSize || tableEnd > fileSize)
    return formatString(
        "the file is truncated: its program headers end at byte "
        "%" PRIu64 ", but it has %" PRIu64 " bytes",
        tableEnd, fileSize);
  if (std::fseek(file.get(), static_cast<long>(header.e_phoff), SEEK_SET) != 0)
    return "cannot read its program headers";
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (std::fread(&segment, sizeof(segment), 1, file.get()) != 1)
      return "cannot read its program headers";
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC)
      continue;
    uint64_t end;
    if (__builtin_add_overflow(segment.p_offset, segment.p_filesz, &end) ||
        end > fileSize)
      return formatString(
          "the file is truncated: segment %u ends at byte %" PRIu64
          ", but the file has %" PRIu64 " bytes",
          i, segment.p_offset + segment.p_filesz, fileSize);
  }
  return "";
}

/// Closes a dlopen handle when it goes out of scope unless released.
struct LibraryCloser {
  void operator()(void *library) const { dlclose(library); }
};
using LibraryHandle = std::unique_ptr<void, LibraryCloser>;

/// What the handles of one loaded library share. dlopen gives every open of
/// the same file the same image, and with it one Halide runtime and thread
/// pool: runs take `pool` shared, set_num_threads (which stops the pool)
/// takes it exclusive.
struct LoadedLibrary {
  std::shared_mutex pool;
};

/// The LoadedLibrary of the library whose descriptor is `abi`, shared by all
/// its open handles; released with the last one.
std::shared_ptr<LoadedLibrary> loadedLibrary(const attune_model_abi_t *abi) {
  static std::mutex mutex;
  static std::map<const attune_model_abi_t *, std::weak_ptr<LoadedLibrary>>
      libraries;
  std::lock_guard<std::mutex> lock(mutex);
  std::weak_ptr<LoadedLibrary> &entry = libraries[abi];
  std::shared_ptr<LoadedLibrary> library = entry.lock();
  if (!library) {
    library = std::make_shared<LoadedLibrary>();
    entry = library;
  }
  // Drop entries of unloaded libraries, whose addresses a later load may
  // reuse.
  for (auto it = libraries.begin(); it != libraries.end();)
    it = it->second.expired() ? libraries.erase(it) : std::next(it);
  return library;
}

} // namespace

//===----------------------------------------------------------------------===//
// The handle
//===----------------------------------------------------------------------===//

struct attune_model {
  LibraryHandle library;
  const attune_model_abi_t *abi = nullptr;
  std::shared_ptr<LoadedLibrary> shared;
  /// The level set_isa_cap said the kernels run at.
  attune_isa_t isa = ATTUNE_ISA_BASELINE;
  /// The weights blob abi->run reads: the descriptor's embedded bytes, or
  /// `externalWeights`, this handle's own mapping of the file.
  const void *weights = nullptr;
  attune::runtime::WeightsMapping externalWeights;
  /// Scratch memory for abi->run, grown on demand and reused across runs so a
  /// steady-state caller never allocates.
  void *workspace = nullptr;
  size_t workspaceCapacity = 0;
  /// Reused per run: symbol values and the raw buffer pointers for abi->run.
  std::vector<int64_t> symbols;
  std::vector<void *> inputData;
  std::vector<void *> outputData;
  /// A CUDA run's input and output sizes in bytes (tensorBytes).
  std::vector<size_t> tensorBytes;
  /// A CUDA library's GPU side, from its first run; declared last so that it
  /// is released while the library is still loaded.
  std::unique_ptr<attune::cuda::ModelDevice> device;

  ~attune_model() { std::free(workspace); }
};

namespace {

/// Where an open looks for external weights: the caller's path (or null)
/// and the path the library was opened with (null for a static model).
struct WeightsSource {
  const char *weightsPath = nullptr;
  const char *libraryPath = nullptr;
};

/// The part of opening that is the same for a dlopen'ed library and a
/// statically linked one: checks the descriptor, maps external weights from
/// `weights`, caps the kernels' dispatch at `cap` (attune_cpu_isa()) and
/// wraps it in a handle that owns `library` (empty for a static model, so
/// close unloads nothing). `origin` names where the descriptor came from in
/// messages.
attune_status_t adoptDescriptor(const attune_model_abi_t *abi,
                                const std::string &origin, attune_isa_t cap,
                                WeightsSource weights, LibraryHandle library,
                                attune_model_t **out_model) {
  std::string problem = validateDescriptor(*abi);
  if (!problem.empty())
    return fail(ATTUNE_INVALID_LIBRARY, "%s has an invalid model descriptor: %s",
                origin.c_str(), problem.c_str());

  // Before the cap, which changes the library's state: a model whose
  // weights cannot be had is refused with nothing changed.
  auto model = std::make_unique<attune_model>();
  if (abi->weights_storage == ATTUNE_WEIGHTS_EXTERNAL) {
    // A static model's origin says nothing about which model it is.
    std::string named = weights.libraryPath
                            ? origin
                            : origin + " '" + std::string(abi->name) + "'";
    if (attune_status_t status = attune::runtime::mapExternalWeights(
            *abi, weights.weightsPath, weights.libraryPath, named,
            model->externalWeights))
      return status;
    model->weights = model->externalWeights.data();
  } else {
    if (weights.weightsPath)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "%s embeds its weights, so it takes no weights file (got "
                  "'%s'); only a library compiled with "
                  "--weights-storage=external does",
                  origin.c_str(), weights.weightsPath);
    model->weights = abi->weights;
  }

  // Each kernel keeps the variant it first chose for as long as the
  // library stays loaded (a static model: as long as the process runs), so
  // a cap below what another handle already ran cannot hold.
  int32_t level = abi->set_isa_cap(cap);
  if (level < 0) {
    int32_t ran = abi->dispatched_isa();
    return fail(ATTUNE_INVALID_ARGUMENT,
                "cannot cap %s at %s: this process has already run its "
                "kernels at %s, and a loaded library keeps the variants it "
                "chose; set ATTUNE_CPU before the library is first opened",
                origin.c_str(), attune_isa_name(cap),
                attune_isa_name(static_cast<attune_isa_t>(ran)));
  }
  if (level > cap)
    return fail(ATTUNE_INVALID_LIBRARY,
                "%s has an invalid model descriptor: set_isa_cap(%d) "
                "returned %d, above the cap",
                origin.c_str(), static_cast<int>(cap), level);

  model->abi = abi;
  model->isa = static_cast<attune_isa_t>(level);
  model->shared = loadedLibrary(abi);
  model->library = std::move(library);
  *out_model = model.release();
  return ATTUNE_OK;
}

/// Reports that input `input` dimension `dim` disagrees with the value an
/// earlier dimension gave symbol `s`. Where that value came from is found
/// again here, on the error path, so that binding keeps no per-run record
/// of it (and a steady-state run allocates nothing).
attune_status_t symbolMismatch(const attune_model_abi_t &abi, int32_t input,
                               int32_t dim, size_t s, int64_t value,
                               int64_t bound) {
  const char *symbol = abi.symbol_names[s];
  const attune_abi_tensor_t &desc = abi.inputs[input];
  // The first dimension that carries the symbol bound it: it is at or before
  // (input, dim), and every later one was checked against it.
  for (int32_t i = 0; i <= input; ++i) {
    const attune_abi_tensor_t &origin = abi.inputs[i];
    for (int32_t d = 0; d < origin.rank; ++d) {
      if (origin.dims[d] != -1 - static_cast<int64_t>(s))
        continue;
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "input '%s' dimension %d (%s) is %" PRId64
                  ", but input '%s' dimension %d gives %s = %" PRId64,
                  desc.name, dim, symbol, value, origin.name, d, symbol,
                  bound);
    }
  }
  assert(false && "a bound symbol has an earlier dimension that bound it");
  return fail(ATTUNE_INTERNAL, "model '%s': symbol %s bound by no input",
              abi.name, symbol);
}

/// Checks the inputs' count, ranks and shapes, and binds every symbol from
/// them into `symbols`. `forRun` adds what only running needs: dtypes and
/// non-NULL data (attune_model_output_shape describes shapes alone).
attune_status_t bindInputs(const attune_model &model,
                           const attune_tensor_t *inputs, int32_t numInputs,
                           bool forRun, std::vector<int64_t> &symbols) {
  const attune_model_abi_t &abi = *model.abi;
  if (numInputs != abi.num_inputs)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': expected %d inputs, got %d", abi.name,
                abi.num_inputs, numInputs);
  if (!inputs && abi.num_inputs > 0)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': inputs is NULL, expected %d inputs", abi.name,
                abi.num_inputs);

  symbols.assign(static_cast<size_t>(abi.num_symbols), -1);
  char gotBuffer[32], expectedBuffer[32];
  for (int32_t i = 0; i < abi.num_inputs; ++i) {
    const attune_abi_tensor_t &desc = abi.inputs[i];
    const attune_tensor_t &t = inputs[i];
    if (t.rank != desc.rank)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "input '%s': expected rank %d, got %d", desc.name, desc.rank,
                  t.rank);
    if (forRun && callerDtype(t) != desc.dtype)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "input '%s': expected dtype %s, got %s", desc.name,
                  dtypeName(desc.dtype, expectedBuffer),
                  dtypeName(callerDtype(t), gotBuffer));
    if (forRun && !t.data)
      return fail(ATTUNE_INVALID_ARGUMENT, "input '%s': data is NULL",
                  desc.name);
    for (int32_t d = 0; d < desc.rank; ++d) {
      int64_t value = t.shape[d];
      if (desc.dims[d] >= 0) {
        if (value != desc.dims[d])
          return fail(ATTUNE_INVALID_ARGUMENT,
                      "input '%s' dimension %d: expected %" PRId64
                      ", got %" PRId64,
                      desc.name, d, desc.dims[d], value);
        continue;
      }
      size_t s = static_cast<size_t>(-1 - desc.dims[d]);
      const char *symbol = abi.symbol_names[s];
      if (value < 1)
        return fail(
            ATTUNE_INVALID_ARGUMENT,
            "input '%s' dimension %d (%s): expected at least 1, got %" PRId64,
            desc.name, d, symbol, value);
      if (symbols[s] >= 0) {
        if (value != symbols[s])
          return symbolMismatch(abi, i, d, s, value, symbols[s]);
        continue;
      }
      if (abi.symbol_max[s] >= 0 && value > abi.symbol_max[s])
        return fail(ATTUNE_INVALID_ARGUMENT,
                    "input '%s' dimension %d: %s = %" PRId64
                    " exceeds the model's maximum %" PRId64,
                    desc.name, d, symbol, value, abi.symbol_max[s]);
      symbols[s] = value;
    }
    if (elementCount(t.shape, t.rank, dtypeSize(desc.dtype)) < 0)
      return fail(ATTUNE_INVALID_ARGUMENT, "input '%s': shape %s is too large",
                  desc.name, shapeString(t.shape, t.rank).c_str());
  }
  // Symbols that are sums of others (validateDescriptor ordered them).
  for (int32_t k = 0; k < abi.num_symbol_sums; ++k) {
    const attune_abi_symbol_sum_t &sum = abi.symbol_sums[k];
    int64_t value = sum.constant;
    std::string terms;
    for (int32_t t = 0; t < sum.num_terms; ++t) {
      int64_t term = symbols[static_cast<size_t>(sum.terms[t])];
      terms += formatString("%s%s (%" PRId64 ")", t ? " + " : "",
                            abi.symbol_names[sum.terms[t]], term);
      if (__builtin_add_overflow(value, term, &value))
        return fail(ATTUNE_INVALID_ARGUMENT, "%s = %s overflows int64",
                    abi.symbol_names[sum.symbol], terms.c_str());
    }
    if (sum.constant)
      terms += formatString(" + %" PRId64, sum.constant);
    int64_t &bound = symbols[static_cast<size_t>(sum.symbol)];
    if (bound >= 0 && bound != value)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "the inputs give %s = %" PRId64 ", but it is the joined "
                  "length %s = %" PRId64,
                  abi.symbol_names[sum.symbol], bound, terms.c_str(), value);
    if (abi.symbol_max[sum.symbol] >= 0 && value > abi.symbol_max[sum.symbol])
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "%s = %s = %" PRId64 " exceeds the model's maximum %" PRId64,
                  abi.symbol_names[sum.symbol], terms.c_str(), value,
                  abi.symbol_max[sum.symbol]);
    bound = value;
  }
  return ATTUNE_OK;
}

/// The shape of output `index` for the symbols bound by bindInputs.
void outputShape(const attune_model &model, int32_t index,
                 const std::vector<int64_t> &symbols, int64_t *shape) {
  const attune_abi_tensor_t &desc = model.abi->outputs[index];
  for (int32_t d = 0; d < desc.rank; ++d)
    shape[d] = desc.dims[d] >= 0
                   ? desc.dims[d]
                   : symbols[static_cast<size_t>(-1 - desc.dims[d])];
}

/// Finds the first element outside [0, bound); returns its flat index or -1.
template <typename T>
int64_t findOutOfRange(const void *data, int64_t count, int64_t bound,
                       int64_t &value) {
  const T *elements = static_cast<const T *>(data);
  for (int64_t e = 0; e < count; ++e) {
    int64_t v = static_cast<int64_t>(elements[e]);
    if (v < 0 || v >= bound) {
      value = v;
      return e;
    }
  }
  return -1;
}

attune_status_t checkIndices(const attune_model &model,
                             const attune_tensor_t *inputs) {
  const attune_model_abi_t &abi = *model.abi;
  for (int32_t i = 0; i < abi.num_inputs; ++i) {
    const attune_abi_tensor_t &desc = abi.inputs[i];
    if (desc.index_bound <= 0)
      continue;
    const attune_tensor_t &t = inputs[i];
    int64_t count = elementCount(t.shape, t.rank, dtypeSize(desc.dtype));
    int64_t value = 0, at = -1;
    switch (desc.dtype) {
    case ATTUNE_DTYPE_I32:
      at = findOutOfRange<int32_t>(t.data, count, desc.index_bound, value);
      break;
    case ATTUNE_DTYPE_I64:
      at = findOutOfRange<int64_t>(t.data, count, desc.index_bound, value);
      break;
    case ATTUNE_DTYPE_I8:
      at = findOutOfRange<int8_t>(t.data, count, desc.index_bound, value);
      break;
    default:
      break; // validateDescriptor allows index_bound on these dtypes only.
    }
    if (at >= 0)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "input '%s' element %" PRId64 " is %" PRId64
                  ", outside [0, %" PRId64 ")",
                  desc.name, at, value, desc.index_bound);
  }
  return ATTUNE_OK;
}

attune_status_t checkOutputs(attune_model &model, attune_tensor_t *outputs,
                             int32_t numOutputs) {
  const attune_model_abi_t &abi = *model.abi;
  if (numOutputs != abi.num_outputs)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': expected %d outputs, got %d", abi.name,
                abi.num_outputs, numOutputs);
  if (!outputs && abi.num_outputs > 0)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': outputs is NULL, expected %d outputs", abi.name,
                abi.num_outputs);
  char gotBuffer[32], expectedBuffer[32];
  int64_t expected[ATTUNE_MAX_RANK];
  for (int32_t o = 0; o < abi.num_outputs; ++o) {
    const attune_abi_tensor_t &desc = abi.outputs[o];
    const attune_tensor_t &t = outputs[o];
    if (callerDtype(t) != desc.dtype)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "output '%s': expected dtype %s, got %s", desc.name,
                  dtypeName(desc.dtype, expectedBuffer),
                  dtypeName(callerDtype(t), gotBuffer));
    if (t.rank != desc.rank)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "output '%s': expected rank %d, got %d", desc.name, desc.rank,
                  t.rank);
    outputShape(model, o, model.symbols, expected);
    if (!std::equal(expected, expected + desc.rank, t.shape))
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "output '%s': expected shape %s, got %s", desc.name,
                  shapeString(expected, desc.rank).c_str(),
                  shapeString(t.shape, t.rank).c_str());
    if (elementCount(expected, desc.rank, dtypeSize(desc.dtype)) < 0)
      return fail(ATTUNE_INVALID_ARGUMENT, "output '%s': shape %s is too large",
                  desc.name, shapeString(expected, desc.rank).c_str());
    if (!t.data)
      return fail(ATTUNE_INVALID_ARGUMENT, "output '%s': data is NULL",
                  desc.name);
  }
  return ATTUNE_OK;
}

/// Fails when an output's bytes overlap an input's or another output's: the
/// kernels write outputs while still reading inputs, and two outputs in one
/// place would overwrite each other. Shapes are already checked.
attune_status_t checkOverlaps(const attune_model &model,
                              const attune_tensor_t *inputs,
                              const attune_tensor_t *outputs) {
  const attune_model_abi_t &abi = *model.abi;
  auto range = [](const attune_tensor_t &t) {
    auto begin = reinterpret_cast<uintptr_t>(t.data);
    size_t elementSize = dtypeSize(callerDtype(t));
    // Validated shapes: the byte size fits (elementCount checked it).
    auto bytes =
        static_cast<uintptr_t>(elementCount(t.shape, t.rank, elementSize)) *
        elementSize;
    return std::make_pair(begin, begin + bytes);
  };
  auto overlap = [](std::pair<uintptr_t, uintptr_t> a,
                    std::pair<uintptr_t, uintptr_t> b) {
    // Empty tensors touch no memory.
    return a.first < a.second && b.first < b.second && a.first < b.second &&
           b.first < a.second;
  };
  for (int32_t o = 0; o < abi.num_outputs; ++o) {
    auto out = range(outputs[o]);
    for (int32_t i = 0; i < abi.num_inputs; ++i)
      if (overlap(out, range(inputs[i])))
        return fail(ATTUNE_INVALID_ARGUMENT,
                    "output '%s' overlaps input '%s': outputs must not share "
                    "memory with inputs",
                    abi.outputs[o].name, abi.inputs[i].name);
    for (int32_t p = 0; p < o; ++p)
      if (overlap(out, range(outputs[p])))
        return fail(ATTUNE_INVALID_ARGUMENT,
                    "outputs '%s' and '%s' overlap: each output needs its own "
                    "memory",
                    abi.outputs[p].name, abi.outputs[o].name);
  }
  return ATTUNE_OK;
}

/// Makes model.workspace hold at least `bytes`, reallocating only to grow.
attune_status_t reserveWorkspace(attune_model &model, int64_t bytes) {
  if (bytes <= 0 || static_cast<uint64_t>(bytes) <= model.workspaceCapacity)
    return ATTUNE_OK;
  // aligned_alloc wants a multiple of the alignment.
  if (static_cast<uint64_t>(bytes) >
      std::numeric_limits<size_t>::max() - kWorkspaceAlignment)
    return fail(ATTUNE_OUT_OF_MEMORY,
                "model '%s': cannot allocate a workspace of %" PRId64 " bytes",
                model.abi->name, bytes);
  size_t size = (static_cast<size_t>(bytes) + kWorkspaceAlignment - 1) /
                kWorkspaceAlignment * kWorkspaceAlignment;
  void *grown = std::aligned_alloc(kWorkspaceAlignment, size);
  if (!grown)
    return fail(ATTUNE_OUT_OF_MEMORY,
                "model '%s': cannot allocate a workspace of %" PRId64 " bytes",
                model.abi->name, bytes);
  std::free(model.workspace);
  model.workspace = grown;
  model.workspaceCapacity = size;
  return ATTUNE_OK;
}

attune_status_t nullModel(const char *function) {
  return fail(ATTUNE_INVALID_ARGUMENT, "%s: model is NULL", function);
}

} // namespace

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

const char *attune_status_message(void) { return attune::runtime::statusMessage(); }

size_t attune_dtype_size(attune_dtype_t dtype) { return dtypeSize(rawDtype(dtype)); }

const char *attune_dtype_name(attune_dtype_t dtype) {
  const char *name = knownDtypeName(rawDtype(dtype));
  return name ? name : "unknown";
}

namespace {

/// attune_model_open and attune_model_open_with_weights; `function` names
/// the entry point in messages about its arguments.
attune_status_t openLibrary(const char *function, const char *path,
                            const char *weightsPath,
                            attune_model_t **out_model) {
  return guarded([&]() -> attune_status_t {
    if (!out_model)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: out_model is NULL", function);
    *out_model = nullptr;
    if (!path)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: path is NULL", function);
    if (!*path)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: path is empty", function);
    if (weightsPath && !*weightsPath)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: weights_path is empty",
                  function);
    // Before anything is loaded: a bad ATTUNE_CPU is the caller's mistake,
    // whatever the file.
    attune_isa_t cap;
    if (attune_status_t status = attune_cpu_isa(&cap))
      return status;

    // Tell a missing file apart from a bad one: dlerror's text is the same
    // kind of string for both.
    struct stat info;
    if (stat(path, &info) != 0) {
      int error = errno;
      if (error == ENOENT || error == ENOTDIR)
        return fail(ATTUNE_NOT_FOUND, "cannot open '%s': no such file", path);
      return fail(ATTUNE_INVALID_LIBRARY, "cannot open '%s': %s", path,
                  std::strerror(error));
    }
    if (S_ISDIR(info.st_mode))
      return fail(ATTUNE_INVALID_LIBRARY,
                  "cannot open '%s': it is a directory, not a library", path);

    std::string elfProblem =
        checkElfFile(path, static_cast<uint64_t>(info.st_size));
    if (!elfProblem.empty())
      return fail(ATTUNE_INVALID_LIBRARY,
                  "cannot load '%s' as a shared library: %s", path,
                  elfProblem.c_str());

    // dlopen searches the library path for a name without a slash; a model is
    // a file the caller names, so resolve such a name in the working directory
    // as stat did.
    std::string loadPath =
        std::strchr(path, '/') ? path : std::string("./") + path;
    dlerror();
    LibraryHandle library(dlopen(loadPath.c_str(), RTLD_NOW | RTLD_LOCAL));
    if (!library) {
      const char *why = dlerror();
      return fail(ATTUNE_INVALID_LIBRARY,
                  "cannot load '%s' as a shared library: %s", path,
                  why ? why : "unknown dlopen error");
    }
    dlerror();
    void *symbol = dlsym(library.get(), ATTUNE_MODEL_ABI_SYMBOL);
    if (!symbol) {
      const char *why = dlerror();
      return fail(ATTUNE_INVALID_LIBRARY,
                  "'%s' is not an attune model library: %s", path,
                  why ? why : "symbol " ATTUNE_MODEL_ABI_SYMBOL " is NULL");
    }
    auto describe = reinterpret_cast<attune_model_abi_fn>(symbol);
    const attune_model_abi_t *abi = describe();
    if (!abi)
      return fail(
          ATTUNE_INVALID_LIBRARY,
          "'%s' has an invalid model descriptor: " ATTUNE_MODEL_ABI_SYMBOL
          "() returned NULL",
          path);
    WeightsSource weights;
    weights.weightsPath = weightsPath;
    weights.libraryPath = path;
    return adoptDescriptor(abi, "'" + std::string(path) + "'", cap, weights,
                           std::move(library), out_model);
  });
}

/// attune_model_open_static and attune_model_open_static_with_weights.
attune_status_t openStatic(const char *function, const attune_model_abi_t *abi,
                           const char *weightsPath,
                           attune_model_t **out_model) {
  return guarded([&]() -> attune_status_t {
    if (!out_model)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: out_model is NULL", function);
    *out_model = nullptr;
    if (!abi)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "%s: abi is NULL (pass the result of the model's "
                  "<name>_attune_model_abi() from its header)",
                  function);
    if (weightsPath && !*weightsPath)
      return fail(ATTUNE_INVALID_ARGUMENT, "%s: weights_path is empty",
                  function);
    // As attune_model_open: a bad ATTUNE_CPU is reported whatever the model.
    attune_isa_t cap;
    if (attune_status_t status = attune_cpu_isa(&cap))
      return status;
    WeightsSource weights;
    weights.weightsPath = weightsPath;
    return adoptDescriptor(abi, "the statically linked model", cap, weights,
                           LibraryHandle(), out_model);
  });
}

} // namespace

attune_status_t attune_model_open(const char *path,
                                  attune_model_t **out_model) {
  return openLibrary("attune_model_open", path, nullptr, out_model);
}

attune_status_t attune_model_open_with_weights(const char *path,
                                               const char *weights_path,
                                               attune_model_t **out_model) {
  return openLibrary("attune_model_open_with_weights", path, weights_path,
                     out_model);
}

attune_status_t attune_model_open_static(const attune_model_abi_t *abi,
                                         attune_model_t **out_model) {
  return openStatic("attune_model_open_static", abi, nullptr, out_model);
}

attune_status_t
attune_model_open_static_with_weights(const attune_model_abi_t *abi,
                                      const char *weights_path,
                                      attune_model_t **out_model) {
  return openStatic("attune_model_open_static_with_weights", abi, weights_path,
                    out_model);
}

void attune_model_close(attune_model_t *model) {
  // A CUDA library's kernels (Halide's modules in the shared context) are
  // released with its last open handle: another handle may be running them.
  if (model && model->device && model->shared.use_count() > 1)
    model->device->keepKernels();
  // The destructor frees memory and dlcloses (nothing for a statically
  // linked model, whose handle owns no library); neither throws.
  delete model;
}

const char *attune_model_name(const attune_model_t *model) {
  if (!model) {
    nullModel("attune_model_name");
    return nullptr;
  }
  return model->abi->name;
}

int32_t attune_model_num_inputs(const attune_model_t *model) {
  if (!model) {
    nullModel("attune_model_num_inputs");
    return -1;
  }
  return model->abi->num_inputs;
}

int32_t attune_model_num_outputs(const attune_model_t *model) {
  if (!model) {
    nullModel("attune_model_num_outputs");
    return -1;
  }
  return model->abi->num_outputs;
}

namespace {
attune_status_t tensorInfo(const attune_model_t *model, int32_t index,
                           attune_tensor_info_t *out_info, bool isInput,
                           const char *function) {
  if (!model)
    return nullModel(function);
  if (!out_info)
    return fail(ATTUNE_INVALID_ARGUMENT, "%s: out_info is NULL", function);
  const attune_model_abi_t &abi = *model->abi;
  int32_t count = isInput ? abi.num_inputs : abi.num_outputs;
  const char *kind = isInput ? "input" : "output";
  if (index < 0 || index >= count)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "model '%s': expected an %s index in [0, %d), got %d", abi.name,
                kind, count, index);
  const attune_abi_tensor_t &desc =
      isInput ? abi.inputs[index] : abi.outputs[index];
  attune_tensor_info_t info;
  std::memset(&info, 0, sizeof(info));
  info.name = desc.name;
  info.dtype = static_cast<attune_dtype_t>(desc.dtype);
  info.rank = desc.rank;
  info.index_bound = desc.index_bound;
  for (int32_t d = 0; d < desc.rank; ++d) {
    if (desc.dims[d] >= 0) {
      info.dims[d] = desc.dims[d];
    } else {
      info.dims[d] = -1;
      info.dim_names[d] = abi.symbol_names[-1 - desc.dims[d]];
    }
  }
  *out_info = info;
  return ATTUNE_OK;
}
} // namespace

attune_status_t attune_model_input_info(const attune_model_t *model,
                                        int32_t index,
                                        attune_tensor_info_t *out_info) {
  return tensorInfo(model, index, out_info, /*isInput=*/true,
                    "attune_model_input_info");
}

attune_status_t attune_model_output_info(const attune_model_t *model,
                                         int32_t index,
                                         attune_tensor_info_t *out_info) {
  return tensorInfo(model, index, out_info, /*isInput=*/false,
                    "attune_model_output_info");
}

attune_status_t attune_model_output_shape(const attune_model_t *model,
                                          const attune_tensor_t *inputs,
                                          int32_t num_inputs, int32_t index,
                                          attune_tensor_t *out_shape) {
  return guarded([&]() -> attune_status_t {
    if (!model)
      return nullModel("attune_model_output_shape");
    if (!out_shape)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "attune_model_output_shape: out_shape is NULL");
    const attune_model_abi_t &abi = *model->abi;
    if (index < 0 || index >= abi.num_outputs)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "model '%s': expected an output index in [0, %d), got %d",
                  abi.name, abi.num_outputs, index);
    // Only shapes are described, so dtypes and data are not checked here.
    std::vector<int64_t> symbols;
    if (attune_status_t status = bindInputs(*model, inputs, num_inputs,
                                            /*forRun=*/false, symbols))
      return status;
    attune_tensor_t shape;
    std::memset(&shape, 0, sizeof(shape));
    shape.dtype = static_cast<attune_dtype_t>(abi.outputs[index].dtype);
    shape.rank = abi.outputs[index].rank;
    outputShape(*model, index, symbols, shape.shape);
    *out_shape = shape;
    return ATTUNE_OK;
  });
}

attune_status_t attune_model_workspace_size(const attune_model_t *model,
                                            const attune_tensor_t *inputs,
                                            int32_t num_inputs, size_t *out_bytes) {
  return guarded([&]() -> attune_status_t {
    if (!model)
      return nullModel("attune_model_workspace_size");
    if (!out_bytes)
      return fail(ATTUNE_INVALID_ARGUMENT,
                  "attune_model_workspace_size: out_bytes is NULL");
    const attune_model_abi_t &abi = *model->abi;
    std::vector<int64_t> symbols;
    if (attune_status_t status = bindInputs(*model, inputs, num_inputs,
                                            /*forRun=*/false, symbols))
      return status;
    int64_t bytes = abi.workspace_size(symbols.data());
    if (bytes < 0)
      return fail(ATTUNE_INTERNAL,
                  "model '%s': workspace_size returned %" PRId64, abi.name,
                  bytes);
    *out_bytes = static_cast<size_t>(bytes);
    return ATTUNE_OK;
  });
}

attune_status_t attune_model_set_num_threads(attune_model_t *model,
                                             int32_t num_threads) {
  return guarded([&]() -> attune_status_t {
    if (!model)
      return nullModel("attune_model_set_num_threads");
    if (num_threads < 0 || num_threads > kMaxThreads)
      return fail(
          ATTUNE_INVALID_ARGUMENT,
          "attune_model_set_num_threads: expected 0..%d threads, got %d",
          kMaxThreads, num_threads);
    // The library restarts its thread pool; no run of it may be in progress.
    std::unique_lock<std::shared_mutex> lock(model->shared->pool);
    model->abi->set_num_threads(num_threads);
    return ATTUNE_OK;
  });
}

namespace {

/// Sets `bytes` to the size of each input, then each output, of a run
/// whose shapes are checked (reusing its storage: a run allocates nothing
/// once the handle has seen its shapes).
void tensorBytes(const attune_model_abi_t &abi, const attune_tensor_t *inputs,
                 const attune_tensor_t *outputs, std::vector<size_t> &bytes) {
  // elementCount counts elements (and checks their bytes fit int64).
  bytes.clear();
  for (int32_t i = 0; i < abi.num_inputs; ++i) {
    size_t size = dtypeSize(abi.inputs[i].dtype);
    bytes.push_back(size * elementCount(inputs[i].shape, inputs[i].rank, size));
  }
  for (int32_t o = 0; o < abi.num_outputs; ++o) {
    size_t size = dtypeSize(abi.outputs[o].dtype);
    bytes.push_back(size * elementCount(outputs[o].shape, outputs[o].rank, size));
  }
}

/// attune_model_run and attune_model_run_device: `onDevice` says where the
/// caller's buffers are.
attune_status_t runModel(attune_model_t *model, const char *function,
                         const attune_tensor_t *inputs, int32_t num_inputs,
                         attune_tensor_t *outputs, int32_t num_outputs, bool onDevice) {
  if (!model)
    return nullModel(function);
  const attune_model_abi_t &abi = *model->abi;
  const bool cuda = abi.device == ATTUNE_ABI_DEVICE_CUDA;
  if (onDevice && !cuda)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "%s: model '%s' runs on the CPU, so it takes host buffers "
                "(attune_model_run)",
                function, abi.name);
  if (attune_status_t status = bindInputs(
          *model, inputs, num_inputs, /*forRun=*/true, model->symbols))
    return status;
  if (attune_status_t status = checkOutputs(*model, outputs, num_outputs))
    return status;
  if (attune_status_t status = checkOverlaps(*model, inputs, outputs))
    return status;
  if (!onDevice)
    if (attune_status_t status = checkIndices(*model, inputs))
      return status;
  if (cuda && !model->device)
    if (attune_status_t status =
            attune::cuda::ModelDevice::open(abi, model->weights, &model->device))
      return status;
  if (onDevice) {
    // Token ids are checked on the host, as for a CPU model: the kernels
    // clamp them rather than fail.
    std::vector<attune_tensor_t> copies(inputs, inputs + abi.num_inputs);
    std::vector<std::vector<char>> hostCopies(static_cast<size_t>(abi.num_inputs));
    tensorBytes(abi, inputs, outputs, model->tensorBytes);
    for (int32_t i = 0; i < abi.num_inputs; ++i) {
      if (abi.inputs[i].index_bound <= 0)
        continue;
      const size_t bytes = model->tensorBytes[i];
      hostCopies[i].resize(bytes);
      if (attune_status_t status = model->device->device().download(
              hostCopies[i].data(), reinterpret_cast<uintptr_t>(inputs[i].data), bytes))
        return status;
      copies[i].data = hostCopies[i].data();
    }
    if (attune_status_t status = checkIndices(*model, copies.data()))
      return status;
  }

  int64_t bytes = abi.workspace_size(model->symbols.data());
  if (bytes < 0)
    return fail(ATTUNE_INTERNAL,
                "model '%s': workspace_size returned %" PRId64, abi.name,
                bytes);
  if (cuda) {
    if (!onDevice) {
      tensorBytes(abi, inputs, outputs, model->tensorBytes);
      return model->device->runHost(model->symbols.data(), bytes, inputs, outputs,
                                    model->tensorBytes);
    }
  } else if (attune_status_t status = reserveWorkspace(*model, bytes)) {
    return status;
  }

  model->inputData.resize(static_cast<size_t>(abi.num_inputs));
  for (int32_t i = 0; i < abi.num_inputs; ++i)
    model->inputData[i] = inputs[i].data;
  model->outputData.resize(static_cast<size_t>(abi.num_outputs));
  for (int32_t o = 0; o < abi.num_outputs; ++o)
    model->outputData[o] = outputs[o].data;
  if (cuda)
    return model->device->run(model->symbols.data(), bytes, model->inputData.data(),
                              model->outputData.data());

  int32_t code;
  {
    std::shared_lock<std::shared_mutex> lock(model->shared->pool);
    code = abi.run(model->inputData.data(), model->outputData.data(),
                   model->symbols.data(), model->workspace, model->weights,
                   /*device=*/nullptr);
  }
  return code == 0 ? ATTUNE_OK : attune::runtime::kernelFailure(abi, code);
}

} // namespace

attune_status_t attune_model_run(attune_model_t *model,
                                 const attune_tensor_t *inputs,
                                 int32_t num_inputs, attune_tensor_t *outputs,
                                 int32_t num_outputs) {
  return guarded([&]() -> attune_status_t {
    return runModel(model, "attune_model_run", inputs, num_inputs, outputs, num_outputs,
                    /*onDevice=*/false);
  });
}

attune_status_t attune_model_run_device(attune_model_t *model,
                                        const attune_tensor_t *inputs,
                                        int32_t num_inputs,
                                        attune_tensor_t *outputs,
                                        int32_t num_outputs) {
  return guarded([&]() -> attune_status_t {
    return runModel(model, "attune_model_run_device", inputs, num_inputs, outputs,
                    num_outputs, /*onDevice=*/true);
  });
}

attune_device_t attune_model_device(const attune_model_t *model) {
  return model && model->abi->device == ATTUNE_ABI_DEVICE_CUDA ? ATTUNE_DEVICE_CUDA
                                                               : ATTUNE_DEVICE_CPU;
}

const char *attune_model_source_ir(const attune_model_t *model) {
  if (!model) {
    nullModel("attune_model_source_ir");
    return nullptr;
  }
  return model->abi->source_ir;
}

attune_status_t attune_model_weights(const attune_model_t *model,
                                     const void **out_data, size_t *out_size) {
  if (out_data)
    *out_data = nullptr;
  if (out_size)
    *out_size = 0;
  if (!model)
    return nullModel("attune_model_weights");
  if (!out_data || !out_size)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "attune_model_weights: out_data and out_size must not be NULL");
  *out_data = model->weights;
  *out_size = static_cast<size_t>(model->abi->weights_size);
  return ATTUNE_OK;
}

attune_status_t attune_model_isa(const attune_model_t *model,
                                 attune_isa_t *out_isa) {
  if (!model)
    return nullModel("attune_model_isa");
  if (!out_isa)
    return fail(ATTUNE_INVALID_ARGUMENT, "attune_model_isa: out_isa is NULL");
  // What the dispatch recorded once kernels ran; the level set_isa_cap
  // promised before. Both only ever rise, so this is safe to race with runs.
  int32_t ran = model->abi->dispatched_isa();
  *out_isa = ran >= 0 ? static_cast<attune_isa_t>(ran) : model->isa;
  return ATTUNE_OK;
}
