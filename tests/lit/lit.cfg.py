# -*- Python -*-
# lit configuration for attune: every .mlir under tests/lit is a test whose RUN
# lines call the attune tools (build/bin) and LLVM's FileCheck, not and count.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "attune"
# lit's internal shell: portable, and the only one lit >= 23 supports.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.attune_lit_obj_root

# Inputs/ holds files that tests read, not tests.
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%attune_src_root", config.attune_src_root))

# Tests that need several GB of memory and disk and minutes (tests/lit/large)
# run only when asked: ATTUNE_LARGE_TESTS=1 in the environment, or lit -Dlarge=1.
# Elsewhere lit reports them UNSUPPORTED, so a run shows they were skipped.
if os.environ.get("ATTUNE_LARGE_TESTS") == "1" or lit_config.params.get("large") == "1":
    config.available_features.add("large-tests")

# FileCheck, not, count, split-file from the LLVM 22 install.
llvm_config.use_default_substitutions()

# Any tool built into build/bin is callable by name; the attune tools also get
# a substitution to their absolute path so a stale one on PATH is never used.
# Every attune tool must be built: a missing one is a configuration error,
# never a quietly UNSUPPORTED test.
tool_dirs = [config.attune_tools_dir, config.llvm_tools_dir]
llvm_config.with_environment("PATH", config.attune_tools_dir, append_path=True)
# Tests that build libraries share one kernel cache inside the build tree.
config.environment["ATTUNE_KERNEL_CACHE"] = os.path.join(config.attune_lit_obj_root,
                                                         "kernel-cache")
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("LD_LIBRARY_PATH", config.attune_lib_dir,
                             append_path=True)

tools = []
for name in ["attune-opt", "attune-compile", "attune-run", "attune-tune"]:
    if not os.path.exists(os.path.join(config.attune_tools_dir, name)):
        lit_config.fatal("%s is not built in %s: build the default target first"
                         % (name, config.attune_tools_dir))
    tools.append(ToolSubst(name, unresolved="fatal"))
llvm_config.add_tool_substitutions(tools, tool_dirs)
