# Finds MLIR/LLVM 22 and makes every MLIR library link LLVM's static component
# libraries instead of libLLVM.so.
#
# Debian's static libMLIR*.a carry "LLVM" (the shared libLLVM) in their
# INTERFACE_LINK_LIBRARIES because LLVM was built with LLVM_LINK_LLVM_DYLIB.
# Tools linked that way need libLLVM-22.so at run time, which the GPU machine
# does not have. Rewriting that entry to the component archives makes attn-opt
# and attnc self-contained (a test checks `ldd`).
set(ATTNC_LLVM_MAJOR 22)
find_package(MLIR REQUIRED CONFIG
  HINTS /usr/lib/llvm-${ATTNC_LLVM_MAJOR}/lib/cmake/mlir)
message(STATUS "attnc: MLIR ${MLIR_VERSION} from ${MLIR_DIR}, LLVM ${LLVM_PACKAGE_VERSION}")
if(NOT LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL ${ATTNC_LLVM_MAJOR} OR
   LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL 23)
  message(FATAL_ERROR "attnc needs LLVM/MLIR ${ATTNC_LLVM_MAJOR}.x, found ${LLVM_PACKAGE_VERSION}")
endif()

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_LINK_LLVM_DYLIB OFF)
set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
include(TableGen)
include(AddLLVM)
include(AddMLIR)

set(ATTNC_LLVM_STATIC_LIBS LLVMRemarks LLVMBitstreamReader LLVMSupport LLVMDemangle)

get_property(_attnc_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_target IN LISTS _attnc_imported)
  if(NOT _target MATCHES "^MLIR")
    continue()
  endif()
  get_target_property(_libs ${_target} INTERFACE_LINK_LIBRARIES)
  if(_libs AND "LLVM" IN_LIST _libs)
    list(TRANSFORM _libs REPLACE "^LLVM$" "${ATTNC_LLVM_STATIC_LIBS}")
    set_target_properties(${_target} PROPERTIES INTERFACE_LINK_LIBRARIES "${_libs}")
  endif()
endforeach()

# MLIR headers and flags for the compiler libraries and tools only.
set(ATTNC_MLIR_INCLUDE_DIRS ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
set(ATTNC_MLIR_DEFINITIONS ${_llvm_defs})
if(NOT LLVM_ENABLE_RTTI)
  set(ATTNC_MLIR_COMPILE_OPTIONS -fno-rtti)
endif()

set(ATTNC_TABLEGEN_INCLUDES -I ${MLIR_INCLUDE_DIRS})
