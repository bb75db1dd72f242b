//===- TuningDatabase.h - measured schedule parameters ---------*- C++ -*-===//
//
// Schedule parameters chosen by measurement (attune-tune), keyed by ISA level
// and kernel signature, with the builders' formulas as the fallback for
// every kernel and level the database has no entry for. The file is JSON:
//
//   {"format": "attune-tuning", "version": 1,
//    "entries": [{"isa": "avx2", "kernel": "attention_f32_d64_causal",
//                 "params": {"key_block": 64, "query_tile": 48},
//                 "measured": {...}}]}
//
// "isa" is an attune_isa_name() ("avx2", "avx512", ...) or, for the CUDA
// target's kernels, a GPU architecture "sm_<NN>" (its compute capability:
// "sm_80", "sm_90"); "kernel" a tuningKey(), "params" the ScheduleParams
// (integers) the builder (or, for the GPU's fused attention, the kernel
// generator: AttentionKernels.h) reads and "measured" free-form information
// (shape, GFLOP/s, machine) that the compiler ignores. Halide-free, so the
// MLIR-side driver can use it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TUNING_TUNINGDATABASE_H
#define ATTUNE_COMPILER_TUNING_TUNINGDATABASE_H

#include "compiler/support/KernelCatalog.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attune::tuning {

/// The "format" and "version" a database file must carry. A change to the
/// meaning of keys or params bumps the version, so an old file is rejected
/// rather than misread.
inline constexpr const char *kFormatName = "attune-tuning";
inline constexpr int64_t kFormatVersion = 1;

/// The kernel signature a tuning entry is keyed by: the kind, the element
/// type and the static fields that change the loop structure (attention's
/// head dim, causal, mask and key-padding flags; matmul's transposes;
/// linear's bias; ranks and op kinds of the elementwise kernels), e.g.
/// "attention_f32_d64_causal", "linear_f32_bias", "matmul_f32_na_tb".
/// Values that only enter the arithmetic (attention scale, norm epsilon,
/// mask fill, timescales) are left out, so one entry serves every model
/// with that structure. Shapes are dynamic and never part of it.
std::string tuningKey(const codegen::KernelSpec &spec);

/// The keys an entry for `spec` is looked up by, most specific first:
/// tuningKey(spec), then for attention with an additive mask or key padding
/// the same key without them ("attention_f32_d32_kpm_i64" ->
/// "attention_f32_d32"). A mask adds one load and add per score and leaves
/// the tiles' register budget as it was, so the unmasked kernel's measured
/// tiles are a better start than the formula; an entry tuned with the mask
/// still wins.
std::vector<std::string> tuningKeys(const codegen::KernelSpec &spec);

/// One measured choice of schedule parameters.
struct TuningEntry {
  std::string isa;
  std::string kernel;
  codegen::ScheduleParams params;
  /// Informational (shape, GFLOP/s, machine); kept and saved, never read.
  llvm::json::Object measured;
};

/// A set of entries, at most one per (isa, kernel).
class TuningDatabase {
public:
  /// Reads `path`. Errors name the file and what was wrong: missing or
  /// unreadable file, invalid JSON, wrong format or version, an unknown ISA
  /// name, a missing or mistyped field, a non-integer param, a duplicate
  /// (isa, kernel) pair.
  static llvm::Expected<TuningDatabase> load(llvm::StringRef path);
  /// Parses `text`; `name` stands for the file in error messages.
  static llvm::Expected<TuningDatabase> parse(llvm::StringRef text,
                                              llvm::StringRef name);

  /// The entry for `spec` at level `isa`, or null (the formula applies).
  const TuningEntry *lookup(llvm::StringRef isa,
                            const codegen::KernelSpec &spec) const;
  const TuningEntry *lookupKey(llvm::StringRef isa, llvm::StringRef kernel) const;

  /// The entry level `isa` uses for `kernel`: its own, else for avx512_spr
  /// the avx512 one (same registers and vector width for f32; a machine
  /// with AMX should not fall back to the formula for want of its own
  /// tuning run), else null: the formula applies.
  const TuningEntry *resolve(llvm::StringRef isa, llvm::StringRef kernel) const;

  /// The entry level `isa` uses for `spec`: resolve() on each of
  /// tuningKeys(spec) in turn; null when none has one.
  const TuningEntry *find(llvm::StringRef isa,
                          const codegen::KernelSpec &spec) const;

  /// Every level resolve() finds entries for, lowest first.
  std::vector<std::string> levels() const;
  /// levels() that `spec` is built for (avx512_zen4 only for kernels that
  /// multiply bf16).
  std::vector<std::string> levelsFor(const codegen::KernelSpec &spec) const;
  /// The levels a target asks `spec` at: `targetLevels` (the CUDA target's
  /// architectures), or when empty the CPU's levelsFor(spec).
  std::vector<std::string> levelsFor(const codegen::KernelSpec &spec,
                                     llvm::ArrayRef<std::string> targetLevels) const;

  /// Sets spec.schedules[isa] for every level of `levels` (default: the CPU
  /// levelsFor(spec); the CUDA target passes its architectures, "sm_80",
  /// "sm_90") find() finds an entry for, leaving the others as they were.
  /// Returns the levels it set, in the order given.
  std::vector<std::string> apply(codegen::KernelSpec &spec,
                                 llvm::ArrayRef<std::string> levels = {}) const;

  /// Adds `entry`, replacing one with the same (isa, kernel).
  void insert(TuningEntry entry);

  /// Every level that has at least one entry, in name order.
  std::vector<std::string> isas() const;
  const std::map<std::pair<std::string, std::string>, TuningEntry> &
  entries() const {
    return byKey;
  }
  bool empty() const { return byKey.empty(); }

  /// The file's text: entries sorted by (isa, kernel), object keys sorted,
  /// so equal databases print byte for byte equally.
  std::string toJSON() const;
  /// Writes toJSON() to `path` (through a temporary file and a rename).
  llvm::Error save(llvm::StringRef path) const;

private:
  std::map<std::pair<std::string, std::string>, TuningEntry> byKey;
};

/// Whether `name` is a GPU architecture level, "sm_<NN>" (NN from 50).
bool isGpuLevel(llvm::StringRef name);

/// The database shipped with attune (compiler/tuning/default.json), by the
/// absolute path of the source tree baked in at build time: it works from any
/// build tree of a clone, which is how attune is used today (no install).
std::string defaultTuningDatabasePath();

/// One line per kernel saying which entry each level got, for --verbose and
/// the phase dump: "<key>: avx2 {key_block=64, ...}, avx512 formula,
/// avx512_spr formula", or "<key>: formula" when `db` is null or empty. An
/// entry borrowed from a lower level or another key says so ("{...} from
/// avx512", "{...} from attention_f32_d32", "{...} from avx512
/// attention_f32_d32").
/// `levels`: the target's, as apply() takes them (empty: the CPU's).
std::string describeTuning(const codegen::KernelSpec &spec,
                           const TuningDatabase *db,
                           llvm::ArrayRef<std::string> levels = {});

} // namespace attune::tuning

#endif // ATTUNE_COMPILER_TUNING_TUNINGDATABASE_H
