//===- Error.h - Former names of attnc::Status and Result -------*- C++ -*-===//
//
// The model library used to have its own error type (Error {field, rule})
// and Expected<T>; both are now the one status type of attnc
// (attnc/Support/Status.h), whose field and rule members keep the
// field-and-rule style. These aliases keep code written against the old
// names compiling (Layout.{h,cpp}, dialect/, codegen/) until it is renamed;
// new code says Status and Result.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_ERROR_H
#define ATTNC_MODEL_ERROR_H

#include "attnc/Support/Status.h"

namespace attnc {

/// Former name of Status. Error{field, rule} is an InvalidArgument failure.
using Error = Status;
/// Former name of Result<T>.
template <typename T> using Expected = Result<T>;

} // namespace attnc

#endif // ATTNC_MODEL_ERROR_H
