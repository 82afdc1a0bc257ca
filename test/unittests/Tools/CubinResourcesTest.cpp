//===- CubinResourcesTest.cpp - Registers and stack from a cubin ----------===//
//
// The cubins here are built byte by byte: an ELF header, a section-name
// table, a symbol-name table, a symbol table and a .nv.info section whose
// attributes carry known values, so that every expected number is the one
// written in. (The lit test test/tools/attnc/explain.test reads real NVRTC
// cubins and compares with ptxas -v where ptxas is installed.)
//
//===----------------------------------------------------------------------===//
#include "CubinResources.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnc::tools {
namespace {

void put(std::string &out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

/// A function attribute of .nv.info: format 4 (sized value), 8 bytes of
/// symbol index and value.
std::string functionAttribute(uint8_t attribute, uint32_t symbol,
                              uint32_t value) {
  std::string a;
  a.push_back(4);
  a.push_back(char(attribute));
  put(a, 8, 2);
  put(a, symbol, 4);
  put(a, value, 4);
  return a;
}

/// A cubin with symbols 1 "alpha" and 2 "beta" and `info` as .nv.info.
std::string makeCubin(const std::string &info) {
  std::string shstrtab = std::string("\0.shstrtab\0.strtab\0.symtab\0.nv.info\0", 36);
  std::string strtab = std::string("\0alpha\0beta\0", 12);
  std::string symtab(24, '\0'); // symbol 0: null
  for (uint32_t nameOffset : {1u, 7u}) {
    std::string symbol;
    put(symbol, nameOffset, 4);
    symbol.resize(24, '\0');
    symtab += symbol;
  }
  std::string body = shstrtab + strtab + symtab + info;
  uint64_t shstrtabAt = 64, strtabAt = shstrtabAt + shstrtab.size(),
           symtabAt = strtabAt + strtab.size(),
           infoAt = symtabAt + symtab.size(),
           headersAt = infoAt + info.size();

  std::string elf = "\x7f" "ELF";
  elf += char(2); // 64-bit
  elf += char(1); // little-endian
  elf.resize(0x28, '\0');
  put(elf, headersAt, 8); // e_shoff
  elf.resize(0x3a, '\0');
  put(elf, 64, 2); // e_shentsize
  put(elf, 5, 2);  // e_shnum
  put(elf, 1, 2);  // e_shstrndx
  elf.resize(64, '\0');
  elf += body;
  auto header = [&](uint32_t name, uint32_t type, uint64_t offset,
                    uint64_t size, uint32_t link, uint64_t entrySize) {
    std::string h;
    put(h, name, 4);
    put(h, type, 4);
    put(h, 0, 8); // flags
    put(h, 0, 8); // address
    put(h, offset, 8);
    put(h, size, 8);
    put(h, link, 4);
    put(h, 0, 4); // info
    put(h, 1, 8); // alignment
    put(h, entrySize, 8);
    elf += h;
  };
  header(0, 0, 0, 0, 0, 0);
  header(1, 3, shstrtabAt, shstrtab.size(), 0, 0);       // .shstrtab
  header(11, 3, strtabAt, strtab.size(), 0, 0);          // .strtab
  header(19, 2, symtabAt, symtab.size(), 2, 24);         // .symtab
  header(27, 0x70000000, infoAt, info.size(), 3, 0);     // .nv.info
  return elf;
}

std::string twoKernels() {
  std::string info = functionAttribute(0x2f, 1, 37);   // alpha: 37 registers
  info += functionAttribute(0x11, 1, 256);             // alpha: 256-byte frame
  info += std::string("\x03\x1b\xff\x00", 4);           // a 16-bit value
  info += functionAttribute(0x2f, 2, 168);              // beta: 168 registers
  info += functionAttribute(0x11, 2, 0);
  info += functionAttribute(0x12, 2, 0);
  info += functionAttribute(0x12, 1, 256);
  return info;
}

TEST(CubinResources, ReadsEachFunctionsAttributes) {
  Result<std::vector<KernelResources>> all =
      readCubinResources(makeCubin(twoKernels()));
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alpha");
  EXPECT_EQ((*all)[0].registers, 37);
  EXPECT_EQ((*all)[0].stack_frame_bytes, 256);
  EXPECT_EQ((*all)[0].min_stack_bytes, 256);
  EXPECT_EQ((*all)[1].name, "beta");
  EXPECT_EQ((*all)[1].registers, 168);
  EXPECT_EQ((*all)[1].stack_frame_bytes, 0);

  Result<KernelResources> beta =
      readKernelResources(makeCubin(twoKernels()), "beta");
  ASSERT_TRUE(beta.ok());
  EXPECT_EQ(beta->registers, 168);
  Result<KernelResources> gamma =
      readKernelResources(makeCubin(twoKernels()), "gamma");
  ASSERT_FALSE(gamma.ok());
  EXPECT_EQ(gamma.status().code(), StatusCode::NotFound);
  EXPECT_EQ(gamma.status().field, "kernel");
}

TEST(CubinResources, MalformedFilesAreCorrupt) {
  auto expectCorrupt = [](const std::string &bytes, const std::string &rule) {
    Result<std::vector<KernelResources>> r = readCubinResources(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::Corrupt);
    EXPECT_EQ(r.status().field, "cubin");
    EXPECT_NE(r.status().rule.find(rule), std::string::npos)
        << r.status().rule;
  };
  expectCorrupt("not an elf file, just text that is long enough to be one "
                "if it had the magic",
                "not an ELF file");
  std::string good = makeCubin(twoKernels());
  // The section headers are the last 5 * 64 bytes: cut into them.
  expectCorrupt(good.substr(0, good.size() - 10),
                "section headers run past the end");
  // An attribute whose size runs past the section.
  std::string longAttribute = functionAttribute(0x2f, 1, 37);
  longAttribute[2] = 100;
  expectCorrupt(makeCubin(longAttribute), "runs past the section");
  // A symbol index past the symbol table (3 symbols).
  expectCorrupt(makeCubin(functionAttribute(0x2f, 9, 37)),
                "names a symbol that does not exist");
  // An unknown format byte.
  expectCorrupt(makeCubin(std::string("\x07\x2f\x00\x00", 4)),
                "unknown attribute format 7");
}

} // namespace
} // namespace attnc::tools
