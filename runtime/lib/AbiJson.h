//===- AbiJson.h - KernelAbi <-> JSON values (internal) ---------*- C++ -*-===//
//
// The bundle manifest embeds kernel ABIs as JSON values; these are the value-
// level forms of the string functions in KernelAbi.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_LIB_ABIJSON_H
#define ATTNC_RUNTIME_LIB_ABIJSON_H

#include "attnc/Runtime/KernelAbi.h"

#include <nlohmann/json.hpp>

#include <cstddef>

namespace attnc::runtime {

/// Kernel ABIs and bundle manifests nest a few levels; JSON nested deeper
/// than this is refused before the DOM is built.
constexpr std::size_t kMaxJsonDepth = 64;

/// One kernel as an ordered JSON object (fields in the documented order).
nlohmann::ordered_json kernelAbiToJsonValue(const KernelAbi &abi);
/// Reads and validates one kernel object; error fields are relative to it.
Result<KernelAbi> kernelAbiFromJsonValue(const nlohmann::json &value);
/// Reads a non-empty array of kernel objects with unique names; error fields
/// start at "[i]".
Result<std::vector<KernelAbi>>
kernelAbiArrayFromJsonValue(const nlohmann::json &value);

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_LIB_ABIJSON_H
