//===- KernelSet.cpp - Kernel sets, cubin/PTX checks, bundles -------------===//

#include "attnc/Runtime/KernelSet.h"

#include "AbiJson.h"
#include "attnc/Runtime/NvrtcCompiler.h"
#include "attnc/Support/FileUtil.h"
#include "attnc/Support/Json.h"
#include "attnc/Support/Sha256.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <elf.h>
#include <limits>
#include <set>

namespace attnc::runtime {

using json_util::json;

namespace {

constexpr const char *kBundleFormat = "attnc-kernel-bundle";
constexpr int64_t kBundleFormatVersion = 1;
/// A manifest is kilobytes of JSON; refuse anything absurd before parsing.
constexpr std::size_t kMaxManifestBytes = std::size_t(64) << 20;
// st_other flag nvcc/NVRTC set on kernel entry points (vs device functions).
constexpr unsigned char kCudaEntryFlag = 0x10;
#ifndef EM_CUDA
#define EM_CUDA 190
#endif

Status corrupt(std::string field, std::string rule) {
  return Status(StatusCode::Corrupt, std::move(field), std::move(rule));
}

template <typename T>
bool readStruct(std::string_view bytes, uint64_t offset, T &out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

/// "sm_90a" -> {90, 'a'}; {-1, 0} if malformed.
std::pair<int, char> parseArch(std::string_view arch) {
  if (!validateArch(std::string(arch)))
    return {-1, 0};
  char suffix = arch.back() == 'a' || arch.back() == 'f' ? arch.back() : 0;
  std::string_view digits = arch.substr(3, arch.size() - 3 - (suffix ? 1 : 0));
  int number = 0;
  for (char c : digits)
    number = number * 10 + (c - '0');
  return {number, suffix};
}

std::string joinSizes(const std::vector<size_t> &sizes) {
  std::string out;
  for (size_t size : sizes)
    out += (out.empty() ? "" : ", ") + std::to_string(size);
  return "(" + out + ")";
}

/// Every kernel is an entry of the cubin, and of the PTX with the ABI's
/// parameter sizes when there is PTX.
Status checkBinary(const KernelBinary &binary,
                   const std::vector<KernelAbi> &kernels) {
  auto entries = listCubinKernels(binary.cubin);
  if (!entries)
    return Status(entries.status()).inField("cubin[" + binary.arch + "]");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelAbi &abi = kernels[i];
    std::string field = "kernels[" + std::to_string(i) + "]";
    if (std::find(entries->begin(), entries->end(), abi.name) == entries->end())
      return Status(StatusCode::NotFound, field + ".name",
                    "no kernel entry '" + abi.name + "' in the " + binary.arch +
                        " cubin (is it extern \"C\" "
                        "__global__?)");
    if (binary.ptx.empty())
      continue;
    auto sizes = ptxEntryParamSizes(binary.ptx, abi.name);
    if (!sizes)
      return Status(sizes.status()).inField(field + ".name");
    std::vector<size_t> expected;
    for (const KernelParam &param : abi.params)
      expected.push_back(param.byteSize());
    if (*sizes != expected)
      return Status(StatusCode::InvalidArgument, field + ".params",
                    "kernel '" + abi.name + "' in the source takes " +
                        std::to_string(sizes->size()) +
                        " parameters of byte sizes " + joinSizes(*sizes) +
                        " but the ABI lists " +
                        std::to_string(expected.size()) + " of sizes " +
                        joinSizes(expected));
  }
  return Status();
}

} // namespace

//===----------------------------------------------------------------------===//
// Binary inspection
//===----------------------------------------------------------------------===//

Result<std::vector<std::string>> listCubinKernels(std::string_view cubin) {
  Elf64_Ehdr header;
  if (!readStruct(cubin, 0, header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return corrupt("", "not an ELF file (a cubin starts with \\x7fELF)");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return corrupt("", "not a 64-bit little-endian ELF file");
  if (header.e_machine != EM_CUDA)
    return corrupt("", "ELF machine " + std::to_string(header.e_machine) +
                           " is not CUDA (" + std::to_string(EM_CUDA) + ")");
  if (header.e_shentsize != sizeof(Elf64_Shdr))
    return corrupt("", "unexpected ELF section header size");
  auto section = [&](uint64_t index, Elf64_Shdr &out) {
    return index < header.e_shnum &&
           readStruct(cubin, header.e_shoff + index * sizeof(Elf64_Shdr), out);
  };
  auto inBounds = [&](uint64_t offset, uint64_t size) {
    return offset <= cubin.size() && size <= cubin.size() - offset;
  };

  std::vector<std::string> kernels;
  bool found_symbols = false;
  for (uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols;
    if (!section(i, symbols))
      return corrupt("", "truncated ELF section table");
    if (symbols.sh_type != SHT_SYMTAB)
      continue;
    found_symbols = true;
    Elf64_Shdr strings;
    if (symbols.sh_entsize != sizeof(Elf64_Sym) ||
        !inBounds(symbols.sh_offset, symbols.sh_size) ||
        !section(symbols.sh_link, strings) ||
        !inBounds(strings.sh_offset, strings.sh_size))
      return corrupt("", "malformed ELF symbol table");
    std::string_view names = cubin.substr(strings.sh_offset, strings.sh_size);
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= symbols.sh_size;
         offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      readStruct(cubin, symbols.sh_offset + offset, symbol);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC ||
          !(symbol.st_other & kCudaEntryFlag))
        continue;
      size_t end = names.find('\0', symbol.st_name);
      if (symbol.st_name >= names.size() || end == std::string_view::npos)
        return corrupt("", "ELF symbol name out of bounds");
      kernels.emplace_back(names.substr(symbol.st_name, end - symbol.st_name));
    }
  }
  if (!found_symbols)
    return corrupt("", "ELF file has no symbol table");
  return kernels;
}

Result<std::vector<size_t>> ptxEntryParamSizes(std::string_view ptx,
                                               const std::string &kernel) {
  // ".entry <name>(" then the parameter list up to the matching ")".
  std::string marker = ".entry " + kernel + "(";
  size_t start = ptx.find(marker);
  if (start == std::string_view::npos)
    return Status(StatusCode::NotFound, kernel,
                  "no '.entry " + kernel +
                      "' in the PTX (is the kernel "
                      "extern \"C\" __global__?)");
  start += marker.size();
  size_t end = ptx.find(')', start);
  if (end == std::string_view::npos)
    return Status(StatusCode::Corrupt, kernel,
                  "unterminated parameter list in the PTX");
  std::string_view list = ptx.substr(start, end - start);

  auto scalarSize = [](std::string_view type) -> size_t {
    // .u64/.s64/.b64/.f64 -> 8, ... (the digits after the type letter).
    if (type.size() < 3 || type[0] != '.')
      return 0;
    std::string_view bits = type.substr(2);
    if (bits == "8")
      return 1;
    if (bits == "16")
      return 2;
    if (bits == "32")
      return 4;
    if (bits == "64")
      return 8;
    return 0;
  };

  std::vector<size_t> sizes;
  size_t position = 0;
  while (position < list.size()) {
    size_t comma = list.find(',', position);
    std::string_view item = list.substr(
        position, comma == std::string_view::npos ? std::string_view::npos
                                                  : comma - position);
    position = comma == std::string_view::npos ? list.size() : comma + 1;
    // Tokens: .param [.align N] [.ptr .global ...] .<type> name[[count]]
    std::vector<std::string_view> tokens;
    size_t i = 0;
    while (i < item.size()) {
      while (i < item.size() && std::isspace((unsigned char)item[i]))
        ++i;
      size_t j = i;
      while (j < item.size() && !std::isspace((unsigned char)item[j]))
        ++j;
      if (j > i)
        tokens.push_back(item.substr(i, j - i));
      i = j;
    }
    if (tokens.empty())
      continue;
    if (tokens[0] != ".param" || tokens.size() < 3)
      return Status(StatusCode::Corrupt, kernel,
                    "unexpected PTX parameter '" + std::string(item) + "'");
    size_t element = 0;
    for (size_t t = 1; t + 1 < tokens.size() && element == 0; ++t) {
      if (tokens[t] == ".align") {
        ++t;
        continue;
      }
      element = scalarSize(tokens[t]);
    }
    if (element == 0)
      return Status(StatusCode::Corrupt, kernel,
                    "unknown PTX parameter type in '" + std::string(item) +
                        "'");
    size_t count = 1;
    std::string_view name = tokens.back();
    if (size_t open = name.find('['); open != std::string_view::npos) {
      count = 0;
      for (size_t c = open + 1; c < name.size() && name[c] != ']'; ++c)
        count = count * 10 + size_t(name[c] - '0');
    }
    sizes.push_back(element * count);
  }
  return sizes;
}

const KernelBinary *
selectBinaryForDevice(const std::vector<KernelBinary> &binaries, int major,
                      int minor) {
  int device = major * 10 + minor;
  for (const KernelBinary &binary : binaries)
    if (parseArch(binary.arch).first == device)
      return &binary;
  const KernelBinary *best = nullptr;
  int best_number = -1;
  for (const KernelBinary &binary : binaries) {
    auto [number, suffix] = parseArch(binary.arch);
    if (number < 0 || suffix == 'a')
      continue; // arch-specific cubins run on their exact arch only
    if (number / 10 == major && number % 10 <= minor && number > best_number) {
      best = &binary;
      best_number = number;
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// KernelSet
//===----------------------------------------------------------------------===//

Result<KernelSet> KernelSet::create(std::vector<KernelAbi> kernels,
                                    std::vector<KernelBinary> binaries) {
  if (kernels.empty())
    return Status(StatusCode::InvalidArgument, "kernels",
                  "a kernel set needs at least one kernel");
  if (binaries.empty())
    return Status(StatusCode::InvalidArgument, "binaries",
                  "a kernel set needs at least one binary");
  std::set<std::string> names;
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string field = "kernels[" + std::to_string(i) + "]";
    if (Status s = validateKernelAbi(kernels[i]); !s)
      return s.inField(field);
    if (!names.insert(kernels[i].name).second)
      return Status(StatusCode::InvalidArgument, field + ".name",
                    "duplicate kernel name '" + kernels[i].name + "'");
  }
  std::set<std::string> archs;
  for (const KernelBinary &binary : binaries) {
    if (Status s = validateArch(binary.arch); !s)
      return s;
    if (!archs.insert(binary.arch).second)
      return Status(StatusCode::InvalidArgument, "binaries",
                    "two binaries for " + binary.arch);
    if (Status s = checkBinary(binary, kernels); !s)
      return s;
  }
  KernelSet set;
  set.kernels_ = std::move(kernels);
  set.binaries_ = std::move(binaries);
  return set;
}

const KernelAbi *KernelSet::findKernel(std::string_view name) const {
  for (const KernelAbi &abi : kernels_)
    if (abi.name == name)
      return &abi;
  return nullptr;
}

const KernelBinary *KernelSet::binaryForArch(std::string_view arch) const {
  for (const KernelBinary &binary : binaries_)
    if (binary.arch == arch)
      return &binary;
  return nullptr;
}

Status KernelSet::writeBundle(const std::string &directory) const {
  if (Status s = file_util::makeDirectories(directory); !s)
    return s;
  nlohmann::ordered_json manifest;
  manifest["format"] = kBundleFormat;
  manifest["format_version"] = kBundleFormatVersion;
  manifest["attnc_version"] = attncVersion();
  for (const KernelBinary &binary : binaries_)
    if (!binary.nvrtc_version.empty()) {
      manifest["nvrtc_version"] = binary.nvrtc_version;
      break;
    }
  manifest["kernels"] = nlohmann::ordered_json::array();
  for (const KernelAbi &abi : kernels_)
    manifest["kernels"].push_back(kernelAbiToJsonValue(abi));
  manifest["binaries"] = nlohmann::ordered_json::array();
  for (const KernelBinary &binary : binaries_) {
    std::string file = "kernels." + binary.arch + ".cubin";
    if (Status s =
            file_util::writeFileAtomic(directory + "/" + file, binary.cubin);
        !s)
      return s;
    nlohmann::ordered_json entry;
    entry["arch"] = binary.arch;
    entry["file"] = file;
    entry["size"] = binary.cubin.size();
    entry["sha256"] = Sha256::hexOf(binary.cubin);
    manifest["binaries"].push_back(entry);
  }
  // Last, so a directory with a manifest has every file it names.
  return file_util::writeFileAtomic(directory + "/manifest.json",
                                    manifest.dump(2) + "\n");
}

Result<KernelSet> KernelSet::loadBundle(const std::string &directory) {
  std::string manifest_path = directory + "/manifest.json";
  auto text = file_util::readFile(manifest_path, kMaxManifestBytes);
  if (!text)
    return text.status();
  auto manifest = json_util::parseObject(*text, manifest_path, kMaxJsonDepth);
  if (!manifest)
    return manifest.status();
  auto fail = [&](Status status) { return status.inField(manifest_path); };
  if (Status s = json_util::checkKnownKeys(*manifest, "",
                                           {"format", "format_version",
                                            "attnc_version", "nvrtc_version",
                                            "kernels", "binaries"});
      !s)
    return fail(s);

  auto format = json_util::required(*manifest, "", "format");
  if (!format)
    return fail(format.status());
  if (!(*format)->is_string() || **format != kBundleFormat)
    return fail(Status(StatusCode::InvalidArgument, "format",
                       std::string("must be \"") + kBundleFormat + "\""));
  auto version = json_util::required(*manifest, "", "format_version");
  if (!version)
    return fail(version.status());
  auto version_number = json_util::readInteger(**version, "format_version", 1,
                                               kBundleFormatVersion);
  if (!version_number)
    return fail(Status(StatusCode::InvalidArgument, "format_version",
                       "this attnc reads bundle format version " +
                           std::to_string(kBundleFormatVersion) + " (got " +
                           (*version)->dump() + ")"));
  std::string nvrtc_version;
  for (const char *informational : {"attnc_version", "nvrtc_version"})
    if (auto it = manifest->find(informational); it != manifest->end()) {
      auto value = json_util::readString(*it, informational);
      if (!value)
        return fail(value.status());
      if (std::string(informational) == "nvrtc_version")
        nvrtc_version = *value;
    }

  auto kernels_json = json_util::required(*manifest, "", "kernels");
  if (!kernels_json)
    return fail(kernels_json.status());
  auto kernels = kernelAbiArrayFromJsonValue(**kernels_json);
  if (!kernels)
    return fail(Status(kernels.status()).inField("kernels"));

  auto binaries_json = json_util::required(*manifest, "", "binaries");
  if (!binaries_json)
    return fail(binaries_json.status());
  if (!(*binaries_json)->is_array() || (*binaries_json)->empty())
    return fail(Status(StatusCode::InvalidArgument, "binaries",
                       "must be a non-empty array"));
  std::vector<KernelBinary> binaries;
  for (size_t i = 0; i < (*binaries_json)->size(); ++i) {
    const json &entry = (**binaries_json)[i];
    std::string field = "binaries[" + std::to_string(i) + "]";
    auto bad = [&](Status status) { return fail(status.inField(field)); };
    if (!entry.is_object())
      return bad(Status(StatusCode::InvalidArgument, "", "must be an object"));
    if (Status s = json_util::checkKnownKeys(
            entry, "", {"arch", "file", "size", "sha256"});
        !s)
      return bad(s);
    std::string values[4];
    const char *keys[] = {"arch", "file", "sha256"};
    for (int k = 0; k < 3; ++k) {
      auto value = json_util::required(entry, "", keys[k]);
      if (!value)
        return bad(value.status());
      auto text_value = json_util::readString(**value, keys[k]);
      if (!text_value)
        return bad(text_value.status());
      values[k] = *text_value;
    }
    const std::string &arch = values[0], &file = values[1], &sha256 = values[2];
    if (Status s = validateArch(arch); !s)
      return bad(s);
    if (file.empty() || file.find('/') != std::string::npos || file == "." ||
        file == "..")
      return bad(Status(StatusCode::InvalidArgument, "file",
                        "must be a file name inside the bundle directory"));
    auto size_value = json_util::required(entry, "", "size");
    if (!size_value)
      return bad(size_value.status());
    auto size = json_util::readInteger(**size_value, "size", 1,
                                       std::numeric_limits<int64_t>::max());
    if (!size)
      return bad(size.status());

    std::string path = directory + "/" + file;
    auto cubin = file_util::readFile(path);
    if (!cubin)
      return bad(cubin.status());
    if (int64_t(cubin->size()) != *size)
      return corrupt(path, "size " + std::to_string(cubin->size()) +
                               " bytes, the manifest says " +
                               std::to_string(*size));
    std::string digest = Sha256::hexOf(*cubin);
    if (digest != sha256)
      return corrupt(path, "SHA-256 " + digest +
                               " does not match the "
                               "manifest's " +
                               sha256);
    KernelBinary binary;
    binary.arch = arch;
    binary.cubin = std::move(*cubin);
    binary.key = digest;
    binary.nvrtc_version = nvrtc_version;
    binary.report.arch = arch;
    binary.report.key = digest;
    binary.report.outcome = BuildOutcome::LoadedFromBundle;
    binary.report.entry_path = path;
    binaries.push_back(std::move(binary));
  }
  auto set = KernelSet::create(std::move(*kernels), std::move(binaries));
  if (!set) {
    // A manifest naming a kernel its cubin lacks: the bundle is inconsistent.
    Status status = set.status();
    if (status.code() == StatusCode::NotFound)
      return corrupt(manifest_path, status.message());
    return fail(status);
  }
  return set;
}

} // namespace attnc::runtime
