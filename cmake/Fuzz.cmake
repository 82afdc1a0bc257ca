# ATTNC_FUZZ: every library of the project is compiled with AddressSanitizer
# and UBSan, plus libFuzzer's coverage instrumentation (fuzzer-no-link), so the
# fuzz targets in test/fuzz see the project's code fully instrumented. UB
# aborts (-fno-sanitize-recover) so that libFuzzer counts it as a crash.
# Assertions stay on (no NDEBUG): a failed assert is a finding too.
#
# MLIR/LLVM are still Debian's static archives (built with gcc, not
# instrumented); only the code they call back into is.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ATTNC_FUZZ needs clang (libFuzzer): configure with "
    "-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "
    "(scripts/fuzz.sh does)")
endif()

set(ATTNC_SANITIZE_FLAGS
  -fsanitize=address,undefined
  -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer)
add_compile_options(${ATTNC_SANITIZE_FLAGS} -fsanitize=fuzzer-no-link -g -O1)
add_link_options(-fsanitize=address,undefined)
# LLVM's allocator annotations off (the header says why).
add_compile_options(-include ${ATTNC_SOURCE_DIR}/test/fuzz/LlvmAsanAnnotations.h)
# Keep assertions: CMake's build-type flags would add -DNDEBUG.
foreach(config RELEASE RELWITHDEBINFO MINSIZEREL)
  string(REPLACE "-DNDEBUG" "" CMAKE_CXX_FLAGS_${config} "${CMAKE_CXX_FLAGS_${config}}")
  string(REPLACE "-DNDEBUG" "" CMAKE_C_FLAGS_${config} "${CMAKE_C_FLAGS_${config}}")
endforeach()
