//===- JsonSyntax.h - The syntax pass before JSON is parsed -----*- C++ -*-===//
//
// The model library (config import) and the runtime (kernel ABIs, bundle
// manifests) read JSON the same way, without exceptions: first this pass, a
// SAX parse that builds nothing, finds the first syntax error with its
// position (json::parse without exceptions only says "discarded") and bounds
// the nesting depth before any recursive code (parser, destructor) sees the
// document; then each parses with exceptions disabled. Each caller turns the
// problem into its own error type.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_JSONSYNTAX_H
#define ATTNC_MODEL_JSONSYNTAX_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace attnc {

/// Why a JSON document failed the syntax pass.
struct JsonSyntaxProblem {
  /// The document nests arrays or objects deeper than the limit: valid JSON
  /// that the caller does not support.
  bool too_deep = false;
  /// One line: "empty input (expected a JSON object)", "JSON nested deeper
  /// than N levels", or "not valid JSON: parse error at line L, column C:
  /// ..." ("not valid JSON: at byte N: ..." where the parser names no line;
  /// "not valid JSON" alone where it gives no reason). A syntax error quotes
  /// the offending input verbatim, which may be invalid UTF-8.
  std::string message;
};

/// Checks a document that must hold a JSON object before it is parsed: it is
/// not blank, its syntax is valid and it nests no deeper than `max_depth`.
/// Whether the top level really is an object is left to the caller.
std::optional<JsonSyntaxProblem> checkJsonDocument(std::string_view text,
                                                   std::size_t max_depth);

} // namespace attnc

#endif // ATTNC_MODEL_JSONSYNTAX_H
