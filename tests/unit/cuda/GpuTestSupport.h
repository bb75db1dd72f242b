//===- GpuTestSupport.h - what the device tests and benchmark share -*- C++ -*-===//

#ifndef ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H
#define ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H

#include "compiler/support/PanelLayout.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/src/Status.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

/// In a GoogleTest test: opens the first GPU into a new
/// `std::unique_ptr<Device> device`, or skips the test with the reason;
/// under ATTUNE_REQUIRE_GPU=1 (scripts/gpu-test.sh, on a GPU machine, where
/// a skip would hide a driver that does not load) fails it instead.
#define REQUIRE_DEVICE(device)                                                                     \
  std::unique_ptr<attune::cuda::Device> device;                                                    \
  if (std::string why = attune::cuda::gputest::openFirstDevice(&device); !why.empty()) {           \
    if (attune::cuda::gputest::gpuRequired())                                                      \
      FAIL() << "ATTUNE_REQUIRE_GPU=1 but " << why;                                                \
    GTEST_SKIP() << "GPU execution not checked: " << why;                                          \
  }

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

/// A float as `type` stores it on the device: bf16 rounded to nearest even
/// (compiler/support/PanelLayout.h, as the weights are), f16 by the
/// compiler's own conversion, f32 and tf32 data as they are.
inline void encodeElement(MatmulType type, float value, unsigned char *to) {
  if (elementBytes(type) == 4) {
    std::memcpy(to, &value, 4);
    return;
  }
  uint16_t bits;
  if (type == MatmulType::BF16) {
    bits = floatToBf16(value);
  } else {
    const _Float16 half = static_cast<_Float16>(value);
    std::memcpy(&bits, &half, 2);
  }
  std::memcpy(to, &bits, 2);
}

inline float decodeElement(MatmulType type, const unsigned char *from) {
  if (elementBytes(type) == 4) {
    float value;
    std::memcpy(&value, from, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, from, 2);
  if (type == MatmulType::BF16)
    return bf16ToFloat(bits);
  _Float16 half;
  std::memcpy(&half, &bits, 2);
  return static_cast<float>(half);
}

/// `values` as the bytes of a `type` tensor.
inline std::vector<unsigned char> encode(MatmulType type, const std::vector<float> &values) {
  std::vector<unsigned char> bytes(values.size() * elementBytes(type));
  for (size_t i = 0; i < values.size(); ++i)
    encodeElement(type, values[i], &bytes[i * elementBytes(type)]);
  return bytes;
}

} // namespace attune::cuda::gputest

#endif // ATTUNE_TESTS_UNIT_CUDA_GPUTESTSUPPORT_H
