//===- FuzzUtil.h - Shared by the libFuzzer targets -------------*- C++ -*-===//
//
// A finding is a crash: an invariant of a reader that does not hold (a round
// trip that changes the value, a Status without a rule) aborts with a message,
// so that libFuzzer saves the input like any sanitizer report.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_TEST_FUZZ_FUZZUTIL_H
#define ATTNC_TEST_FUZZ_FUZZUTIL_H

#include "attnc/Support/Status.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace attnc::fuzz {

[[noreturn]] inline void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "attnc fuzz invariant failed: %s\n%s\n", what,
               detail.c_str());
  std::abort();
}

/// Bad input must be refused with an error that says what is wrong.
inline void checkError(const Status &status) {
  if (status.ok())
    fail("an error Status is OK", "");
  if (status.rule.empty())
    fail("an error Status has no rule", status.message());
}

} // namespace attnc::fuzz

#endif // ATTNC_TEST_FUZZ_FUZZUTIL_H
