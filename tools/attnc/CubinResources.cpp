//===- CubinResources.cpp - Registers and stack from a cubin --------------===//
#include "CubinResources.h"

#include <cstring>
#include <optional>
#include <map>

namespace attnc::tools {
namespace {

Status corrupt(const std::string &rule) {
  return Status(StatusCode::Corrupt, "cubin", rule);
}

/// Little-endian reads within the file; false when [offset, offset + size)
/// is not inside it.
struct Reader {
  std::string_view bytes;
  bool inside(uint64_t offset, uint64_t size) const {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  }
  uint64_t read(uint64_t offset, int size) const {
    uint64_t value = 0;
    for (int i = size - 1; i >= 0; --i)
      value = (value << 8) | uint8_t(bytes[offset + i]);
    return value;
  }
};

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0, entry_size = 0;
};

constexpr uint32_t kSymtab = 2;     // SHT_SYMTAB
constexpr uint32_t kNobits = 8;     // SHT_NOBITS (no bytes in the file)
constexpr uint8_t kSizedValue = 4;  // EIFMT_SVAL
constexpr uint8_t kRegisterCount = 0x2f;
constexpr uint8_t kFrameSize = 0x11;
constexpr uint8_t kMinStackSize = 0x12;

} // namespace

Result<std::vector<KernelResources>> readCubinResources(std::string_view cubin) {
  Reader in{cubin};
  // ELF header: magic, class 2 (64-bit), data 1 (little-endian).
  if (!in.inside(0, 64) || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0)
    return corrupt("not an ELF file (no \\x7fELF magic)");
  if (cubin[4] != 2 || cubin[5] != 1)
    return corrupt("not a 64-bit little-endian ELF file");
  uint64_t sectionOffset = in.read(0x28, 8);
  uint64_t entrySize = in.read(0x3a, 2), count = in.read(0x3c, 2),
           namesIndex = in.read(0x3e, 2);
  if (entrySize < 64 || !in.inside(sectionOffset, entrySize * count))
    return corrupt("section headers run past the end of the file");
  std::vector<Section> sections(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t at = sectionOffset + i * entrySize;
    Section &s = sections[i];
    s.name = uint32_t(in.read(at, 4));
    s.type = uint32_t(in.read(at + 4, 4));
    s.offset = in.read(at + 24, 8);
    s.size = in.read(at + 32, 8);
    s.link = uint32_t(in.read(at + 40, 4));
    s.entry_size = in.read(at + 56, 8);
    if (s.type != kNobits && !in.inside(s.offset, s.size))
      return corrupt("section " + std::to_string(i) +
                     " runs past the end of the file");
  }
  if (namesIndex >= count)
    return corrupt("the section-name table index is out of range");
  auto stringAt = [&](const Section &table,
                      uint64_t offset) -> std::optional<std::string> {
    if (offset >= table.size)
      return std::nullopt;
    std::string_view rest = cubin.substr(table.offset + offset,
                                         table.size - offset);
    size_t end = rest.find('\0');
    if (end == std::string_view::npos)
      return std::nullopt;
    return std::string(rest.substr(0, end));
  };

  const Section *info = nullptr, *symbols = nullptr;
  for (const Section &s : sections) {
    std::optional<std::string> name = stringAt(sections[namesIndex], s.name);
    if (!name)
      return corrupt("a section name is outside the section-name table");
    if (*name == ".nv.info")
      info = &s;
    if (s.type == kSymtab)
      symbols = &s;
  }
  if (!info)
    return corrupt("no .nv.info section");
  if (!symbols || symbols->entry_size < 24 || symbols->link >= count)
    return corrupt("no usable symbol table");
  const Section &symbolNames = sections[symbols->link];
  auto symbolName = [&](uint64_t index) -> std::optional<std::string> {
    if (index >= symbols->size / symbols->entry_size)
      return std::nullopt;
    return stringAt(symbolNames,
                    in.read(symbols->offset + index * symbols->entry_size, 4));
  };

  std::vector<KernelResources> kernels;
  std::map<std::string, size_t> byName;
  uint64_t at = info->offset, end = info->offset + info->size;
  while (at < end) {
    if (end - at < 4)
      return corrupt(".nv.info ends inside an attribute");
    uint8_t format = uint8_t(cubin[at]), attribute = uint8_t(cubin[at + 1]);
    if (format < 1 || format > kSizedValue)
      return corrupt(".nv.info: unknown attribute format " +
                     std::to_string(format));
    uint64_t size = format == kSizedValue ? in.read(at + 2, 2) : 0;
    if (end - at - 4 < size)
      return corrupt(".nv.info: an attribute runs past the section");
    if (format == kSizedValue && size == 8 &&
        (attribute == kRegisterCount || attribute == kFrameSize ||
         attribute == kMinStackSize)) {
      std::optional<std::string> name = symbolName(in.read(at + 4, 4));
      if (!name)
        return corrupt(".nv.info: an attribute names a symbol that does "
                       "not exist");
      auto [it, added] = byName.try_emplace(*name, kernels.size());
      if (added)
        kernels.push_back(KernelResources{*name});
      KernelResources &k = kernels[it->second];
      int64_t value = int64_t(in.read(at + 8, 4));
      if (attribute == kRegisterCount)
        k.registers = value;
      else if (attribute == kFrameSize)
        k.stack_frame_bytes = value;
      else
        k.min_stack_bytes = value;
    }
    at += 4 + size;
  }
  return kernels;
}

Result<KernelResources> readKernelResources(std::string_view cubin,
                                            std::string_view kernel) {
  Result<std::vector<KernelResources>> all = readCubinResources(cubin);
  if (!all)
    return all.status();
  for (const KernelResources &k : *all)
    if (k.name == kernel && k.registers >= 0)
      return k;
  return Status(StatusCode::NotFound, "kernel",
                "the cubin records no register count for '" +
                    std::string(kernel) + "'");
}

} // namespace attnc::tools
