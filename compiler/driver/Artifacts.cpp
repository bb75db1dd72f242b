//===- Artifacts.cpp - objects, link and header of a generated library ----===//
//
// Everything after host code generation that turns a model into files: the
// host object, the kernel objects (through the target, from the cache where
// possible), the weights object, the link, and the C header.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Artifacts.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/pipeline/KernelCache.h"
#include "compiler/support/Threads.h"

#include "attune/runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <mutex>
#include "compiler/support/Threads.h"

#include <sys/wait.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace attune::driver {

ScratchDir::~ScratchDir() {
  if (!path.empty())
    fs::remove_directories(path, /*IgnoreErrors=*/true);
}

std::string ScratchDir::file(llvm::StringRef name) const {
  llvm::SmallString<256> p(path);
  path::append(p, name);
  return std::string(p);
}

namespace {
std::string readFileOrEmpty(llvm::StringRef file) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

} // namespace

std::string runCommand(llvm::StringRef program,
                       llvm::ArrayRef<std::string> args,
                       const ScratchDir &scratch, llvm::StringRef logName) {
  llvm::SmallVector<llvm::StringRef> argv;
  argv.push_back(program);
  for (const std::string &a : args)
    argv.push_back(a);
  std::string log = scratch.file(logName);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &errMsg);
  if (rc == 0)
    return "";
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "command failed";
  if (rc < 0)
    os << " (" << errMsg << ")";
  else
    os << " with exit code " << rc;
  os << ": " << llvm::join(argv, " ");
  std::string output = readFileOrEmpty(log);
  if (!output.empty())
    os << "\n" << llvm::StringRef(output).rtrim();
  return message;
}

std::string writeFile(llvm::StringRef file, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, fs::OF_None);
  if (ec)
    return ("cannot write '" + file + "': " + ec.message()).str();
  os << contents;
  os.close();
  if (os.has_error())
    return ("cannot write '" + file + "': " + os.error().message()).str();
  return "";
}

//===----------------------------------------------------------------------===//
// Host LLVM IR -> object
//===----------------------------------------------------------------------===//

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "generic", "", options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Default));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(module, mam);
}

std::string emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                       llvm::StringRef file) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, fs::OF_None);
  if (ec)
    return ("cannot write '" + file + "': " + ec.message()).str();
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  pm.run(module);
  os.close();
  if (os.has_error())
    return ("cannot write '" + file + "': " + os.error().message()).str();
  return "";
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Runs `work` in a child process (fork) and returns its message: "" on
/// success. Halide names what it generates from process-wide counters
/// (attn_block_weight$2), so a kernel compiled after others, or beside
/// them on another thread, differed from the same kernel compiled alone:
/// libraries were not reproducible, and which kernels the cache held
/// changed the bytes of the others. Each child starts from the parent's
/// state, and the parent compiles no kernel itself, so every kernel is
/// compiled from the same state. A child that crashes (an abort inside
/// Halide or LLVM) fails its kernel with a message instead of taking the
/// compiler down. `forked` runs in the parent right after the fork (the
/// caller releases the lock it forked under: see buildKernelObjects).
std::string inChildProcess(const std::function<std::string()> &work,
                           const std::function<void()> &forked) {
  int fds[2];
  if (::pipe(fds) != 0)
    return std::string("cannot create a pipe: ") + std::strerror(errno);
  pid_t pid = ::fork();
  if (pid < 0) {
    int error = errno;
    forked();
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("cannot fork: ") + std::strerror(error);
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string message = work();
    for (size_t done = 0; done < message.size();) {
      ssize_t n = ::write(fds[1], message.data() + done, message.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    // No atexit handlers or static destructors: they belong to the parent.
    ::_exit(message.empty() ? 0 : 1);
  }
  forked();
  ::close(fds[1]);
  std::string message;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    message.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return std::string("cannot wait for the compiling process: ") + std::strerror(errno);
  if (WIFSIGNALED(status))
    return "the compiling process died of signal " + std::to_string(WTERMSIG(status)) +
           " (" + ::strsignal(WTERMSIG(status)) + ")" +
           (message.empty() ? std::string() : ": " + message);
  if (WEXITSTATUS(status) != 0 && message.empty())
    return "the compiling process exited with status " +
           std::to_string(WEXITSTATUS(status));
  return message;
}

std::string buildKernelObjects(const std::vector<codegen::KernelSpec> &kernels,
                               const targets::TargetBackend &target,
                               const pipeline::KernelCache &cache,
                               const ScratchDir &scratch, unsigned jobs,
                               std::vector<std::string> &objects,
                               KernelBuildStats &stats,
                               const KernelProgress &progress) {
  const std::string &buildId = pipeline::compilerBuildId();
  // Work item i < kernels.size() is kernel i; then the target's runtime, then
  // the model support object. The support code is C compiled by `cc` (0.5 s,
  // a fifth of a warm compile): cached like a kernel, and built beside them.
  const size_t runtimeItem = kernels.size(), supportItem = kernels.size() + 1;
  size_t numItems = kernels.size() + 2;
  std::vector<std::string> paths(numItems), errors(numItems);
  std::vector<char> fromCache(numItems, 0);
  std::atomic<size_t> nextItem{0};

  // A child inherits only the forking thread, and every lock as the other
  // threads held it at that instant: a child once waited forever on a lock
  // another thread held while it forked (one thread, in futex_wait). So the
  // threads do everything but waiting for their child under forkMutex, and
  // fork under it: at a fork every other thread is waiting on a child or on
  // the mutex, and holds nothing the child needs.
  std::mutex forkMutex;
  auto buildItem = [&](size_t i) {
    std::unique_lock<std::mutex> lock(forkMutex);
    std::string name = i == runtimeItem   ? "halide_runtime"
                       : i == supportItem ? "model_support"
                                          : kernels[i].symbolName();
    // The support sources are embedded in the compiler, so the build id
    // covers them; they depend on the target, not on its variants.
    std::string key = pipeline::kernelCacheKey(
        name, i < kernels.size() ? kernels[i].scheduleKey() : "",
        {i == supportItem ? target.name() : target.cacheKey()}, buildId);
    if (auto hit = cache.lookup(key)) {
      paths[i] = *hit;
      fromCache[i] = 1;
      return;
    }
    std::string object = scratch.file(name + ".o");
    std::string error;
    if (i == supportItem) {
      // `cc` through popen, which spawns and execs: no child of this
      // process's state to protect, and 0.5 s the other threads need not
      // wait for.
      lock.unlock();
      error = target.compileSupport(scratch.path.str().str(), object);
    } else
      error = inChildProcess(
          [&] {
            return i == runtimeItem ? target.compileRuntime(object)
                                    : target.compileKernel(kernels[i], object);
          },
          [&] { lock.unlock(); });
    if (!lock.owns_lock())
      lock.lock();
    if (!error.empty()) {
      errors[i] = "cannot compile " +
                  (i == runtimeItem   ? std::string("the Halide runtime")
                   : i == supportItem ? std::string("the model support code")
                                      : "kernel '" + name + "'") +
                  ": " + error;
      // A compiler that crashes on a kernel the target knows it cannot take
      // gets the target's word on why and what to do instead.
      if (i < kernels.size() && error.rfind("the compiling process died", 0) == 0)
        if (std::string why = target.knownCompilerCrash(kernels[i]); !why.empty())
          errors[i] += "\n" + why;
      return;
    }
    paths[i] = object;
    // A cache that cannot be written only costs time on the next compile.
    (void)cache.store(key, object);
  };
  std::mutex progressMutex;
  size_t ready = 0, compiled = 0;
  auto worker = [&] {
    for (size_t i; (i = nextItem.fetch_add(1)) < numItems;) {
      buildItem(i);
      if (!progress)
        continue;
      std::lock_guard<std::mutex> lock(progressMutex);
      ++ready;
      compiled += !fromCache[i] && errors[i].empty();
      progress(ready, compiled, numItems);
    }
  };

  runOnThreads(std::min<unsigned>(jobs, numItems), worker);

  for (size_t i = 0; i < numItems; ++i) {
    if (!errors[i].empty())
      return errors[i];
    (fromCache[i] ? stats.cached : stats.compiled) += 1;
    objects.push_back(paths[i]);
  }
  return "";
}

std::string weightsSymbolOf(llvm::StringRef staticSymbol) {
  return (staticSymbol + "_weights").str();
}

std::string weightsAliasFlag(llvm::StringRef weightsSymbol) {
  return ("-Wl,--defsym=attune_weights_data=" + weightsSymbol).str();
}

/// The weights blob as an object defining `symbol`: the blob is written next
/// to an assembly file that .incbin's it, so a large model never passes
/// through a C array or the compiler's memory twice.
std::string buildWeightsObject(llvm::StringRef blob, llvm::StringRef cc,
                               llvm::StringRef symbol, const ScratchDir &scratch,
                               std::string &object) {
  std::string binPath = scratch.file("weights.bin");
  if (std::string error = writeFile(binPath, blob); !error.empty())
    return error;
  std::string quoted;
  for (char c : binPath) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  // The blob goes into .lrodata, an x86-64 *large* section (flag "l",
  // SHF_X86_64_LARGE): the linker places large sections after .bss, so code,
  // GOT and small data stay within the ±2 GiB that the small code model's
  // 32-bit PC-relative references reach however big the weights are. In
  // .rodata, weights over ~2 GiB pushed .data and the GOT out of reach and
  // the link failed with relocation overflows. Only the descriptor's
  // initializer names this symbol, with a 64-bit relocation.
  std::string assembly = "  .section .lrodata,\"al\",@progbits\n"
                         "  .balign 64\n"
                         "  .globl " + symbol.str() + "\n"
                         "  .hidden " + symbol.str() + "\n" +
                         symbol.str() + ":\n"
                         "  .incbin \"" + quoted + "\"\n"
                         "  .section .note.GNU-stack,\"\",@progbits\n";
  std::string asmPath = scratch.file("weights.S");
  if (std::string error = writeFile(asmPath, assembly); !error.empty())
    return error;
  // The archive member is named after the symbol (`ar t` says whose it is).
  object = scratch.file(symbol.str() + ".o");
  return runCommand(cc, {"-c", asmPath, "-o", object}, scratch, "weights.log");
}


//===----------------------------------------------------------------------===//
// Static archive
//===----------------------------------------------------------------------===//

std::string staticDescriptorSymbol(llvm::StringRef modelName) {
  std::string id;
  for (char c : modelName)
    id += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id = "model_" + id;
  if (id != modelName) {
    // FNV-1a: fixed by its definition, so a name maps to the same symbol in
    // every compiler build, which an application's source depends on.
    uint32_t hash = 2166136261u;
    for (unsigned char c : modelName)
      hash = (hash ^ c) * 16777619u;
    id += "_" + llvm::utohexstr(hash, /*LowerCase=*/true, /*Width=*/8);
  }
  return id + "_attune_model_abi";
}

std::string buildStaticArchive(llvm::ArrayRef<std::string> objects,
                               llvm::StringRef weightsObject,
                               llvm::StringRef staticSymbol, llvm::StringRef ld,
                               llvm::StringRef objcopy, llvm::StringRef ar,
                               const ScratchDir &scratch,
                               llvm::StringRef archive) {
  // One object, so that what the kernels and the descriptor reference
  // resolves inside it and can then be made local.
  std::string merged = scratch.file("model.r.o");
  std::vector<std::string> ldArgs = {"-r", "-o", merged};
  ldArgs.insert(ldArgs.end(), objects.begin(), objects.end());
  if (std::string error = runCommand(ld, ldArgs, scratch, "ld-r.log");
      !error.empty())
    return error;

  // The member is named after the symbol: `ar t` then says which model it is.
  std::string member = scratch.file(staticSymbol.str() + ".o");
  // The Halide runtime puts its inline C++ functions and vtables in COMDAT
  // groups. The final link keeps one group per signature across all objects
  // and would drop the second model's copy while its code, now bound to
  // local symbols, still points there ("defined in discarded section"):
  // removing the .group sections makes them plain sections of this object.
  std::vector<std::string> objcopyArgs = {
      "--remove-section=.group",
      ("--redefine-sym=" ATTUNE_MODEL_ABI_SYMBOL "=" + staticSymbol).str(),
      // The weights member's name for the blob; the reference stays
      // undefined (only definitions are made local below).
      ("--redefine-sym=attune_weights_data=" + weightsSymbolOf(staticSymbol)),
      // Applies to the renamed symbol: objcopy renames first.
      ("--keep-global-symbol=" + staticSymbol).str(),
      merged,
      member};
  if (std::string error =
          runCommand(objcopy, objcopyArgs, scratch, "objcopy.log");
      !error.empty())
    return error;

  std::vector<std::string> arArgs = {"rcs", archive.str(), member};
  if (!weightsObject.empty())
    arArgs.push_back(weightsObject.str());
  return runCommand(ar, arArgs, scratch, "ar.log");
}

//===----------------------------------------------------------------------===//
// Header
//===----------------------------------------------------------------------===//

static void describeTensor(llvm::raw_ostream &os, const attune_tensor_info_t &info) {
  os << " *   " << info.name << ": " << attune_dtype_name(info.dtype) << " [";
  for (int32_t d = 0; d < info.rank; ++d) {
    if (d)
      os << ", ";
    if (info.dims[d] < 0)
      os << (info.dim_names[d] ? info.dim_names[d] : "?");
    else
      os << info.dims[d];
  }
  os << "]\n";
}

std::string buildHeader(llvm::StringRef library, llvm::StringRef headerPath,
                        llvm::StringRef inputName, llvm::StringRef blob,
                        llvm::StringRef staticSymbol,
                        llvm::StringRef externalWeights, std::string &header) {
  attune_model_t *model = nullptr;
  // An explicit weights path, so that an ATTUNE_WEIGHTS_PATH in the
  // compiler's environment cannot send the check to another file.
  std::string weightsPath = externalWeights.str();
  if (attune_model_open_with_weights(
          library.str().c_str(),
          externalWeights.empty() ? nullptr : weightsPath.c_str(),
          &model) != ATTUNE_OK)
    return ("the linked library '" + library + "' does not open: " +
            attune_status_message())
        .str();
  llvm::StringRef weightsName = path::filename(externalWeights);
  // The prefix keeps the guard an identifier whatever the file is called
  // (-o 2layer.so would otherwise give 2LAYER_H) and out of the way of the
  // user's own macros.
  llvm::StringRef stem = path::stem(headerPath);
  std::string guard = "ATTUNE_";
  for (char c : stem)
    guard += llvm::isAlnum(c) ? llvm::toUpper(c) : '_';
  guard += "_H";

  llvm::raw_string_ostream os(header);
  os << "/* " << path::filename(headerPath) << " - generated by attune-compile from "
     << path::filename(inputName) << "; do not edit.\n"
     << " *\n"
     << " * Model: " << attune_model_name(model) << "\n"
     << " * Inputs (dense row-major; named dimensions are dynamic):\n";
  attune_tensor_info_t info;
  for (int32_t i = 0, e = attune_model_num_inputs(model); i < e; ++i)
    if (attune_model_input_info(model, i, &info) == ATTUNE_OK)
      describeTensor(os, info);
  os << " * Outputs:\n";
  for (int32_t i = 0, e = attune_model_num_outputs(model); i < e; ++i)
    if (attune_model_output_info(model, i, &info) == ATTUNE_OK)
      describeTensor(os, info);
  if (blob.empty()) {
    os << " * Weights: none.\n";
  } else {
    size_t numWeights = 0;
    if (auto view = SafeTensorsView::parse(blob.data(), blob.size()))
      numWeights = view->entries().size();
    else
      llvm::consumeError(view.takeError());
    os << " * Weights: " << numWeights << " tensors, " << blob.size()
       << " bytes, ";
    if (weightsName.empty())
      os << "embedded.\n";
    else
      os << "in " << weightsName << " beside the\n"
         << " * library, which the runtime maps at open and checks against the\n"
         << " * size and XXH64 the library records; ATTUNE_WEIGHTS_PATH or\n"
         << " * attune_model_open_with_weights() can name another place.\n";
  }
  llvm::SmallString<64> archive = path::filename(headerPath);
  path::replace_extension(archive, "a");
  os << " *\n"
     << " * Shared library: open it with attune_model_open() from the attune\n"
     << " * runtime, which finds attune_model_abi() in it.\n"
     << " *\n"
     << " * Static archive (" << archive << "): link it into the program,\n"
     << " *   cc app.c " << archive
     << " -lattune_runtime -lstdc++ -lpthread -ldl -lm\n"
     << " * and open the model with\n";
  if (weightsName.empty())
    os << " *   attune_model_open_static(" << staticSymbol << "(), &model);\n";
  else
    os << " *   attune_model_open_static_with_weights(" << staticSymbol
       << "(),\n"
       << " *       \"path/to/" << weightsName << "\", &model);\n";
  os << " * " << staticSymbol << " is the only symbol the archive\n"
     << " * defines globally (kernels and the Halide runtime are private to it),\n"
     << " * so archives of models with different names link into one program.\n"
     << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <attune/runtime.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* The descriptor of the shared library, read by attune_model_open. */\n"
     << "const attune_model_abi_t *attune_model_abi(void);\n\n"
     << "/* The descriptor of the static archive, for attune_model_open_static. */\n"
     << "const attune_model_abi_t *" << staticSymbol << "(void);\n\n"
     << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n"
     << "#endif /* " << guard << " */\n";
  attune_model_close(model);
  return "";
}

} // namespace attune::driver
