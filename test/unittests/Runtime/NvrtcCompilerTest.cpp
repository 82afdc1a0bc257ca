//===- NvrtcCompilerTest.cpp - NVRTC loading, compiling, compile errors ---===//

#include "attnc/Runtime/NvrtcCompiler.h"

#include "attnc/Runtime/KernelSet.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {
bool contains(const std::vector<std::string> &list, const std::string &item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}
} // namespace

TEST(NvrtcLibrary, LoadsAndReportsVersion) {
  ATTNC_REQUIRE_NVRTC();
  auto library = NvrtcLibrary::load();
  ASSERT_TRUE(library);
  EXPECT_GE((*library)->version().major, 12);
  EXPECT_NE((*library)->path().find("libnvrtc"), std::string::npos);
  const std::vector<int> &archs = (*library)->supportedArchs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST(NvrtcLibrary, MissingLibraryIsAClearError) {
  auto library = NvrtcLibrary::load("/nonexistent/libnvrtc.so.13");
  ASSERT_FALSE(library);
  EXPECT_EQ(library.status().code(), StatusCode::NoDriver);
  EXPECT_NE(library.status().message().find(
                "NVRTC not available:\n  dlopen /nonexistent/libnvrtc.so.13 "
                "failed: "),
            std::string::npos)
      << library.status().message();
}

TEST(NvrtcLibrary, LibraryWithoutNvrtcSymbolsIsRejected) {
  auto library = NvrtcLibrary::load("libm.so.6");
  ASSERT_FALSE(library);
  EXPECT_EQ(library.status().code(), StatusCode::NoDriver);
  EXPECT_NE(
      library.status().message().find("has no symbol nvrtcGetErrorString"),
      std::string::npos)
      << library.status().message();
}

TEST(NvrtcCompiler, CompilesWithInMemoryHeaderAndToolkitHeaders) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler();
  ASSERT_TRUE(compiler) << compiler.status().message();
  auto result = (*compiler)->compile(testRequest(), "sm_90a");
  ASSERT_TRUE(result) << result.status().message();

  EXPECT_EQ(result->arch, "sm_90a");
  ASSERT_GE(result->cubin.size(), 4u);
  EXPECT_EQ(result->cubin.substr(0, 4), std::string("\x7f"
                                                    "ELF"));
  EXPECT_NE(result->ptx.find(".entry attnc_test_scale("), std::string::npos);
  EXPECT_NE(result->ptx.find(".entry attnc_test_round_bf16("),
            std::string::npos);
  EXPECT_NE(result->ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_GT(result->compile_ms, 0.0);

  // The options are exactly what optionsFor says, and include the CUDA 13
  // include dir and its cccl subdirectory.
  EXPECT_EQ(result->options, (*compiler)->optionsFor(testRequest(), "sm_90a"));
  EXPECT_EQ(result->options[0], "--gpu-architecture=sm_90a");
  EXPECT_TRUE(contains(result->options, "-std=c++17"));
  bool has_cccl = std::any_of(result->options.begin(), result->options.end(),
                              [](const std::string &o) {
                                return o.rfind("-I", 0) == 0 && o.size() > 5 &&
                                       o.compare(o.size() - 5, 5, "/cccl") == 0;
                              });
  EXPECT_TRUE(has_cccl);

  // The cubin's entry points are the two kernels, not the device function.
  auto kernels = listCubinKernels(result->cubin);
  ASSERT_TRUE(kernels) << kernels.status().message();
  std::sort(kernels->begin(), kernels->end());
  EXPECT_EQ(*kernels, (std::vector<std::string>{"attnc_test_round_bf16",
                                                "attnc_test_scale"}));
}

TEST(NvrtcCompiler, EachArchGetsItsOwnCubin) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler();
  ASSERT_TRUE(compiler);
  auto output =
      (*compiler)->compileForArchs(testRequest(), {"sm_90a", "sm_80"});
  ASSERT_TRUE(output) << output.status().message();
  ASSERT_EQ(output->archs.size(), 2u);
  EXPECT_EQ(output->archs[0].arch, "sm_90a");
  EXPECT_EQ(output->archs[1].arch, "sm_80");
  EXPECT_NE(output->archs[0].cubin, output->archs[1].cubin);
  EXPECT_NE(output->archs[1].ptx.find(".target sm_80"), std::string::npos);
  EXPECT_GE(output->compile_ms,
            output->archs[0].compile_ms + output->archs[1].compile_ms - 1e-9);
}

TEST(NvrtcCompiler, ExtraOptionsReachNvrtc) {
  ATTNC_REQUIRE_NVRTC();
  TempDir failed;
  auto compiler = testCompiler(failed.path());
  ASSERT_TRUE(compiler);
  CompileRequest request;
  request.source = "#ifndef ATTNC_TEST_FLAG\n#error ATTNC_TEST_FLAG missing\n"
                   "#endif\nextern \"C\" __global__ void k() {}\n";
  EXPECT_FALSE((*compiler)->compile(request, "sm_90a"));
  request.extra_options = {"-DATTNC_TEST_FLAG=1"};
  auto result = (*compiler)->compile(request, "sm_90a");
  ASSERT_TRUE(result) << result.status().message();
  EXPECT_EQ(result->options.back(), "-DATTNC_TEST_FLAG=1");
}

TEST(NvrtcCompiler, CompileErrorCarriesLogOptionsAndSavedSource) {
  ATTNC_REQUIRE_NVRTC();
  TempDir failed;
  auto compiler = testCompiler(failed.path());
  ASSERT_TRUE(compiler);
  CompileRequest request;
  request.source_name = "broken_kernel.cu";
  request.source = "#include \"attnc/helper.cuh\"\n"
                   "extern \"C\" __global__ void broken(float *x) {\n"
                   "  x[0] = undeclared_variable;\n"
                   "}\n";
  request.headers["attnc/helper.cuh"] = "#pragma once\n";
  request.extra_options = {"-DATTNC_MARKER=7"};
  auto result = (*compiler)->compile(request, "sm_90a");
  ASSERT_FALSE(result);
  const Status &status = result.status();
  EXPECT_EQ(status.code(), StatusCode::CompileError);
  const CompileDiagnostics *diagnostics = status.diagnostics();
  ASSERT_NE(diagnostics, nullptr);

  // The log names the file and line of the error.
  EXPECT_NE(diagnostics->log.find("broken_kernel.cu(3)"), std::string::npos)
      << diagnostics->log;
  EXPECT_NE(diagnostics->log.find("undeclared_variable"), std::string::npos);
  EXPECT_EQ(diagnostics->arch, "sm_90a");
  EXPECT_EQ(diagnostics->options, (*compiler)->optionsFor(request, "sm_90a"));
  EXPECT_TRUE(contains(diagnostics->options, "-DATTNC_MARKER=7"));

  // The source is saved, under the failed-source directory, with its header
  // and a compile.txt holding the options and the log.
  ASSERT_FALSE(diagnostics->saved_source_path.empty())
      << diagnostics->save_error;
  EXPECT_EQ(diagnostics->saved_source_path.rfind(failed.path(), 0), 0u);
  EXPECT_EQ(readText(diagnostics->saved_source_path), request.source);
  std::filesystem::path dir =
      std::filesystem::path(diagnostics->saved_source_path).parent_path();
  EXPECT_EQ(readText((dir / "attnc/helper.cuh").string()), "#pragma once\n");
  std::string report = readText((dir / "compile.txt").string());
  EXPECT_NE(report.find("-DATTNC_MARKER=7"), std::string::npos);
  EXPECT_NE(report.find("broken_kernel.cu(3)"), std::string::npos);

  // message() alone loses nothing.
  std::string message = status.message();
  EXPECT_NE(message.find("broken_kernel.cu: NVRTC"), std::string::npos);
  EXPECT_NE(message.find("broken_kernel.cu(3)"), std::string::npos);
  EXPECT_NE(message.find("--gpu-architecture=sm_90a"), std::string::npos);
  EXPECT_NE(message.find(diagnostics->saved_source_path), std::string::npos);
}

TEST(NvrtcCompiler, CompileErrorWithoutFailedDirUsesTempDir) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler(""); // no failed-source directory configured
  ASSERT_TRUE(compiler);
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() { syntax error }\n";
  auto result = (*compiler)->compile(request, "sm_90a");
  ASSERT_FALSE(result);
  const CompileDiagnostics *diagnostics = result.status().diagnostics();
  ASSERT_NE(diagnostics, nullptr);
  ASSERT_FALSE(diagnostics->saved_source_path.empty());
  EXPECT_TRUE(std::filesystem::exists(diagnostics->saved_source_path));
  std::filesystem::remove_all(
      std::filesystem::path(diagnostics->saved_source_path)
          .parent_path()
          .parent_path());
}

TEST(NvrtcCompiler, RejectsBadArchsAndHeaderNames) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler();
  ASSERT_TRUE(compiler);
  auto virtual_arch = (*compiler)->compile(testRequest(), "compute_90a");
  ASSERT_FALSE(virtual_arch);
  EXPECT_EQ(virtual_arch.status().code(), StatusCode::InvalidArgument);
  EXPECT_EQ(virtual_arch.status().field, "arch");

  auto unsupported = (*compiler)->compile(testRequest(), "sm_91");
  ASSERT_FALSE(unsupported);
  EXPECT_NE(unsupported.status().message().find("not supported by NVRTC"),
            std::string::npos);

  CompileRequest escaping = testRequest();
  escaping.headers["../outside.h"] = "";
  auto bad_header = (*compiler)->compile(escaping, "sm_90a");
  ASSERT_FALSE(bad_header);
  EXPECT_EQ(bad_header.status().field, "headers['../outside.h']");

  auto no_archs = (*compiler)->compileForArchs(testRequest(), {});
  ASSERT_FALSE(no_archs);
  EXPECT_EQ(no_archs.status().field, "archs");
}
