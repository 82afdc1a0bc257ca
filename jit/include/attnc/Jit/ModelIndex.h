//===- ModelIndex.h - A model's kernels by the compile's input --*- C++ -*-===//
//
// The JIT's fast paths around the compiler (ModelCompiler.h):
//
// - The compile input: every byte a model compile depends on besides the
//   machine -- the front end ("config" or "ir"), the input text, the arch,
//   tp, rank, block size, dtypes and the tiering. The C API's in-process
//   memo (attnc-c/Compiler.h) keys on it as is; the disk index on the input
//   of the compile's final kernels (Tiering::On and Off end in the same
//   optimised kernels, so both use Off's).
//
// - The disk index: an entry in the kernel cache (KernelCache::
//   readIndexEntry, models/<key>.idx, checksummed and written atomically)
//   from the SHA-256 of the compile input, the attnc version, this build's
//   GNU build ID (the compiler and the device headers are in it, so a
//   rebuild never reads another build's entries), the identity of the NVRTC
//   library the context would load (its real path, size, mtime, device and
//   inode -- a stat(), not a 100 MB dlopen; it fixes the NVRTC version) and
//   the CUDA include directories, to the model's final kernels: their names,
//   kinds, layers, schedules, kernel IR, sources, ABIs, and the cache keys
//   of their binaries. A warm start reads the entry and the binaries by key:
//   no import, pipeline, emission, source hashing or NVRTC. A missing
//   binary, or an entry that does not parse, is a miss (a corrupt one is
//   reported and removed by the cache), and the full compile that follows
//   writes a fresh entry.
//
// There is no disk index when the build has no build ID or when NVRTC is
// found only through the loader's search path (then only loading it says
// which library it is).
//
// Thread safety: the functions may be called from any number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_JIT_MODELINDEX_H
#define ATTNC_JIT_MODELINDEX_H

#include "attnc/Jit/ModelCompiler.h"

#include <string>
#include <string_view>

namespace attnc::jit {

/// The GNU build ID (hex) of the object holding the compiler; "" if none.
const std::string &buildIdentity();

/// The compile input (file comment): length-prefixed fields, so that no
/// two inputs give the same bytes.
std::string modelCompileInput(std::string_view front_end, std::string_view text,
                              const ModelCompileOptions &options);

/// The disk index key of `compile_input` in `context` (64 hex digits), or
/// "" when there is no disk index (file comment).
std::string modelIndexKey(const runtime::Context &context,
                          const std::string &compile_input);

/// The index entry of a model whose kernels all have their final sets
/// (compiled for `nvrtc_version`).
std::string encodeModelIndex(const CompiledModel &model);

/// The model of an index entry, its kernel sets read from the cache by key
/// without NVRTC; null when a binary is missing or the entry is malformed.
std::unique_ptr<CompiledModel> decodeModelIndex(runtime::Context &context,
                                                std::string_view payload);

} // namespace attnc::jit

#endif // ATTNC_JIT_MODELINDEX_H
