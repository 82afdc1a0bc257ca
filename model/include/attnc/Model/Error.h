//===- Error.h - Field-and-rule errors for the model library ----*- C++ -*-===//
//
// The model library (layout math and config import) has no MLIR or LLVM
// dependency: it is shared by the compiler, the runtime, the CLI and the
// Python package. Its fallible calls return `Expected<T>`, whose error names
// the offending field and the rule it broke, so every user can print one
// clear line ("num_key_value_heads: must divide num_attention_heads (32 % 5
// != 0)").
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_ERROR_H
#define ATTNC_MODEL_ERROR_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace attnc {

/// An error about one field of a model description or request.
struct Error {
  /// Dotted path of the offending field, e.g. "text_config.head_dim" or "tp".
  std::string field;
  /// The rule that was broken, in words, with the values involved.
  std::string rule;

  /// "field: rule", one line.
  std::string message() const {
    return field.empty() ? rule : field + ": " + rule;
  }
};

/// A value or an Error. Deliberately small: no exceptions cross the API.
template <typename T> class Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Error error) : error_(std::move(error)) {}

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }

  T &operator*() {
    assert(ok() && "dereferencing an Expected that holds an error");
    return *value_;
  }
  const T &operator*() const {
    assert(ok() && "dereferencing an Expected that holds an error");
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }

  const Error &error() const {
    assert(!ok() && "no error in an Expected that holds a value");
    return *error_;
  }

private:
  std::optional<T> value_;
  std::optional<Error> error_;
};

} // namespace attnc

#endif // ATTNC_MODEL_ERROR_H
