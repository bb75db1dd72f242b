//===- GpuTestSupport.h - what the device tests and benchmark share -*- C++ -*-===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H
#define ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H

#include "runtime/cuda/CudaDevice.h"
#include "runtime/src/Status.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace attune::cuda::gputest {

/// Opens the first GPU into `device`; "" when it opened, else why not.
inline std::string openFirstDevice(std::unique_ptr<Device> *device) {
  if (Device::open(0, device) == ATTUNE_OK)
    return "";
  return runtime::statusMessage();
}

/// scripts/gpu-test.sh sets ATTUNE_REQUIRE_GPU=1 on a GPU machine, where a
/// skip would hide a driver that does not load.
inline bool gpuRequired() {
  const char *required = std::getenv("ATTUNE_REQUIRE_GPU");
  return required && std::string(required) == "1";
}

/// Round to nearest even, as the GPU's conversions do; NaN stays NaN.
inline uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
inline float fromBf16(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}
inline uint16_t toF16(float value) {
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, 2);
  return bits;
}
inline float fromF16(uint16_t value) {
  _Float16 half;
  std::memcpy(&half, &value, 2);
  return static_cast<float>(half);
}

} // namespace attune::cuda::gputest

#endif // ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H
