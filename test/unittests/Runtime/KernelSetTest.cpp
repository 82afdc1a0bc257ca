//===- KernelSetTest.cpp - Kernel sets, cubin/PTX checks, bundles ---------===//

#include "attnc/Runtime/KernelSet.h"

#include "attnc/Runtime/Context.h"
#include "attnc/Support/Sha256.h"

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

ContextOptions testContextOptions(const std::string &cache_dir) {
  ContextOptions options;
  options.cache_dir = cache_dir;
  return options;
}

/// The test source compiled into a set (through a throwaway cache).
std::shared_ptr<const KernelSet> compileTestSet(const std::string &cache_dir) {
  auto context = Context::create(testContextOptions(cache_dir));
  EXPECT_TRUE(context);
  SourceOptions options;
  options.headers[kTestHelperName] = kTestHelperSource;
  auto set = (*context)->compile(kTestSource, kTestAbiJson, options);
  EXPECT_TRUE(set) << set.status().message();
  return set ? *set : nullptr;
}

KernelBinary fakeBinary(const std::string &arch) {
  KernelBinary binary;
  binary.arch = arch;
  return binary;
}

} // namespace

TEST(CubinInspection, RejectsWhatIsNotACudaElf) {
  auto empty = listCubinKernels("");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.status().code(), StatusCode::Corrupt);
  EXPECT_NE(empty.status().message().find("not an ELF file"),
            std::string::npos);
  auto text = listCubinKernels(std::string(100, 'x'));
  ASSERT_FALSE(text);
}

TEST(CubinInspection, TruncatedCubinIsCorrupt) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler();
  ASSERT_TRUE(compiler);
  auto result = (*compiler)->compile(testRequest(), "sm_90a");
  ASSERT_TRUE(result);
  // The section table sits at the end of the file.
  auto truncated = listCubinKernels(
      std::string_view(result->cubin).substr(0, result->cubin.size() / 2));
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.status().code(), StatusCode::Corrupt);
}

TEST(PtxInspection, ParameterSizesOfRealPtx) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = testCompiler();
  ASSERT_TRUE(compiler);
  auto result = (*compiler)->compile(testRequest(), "sm_90a");
  ASSERT_TRUE(result);
  auto scale = ptxEntryParamSizes(result->ptx, "attnc_test_scale");
  ASSERT_TRUE(scale) << scale.status().message();
  EXPECT_EQ(*scale, (std::vector<size_t>{8, 4, 4}));
  auto round = ptxEntryParamSizes(result->ptx, "attnc_test_round_bf16");
  ASSERT_TRUE(round);
  EXPECT_EQ(*round, (std::vector<size_t>{8, 8, 8}));
  auto missing = ptxEntryParamSizes(result->ptx, "device_only");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
}

TEST(PtxInspection, AlignedByteArraysAndPointerAttributes) {
  const char *ptx = ".visible .entry k(\n"
                    "\t.param .align 8 .b8 k_param_0[24],\n"
                    "\t.param .u64 .ptr .global .align 16 k_param_1,\n"
                    "\t.param .f32 k_param_2,\n"
                    "\t.param .u16 k_param_3\n"
                    ")\n{\n}\n"
                    ".visible .entry empty()\n{\n}\n";
  auto sizes = ptxEntryParamSizes(ptx, "k");
  ASSERT_TRUE(sizes) << sizes.status().message();
  EXPECT_EQ(*sizes, (std::vector<size_t>{24, 8, 4, 2}));
  auto none = ptxEntryParamSizes(ptx, "empty");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(KernelSet, AbiThatDisagreesWithTheSourceIsRejected) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  auto context = Context::create(testContextOptions(dir.path()));
  ASSERT_TRUE(context);
  SourceOptions options;
  options.headers[kTestHelperName] = kTestHelperSource;

  // One parameter too many for attnc_test_scale.
  nlohmann::json abi = nlohmann::json::parse(kTestAbiJson);
  abi["kernels"][0]["params"].push_back({{"name", "extra"}, {"kind", "i32"}});
  auto extra = (*context)->compile(kTestSource, abi.dump(), options);
  ASSERT_FALSE(extra);
  EXPECT_EQ(extra.status().code(), StatusCode::InvalidArgument);
  EXPECT_EQ(extra.status().field, "kernels[0].params");
  EXPECT_NE(extra.status().message().find("(8, 4, 4)"), std::string::npos)
      << extra.status().message();

  // i64 where the kernel takes an int.
  abi = nlohmann::json::parse(kTestAbiJson);
  abi["kernels"][0]["params"][1]["kind"] = "i64";
  auto wrong_kind = (*context)->compile(kTestSource, abi.dump(), options);
  ASSERT_FALSE(wrong_kind);
  EXPECT_EQ(wrong_kind.status().field, "kernels[0].params");

  // A kernel the source does not have.
  abi = nlohmann::json::parse(kTestAbiJson);
  abi["kernels"][1]["name"] = "attnc_test_missing";
  auto missing = (*context)->compile(kTestSource, abi.dump(), options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
  EXPECT_EQ(missing.status().field, "kernels[1].name");
}

TEST(KernelSet, SelectsTheBinaryThatRunsOnTheDevice) {
  std::vector<KernelBinary> binaries = {
      fakeBinary("sm_80"), fakeBinary("sm_86"), fakeBinary("sm_90a"),
      fakeBinary("sm_100f")};
  auto pick = [&](int major, int minor) -> std::string {
    const KernelBinary *b = selectBinaryForDevice(binaries, major, minor);
    return b ? b->arch : "none";
  };
  EXPECT_EQ(pick(9, 0), "sm_90a");
  EXPECT_EQ(pick(8, 0), "sm_80");
  EXPECT_EQ(pick(8, 6), "sm_86");
  EXPECT_EQ(pick(8, 9), "sm_86");    // newest compatible minor
  EXPECT_EQ(pick(9, 1), "none");     // sm_90a runs on 9.0 only
  EXPECT_EQ(pick(10, 3), "sm_100f"); // family binary
  EXPECT_EQ(pick(12, 0), "none");    // no cubin crosses a major version
}

TEST(KernelSetBundle, RoundTripWithoutNvrtc) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  auto set = compileTestSet(dir / "cache");
  ASSERT_TRUE(set);
  std::string bundle = dir / "bundle";
  ASSERT_TRUE(set->writeBundle(bundle));
  EXPECT_TRUE(std::filesystem::exists(bundle + "/manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(bundle + "/kernels.sm_90a.cubin"));

  // A context that cannot load NVRTC still loads the bundle.
  ContextOptions options = testContextOptions(dir / "cache2");
  options.nvrtc_library_path = "/nonexistent/libnvrtc.so.13";
  auto context = Context::create(options);
  ASSERT_TRUE(context);
  auto loaded = (*context)->loadBundle(bundle);
  ASSERT_TRUE(loaded) << loaded.status().message();
  EXPECT_EQ((*loaded)->kernels(), set->kernels());
  ASSERT_EQ((*loaded)->binaries().size(), 1u);
  const KernelBinary &binary = (*loaded)->binaries()[0];
  EXPECT_EQ(binary.arch, "sm_90a");
  EXPECT_EQ(binary.cubin, set->binaries()[0].cubin);
  EXPECT_TRUE(binary.ptx.empty());
  EXPECT_EQ(binary.report.outcome, BuildOutcome::LoadedFromBundle);
  EXPECT_EQ(binary.nvrtc_version, set->binaries()[0].nvrtc_version);
  EXPECT_EQ(binary.key, Sha256::hexOf(binary.cubin));

  auto compile = (*context)->compile(kTestSource, kTestAbiJson);
  ASSERT_FALSE(compile);
  EXPECT_EQ(compile.status().code(), StatusCode::NoDriver);
  EXPECT_NE(compile.status().message().find("NVRTC not available"),
            std::string::npos);
}

TEST(KernelSetBundle, DamagedBundlesAreRejected) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  auto set = compileTestSet(dir / "cache");
  ASSERT_TRUE(set);
  std::string bundle = dir / "bundle";
  ASSERT_TRUE(set->writeBundle(bundle));
  std::string cubin_path = bundle + "/kernels.sm_90a.cubin";
  std::string cubin = readText(cubin_path);
  std::string manifest = readText(bundle + "/manifest.json");

  // A flipped byte: same size, different SHA-256.
  std::string flipped = cubin;
  flipped[flipped.size() / 2] ^= 0x10;
  writeText(cubin_path, flipped);
  auto bad_hash = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(bad_hash);
  EXPECT_EQ(bad_hash.status().code(), StatusCode::Corrupt);
  EXPECT_NE(bad_hash.status().message().find("SHA-256"), std::string::npos);

  // A truncated cubin.
  writeText(cubin_path, cubin.substr(0, 100));
  auto truncated = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.status().code(), StatusCode::Corrupt);
  EXPECT_NE(truncated.status().message().find("size 100 bytes"),
            std::string::npos);
  writeText(cubin_path, cubin);

  // A manifest naming a kernel the cubin lacks (with a matching checksum).
  nlohmann::json document = nlohmann::json::parse(manifest);
  document["kernels"][0]["name"] = "attnc_test_renamed";
  writeText(bundle + "/manifest.json", document.dump());
  auto renamed = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(renamed);
  EXPECT_EQ(renamed.status().code(), StatusCode::Corrupt);
  EXPECT_NE(renamed.status().message().find("attnc_test_renamed"),
            std::string::npos);

  // Bad manifest fields are named, with the manifest's path.
  document = nlohmann::json::parse(manifest);
  document["binaries"][0]["file"] = "../escape.cubin";
  writeText(bundle + "/manifest.json", document.dump());
  auto escape = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(escape);
  EXPECT_EQ(escape.status().field,
            bundle + "/manifest.json.binaries[0].file");

  document = nlohmann::json::parse(manifest);
  document["format_version"] = 2;
  writeText(bundle + "/manifest.json", document.dump());
  auto future = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(future);
  EXPECT_NE(future.status().message().find("format version 1"),
            std::string::npos);

  std::filesystem::remove(bundle + "/manifest.json");
  auto none = KernelSet::loadBundle(bundle);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), StatusCode::NotFound);
}
