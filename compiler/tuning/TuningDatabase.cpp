//===- TuningDatabase.cpp - measured schedule parameters ------------------===//

#include "compiler/tuning/TuningDatabase.h"

#include "compiler/frontends/ScalarTypes.h"

#include "attune/runtime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace attune::tuning {

using codegen::BinaryKind;
using codegen::KernelKind;
using codegen::KernelSpec;
using codegen::UnaryKind;

namespace {

// Spelled here rather than borrowed from symbolName(): the key is a file
// format, so it must not change when the kernels' C names do.
const char *kindKey(KernelKind kind) {
  switch (kind) {
  case KernelKind::Embedding: return "embedding";
  case KernelKind::LearnedPosition: return "learned_position";
  case KernelKind::Sinusoidal: return "sinusoidal";
  case KernelKind::LayerNorm: return "layer_norm";
  case KernelKind::RmsNorm: return "rms_norm";
  case KernelKind::Linear: return "linear";
  case KernelKind::Matmul: return "matmul";
  case KernelKind::Softmax: return "softmax";
  case KernelKind::Binary: return "binary";
  case KernelKind::Where: return "where";
  case KernelKind::Unary: return "unary";
  case KernelKind::CausalMask: return "causal_mask";
  case KernelKind::Copy: return "copy";
  case KernelKind::RepeatInterleave: return "repeat_interleave";
  case KernelKind::Attention: return "attention";
  case KernelKind::MultiplicativePosition: return "multiplicative_position";
  case KernelKind::RecursivePosition: return "recursive_position";
  case KernelKind::ComplexEmbedding: return "complex_embedding";
  case KernelKind::ComplexLinear: return "complex_linear";
  case KernelKind::ScoreBias: return "score_bias";
  case KernelKind::ScoreValues: return "score_values";
  case KernelKind::Rope: return "rope";
  case KernelKind::Arange: return "arange";
  case KernelKind::Compare: return "compare";
  case KernelKind::Cast: return "cast";
  case KernelKind::GatherElements: return "gather_elements";
  }
  return "invalid";
}

const char *binaryKey(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Add: return "add";
  case BinaryKind::Sub: return "sub";
  case BinaryKind::Mul: return "mul";
  case BinaryKind::Div: return "div";
  case BinaryKind::Minimum: return "minimum";
  case BinaryKind::Maximum: return "maximum";
  }
  return "invalid";
}

const char *unaryKey(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Relu: return "relu";
  case UnaryKind::GeluErf: return "gelu_erf";
  case UnaryKind::GeluTanh: return "gelu_tanh";
  case UnaryKind::Silu: return "silu";
  case UnaryKind::Neg: return "neg";
  case UnaryKind::Abs: return "abs";
  case UnaryKind::Cos: return "cos";
  case UnaryKind::Sin: return "sin";
  case UnaryKind::Tanh: return "tanh";
  case UnaryKind::Log: return "log";
  case UnaryKind::Sign: return "sign";
  case UnaryKind::Ceil: return "ceil";
  }
  return "invalid";
}

const char *predicateKey(codegen::ComparePredicate predicate) {
  switch (predicate) {
  case codegen::ComparePredicate::Lt: return "lt";
  case codegen::ComparePredicate::Le: return "le";
  case codegen::ComparePredicate::Gt: return "gt";
  case codegen::ComparePredicate::Ge: return "ge";
  case codegen::ComparePredicate::Eq: return "eq";
  case codegen::ComparePredicate::Ne: return "ne";
  }
  return "invalid";
}

llvm::Error fileError(llvm::StringRef file, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + file + "': " + what);
}

std::string formatParams(const codegen::ScheduleParams &params) {
  std::string text = "{";
  for (const auto &[name, value] : params) {
    if (text.size() > 1)
      text += ", ";
    text += name + "=" + std::to_string(value);
  }
  return text + "}";
}

/// Parses entry `index` of `file`; the error says which entry was wrong.
llvm::Expected<TuningEntry> parseEntry(const llvm::json::Value &value,
                                       size_t index, llvm::StringRef file) {
  std::string where = "entries[" + std::to_string(index) + "]";
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fileError(file, where + " is not an object");
  for (const auto &field : *object)
    if (!llvm::is_contained({"isa", "kernel", "params", "measured"},
                            field.first.str()))
      return fileError(file, where + " has unknown field '" +
                                 field.first.str() +
                                 "' (expected isa, kernel, params, measured)");
  TuningEntry entry;
  std::optional<llvm::StringRef> isa = object->getString("isa");
  if (!isa)
    return fileError(file, where + " has no string 'isa'");
  attune_isa_t level;
  if (attune_isa_from_name(isa->str().c_str(), &level) != ATTUNE_OK && !isGpuLevel(*isa))
    return fileError(file, where + " has unknown isa '" + *isa +
                               "' (expected baseline, avx2, avx512, "
                               "avx512_zen4, avx512_spr or a GPU's sm_<NN>)");
  entry.isa = isa->str();
  std::optional<llvm::StringRef> kernel = object->getString("kernel");
  if (!kernel || kernel->empty())
    return fileError(file, where + " has no string 'kernel'");
  entry.kernel = kernel->str();
  const llvm::json::Object *params = object->getObject("params");
  if (!params)
    return fileError(file, where + " ('" + entry.kernel +
                               "') has no object 'params'");
  for (const auto &[name, param] : *params) {
    std::optional<int64_t> integer = param.getAsInteger();
    if (!integer) {
      std::string shown;
      llvm::raw_string_ostream os(shown);
      os << param;
      return fileError(file, where + " ('" + entry.kernel + "') param '" +
                                 name.str() + "' is " + shown +
                                 ", expected an integer");
    }
    entry.params[name.str()] = *integer;
  }
  if (const llvm::json::Value *measured = object->get("measured")) {
    if (!measured->getAsObject())
      return fileError(file, where + " ('" + entry.kernel +
                                 "') 'measured' is not an object");
    entry.measured = *measured->getAsObject();
  }
  return entry;
}

} // namespace

std::string tuningKey(const KernelSpec &spec) {
  std::string key = kindKey(spec.kind);
  key += "_";
  key += mlirTypeName(spec.elementType);
  switch (spec.kind) {
  case KernelKind::Embedding:
    key += std::string("_ids_") + mlirTypeName(spec.indexType);
    break;
  case KernelKind::LearnedPosition:
  case KernelKind::Softmax:
  case KernelKind::LayerNorm:   // epsilon: a value
  case KernelKind::RmsNorm:     // epsilon: a value
  case KernelKind::CausalMask:  // fill: a value
    break;
  case KernelKind::Sinusoidal:
    // The form changes the loop; the timescales are values.
    key += spec.form == codegen::SinusoidalForm::Interleaved ? "_interleaved"
                                                            : "_concat";
    break;
  case KernelKind::Linear:
  case KernelKind::ComplexLinear: // the GEMM's parameters, as Linear's
    key += spec.hasBias ? "_bias" : "_nobias";
    // bf16 weights are another micro-kernel (vdpbf16ps), tuned apart.
    if (spec.weightType == ScalarType::BF16)
      key += "_wbf16";
    break;
  case KernelKind::MultiplicativePosition:
    // A table or the sinusoid's form change the loop; timescales are values.
    key += spec.hasTable ? "_table"
           : spec.form == codegen::SinusoidalForm::Interleaved ? "_interleaved"
                                                               : "_concat";
    break;
  case KernelKind::RecursivePosition: // the time step: a value
    break;
  case KernelKind::ComplexEmbedding:
    key += std::string("_ids_") + mlirTypeName(spec.indexType);
    break;
  case KernelKind::Matmul:
    key += spec.transposeA ? "_ta" : "_na";
    key += spec.transposeB ? "_tb" : "_nb";
    break;
  case KernelKind::Binary:
    key += std::string("_") + binaryKey(spec.binary) + "_r" +
           std::to_string(spec.rank);
    break;
  case KernelKind::Where:
    key += std::string("_cond_") + mlirTypeName(spec.condType) + "_r" +
           std::to_string(spec.rank);
    break;
  case KernelKind::Unary:
    key += std::string("_") + unaryKey(spec.unary);
    break;
  case KernelKind::Copy:
    key += "_r" + std::to_string(spec.rank);
    break;
  case KernelKind::RepeatInterleave:
    key += "_x" + std::to_string(spec.repeats);
    break;
  case KernelKind::Attention:
    // The scale is a value; the head dim sizes every tile.
    key += "_d" + std::to_string(spec.headDim);
    if (spec.valueHeadDim() != spec.headDim)
      key += "_dv" + std::to_string(spec.valueHeadDim());
    if (spec.causal)
      key += "_causal";
    if (spec.hasMask)
      key += "_mask";
    if (spec.hasKeyPadding)
      key += std::string("_kpm_") + mlirTypeName(spec.keyPaddingType);
    break;
  case KernelKind::ScoreBias:
    // The modifiers change the loop (content terms read q and k); their
    // parameters are values.
    for (const codegen::ModifierSpec &modifier : spec.modifiers)
      key += "_" + modifier.name;
    break;
  case KernelKind::ScoreValues:
    break;
  case KernelKind::Rope:
    key += "_d" + std::to_string(spec.headDim) + (spec.rope.interleaved ? "_pairs" : "_halves");
    break;
  case KernelKind::Arange: // the start: a value
    break;
  case KernelKind::Compare:
    key += std::string("_") + predicateKey(spec.predicate) + "_r" + std::to_string(spec.rank);
    break;
  case KernelKind::Cast:
    key += std::string("_from_") + mlirTypeName(spec.sourceType);
    break;
  case KernelKind::GatherElements:
    key += std::string("_idx_") + mlirTypeName(spec.indexType);
    break;
  }
  return key;
}

llvm::Expected<TuningDatabase> TuningDatabase::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fileError(path, "cannot read the tuning database: " +
                               buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<TuningDatabase> TuningDatabase::parse(llvm::StringRef text,
                                                     llvm::StringRef name) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (!root)
    return fileError(name, "not valid JSON: " +
                               llvm::toString(root.takeError()));
  const llvm::json::Object *object = root->getAsObject();
  if (!object)
    return fileError(name, "expected a JSON object at the top level");
  std::optional<llvm::StringRef> format = object->getString("format");
  if (!format || *format != kFormatName)
    return fileError(name, llvm::Twine("not a tuning database: expected "
                                       "\"format\": \"") +
                               kFormatName + "\"");
  std::optional<int64_t> version = object->getInteger("version");
  if (!version)
    return fileError(name, "has no integer 'version'");
  if (*version != kFormatVersion)
    return fileError(name, "unsupported version " + llvm::Twine(*version) +
                               " (this compiler reads version " +
                               llvm::Twine(kFormatVersion) + ")");
  const llvm::json::Array *entries = object->getArray("entries");
  if (!entries)
    return fileError(name, "has no array 'entries'");
  TuningDatabase db;
  for (size_t i = 0; i < entries->size(); ++i) {
    llvm::Expected<TuningEntry> entry = parseEntry((*entries)[i], i, name);
    if (!entry)
      return entry.takeError();
    if (db.lookupKey(entry->isa, entry->kernel))
      return fileError(name, "entries[" + llvm::Twine(i) +
                                 "] repeats isa '" + entry->isa +
                                 "' kernel '" + entry->kernel + "'");
    db.insert(std::move(*entry));
  }
  return db;
}

const TuningEntry *TuningDatabase::lookupKey(llvm::StringRef isa,
                                             llvm::StringRef kernel) const {
  auto it = byKey.find({isa.str(), kernel.str()});
  return it == byKey.end() ? nullptr : &it->second;
}

const TuningEntry *TuningDatabase::lookup(llvm::StringRef isa,
                                          const KernelSpec &spec) const {
  return lookupKey(isa, tuningKey(spec));
}

const TuningEntry *TuningDatabase::resolve(llvm::StringRef isa,
                                           llvm::StringRef kernel) const {
  if (const TuningEntry *entry = lookupKey(isa, kernel))
    return entry;
  if (isa == attune_isa_name(ATTUNE_ISA_AVX512_SPR) ||
      isa == attune_isa_name(ATTUNE_ISA_AVX512_ZEN4))
    return lookupKey(attune_isa_name(ATTUNE_ISA_AVX512), kernel);
  return nullptr;
}

std::vector<std::string> tuningKeys(const KernelSpec &spec) {
  std::vector<std::string> keys = {tuningKey(spec)};
  if (spec.kind == KernelKind::Attention && (spec.hasMask || spec.hasKeyPadding)) {
    KernelSpec unmasked = spec;
    unmasked.hasMask = unmasked.hasKeyPadding = false;
    keys.push_back(tuningKey(unmasked));
  }
  return keys;
}

const TuningEntry *TuningDatabase::find(llvm::StringRef isa,
                                        const KernelSpec &spec) const {
  for (const std::string &key : tuningKeys(spec))
    if (const TuningEntry *entry = resolve(isa, key))
      return entry;
  return nullptr;
}

std::vector<std::string> TuningDatabase::levels() const {
  std::vector<std::string> names = isas(), out;
  for (attune_isa_t isa : {ATTUNE_ISA_BASELINE, ATTUNE_ISA_AVX2, ATTUNE_ISA_AVX512,
                           ATTUNE_ISA_AVX512_ZEN4, ATTUNE_ISA_AVX512_SPR}) {
    std::string name = attune_isa_name(isa);
    bool borrowed = isa > ATTUNE_ISA_AVX512 &&
                    llvm::is_contained(names, attune_isa_name(ATTUNE_ISA_AVX512));
    if (llvm::is_contained(names, name) || borrowed)
      out.push_back(name);
  }
  return out;
}

std::vector<std::string> TuningDatabase::levelsFor(const KernelSpec &spec) const {
  std::vector<std::string> out = levels();
  // Only kernels that multiply bf16 have an avx512_zen4 variant.
  if (!codegen::usesBf16DotProduct(spec))
    llvm::erase(out, attune_isa_name(ATTUNE_ISA_AVX512_ZEN4));
  return out;
}

std::vector<std::string>
TuningDatabase::levelsFor(const KernelSpec &spec, llvm::ArrayRef<std::string> targetLevels) const {
  return targetLevels.empty() ? levelsFor(spec) : targetLevels.vec();
}

bool isGpuLevel(llvm::StringRef name) {
  unsigned capability = 0;
  return name.consume_front("sm_") && !name.getAsInteger(10, capability) && capability >= 50 &&
         capability < 1000;
}

std::vector<std::string> TuningDatabase::apply(KernelSpec &spec,
                                               llvm::ArrayRef<std::string> levels) const {
  std::vector<std::string> applied;
  for (const std::string &isa : levelsFor(spec, levels))
    if (const TuningEntry *entry = find(isa, spec)) {
      spec.schedules[isa] = entry->params;
      applied.push_back(isa);
    }
  return applied;
}

void TuningDatabase::insert(TuningEntry entry) {
  auto key = std::make_pair(entry.isa, entry.kernel);
  byKey.insert_or_assign(std::move(key), std::move(entry));
}

std::vector<std::string> TuningDatabase::isas() const {
  std::set<std::string> names;
  for (const auto &[key, entry] : byKey)
    names.insert(key.first);
  return {names.begin(), names.end()};
}

std::string TuningDatabase::toJSON() const {
  llvm::json::Array entries;
  // byKey is a std::map on (isa, kernel): iteration is the sorted order.
  for (const auto &[key, entry] : byKey) {
    llvm::json::Object params;
    for (const auto &[name, value] : entry.params)
      params[name] = value;
    llvm::json::Object object{{"isa", entry.isa},
                              {"kernel", entry.kernel},
                              {"params", std::move(params)}};
    if (!entry.measured.empty())
      object["measured"] = llvm::json::Object(entry.measured);
    entries.push_back(std::move(object));
  }
  llvm::json::Object root{{"format", kFormatName},
                          {"version", kFormatVersion},
                          {"entries", std::move(entries)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  // llvm::json prints object keys sorted, so the text is deterministic.
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

llvm::Error TuningDatabase::save(llvm::StringRef path) const {
  std::string text = toJSON();
  std::string temp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fileError(temp, "cannot write: " + ec.message());
    os << text;
    os.close();
    if (os.has_error())
      return fileError(temp, "cannot write: " + os.error().message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return fileError(path, "cannot write: " + ec.message());
  return llvm::Error::success();
}

std::string defaultTuningDatabasePath() { return ATTUNE_DEFAULT_TUNING_DATABASE; }

std::string describeTuning(const KernelSpec &spec, const TuningDatabase *db,
                           llvm::ArrayRef<std::string> targetLevels) {
  std::string key = tuningKey(spec);
  std::vector<std::string> levels =
      db ? db->levelsFor(spec, targetLevels) : std::vector<std::string>{};
  if (levels.empty())
    return key + ": formula";
  std::string line = key + ":";
  for (const std::string &isa : levels) {
    line += (line.back() == ':' ? " " : ", ") + isa + " ";
    const TuningEntry *entry = db->find(isa, spec);
    line += entry ? formatParams(entry->params) : "formula";
    if (entry && (entry->isa != isa || entry->kernel != key)) {
      line += " from";
      if (entry->isa != isa)
        line += " " + entry->isa;
      if (entry->kernel != key)
        line += " " + entry->kernel;
    }
  }
  return line;
}

} // namespace attune::tuning
