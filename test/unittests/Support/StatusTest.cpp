//===- StatusTest.cpp - The one status type -------------------------------===//

#include "attnc/Support/Status.h"

#include <gtest/gtest.h>

#include <string>

using namespace attnc;

TEST(Status, DefaultIsOk) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(bool(ok));
  EXPECT_EQ(ok.code(), StatusCode::Ok);
  EXPECT_EQ(ok.message(), "ok");
  EXPECT_EQ(ok.diagnostics(), nullptr);
}

TEST(Status, FieldAndRuleIsAnInvalidArgument) {
  Status bad("num_key_value_heads", "must divide num_attention_heads");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(bad.field, "num_key_value_heads");
  EXPECT_EQ(bad.rule, "must divide num_attention_heads");
  EXPECT_EQ(bad.message(),
            "num_key_value_heads: must divide num_attention_heads");
}

TEST(Status, NoFieldMeansTheRuleAlone) {
  EXPECT_EQ(Status(StatusCode::Internal, "", "out of memory").message(),
            "out of memory");
}

TEST(Status, InFieldBuildsThePath) {
  EXPECT_EQ(Status("grid[0]", "r").inField("kernels[2]").field,
            "kernels[2].grid[0]");
  EXPECT_EQ(Status("[3].name", "r").inField("kernels").field,
            "kernels[3].name");
  EXPECT_EQ(Status("", "r").inField("manifest.json").field, "manifest.json");
  EXPECT_EQ(Status("a", "r").inField("").field, "a");
  Status ok;
  EXPECT_EQ(ok.inField("kernels").field, ""); // success has no field
}

TEST(Status, CompileDiagnosticsAreInTheMessage) {
  CompileDiagnostics d;
  d.arch = "sm_90a";
  d.log = "kernel.cu(3): error: expected a ';'";
  d.options = {"--std=c++17", "-arch=sm_90a"};
  d.saved_source_path = "/tmp/attnc-failed/kernel.cu";
  Status failed = Status(StatusCode::CompileError, "source", "NVRTC failed")
                      .withDiagnostics(d);
  ASSERT_NE(failed.diagnostics(), nullptr);
  EXPECT_EQ(failed.diagnostics()->arch, "sm_90a");
  EXPECT_EQ(failed.message(), "source: NVRTC failed\n"
                              "  arch: sm_90a\n"
                              "  options: --std=c++17 -arch=sm_90a\n"
                              "  source saved to: /tmp/attnc-failed/kernel.cu\n"
                              "  log:\n"
                              "kernel.cu(3): error: expected a ';'\n");
  // Copies share the diagnostics.
  Status copy = failed;
  EXPECT_EQ(copy.diagnostics(), failed.diagnostics());
}

TEST(Status, CodeNames) {
  const std::pair<StatusCode, const char *> names[] = {
      {StatusCode::Ok, "ok"},
      {StatusCode::InvalidArgument, "invalid_argument"},
      {StatusCode::CompileError, "compile_error"},
      {StatusCode::CudaError, "cuda_error"},
      {StatusCode::NoDriver, "no_driver"},
      {StatusCode::IoError, "io_error"},
      {StatusCode::Corrupt, "corrupt"},
      {StatusCode::NotFound, "not_found"},
      {StatusCode::Internal, "internal"},
  };
  for (const auto &[code, name] : names)
    EXPECT_STREQ(statusCodeName(code), name);
}

TEST(Result, HoldsAValueOrAFailure) {
  Result<std::string> value = std::string("text");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "text");
  EXPECT_EQ(value->size(), 4u);
  EXPECT_TRUE(value.status().ok());

  Result<std::string> failure = Status(StatusCode::NotFound, "x.json", "no");
  ASSERT_FALSE(failure.ok());
  EXPECT_EQ(failure.status().code(), StatusCode::NotFound);
  EXPECT_EQ(&failure.error(), &failure.status());
}
