//===- KernelSet.h - Kernels with their ABIs; bundles -----------*- C++ -*-===//
//
// A KernelSet is what one CUDA source becomes: the ABI of each kernel in it
// and one binary per arch holding all of them. It is plain data (no CUDA
// handles), so it can be written to and read from an AOT bundle:
//
//   <dir>/manifest.json           format, versions, kernel ABIs, binaries
//   <dir>/kernels.<arch>.cubin    one per arch
//
//   {
//     "format": "attnc-kernel-bundle", "format_version": 1,
//     "attnc_version": "0.1.0", "nvrtc_version": "13.0",
//     "kernels": [<kernel ABI>, ...],
//     "binaries": [{"arch": "sm_90a", "file": "kernels.sm_90a.cubin",
//                   "size": 3568, "sha256": "<64 hex digits>"}]
//   }
//
// Loading a bundle needs neither NVRTC nor a GPU. Every cubin is checked
// against its size and SHA-256 (Corrupt on mismatch), and against the ABI:
// each kernel must be an entry point in it. Compiled sets are also checked
// against the PTX: each kernel's parameter sizes must match its ABI, so a
// source and an ABI that drifted apart fail at compile time, not as a
// memory fault at launch.
//
// Thread safety: a KernelSet is immutable; share it freely.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_KERNELSET_H
#define ATTNC_RUNTIME_KERNELSET_H

#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Runtime/KernelCache.h"
#include "attnc/Support/Status.h"

#include <string>
#include <string_view>
#include <vector>

namespace attnc::runtime {

/// The binary of a kernel set for one arch.
struct KernelBinary {
  std::string arch;          ///< "sm_90a"
  std::string cubin;         ///< ELF bytes
  std::string ptx;           ///< empty for sets loaded from a bundle
  std::string nvrtc_version; ///< "13.0"; empty if unknown
  /// Identity for the module cache: the compile key, or the cubin's SHA-256
  /// for bundles.
  std::string key;
  /// How it was obtained (memory/disk/compiled/bundle) and how long it took.
  CacheReport report;
};

class KernelSet {
public:
  /// Checks the set: at least one kernel and one binary, unique kernel names
  /// and archs, every kernel an entry point of every cubin, and (where PTX is
  /// present) every kernel's parameter sizes equal to its ABI's.
  static Result<KernelSet> create(std::vector<KernelAbi> kernels,
                                  std::vector<KernelBinary> binaries);

  /// Reads a bundle directory written by writeBundle (or the attnc CLI).
  static Result<KernelSet> loadBundle(const std::string &directory);
  /// Writes this set as a bundle into `directory` (created if needed). Each
  /// file is written atomically; manifest.json last.
  Status writeBundle(const std::string &directory) const;

  const std::vector<KernelAbi> &kernels() const { return kernels_; }
  /// The kernel called `name`, or null.
  const KernelAbi *findKernel(std::string_view name) const;
  const std::vector<KernelBinary> &binaries() const { return binaries_; }
  /// The binary for exactly `arch`, or null.
  const KernelBinary *binaryForArch(std::string_view arch) const;

private:
  KernelSet() = default;
  std::vector<KernelAbi> kernels_;
  std::vector<KernelBinary> binaries_;
};

/// The binary that runs on a device of compute capability major.minor: the
/// exact sm_XY[a|f] first; else a plain sm_XZ or family sm_XZf with Z <= Y
/// (the newest such). "a" binaries run only on their exact arch. Null if
/// none fits.
const KernelBinary *
selectBinaryForDevice(const std::vector<KernelBinary> &binaries, int major,
                      int minor);

/// The kernel entry points (global functions flagged as CUDA entries) in a
/// cubin's symbol table. Corrupt if it is not a well-formed 64-bit CUDA ELF.
Result<std::vector<std::string>> listCubinKernels(std::string_view cubin);

/// The byte size of each parameter of `.entry <kernel>(...)` in PTX text.
/// NotFound if the PTX has no such entry.
Result<std::vector<size_t>> ptxEntryParamSizes(std::string_view ptx,
                                               const std::string &kernel);

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_KERNELSET_H
