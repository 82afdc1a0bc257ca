//===- KernelAbiFuzzer.cpp - the kernel-ABI JSON reader -------------------===//
//
// kernelAbiFromJson and kernelAbiListFromJson on arbitrary text (a document
// {"kernels": [...]} reads as a list, anything else as one kernel; both
// readers see every input). What they accept must validate, survive the JSON
// round trip unchanged, and give a launch geometry (or an error) for a few
// argument values, including the extremes.
//
//===----------------------------------------------------------------------===//
#include "FuzzUtil.h"

#include "attnc/Runtime/KernelAbi.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using namespace attnc;
using namespace attnc::runtime;

namespace {

/// Launches the ABI with every i32/i64/f32 argument and launch scalar set to
/// `value` (truncated to the parameter's type).
void launchWith(const KernelAbi &abi, int64_t value) {
  std::vector<int64_t> storage(abi.params.size());
  std::vector<void *> args(abi.params.size());
  for (size_t i = 0; i < abi.params.size(); ++i) {
    switch (abi.params[i].kind) {
    case ParamKind::I32: {
      int32_t v = int32_t(uint32_t(uint64_t(value)));
      std::memcpy(&storage[i], &v, sizeof v);
      break;
    }
    case ParamKind::F32: {
      float v = float(value);
      std::memcpy(&storage[i], &v, sizeof v);
      break;
    }
    case ParamKind::I64:
    case ParamKind::Pointer:
      storage[i] = value;
      break;
    }
    args[i] = &storage[i];
  }
  std::vector<int64_t> scalars(abi.launch_scalars.size(), value);
  Result<LaunchGeometry> geometry = computeLaunchGeometry(
      abi, args.data(), args.size(), scalars.data(), scalars.size());
  if (!geometry)
    fuzz::checkError(geometry.status());
}

void checkAccepted(const KernelAbi &abi) {
  if (Status status = validateKernelAbi(abi); !status.ok())
    fuzz::fail("the reader accepted an ABI that does not validate",
               status.message());
  std::string text = kernelAbiToJson(abi);
  Result<KernelAbi> again = kernelAbiFromJson(text);
  if (!again)
    fuzz::fail("the JSON of an accepted ABI does not read",
               again.status().message() + "\n" + text);
  if (!(*again == abi))
    fuzz::fail("the JSON round trip changes the ABI",
               text + "\n---\n" + kernelAbiToJson(*again));
  for (int64_t value :
       {int64_t(0), int64_t(1), int64_t(4097), int64_t(-1),
        int64_t(std::numeric_limits<int32_t>::max()),
        std::numeric_limits<int64_t>::max(),
        std::numeric_limits<int64_t>::min()})
    launchWith(abi, value);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<KernelAbi> abi = kernelAbiFromJson(text);
  if (abi)
    checkAccepted(*abi);
  else
    fuzz::checkError(abi.status());

  Result<std::vector<KernelAbi>> list = kernelAbiListFromJson(text);
  if (!list) {
    fuzz::checkError(list.status());
    return 0;
  }
  for (const KernelAbi &kernel : *list)
    checkAccepted(kernel);
  std::string list_text = kernelAbiListToJson(*list);
  Result<std::vector<KernelAbi>> list_again = kernelAbiListFromJson(list_text);
  if (!list_again || *list_again != *list)
    fuzz::fail("the JSON round trip changes the ABI list", list_text);
  return 0;
}
