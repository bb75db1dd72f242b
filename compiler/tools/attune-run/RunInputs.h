//===- RunInputs.h - attune-run's --dim and --input, and its inputs -*- C++ -*-===//
//
// What attune-run does with the user's --dim and --input values and the
// files they name, apart from the tool's main so that a fuzz target
// (tests/fuzz/RunArgsFuzzer.cpp) drives exactly the same code: parsing the
// values, checking their names against the model's signature, reading .npy
// headers and binding the dimensions they fix, sizing each input and
// reading its file. Every function returns an error message (empty on
// success) instead of exiting; the tool prints it as "attune-run: error: "
// and exits 1, as it always has.
//
// The model's signature is the runtime's attune_tensor_info_t, so a caller
// that has no library (the fuzz target) describes a model by hand.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_TOOLS_ATTUNE_RUN_RUNINPUTS_H
#define ATTUNE_COMPILER_TOOLS_ATTUNE_RUN_RUNINPUTS_H

#include "attune/runtime.h"
#include "compiler/support/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace attune::run {

/// Where one input's data comes from, as one --input gave it.
struct InputSource {
  std::string path;
  /// name=@FILE: a .npy file, whose header is read before any shape is
  /// fixed, because its shape sets dynamic dimensions.
  bool isNpy = false;
  npy::Header header;
};

/// The value of a named dynamic dimension and what set it, so that a
/// conflict can name both sides.
struct DimBinding {
  int64_t value;
  std::string origin;
};

/// What --dim and --input said.
struct InputArguments {
  llvm::StringMap<DimBinding> dims;
  llvm::StringMap<InputSource> sources;
};

/// Parses the --dim values (name=N, N >= 0; the same name twice must agree)
/// and the --input values (name=@FILE.npy or name=FILE; each name once).
/// Reads no file: that waits for the model's signature.
[[nodiscard]] std::string parseInputArguments(
    llvm::ArrayRef<std::string> dimSpecs,
    llvm::ArrayRef<std::string> inputSpecs, InputArguments &out);

/// One message for every --input and --dim whose name the model lacks,
/// listing the names it has; empty when all are known.
std::vector<std::string>
unknownNameErrors(llvm::ArrayRef<std::string> dimSpecs,
                  llvm::ArrayRef<std::string> inputSpecs,
                  llvm::ArrayRef<attune_tensor_info_t> infos);

/// Reads the header of every .npy input, checks its dtype and shape against
/// the input's declaration and binds the dynamic dimensions it fixes in
/// `args.dims` (a conflict with --dim or another file is an error).
[[nodiscard]] std::string
bindNpyInputs(llvm::ArrayRef<attune_tensor_info_t> infos, InputArguments &args);

/// Each input's dtype, rank and shape: the declared dimensions, the bound
/// dynamic ones, and 8 for a dynamic one nothing set. `inputs` has one
/// tensor per info; data is left alone.
void resolveShapes(llvm::ArrayRef<attune_tensor_info_t> infos,
                   const llvm::StringMap<DimBinding> &dims,
                   llvm::MutableArrayRef<attune_tensor_t> inputs);

/// Element count of a tensor whose shape byteSize accepted, so the product
/// fits.
int64_t numElements(const attune_tensor_t &t);

/// "[2x7]".
std::string shapeString(const attune_tensor_t &t);

/// Bytes of `t` in `out`, or an error naming `what` on a negative dimension
/// or a count that overflows: the shape comes from --dim, so it is user
/// input until proven otherwise.
[[nodiscard]] std::string byteSize(const attune_tensor_t &t,
                                   const llvm::Twine &what, size_t &out);

/// A zeroed buffer; an allocation failure is an error naming the tensor
/// (this code has no exceptions, so std::vector would abort instead).
class Buffer {
public:
  [[nodiscard]] std::string allocate(size_t bytes, const llvm::Twine &what);
  char *get() const { return data.get(); }

private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char[], Free> data;
};

/// Allocates one input's buffer (sized by byteSize) and fills it from its
/// source: a .npy file whose header bindNpyInputs read (bf16 inputs read as
/// f32 and rounded), a raw file of exactly the input's size, or, without a
/// source, random values when `randomInputs` (ids below `indexBound`, or
/// 100 when it is 0).
[[nodiscard]] std::string fillInput(const attune_tensor_info_t &info,
                                    attune_tensor_t &t, Buffer &storage,
                                    const InputSource *source,
                                    bool randomInputs, std::mt19937_64 &rng);

/// The .npy element type a tensor of `dtype` is exchanged as (bf16 travels
/// as f32, which holds every bf16 value exactly); none for a dtype
/// attune-run does not know.
std::optional<npy::ElementType> npyTypeOf(attune_dtype_t dtype);

/// f16 and bf16 bits to float, exactly; float to them, rounding to nearest
/// even as the kernels' casts do.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

/// Element i of a tensor as double (f16 and bf16 widened exactly); none
/// for a dtype attune-run does not know.
std::optional<double> readElement(const attune_tensor_t &t, int64_t i);

} // namespace attune::run

#endif // ATTUNE_COMPILER_TOOLS_ATTUNE_RUN_RUNINPUTS_H
