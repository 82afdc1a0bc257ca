//===- Status.cpp - Status codes and messages -----------------------------===//

#include "attnc/Support/Status.h"

namespace attnc {

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
  if (field.empty())
    field = context;
  else if (field[0] == '[')
    field = context + field;
  else
    field = context + "." + field;
  return *this;
}

std::string Status::message() const {
  if (ok())
    return "ok";
  std::string text = field.empty() ? rule : field + ": " + rule;
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

} // namespace attnc
