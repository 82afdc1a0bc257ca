// libattnc.so: the runtime's and the JIT's C APIs. The static archives give
// the linker an object file only when something refers to it; referring to
// one entry point of each C API object file here brings in all of that
// file's entry points. The version script (exports.map) exports attnc_* only.
#include "attnc-c/Compiler.h"
#include "attnc-c/Runtime.h"

namespace {
[[gnu::used]] void *const keep_c_api_objects[] = {
    reinterpret_cast<void *>(&attnc_status_name),          // runtime/lib/CApi.cpp
    reinterpret_cast<void *>(&attnc_split_kv_count),       // runtime/lib/CApiPlan.cpp
    reinterpret_cast<void *>(&attnc_launch_plan_run),      // runtime/lib/CApiLaunch.cpp
    reinterpret_cast<void *>(&attnc_model_compile_config), // jit/lib/CApiModel.cpp
};
} // namespace
