//===- DeviceHeaders.h - Device helpers for generated kernels ---*- C++ -*-===//
//
// The headers generated kernels #include (vector access, warp reductions,
// rope angles, fp8 conversion), shipped inside the runtime and handed to
// NVRTC as in-memory headers, so a deployment needs no header files on disk.
// The text is runtime/device/*.cuh, embedded at build time.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_DEVICEHEADERS_H
#define ATTNC_RUNTIME_DEVICEHEADERS_H

#include <map>
#include <string>

namespace attnc::runtime {

/// Name as #included ("attnc_device.cuh") → text.
const std::map<std::string, std::string> &deviceHeaders();

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_DEVICEHEADERS_H
