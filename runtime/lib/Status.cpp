//===- Status.cpp - Status codes and messages -----------------------------===//

#include "attnc/Runtime/Status.h"

namespace attnc::runtime {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid_argument";
  case StatusCode::CompileError:
    return "compile_error";
  case StatusCode::CudaError:
    return "cuda_error";
  case StatusCode::NoDriver:
    return "no_driver";
  case StatusCode::IoError:
    return "io_error";
  case StatusCode::Corrupt:
    return "corrupt";
  case StatusCode::NotFound:
    return "not_found";
  case StatusCode::Internal:
    return "internal";
  }
  return "unknown";
}

Status &Status::inField(const std::string &context) {
  if (ok() || context.empty())
    return *this;
  if (error_.field.empty())
    error_.field = context;
  else if (error_.field[0] == '[')
    error_.field = context + error_.field;
  else
    error_.field = context + "." + error_.field;
  return *this;
}

std::string Status::message() const {
  if (ok())
    return "ok";
  std::string text = error_.message();
  if (const CompileDiagnostics *d = diagnostics()) {
    text += "\n  arch: " + d->arch;
    text += "\n  options:";
    for (const std::string &option : d->options)
      text += " " + option;
    if (!d->saved_source_path.empty())
      text += "\n  source saved to: " + d->saved_source_path;
    else
      text += "\n  source not saved: " + d->save_error;
    text += "\n  log:\n" + d->log;
    if (!d->log.empty() && d->log.back() != '\n')
      text += "\n";
  }
  return text;
}

} // namespace attnc::runtime
