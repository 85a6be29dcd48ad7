//===- FuzzFpLines.cpp - libFuzzer: `keel fp` input lines -----------------===//
//
// The first line of the input is a `keel fp` command line (`encode f16`,
// `convert f32 fp8e5m2`, `arith bf16 mul`, ...; values there too); the rest
// is its standard input, one value (two for arith) per line, as
// `keel fp ... < FILE` reads it. Nothing may crash; the status is 0 or 2 (a
// usage error, with its message).
//
//===----------------------------------------------------------------------===//
#include "../src/driver/Commands.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {
std::FILE *sink = nullptr; // usage messages: not what is tested
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Results are not what is tested either; the fuzzer's own reports stay on
  // stderr.
  sink = std::fopen("/dev/null", "w");
  if (!sink || !std::freopen("/dev/null", "w", stdout))
    std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t newline = text.find('\n');
  std::string command = text.substr(0, newline);
  std::istringstream input(newline == std::string::npos ? "" : text.substr(newline + 1));
  std::vector<std::string> words;
  std::istringstream split(command);
  for (std::string w; split >> w;)
    words.push_back(w);
  if (words.empty() || words.size() > 8)
    return 0; // a few words: the command, its formats, perhaps values
  std::vector<std::string_view> args(words.begin(), words.end());
  std::streambuf *saved = std::cin.rdbuf(input.rdbuf());
  std::cin.clear();
  int status = keel::driver::runFp(args, sink);
  std::cin.rdbuf(saved);
  if (status != 0 && status != 2)
    std::abort();
  return 0;
}
