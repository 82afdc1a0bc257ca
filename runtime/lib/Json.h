//===- Json.h - Strict JSON reading helpers (internal) ----------*- C++ -*-===//
//
// Shared by the ABI reader and the bundle manifest reader. Syntax errors are
// found with a SAX pass (it reports the line and column without exceptions,
// as the model library does); every later access checks the type first, so
// nothing throws and every error names the field.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_LIB_JSON_H
#define ATTNC_RUNTIME_LIB_JSON_H

#include "attnc/Runtime/Status.h"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

namespace attnc::runtime::json_util {

using json = nlohmann::json;

/// Parses `text`, which must hold a JSON object; `what` names the document
/// in errors ("ABI JSON", "manifest.json").
Result<json> parseObject(std::string_view text, const std::string &what);

/// "an integer", "a string", ... for error messages.
std::string describe(const json &value);

/// Fails with "<field>: unknown field (expected one of a, b, c)" for the
/// first key of `object` not in `allowed`.
Status checkKnownFields(const json &object,
                        std::initializer_list<const char *> allowed);

/// The member `key` of `object`, which must exist ("missing required field").
Result<const json *> required(const json &object, const char *key);

/// Reads an integer in [min, max].
Result<int64_t> readInteger(const json &value, const std::string &field,
                            int64_t min, int64_t max);
/// Reads a string.
Result<std::string> readString(const json &value, const std::string &field);

/// True if `name` is a C identifier ([A-Za-z_][A-Za-z0-9_]*).
bool isIdentifier(std::string_view name);

} // namespace attnc::runtime::json_util

#endif // ATTNC_RUNTIME_LIB_JSON_H
