//===- ModelIndex.cpp - A model's kernels by the compile's input ----------===//
#include "attnc/Jit/ModelIndex.h"

#include "attnc/Support/Json.h"
#include "attnc/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <link.h>

namespace attnc::jit {
namespace {

/// Finds the GNU build ID note of the loaded object that contains `address`.
struct BuildIdSearch {
  const void *address;
  std::string hex;
};

int findBuildId(struct dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<BuildIdSearch *>(data);
  auto target = reinterpret_cast<ElfW(Addr)>(search->address);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    ElfW(Addr) start = info->dlpi_addr + segment.p_vaddr;
    contains = segment.p_type == PT_LOAD && target >= start &&
               target < start + segment.p_memsz;
  }
  if (!contains)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE)
      continue;
    const char *note =
        reinterpret_cast<const char *>(info->dlpi_addr + segment.p_vaddr);
    const char *end = note + segment.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const auto *header = reinterpret_cast<const ElfW(Nhdr) *>(note);
      const char *name = note + sizeof(ElfW(Nhdr));
      const char *desc = name + ((header->n_namesz + 3) & ~3u);
      const char *next = desc + ((header->n_descsz + 3) & ~3u);
      if (next > end)
        break;
      if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        static const char digits[] = "0123456789abcdef";
        for (uint32_t b = 0; b < header->n_descsz; ++b) {
          search->hex.push_back(digits[uint8_t(desc[b]) >> 4]);
          search->hex.push_back(digits[uint8_t(desc[b]) & 15]);
        }
        return 1;
      }
      note = next;
    }
  }
  return 1; // the object, without a build ID
}

void putField(std::string &out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

/// What an index entry's binaries were compiled by, kept in the entry.
constexpr const char *kIndexFormat = "attnc-model-index-v1";

} // namespace

const std::string &buildIdentity() {
  static const std::string identity = [] {
    BuildIdSearch search{reinterpret_cast<const void *>(&findBuildId), ""};
    dl_iterate_phdr(findBuildId, &search);
    return search.hex;
  }();
  return identity;
}

std::string modelCompileInput(std::string_view front_end, std::string_view text,
                              const ModelCompileOptions &options) {
  std::string input;
  putField(input, "attnc-model-compile-input-v1");
  putField(input, front_end);
  putField(input, options.arch);
  putField(input, std::to_string(options.layer.tp));
  putField(input, std::to_string(options.layer.rank));
  putField(input, std::to_string(options.layer.block_size));
  putField(input, options.layer.dtype);
  putField(input, std::to_string(int(options.layer.kv_dtype)));
  putField(input, options.tiering == Tiering::On    ? "tiered"
                  : options.tiering == Tiering::Off ? "optimised"
                                                    : "baseline");
  putField(input, text);
  return input;
}

std::string modelIndexKey(const runtime::Context &context,
                          const std::string &compile_input) {
  if (buildIdentity().empty())
    return "";
  std::string nvrtc =
      runtime::NvrtcLibrary::identity(context.options().nvrtc_library_path);
  if (nvrtc.empty())
    return "";
  Sha256 hasher;
  hasher.updateField(kIndexFormat);
  hasher.updateField(runtime::attncVersion());
  hasher.updateField(buildIdentity());
  hasher.updateField(nvrtc);
  const char *cuda_home = std::getenv("CUDA_HOME");
  hasher.updateField(cuda_home ? cuda_home : "");
  hasher.updateField(std::to_string(context.options().cuda_include_dirs.size()));
  for (const std::string &dir : context.options().cuda_include_dirs)
    hasher.updateField(dir);
  hasher.updateField(compile_input);
  return Sha256::hex(hasher.finish());
}

std::string encodeModelIndex(const CompiledModel &model) {
  nlohmann::json kernels = nlohmann::json::array();
  std::string nvrtc_version;
  for (const CompiledKernel &kernel : model.kernels) {
    if (!kernel.set || kernel.optimised || kernel.set->kernels().size() != 1)
      return "";
    nlohmann::json binaries = nlohmann::json::array();
    for (const runtime::KernelBinary &binary : kernel.set->binaries()) {
      if (binary.report.outcome == runtime::BuildOutcome::LoadedFromBundle)
        return "";
      nvrtc_version = binary.nvrtc_version;
      binaries.push_back({{"arch", binary.arch}, {"key", binary.key}});
    }
    kernels.push_back({
        {"name", kernel.name},
        {"kind", kernel.kind},
        {"layer", kernel.layer},
        {"schedule", kernel.schedule},
        {"kernel_ir", kernel.kernel_ir},
        {"source", kernel.source},
        {"abi", runtime::kernelAbiToJson(kernel.set->kernels().front(), -1)},
        {"binaries", binaries},
    });
  }
  nlohmann::json entry = {
      {"format", kIndexFormat},
      {"nvrtc_version", nvrtc_version},
      {"arch", model.arch},
      {"model_type", model.model_type},
      {"config_spec", model.config_spec},
      {"kernels", kernels},
  };
  return entry.dump();
}

std::unique_ptr<CompiledModel> decodeModelIndex(runtime::Context &context,
                                                std::string_view payload) {
  // Depth: the entry holds strings only, three levels down.
  Result<nlohmann::json> parsed = json_util::parseObject(payload, "<index>", 8);
  if (!parsed)
    return nullptr;
  const nlohmann::json &entry = *parsed;
  auto text = [](const nlohmann::json &object, const char *key,
                 std::string &out) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_string())
      return false;
    out = it->get<std::string>();
    return true;
  };
  auto model = std::make_unique<CompiledModel>();
  std::string format, nvrtc_version;
  if (!text(entry, "format", format) || format != kIndexFormat ||
      !text(entry, "nvrtc_version", nvrtc_version) ||
      !text(entry, "arch", model->arch) ||
      !text(entry, "model_type", model->model_type) ||
      !text(entry, "config_spec", model->config_spec))
    return nullptr;
  auto kernels = entry.find("kernels");
  if (kernels == entry.end() || !kernels->is_array() || kernels->empty())
    return nullptr;
  for (const nlohmann::json &item : *kernels) {
    if (!item.is_object())
      return nullptr;
    CompiledKernel kernel;
    std::string abi_json;
    if (!text(item, "name", kernel.name) || !text(item, "kind", kernel.kind) ||
        !text(item, "layer", kernel.layer) ||
        !text(item, "schedule", kernel.schedule) ||
        !text(item, "kernel_ir", kernel.kernel_ir) ||
        !text(item, "source", kernel.source) || !text(item, "abi", abi_json))
      return nullptr;
    Result<runtime::KernelAbi> abi = runtime::kernelAbiFromJson(abi_json);
    if (!abi || abi->name != kernel.name)
      return nullptr;
    auto binaries = item.find("binaries");
    if (binaries == item.end() || !binaries->is_array() || binaries->empty())
      return nullptr;
    std::vector<runtime::Context::CachedBinaryRef> refs;
    for (const nlohmann::json &binary : *binaries) {
      runtime::Context::CachedBinaryRef ref;
      if (!binary.is_object() || !text(binary, "arch", ref.arch) ||
          !text(binary, "key", ref.key))
        return nullptr;
      refs.push_back(std::move(ref));
    }
    auto set = context.setFromCache({std::move(*abi)}, refs, nvrtc_version);
    if (!set || !*set)
      return nullptr;
    kernel.set = std::move(*set);
    model->kernels.push_back(std::move(kernel));
  }
  return model;
}

} // namespace attnc::jit
