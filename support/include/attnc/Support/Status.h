//===- Status.h - The one status type of attnc ------------------*- C++ -*-===//
//
// Every fallible call in attnc -- model import, layout math, the runtime, the
// C API, the JIT -- reports failure with one type, Status: a code (what kind
// of failure, so callers such as the C API can tell a bad argument from a
// missing driver without parsing text) and a message made of the field that
// is wrong and the rule it broke ("num_key_value_heads: must divide
// num_attention_heads (32 % 5 != 0)"). A failed NVRTC compile additionally
// carries CompileDiagnostics. Result<T> is a value or a failed Status.
//
// IREE's iree_status_t is the model: one status for every layer, a code and a
// message. MLIR diagnostics stay MLIR's vocabulary inside the compiler; where
// compiler code reports to a caller it converts them to a Status.
//
// Nothing in attnc throws across its API.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_STATUS_H
#define ATTNC_SUPPORT_STATUS_H

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnc {

/// What kind of failure a Status reports. attnc_status_t in the C API
/// (attnc-c/Runtime.h) has the same values; the C API checks that at compile
/// time.
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

/// Success, or a failure with a code, the field and the rule, and (compile
/// failures only) the NVRTC diagnostics. Cheap to copy when ok.
class Status {
public:
  /// Success.
  Status() = default;
  /// A failure about one field: InvalidArgument, the code of everything the
  /// model library reports (a config or request that breaks a rule).
  Status(std::string field, std::string rule)
      : Status(StatusCode::InvalidArgument, std::move(field), std::move(rule)) {
  }
  /// A failure. `code` must not be StatusCode::Ok.
  Status(StatusCode code, std::string field, std::string rule)
      : field(std::move(field)), rule(std::move(rule)), code_(code) {
    assert(code != StatusCode::Ok && "use Status() for success");
  }

  bool ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }

  /// Dotted path of the offending field, e.g. "text_config.head_dim",
  /// "kernels[2].grid[0]" or a file path; empty when ok or when no one field
  /// is at fault. Plain data: callers may add context.
  std::string field;
  /// The rule that was broken, in words, with the values involved; empty
  /// when ok.
  std::string rule;

  /// Prefixes the field with `context` ("kernels[2]" + "grid[0]" ->
  /// "kernels[2].grid[0]"), so errors from nested data name the full path.
  Status &inField(const std::string &context);

  /// Attaches NVRTC diagnostics (compile failures only).
  Status &withDiagnostics(CompileDiagnostics diagnostics) {
    diagnostics_ =
        std::make_shared<const CompileDiagnostics>(std::move(diagnostics));
    return *this;
  }
  /// The NVRTC diagnostics, or null if this is not a compile failure.
  const CompileDiagnostics *diagnostics() const { return diagnostics_.get(); }

  /// "field: rule" (just the rule when there is no field) on the first line;
  /// for compile failures, further lines with the arch, the options, the
  /// saved source path and the full log. "ok" when ok.
  std::string message() const;

private:
  StatusCode code_ = StatusCode::Ok;
  std::shared_ptr<const CompileDiagnostics> diagnostics_;
};

/// A value, or a failed Status.
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
  /// The failure, for code written against the model library's former
  /// Expected<T> (which called it error()). Same as status(), but only
  /// valid on a failed Result.
  const Status &error() const {
    assert(!ok() && "no error in a Result that holds a value");
    return status_;
  }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace attnc

#endif // ATTNC_SUPPORT_STATUS_H
