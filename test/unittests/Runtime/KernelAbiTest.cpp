//===- KernelAbiTest.cpp - Kernel ABI JSON, validation, launch geometry ---===//

#include "attnc/Runtime/KernelAbi.h"

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <limits>

using namespace attnc;
using namespace attnc::runtime;
using nlohmann::json;

namespace {

/// An ABI that uses every feature: each kind, several dtypes, a shape with
/// symbols and constants, a launch scalar, every grid form (a plus
/// included), shared memory, hints.
KernelAbi fullAbi() {
  KernelAbi abi;
  abi.name = "fused_preprocess_192_128";
  abi.params = {
      {"qkv", ParamKind::Pointer, ElementType::BF16,
       std::vector<ShapeDim>{ShapeDim::named("num_tokens"),
                             ShapeDim::constant(8192)}},
      {"k_cache", ParamKind::Pointer, ElementType::Fp8E4M3, std::nullopt},
      {"slot_mapping", ParamKind::Pointer, ElementType::I64,
       std::vector<ShapeDim>{ShapeDim::named("num_tokens")}},
      {"num_tokens", ParamKind::I32, ElementType::F32, std::nullopt},
      {"max_positions", ParamKind::I64, ElementType::F32, std::nullopt},
      {"eps", ParamKind::F32, ElementType::F32, std::nullopt},
  };
  abi.launch_scalars = {"num_sequences"};
  abi.block = {128, 2, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 3, 4),
              GridDimRule::ceilDiv("num_sequences", 1, 1),
              GridDimRule::fixed(5)};
  abi.dynamic_shared_memory_bytes = 49152;
  return abi;
}

/// The split-KV attention form: grid x is ceil_div(num_tokens * 8, 64) +
/// num_seqs, z follows a parameter the launcher picks, and hints tell it how.
KernelAbi splitKvAbi() {
  KernelAbi abi;
  abi.name = "attnc_test_layer__attention";
  abi.params = {
      {"query", ParamKind::Pointer, ElementType::BF16, std::nullopt},
      {"workspace", ParamKind::Pointer, ElementType::F32,
       std::vector<ShapeDim>{ShapeDim::constant(4096)}},
      {"num_tokens", ParamKind::I32, ElementType::F32, std::nullopt},
      {"num_seqs", ParamKind::I32, ElementType::F32, std::nullopt},
      {"num_kv_splits", ParamKind::I32, ElementType::F32, std::nullopt},
  };
  abi.launch_scalars = {"extra_rows"};
  abi.block = {128, 1, 1};
  abi.grid = {GridDimRule::ceilDivPlus("num_tokens", 8, 64, "num_seqs"),
              GridDimRule::fixed(2),
              GridDimRule::ceilDiv("num_kv_splits", 1, 1)};
  abi.hints = {{"target_ctas", 264}, {"max_kv_splits", 64}};
  return abi;
}

/// The valid single-kernel JSON the bad-field cases mutate.
json baseJson() {
  return json::parse(R"({
    "name": "k",
    "params": [
      {"name": "data", "kind": "pointer", "dtype": "f32"},
      {"name": "n", "kind": "i32"},
      {"name": "ptr2", "kind": "pointer", "dtype": "f16"}
    ],
    "block": [128, 1, 1],
    "grid": [{"value": "n", "multiplier": 1, "divisor": 128}, 1, 1],
    "dynamic_shared_memory_bytes": 0
  })");
}

} // namespace

TEST(KernelAbi, RoundTripKeepsEveryField) {
  KernelAbi abi = fullAbi();
  ASSERT_TRUE(validateKernelAbi(abi)) << validateKernelAbi(abi).message();
  std::string text = kernelAbiToJson(abi);
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, abi);
  EXPECT_EQ(kernelAbiToJson(*back), text);

  // The JSON spells the documented form.
  json document = json::parse(text);
  EXPECT_EQ(document["params"][0]["shape"],
            json::parse(R"(["num_tokens", 8192])"));
  EXPECT_EQ(document["params"][1]["dtype"], "fp8_e4m3");
  EXPECT_FALSE(document["params"][3].contains("dtype"));
  EXPECT_EQ(
      document["grid"][0],
      json::parse(R"({"value": "num_tokens", "multiplier": 3, "divisor": 4})"));
  EXPECT_EQ(document["grid"][2], 5);
  EXPECT_EQ(document["launch_scalars"], json::parse(R"(["num_sequences"])"));
  EXPECT_EQ(document["dynamic_shared_memory_bytes"], 49152);
}

TEST(KernelAbi, PlusAndHintsRoundTrip) {
  KernelAbi abi = splitKvAbi();
  ASSERT_TRUE(validateKernelAbi(abi)) << validateKernelAbi(abi).message();
  std::string text = kernelAbiToJson(abi);
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, abi);
  EXPECT_EQ(kernelAbiToJson(*back), text);
  EXPECT_EQ(back->grid[0].plus, "num_seqs");
  EXPECT_EQ(back->hint("target_ctas"), std::optional<int64_t>(264));
  EXPECT_EQ(back->hint("max_kv_splits"), std::optional<int64_t>(64));
  EXPECT_EQ(back->hint("nope"), std::nullopt);

  json document = json::parse(text);
  EXPECT_EQ(document["grid"][0], json::parse(R"({"value": "num_tokens",
      "multiplier": 8, "divisor": 64, "plus": "num_seqs"})"));
  EXPECT_EQ(document["grid"][2], json::parse(R"({"value": "num_kv_splits",
      "multiplier": 1, "divisor": 1})")); // no "plus" when there is none
  EXPECT_EQ(document["hints"],
            json::parse(R"({"max_kv_splits": 64, "target_ctas": 264})"));

  // Both are part of equality.
  KernelAbi other = abi;
  other.grid[0].plus = "num_tokens";
  EXPECT_FALSE(other == abi);
  other = abi;
  other.hints["target_ctas"] = 132;
  EXPECT_FALSE(other == abi);
  other = abi;
  other.hints.clear();
  EXPECT_FALSE(other == abi);

  // A plus may name a launch scalar.
  abi.grid[0].plus = "extra_rows";
  ASSERT_TRUE(validateKernelAbi(abi)) << validateKernelAbi(abi).message();
  auto scalar_plus = kernelAbiFromJson(kernelAbiToJson(abi));
  ASSERT_TRUE(scalar_plus) << scalar_plus.status().message();
  EXPECT_EQ(*scalar_plus, abi);
}

TEST(KernelAbi, NoHintsAndNoPlusAreOmitted) {
  std::string text = kernelAbiToJson(fullAbi());
  json document = json::parse(text);
  EXPECT_FALSE(document.contains("hints"));
  for (const json &entry : document["grid"])
    EXPECT_FALSE(entry.is_object() && entry.contains("plus")) << entry.dump();
  // And an ABI without them reads back without them.
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->hints.empty());
  EXPECT_FALSE(back->grid[0].hasPlus());
  // Hints given as an empty object are the same as none.
  document["hints"] = json::object();
  auto empty = kernelAbiFromJson(document.dump());
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_EQ(*empty, fullAbi());
}

TEST(KernelAbi, ValidateNamesPlusAndHintFields) {
  KernelAbi abi = splitKvAbi();
  abi.grid[0].plus = "query"; // a pointer
  Status pointer = validateKernelAbi(abi);
  ASSERT_FALSE(pointer);
  EXPECT_EQ(pointer.field, "grid[0].plus");
  EXPECT_NE(pointer.message().find("a grid rule needs an i32 or i64 value"),
            std::string::npos);

  abi = splitKvAbi();
  abi.grid[2].plus = "num_sequences";
  Status unknown = validateKernelAbi(abi);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.field, "grid[2].plus");
  EXPECT_NE(unknown.message().find("neither an i32/i64 parameter nor a "
                                   "launch scalar"),
            std::string::npos);

  abi = splitKvAbi();
  abi.grid[1].plus = "num_seqs"; // grid[1] is a constant
  Status constant = validateKernelAbi(abi);
  ASSERT_FALSE(constant);
  EXPECT_EQ(constant.field, "grid[1].plus");

  abi = splitKvAbi();
  abi.hints["2x"] = 1;
  Status hint = validateKernelAbi(abi);
  ASSERT_FALSE(hint);
  EXPECT_EQ(hint.field, "hints");
  EXPECT_NE(hint.message().find("'2x' is not a C identifier"),
            std::string::npos);
}

TEST(KernelAbi, StridesRoundTripAndNameI64Parameters) {
  KernelAbi abi;
  abi.name = "strided";
  abi.params = {
      {"k_cache", ParamKind::Pointer, ElementType::BF16,
       std::vector<ShapeDim>{ShapeDim::named("num_blocks"),
                             ShapeDim::constant(16), ShapeDim::constant(8),
                             ShapeDim::constant(128)},
       std::vector<ShapeDim>{ShapeDim::named("k_block_stride"),
                             ShapeDim::named("k_token_stride"),
                             ShapeDim::constant(128), ShapeDim::constant(1)}},
      {"k_block_stride", ParamKind::I64, ElementType::F32, std::nullopt},
      {"k_token_stride", ParamKind::I64, ElementType::F32, std::nullopt},
  };
  ASSERT_TRUE(validateKernelAbi(abi)) << validateKernelAbi(abi).message();
  std::string text = kernelAbiToJson(abi);
  EXPECT_EQ(json::parse(text)["params"][0]["strides"],
            json::parse(R"(["k_block_stride", "k_token_stride", 128, 1])"));
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, abi);

  KernelAbi wrong = abi; // a stride symbol must be an i64 parameter
  wrong.params[2].kind = ParamKind::I32;
  Status s = validateKernelAbi(wrong);
  EXPECT_EQ(s.field, "params[0].strides[1]");
  EXPECT_NE(s.rule.find("must name an i64 parameter"), std::string::npos)
      << s.message();

  wrong = abi; // one stride per dim
  wrong.params[0].strides->pop_back();
  s = validateKernelAbi(wrong);
  EXPECT_EQ(s.field, "params[0].strides");
  EXPECT_NE(s.rule.find("has 3 entries, but the shape has 4 dims"),
            std::string::npos)
      << s.message();

  wrong = abi; // strides need a shape
  wrong.params[0].shape.reset();
  s = validateKernelAbi(wrong);
  EXPECT_EQ(s.field, "params[0].strides");

  // JSON errors name the entry.
  json bad = json::parse(text);
  bad["params"][0]["strides"][2] = -4;
  auto parsed = kernelAbiFromJson(bad.dump());
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.status().message().find("params[0].strides[2]"),
            std::string::npos)
      << parsed.status().message();
}

TEST(KernelAbi, WritesRoundTripsOnPointersOnly) {
  KernelAbi abi;
  abi.name = "writer";
  abi.params = {
      {"out", ParamKind::Pointer, ElementType::F32, std::nullopt},
      {"in", ParamKind::Pointer, ElementType::F32, std::nullopt},
      {"n", ParamKind::I32, ElementType::F32, std::nullopt},
  };
  abi.params[0].writes = true;
  ASSERT_TRUE(validateKernelAbi(abi)) << validateKernelAbi(abi).message();
  std::string text = kernelAbiToJson(abi);
  json document = json::parse(text);
  EXPECT_EQ(document["params"][0]["writes"], true);
  EXPECT_FALSE(document["params"][1].contains("writes")); // false: omitted
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE(back->params[0].writes);
  EXPECT_EQ(*back, abi);
  KernelAbi reader = abi;
  reader.params[0].writes = false;
  EXPECT_FALSE(reader == abi);

  KernelAbi wrong = abi; // only pointers are written through
  wrong.params[2].writes = true;
  Status s = validateKernelAbi(wrong);
  EXPECT_EQ(s.field, "params[2].writes");
  json bad = document;
  bad["params"][2]["writes"] = true;
  auto parsed = kernelAbiFromJson(bad.dump());
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.status().message().find("params[2].writes: only pointer"),
            std::string::npos)
      << parsed.status().message();
  bad = document;
  bad["params"][0]["writes"] = 1;
  parsed = kernelAbiFromJson(bad.dump());
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.status().message().find("params[0].writes: must be true "
                                           "or false"),
            std::string::npos)
      << parsed.status().message();
}

TEST(KernelAbi, ProgrammaticDependentLaunchRoundTripsAndIsOmittedWhenFalse) {
  KernelAbi abi = splitKvAbi();
  json plain = json::parse(kernelAbiToJson(abi));
  EXPECT_FALSE(plain.contains("programmatic_dependent_launch"));
  auto plain_back = kernelAbiFromJson(plain.dump());
  ASSERT_TRUE(plain_back) << plain_back.status().message();
  EXPECT_FALSE(plain_back->programmatic_dependent_launch);

  abi.programmatic_dependent_launch = true;
  std::string text = kernelAbiToJson(abi);
  json document = json::parse(text);
  EXPECT_EQ(document["programmatic_dependent_launch"], true);
  auto back = kernelAbiFromJson(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE(back->programmatic_dependent_launch);
  EXPECT_EQ(*back, abi);
  EXPECT_FALSE(*plain_back == abi) << "the flag is part of equality";

  // An explicit false reads as absent; anything but a boolean is refused.
  document["programmatic_dependent_launch"] = false;
  auto explicit_false = kernelAbiFromJson(document.dump());
  ASSERT_TRUE(explicit_false) << explicit_false.status().message();
  EXPECT_FALSE(explicit_false->programmatic_dependent_launch);
  document["programmatic_dependent_launch"] = 1;
  auto bad = kernelAbiFromJson(document.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find(
                "programmatic_dependent_launch: must be true or false"),
            std::string::npos)
      << bad.status().message();
}

TEST(KernelAbi, ListRoundTrip) {
  KernelAbi second = fullAbi();
  second.name = "other";
  second.launch_scalars.clear();
  second.grid[1] = GridDimRule::fixed(1);
  std::vector<KernelAbi> kernels = {fullAbi(), second};
  auto back = kernelAbiListFromJson(kernelAbiListToJson(kernels));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, kernels);
}

TEST(KernelAbi, DefaultsForOptionalGridFactors) {
  json document = baseJson();
  document["grid"][0] = json::parse(R"({"value": "n"})");
  auto abi = kernelAbiFromJson(document.dump());
  ASSERT_TRUE(abi) << abi.status().message();
  EXPECT_EQ(abi->grid[0].multiplier, 1);
  EXPECT_EQ(abi->grid[0].divisor, 1);
}

struct BadFieldCase {
  const char *what;
  std::function<void(json &)> mutate;
  const char *field;
  const char *rule_contains;
};

TEST(KernelAbi, BadFieldsAreNamed) {
  const BadFieldCase cases[] = {
      {"unknown dtype", [](json &j) { j["params"][0]["dtype"] = "bf32"; },
       "params[0].dtype", "unknown element type 'bf32'"},
      {"unknown kind", [](json &j) { j["params"][1]["kind"] = "u32"; },
       "params[1].kind", "unknown parameter kind 'u32'"},
      {"missing name", [](json &j) { j.erase("name"); }, "name",
       "required field is missing"},
      {"misspelled field", [](json &j) { j["dynamic_smem"] = 0; },
       "dynamic_smem", "unknown key"},
      {"dtype on a scalar", [](json &j) { j["params"][1]["dtype"] = "i32"; },
       "params[1].dtype", "only pointer parameters have a dtype"},
      {"pointer without dtype", [](json &j) { j["params"][0].erase("dtype"); },
       "params[0].dtype", "required field is missing"},
      {"shape on a scalar",
       [](json &j) { j["params"][1]["shape"] = json::array({4}); },
       "params[1].shape", "only pointer parameters have a shape"},
      {"bad shape entry",
       [](json &j) { j["params"][0]["shape"] = json::array({1.5}); },
       "params[0].shape[0]", "non-negative integer or a symbol"},
      {"duplicate parameter", [](json &j) { j["params"][2]["name"] = "data"; },
       "params[2].name", "duplicate parameter name 'data'"},
      {"parameter name not an identifier",
       [](json &j) { j["params"][0]["name"] = "2d"; }, "params[0].name",
       "not a C identifier"},
      {"kernel name not an identifier",
       [](json &j) { j["name"] = "my-kernel"; }, "name", "not a C identifier"},
      {"grid value is a pointer",
       [](json &j) { j["grid"][0]["value"] = "data"; }, "grid[0].value",
       "a grid rule needs an i32 or i64 value"},
      {"grid value unknown", [](json &j) { j["grid"][0]["value"] = "tokens"; },
       "grid[0].value", "neither an i32/i64 parameter nor a launch scalar"},
      {"zero divisor", [](json &j) { j["grid"][0]["divisor"] = 0; },
       "grid[0].divisor", "must be >= 1"},
      {"zero grid constant", [](json &j) { j["grid"][1] = 0; }, "grid[1]",
       "must be >= 1"},
      {"grid y too large", [](json &j) { j["grid"][1] = 70000; }, "grid[1]",
       "must be <= 65535"},
      {"grid entry of the wrong type", [](json &j) { j["grid"][2] = "one"; },
       "grid[2]", "must be a constant or"},
      {"block too large", [](json &j) { j["block"][0] = 2048; }, "block[0]",
       "must be <= 1024"},
      {"too many threads",
       [](json &j) {
         j["block"] = json::array({64, 32, 1});
       },
       "block", "at most 1024 threads per block (got 2048)"},
      {"block of two entries",
       [](json &j) {
         j["block"] = json::array({1, 1});
       },
       "block", "array of 3 integers"},
      {"negative shared memory",
       [](json &j) { j["dynamic_shared_memory_bytes"] = -1; },
       "dynamic_shared_memory_bytes", "must be >= 0"},
      {"launch scalar clashes with a parameter",
       [](json &j) { j["launch_scalars"] = json::array({"n"}); },
       "launch_scalars[0]", "already a parameter"},
      {"params not an array", [](json &j) { j["params"] = json::object(); },
       "params", "must be an array"},
      {"grid plus unknown",
       [](json &j) { j["grid"][0]["plus"] = "num_seqs"; }, "grid[0].plus",
       "neither an i32/i64 parameter nor a launch scalar"},
      {"grid plus is a pointer",
       [](json &j) { j["grid"][0]["plus"] = "ptr2"; }, "grid[0].plus",
       "a grid rule needs an i32 or i64 value"},
      {"grid plus not a string", [](json &j) { j["grid"][0]["plus"] = 3; },
       "grid[0].plus", "must be a string"},
      {"grid plus empty", [](json &j) { j["grid"][0]["plus"] = ""; },
       "grid[0].plus", "omit the field"},
      {"misspelled grid field",
       [](json &j) { j["grid"][0]["pluss"] = "n"; }, "grid[0].pluss",
       "unknown key"},
      {"hints not an object",
       [](json &j) { j["hints"] = json::array({264}); }, "hints",
       "must be an object"},
      {"hint value not an integer",
       [](json &j) { j["hints"] = {{"target_ctas", 2.5}}; },
       "hints.target_ctas", "must be an integer"},
      {"hint value a string",
       [](json &j) { j["hints"] = {{"max_kv_splits", "64"}}; },
       "hints.max_kv_splits", "must be an integer"},
      {"hint name not an identifier",
       [](json &j) { j["hints"] = {{"target-ctas", 1}}; }, "hints",
       "'target-ctas' is not a C identifier"},
  };
  for (const BadFieldCase &c : cases) {
    json document = baseJson();
    c.mutate(document);
    auto abi = kernelAbiFromJson(document.dump());
    ASSERT_FALSE(abi) << c.what << ": accepted";
    EXPECT_EQ(abi.status().code(), StatusCode::InvalidArgument) << c.what;
    EXPECT_EQ(abi.status().field, c.field) << c.what;
    EXPECT_NE(abi.status().rule.find(c.rule_contains),
              std::string::npos)
        << c.what << ": " << abi.status().message();
  }
}

TEST(KernelAbi, ListErrorsNameTheKernel) {
  json list = {{"kernels", json::array({baseJson(), baseJson()})}};
  list["kernels"][1]["params"][0]["dtype"] = "bf32";
  auto bad_dtype = kernelAbiListFromJson(list.dump());
  ASSERT_FALSE(bad_dtype);
  EXPECT_EQ(bad_dtype.status().field, "kernels[1].params[0].dtype");

  list["kernels"][1]["params"][0]["dtype"] = "f32";
  auto duplicate = kernelAbiListFromJson(list.dump());
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.status().field, "kernels[1].name");
  EXPECT_NE(duplicate.status().message().find("duplicate kernel name 'k'"),
            std::string::npos);

  auto empty = kernelAbiListFromJson(R"({"kernels": []})");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.status().field, "kernels");

  auto extra = kernelAbiListFromJson(R"({"kernels": [], "version": 1})");
  ASSERT_FALSE(extra);
  EXPECT_EQ(extra.status().field, "version");
}

TEST(KernelAbi, SyntaxErrorsGiveThePosition) {
  auto abi = kernelAbiFromJson("{\n  \"name\": \"k\",\n  \"params\": [,]\n}");
  ASSERT_FALSE(abi);
  EXPECT_EQ(abi.status().code(), StatusCode::InvalidArgument);
  EXPECT_NE(abi.status().message().find("line 3"), std::string::npos)
      << abi.status().message();
  auto not_object = kernelAbiFromJson("[1, 2]");
  ASSERT_FALSE(not_object);
  EXPECT_NE(not_object.status().message().find("must be a JSON object"),
            std::string::npos);
}

TEST(KernelAbi, ParamByteSizesFollowTheKind) {
  KernelAbi abi = fullAbi();
  std::vector<size_t> sizes;
  for (const KernelParam &param : abi.params)
    sizes.push_back(param.byteSize());
  EXPECT_EQ(sizes, (std::vector<size_t>{8, 8, 8, 4, 8, 4}));
}

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

namespace {
struct FullAbiArgs {
  void *qkv = nullptr, *k_cache = nullptr, *slot_mapping = nullptr;
  int32_t num_tokens = 0;
  int64_t max_positions = 0;
  float eps = 1e-6f;
  void *args[6] = {&qkv,        &k_cache,       &slot_mapping,
                   &num_tokens, &max_positions, &eps};
};
} // namespace

TEST(LaunchGeometry, GridFollowsTheRule) {
  FullAbiArgs a;
  a.num_tokens = 1001; // ceil(1001 * 3 / 4) = 751
  int64_t scalars[] = {7};
  auto geometry = computeLaunchGeometry(fullAbi(), a.args, 6, scalars, 1);
  ASSERT_TRUE(geometry) << geometry.status().message();
  EXPECT_EQ(geometry->grid, (std::array<uint32_t, 3>{751, 7, 5}));
  EXPECT_EQ(geometry->block, (std::array<uint32_t, 3>{128, 2, 1}));
  EXPECT_EQ(geometry->dynamic_shared_memory_bytes, 49152u);
  EXPECT_FALSE(geometry->empty());
}

TEST(LaunchGeometry, ReadsI64Values) {
  KernelAbi abi = fullAbi();
  abi.grid[0] = GridDimRule::ceilDiv("max_positions", 1, 1000);
  FullAbiArgs a;
  a.max_positions = (int64_t(1) << 40); // does not fit in 32 bits
  int64_t scalars[] = {1};
  auto geometry = computeLaunchGeometry(abi, a.args, 6, scalars, 1);
  ASSERT_TRUE(geometry) << geometry.status().message();
  EXPECT_EQ(geometry->grid[0], uint32_t(((int64_t(1) << 40) + 999) / 1000));
}

TEST(LaunchGeometry, ZeroTokensIsAnEmptyLaunch) {
  FullAbiArgs a;
  a.num_tokens = 0;
  int64_t scalars[] = {3};
  auto geometry = computeLaunchGeometry(fullAbi(), a.args, 6, scalars, 1);
  ASSERT_TRUE(geometry);
  EXPECT_TRUE(geometry->empty());
}

TEST(LaunchGeometry, ChecksCountsNullsAndLimits) {
  FullAbiArgs a;
  a.num_tokens = 16;
  int64_t scalars[] = {1};

  auto too_few = computeLaunchGeometry(fullAbi(), a.args, 5, scalars, 1);
  ASSERT_FALSE(too_few);
  EXPECT_EQ(too_few.status().field, "args");
  EXPECT_NE(too_few.status().message().find("takes 6 parameters"),
            std::string::npos);

  void *with_null[6] = {a.args[0], nullptr,   a.args[2],
                        a.args[3], a.args[4], a.args[5]};
  auto null_arg = computeLaunchGeometry(fullAbi(), with_null, 6, scalars, 1);
  ASSERT_FALSE(null_arg);
  EXPECT_EQ(null_arg.status().field, "args[1]");
  EXPECT_NE(null_arg.status().message().find("k_cache"), std::string::npos);

  auto no_scalars = computeLaunchGeometry(fullAbi(), a.args, 6, nullptr, 0);
  ASSERT_FALSE(no_scalars);
  EXPECT_EQ(no_scalars.status().field, "launch_scalars");

  a.num_tokens = -4;
  auto negative = computeLaunchGeometry(fullAbi(), a.args, 6, scalars, 1);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.status().field, "grid[0]");
  EXPECT_NE(negative.status().message().find("negative"), std::string::npos);

  a.num_tokens = 16;
  int64_t huge[] = {70000}; // grid y is limited to 65535
  auto too_big = computeLaunchGeometry(fullAbi(), a.args, 6, huge, 1);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.status().field, "grid[1]");
  EXPECT_NE(too_big.status().message().find("65535"), std::string::npos);
}

namespace {
struct SplitKvArgs {
  void *query = nullptr, *workspace = nullptr;
  int32_t num_tokens = 0, num_seqs = 0, num_kv_splits = 1;
  void *args[5] = {&query, &workspace, &num_tokens, &num_seqs,
                   &num_kv_splits};
};
} // namespace

TEST(LaunchGeometry, PlusIsAddedAfterTheDivision) {
  // Decode, 8 sequences: ceil(8 * 8 / 64) + 8 = 9 row blocks, 15 splits.
  SplitKvArgs a;
  a.num_tokens = 8;
  a.num_seqs = 8;
  a.num_kv_splits = 15;
  int64_t scalars[] = {0};
  auto decode = computeLaunchGeometry(splitKvAbi(), a.args, 5, scalars, 1);
  ASSERT_TRUE(decode) << decode.status().message();
  EXPECT_EQ(decode->grid, (std::array<uint32_t, 3>{9, 2, 15}));

  // 64 sequences: ceil(64 * 8 / 64) + 64 = 72.
  a.num_tokens = 64;
  a.num_seqs = 64;
  a.num_kv_splits = 2;
  auto b64 = computeLaunchGeometry(splitKvAbi(), a.args, 5, scalars, 1);
  ASSERT_TRUE(b64) << b64.status().message();
  EXPECT_EQ(b64->grid, (std::array<uint32_t, 3>{72, 2, 2}));

  // Prefill, one sequence of 1000 rows: ceil(8000 / 64) + 1 = 126.
  a.num_tokens = 1000;
  a.num_seqs = 1;
  a.num_kv_splits = 1;
  auto prefill = computeLaunchGeometry(splitKvAbi(), a.args, 5, scalars, 1);
  ASSERT_TRUE(prefill);
  EXPECT_EQ(prefill->grid[0], 126u);

  // No tokens and no sequences: an empty launch.
  a.num_tokens = 0;
  a.num_seqs = 0;
  auto empty = computeLaunchGeometry(splitKvAbi(), a.args, 5, scalars, 1);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(LaunchGeometry, PlusFromALaunchScalar) {
  KernelAbi abi = splitKvAbi();
  abi.grid[0].plus = "extra_rows";
  SplitKvArgs a;
  a.num_tokens = 100; // ceil(800 / 64) = 13
  a.num_seqs = 999;   // not used by this rule
  int64_t scalars[] = {5};
  auto geometry = computeLaunchGeometry(abi, a.args, 5, scalars, 1);
  ASSERT_TRUE(geometry) << geometry.status().message();
  EXPECT_EQ(geometry->grid[0], 18u);

  // The scalar must still be given.
  auto missing = computeLaunchGeometry(abi, a.args, 5, nullptr, 0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().field, "launch_scalars");
}

TEST(LaunchGeometry, PlusChecksSymbolsSignsAndLimits) {
  SplitKvArgs a;
  a.num_tokens = 16;
  a.num_seqs = -3;
  int64_t scalars[] = {0};
  auto negative = computeLaunchGeometry(splitKvAbi(), a.args, 5, scalars, 1);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.status().field, "grid[0]");
  EXPECT_NE(negative.status().message().find("plus 'num_seqs' is negative (-3)"),
            std::string::npos)
      << negative.status().message();

  // A plus that names nothing (an ABI that skipped validation) is an error,
  // never a read of some other argument.
  KernelAbi unvalidated = splitKvAbi();
  unvalidated.grid[0].plus = "num_sequences";
  a.num_seqs = 1;
  auto unknown = computeLaunchGeometry(unvalidated, a.args, 5, scalars, 1);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.status().field, "grid[0].plus");

  // The sum is checked against the grid limit, not just the quotient.
  KernelAbi abi = splitKvAbi();
  abi.grid[0] = GridDimRule::ceilDivPlus("num_tokens", 1, 1, "extra_rows");
  a.num_tokens = 1 << 30;
  int64_t big[] = {int64_t(1) << 30}; // 2^30 + 2^30 = 2^31 > 2^31 - 1
  auto too_big = computeLaunchGeometry(abi, a.args, 5, big, 1);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.status().field, "grid[0]");
  EXPECT_NE(too_big.status().message().find("+ extra_rows (1073741824) "
                                            "exceeds the CUDA grid limit"),
            std::string::npos)
      << too_big.status().message();
  int64_t huge[] = {std::numeric_limits<int64_t>::max()}; // no wrap-around
  auto overflow = computeLaunchGeometry(abi, a.args, 5, huge, 1);
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.status().field, "grid[0]");
  int64_t fits[] = {(int64_t(1) << 30) - 1};
  auto at_limit = computeLaunchGeometry(abi, a.args, 5, fits, 1);
  ASSERT_TRUE(at_limit) << at_limit.status().message();
  EXPECT_EQ(at_limit->grid[0], uint32_t((int64_t(1) << 31) - 1));

  // Along y and z the limit is 65535.
  abi = splitKvAbi();
  abi.grid[2] = GridDimRule::ceilDivPlus("num_kv_splits", 1, 1, "extra_rows");
  a.num_tokens = 8;
  a.num_kv_splits = 65535;
  int64_t one[] = {1};
  auto z = computeLaunchGeometry(abi, a.args, 5, one, 1);
  ASSERT_FALSE(z);
  EXPECT_EQ(z.status().field, "grid[2]");
  EXPECT_NE(z.status().message().find("65535 along z"), std::string::npos);
}

TEST(Status, MessagesCarryTheFieldPath) {
  Status s(StatusCode::InvalidArgument, "dtype", "unknown");
  s.inField("[2]").inField("kernels");
  EXPECT_EQ(s.message(), "kernels[2].dtype: unknown");
  EXPECT_STREQ(statusCodeName(StatusCode::NoDriver), "no_driver");
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().message(), "ok");
}
