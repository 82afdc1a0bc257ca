//===- CubinResources.h - Registers and stack from a cubin ------*- C++ -*-===//
//
// What ptxas decided for each kernel, read back from the cubin (an ELF file)
// rather than from a compile log, so it is there for a cache hit and for a
// bundle as much as for a fresh NVRTC compile, and needs no GPU.
//
// The facts live in the cubin's `.nv.info` section: a list of attributes,
// each a format byte, an attribute byte, then (format 4, "sized value") a
// 16-bit size and that many bytes, or (formats 1 to 3) a 16-bit value.
// The per-function attributes read here are sized values holding the
// function's symbol index (32 bits) and a 32-bit value:
//   0x2f  the register count per thread
//   0x11  the stack frame per thread, in bytes (local memory: spilled
//         registers and local arrays; ptxas -v's "bytes stack frame")
//   0x12  the minimum stack size, in bytes (the frame of the deepest call
//         chain; equal to the frame without calls)
// Spill stores and loads are not recorded in the cubin; a frame of 0 bytes
// means no spills.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_TOOLS_CUBINRESOURCES_H
#define ATTNC_TOOLS_CUBINRESOURCES_H

#include "attnc/Support/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnc::tools {

/// One kernel's resources as ptxas allocated them. -1: not recorded.
struct KernelResources {
  std::string name;               ///< the function's symbol
  int64_t registers = -1;         ///< registers per thread
  int64_t stack_frame_bytes = -1; ///< local memory per thread
  int64_t min_stack_bytes = -1;   ///< stack of the deepest call chain
};

/// Reads every function's resources from a cubin (64-bit little-endian ELF),
/// in the order `.nv.info` lists them. A file that is not such an ELF, or
/// whose sections or attributes run past its end, is a Corrupt error
/// naming "cubin" and what is wrong.
Result<std::vector<KernelResources>> readCubinResources(std::string_view cubin);

/// The resources of the function called `kernel`; NotFound on "kernel" when
/// the cubin records no register count for it.
Result<KernelResources> readKernelResources(std::string_view cubin,
                                            std::string_view kernel);

} // namespace attnc::tools

#endif // ATTNC_TOOLS_CUBINRESOURCES_H
