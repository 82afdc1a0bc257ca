# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "unittests", "gpu",
                   # fuzzer inputs (scripts/fuzz.sh runs them), not lit tests
                   "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attnc_obj_root, "test")

# Variables captured in one CHECK-LABEL block do not leak into the next.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%examples", os.path.join(config.attnc_src_root, "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "tools", "attnc", "Inputs")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["attn-opt", "attn-translate", "attnc"], [config.attnc_tools_dir])

# Full paths for tests that inspect the binaries themselves (ldd).
config.substitutions.append(("%attn_opt_path", os.path.join(config.attnc_tools_dir, "attn-opt")))
config.substitutions.append(("%attnc_path", os.path.join(config.attnc_tools_dir, "attnc")))

# ptxas (the CUDA toolkit's, when installed): explain-ptxas.test compares
# the registers attnc reads from a cubin with ptxas -v's report.
import shutil
ptxas = shutil.which("ptxas") or next(
    (p for p in ("/usr/local/cuda/bin/ptxas",) if os.path.exists(p)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
