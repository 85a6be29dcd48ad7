//===- npy_tool.cpp - Reads a .npy file and writes it back (test helper) -===//
//
//   npy_tool IN OUT      exit 0 on success; 1 with the reason on stderr
//
// Lets tests/runtime/numpy-interop.test check Keel's .npy reader and writer
// against NumPy itself.
//
//===----------------------------------------------------------------------===//
#include "keel/runtime/Npy.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: npy_tool IN OUT\n");
    return 2;
  }
  std::string error;
  std::optional<keel::rt::Tensor> t = keel::rt::readNpy(argv[1], error);
  if (!t || !keel::rt::writeNpy(argv[2], *t, error)) {
    std::fprintf(stderr, "npy_tool: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s", std::string(keel::rt::dtypeName(t->dtype)).c_str());
  for (int64_t d : t->shape)
    std::printf(" %lld", static_cast<long long>(d));
  std::printf("\n");
  return 0;
}
