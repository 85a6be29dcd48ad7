//===- FuzzNpy.cpp - libFuzzer: .npy bytes through the reader -------------===//
//
// Any bytes as a .npy file. A file the reader accepts must write back to
// bytes that read as the same tensor.
//
//===----------------------------------------------------------------------===//
#include "keel/runtime/Npy.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::optional<keel::rt::Tensor> t =
      keel::rt::parseNpy(std::string_view(reinterpret_cast<const char *>(data), size), error);
  if (!t) {
    if (error.empty()) {
      std::fprintf(stderr, "refused without a reason\n");
      std::abort();
    }
    return 0;
  }
  std::optional<keel::rt::Tensor> back = keel::rt::parseNpy(keel::rt::formatNpy(*t), error);
  if (!back || back->dtype != t->dtype || back->shape != t->shape ||
      back->toRowMajor().data != t->toRowMajor().data) {
    std::fprintf(stderr, "an accepted file does not survive a write and a read: %s\n", error.c_str());
    std::abort();
  }
  return 0;
}
