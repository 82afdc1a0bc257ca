//===- Status.h - Status codes and results for the runtime ------*- C++ -*-===//
//
// The runtime reports errors the way the model library does (an attnc::Error
// naming the field and the rule, one line), extended with a status code so
// that callers -- the C API above all -- can tell a bad argument from a
// missing driver from a corrupt cache entry without parsing text.
//
// A failed NVRTC compile additionally carries CompileDiagnostics: the log,
// the exact option list and where the failing source was saved. message()
// prints all of it, so a caller that only logs the message loses nothing.
//
// Nothing in the runtime throws across its API; fallible calls return Status
// or Result<T>.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_STATUS_H
#define ATTNC_RUNTIME_STATUS_H

#include "attnc/Model/Error.h"

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnc::runtime {

/// What kind of failure a Status reports. Mirrors attnc_status_t in the C API
/// (attnc-c/Runtime.h) value for value.
enum class StatusCode {
  Ok = 0,
  InvalidArgument = 1, ///< the caller passed something malformed
  CompileError = 2,    ///< NVRTC rejected the source (see CompileDiagnostics)
  CudaError = 3,       ///< a CUDA driver call failed
  NoDriver = 4,        ///< libcuda.so.1 (or NVRTC) could not be loaded
  IoError = 5,         ///< reading or writing a file failed
  Corrupt = 6,         ///< stored data failed its checksum or format check
  NotFound = 7,        ///< a named kernel, arch or file does not exist
  Internal = 8,        ///< a bug in attnc (or out of memory)
};

/// "ok", "invalid_argument", "compile_error", "cuda_error", "no_driver",
/// "io_error", "corrupt", "not_found", "internal".
const char *statusCodeName(StatusCode code);

/// Everything NVRTC said about a failed compile, and how to reproduce it.
struct CompileDiagnostics {
  /// The arch being compiled when NVRTC failed, e.g. "sm_90a".
  std::string arch;
  /// NVRTC's program log, verbatim (it names the file and line of each error).
  std::string log;
  /// The exact option list handed to nvrtcCompileProgram, in order.
  std::vector<std::string> options;
  /// Where the failing source was written (its in-memory headers and a
  /// compile.txt with options and log sit beside it); empty if even that
  /// failed, in which case save_error says why.
  std::string saved_source_path;
  std::string save_error;
};

/// Success, or a failure with a code, an attnc::Error and, for compile
/// failures, the NVRTC diagnostics. Cheap to copy when ok.
class Status {
public:
  /// Success.
  Status() = default;
  /// A failure. `code` must not be StatusCode::Ok.
  Status(StatusCode code, std::string field, std::string rule)
      : code_(code), error_{std::move(field), std::move(rule)} {
    assert(code != StatusCode::Ok && "use Status() for success");
  }
  /// A model-library error (a bad field) as a runtime failure.
  Status(StatusCode code, Error error) : code_(code), error_(std::move(error)) {
    assert(code != StatusCode::Ok && "use Status() for success");
  }

  bool ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  /// The field and the rule; empty when ok.
  const Error &error() const { return error_; }

  /// Attaches NVRTC diagnostics (compile failures only).
  Status &withDiagnostics(CompileDiagnostics diagnostics) {
    diagnostics_ =
        std::make_shared<const CompileDiagnostics>(std::move(diagnostics));
    return *this;
  }
  /// The NVRTC diagnostics, or null if this is not a compile failure.
  const CompileDiagnostics *diagnostics() const { return diagnostics_.get(); }

  /// Prefixes the field with `context` ("kernels[2]" + "grid[0]" ->
  /// "kernels[2].grid[0]"), so errors from nested data name the full path.
  Status &inField(const std::string &context);

  /// "field: rule" on the first line; for compile failures, further lines
  /// with the arch, the options, the saved source path and the full log.
  std::string message() const;

private:
  StatusCode code_ = StatusCode::Ok;
  Error error_;
  std::shared_ptr<const CompileDiagnostics> diagnostics_;
};

/// A value or a failed Status (the runtime's Expected<T>).
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "a Result without a value needs a failed Status");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  T &operator*() {
    assert(ok() && "dereferencing a Result that holds an error");
    return *value_;
  }
  const T &operator*() const {
    assert(ok() && "dereferencing a Result that holds an error");
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }

  /// The failure; a default (ok) Status when a value is held.
  const Status &status() const { return status_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_STATUS_H
