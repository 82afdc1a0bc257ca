//===- Json.h - Reading JSON without exceptions -----------------*- C++ -*-===//
//
// attnc reads JSON (model configs, attnc specs, kernel ABIs, bundle
// manifests) with nlohmann::json and these helpers, which turn every problem
// into a Status naming the field and the rule, in one wording everywhere:
//
//   text_config.head_dim: must be an integer (got string "128")
//   kernels[0].block[2]: must be <= 64 (got 128)
//   rope.scaling.kind2: unknown key (expected one of: kind, factor, ...)
//
// Nothing throws. parseObject first runs a SAX pass that builds nothing: it
// finds the first syntax error with its position (a parse without exceptions
// only says "discarded") and bounds the nesting depth before any recursive
// code (parser, destructor) sees the document; then it parses with
// exceptions disabled. The readers check the type before every access.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_JSON_H
#define ATTNC_SUPPORT_JSON_H

#include "attnc/Support/Status.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace attnc::json_util {

using json = nlohmann::json;

/// Parses `text`, which must hold one JSON object nesting no deeper than
/// `max_depth`. Failures are InvalidArgument with `document` as the field
/// ("<json>", "<kernel ABI JSON>", a file path) and one of these rules:
/// "empty input (expected a JSON object)", "not valid JSON: parse error at
/// line L, column C: ..." (the offending input quoted, non-ASCII bytes as
/// \xNN), "not supported: JSON nested deeper than N levels", "top level must
/// be a JSON object (got an array)".
Result<json> parseObject(std::string_view text, const std::string &document,
                         std::size_t max_depth);

//===----------------------------------------------------------------------===//
// Wording of messages
//===----------------------------------------------------------------------===//

/// A value as an error message shows it: its type where that is what is
/// wrong (null, true, false, string "32", an array, an object), numbers as
/// written ("32.0" stays distinguishable from "32").
std::string describe(const json &value);

/// `text` safe to print on one line: control bytes (and, with `ascii_only`,
/// every non-ASCII byte, for text that may not be valid UTF-8) become \xNN.
std::string printable(const std::string &text, bool ascii_only = false);

/// A user-supplied string quoted for a message, cut (on a UTF-8 character
/// boundary) after 40 bytes.
std::string inQuotes(const std::string &text);

/// The shortest decimal form that reads back as the same double, so messages
/// show "0.334", not "0.33400000000000002".
std::string formatNumber(double value);

/// "base.key" ("key" when base is empty), and "base[index]".
std::string memberPath(const std::string &base, const std::string &key);
std::string indexPath(const std::string &base, std::size_t index);

//===----------------------------------------------------------------------===//
// Typed reads: InvalidArgument on `field` when the value breaks the rule
//===----------------------------------------------------------------------===//

/// An integer in [min, max]. Booleans and numbers written with a fraction or
/// exponent (32.0, 32.5) are not integers.
Result<int64_t> readInteger(const json &value, const std::string &field,
                            int64_t min, int64_t max);
/// A finite number.
Result<double> readNumber(const json &value, const std::string &field);
/// true or false.
Result<bool> readBool(const json &value, const std::string &field);
/// A string.
Result<std::string> readString(const json &value, const std::string &field);

/// The member `key` of `object`, which must exist ("required field is
/// missing", on memberPath(path, key)).
Result<const json *> required(const json &object, const std::string &path,
                              const char *key);

/// Fails on the first key of `object` not in `allowed` with "unknown key
/// (expected one of: a, b, c)" on memberPath(path, key). With
/// `underscore_comments`, keys starting with '_' are comments and allowed.
Status checkKnownKeys(const json &object, const std::string &path,
                      std::initializer_list<const char *> allowed,
                      bool underscore_comments = false);

/// True if `name` is a C identifier ([A-Za-z_][A-Za-z0-9_]*).
bool isIdentifier(std::string_view name);

} // namespace attnc::json_util

#endif // ATTNC_SUPPORT_JSON_H
