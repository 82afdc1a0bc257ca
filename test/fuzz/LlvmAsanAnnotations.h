/*===- LlvmAsanAnnotations.h - Force-included in the ATTNC_FUZZ build ----===*
 *
 * LLVM's headers poison and unpoison memory of their allocators
 * (BumpPtrAllocator, Recycler) when the including code is built with ASan.
 * Debian's MLIR/LLVM archives are not: a slab that an instrumented inline
 * function poisoned is then handed out by an uninstrumented one that never
 * unpoisons it, and ASan reports a use-after-poison inside MLIR on the first
 * MLIRContext. Declaring the interface first and then making the two calls
 * no-ops keeps the headers' annotations consistent with the archives; ASan
 * still checks every access of the project's code against the heap.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ATTNC_TEST_FUZZ_LLVMASANANNOTATIONS_H
#define ATTNC_TEST_FUZZ_LLVMASANANNOTATIONS_H

#include <sanitizer/asan_interface.h>

#undef __asan_poison_memory_region
#undef __asan_unpoison_memory_region
#define __asan_poison_memory_region(addr, size) ((void)(addr), (void)(size))
#define __asan_unpoison_memory_region(addr, size) ((void)(addr), (void)(size))

#endif
