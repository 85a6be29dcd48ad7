//===- NpyTest.cpp - .npy files against hand-built bytes -----------------===//
//
// Expected bytes are assembled here by hand from the .npy format's
// definition (NumPy NEP 1), not produced by the code under test.
//
//===----------------------------------------------------------------------===//
#include "keel/runtime/Npy.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace keel::rt;

namespace {

/// A version-1.0 file: magic, version, little-endian header length, the
/// header padded with spaces to 64-byte alignment and a newline, the data.
std::string npyV1(const std::string &dict, const std::string &data) {
  std::string header = dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string f32s(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), 4);
  return out;
}

TEST(NpyTest, ReadsAHandBuiltFile) {
  std::string bytes = npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                            f32s({1, 2, 3, 4, 5, 6}));
  std::string error;
  std::optional<Tensor> t = parseNpy(bytes, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->dtype, KEEL_F32);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->minorToMajor, (std::vector<int64_t>{1, 0}));
  float values[6];
  std::memcpy(values, t->data.data(), sizeof values);
  EXPECT_EQ(values[5], 6.0f);
}

TEST(NpyTest, WritesTheFormatByTheBook) {
  // np.arange(3, dtype='<i2') as the format defines it: version 1.0, the
  // dict, spaces up to 64-byte alignment, a newline, the data.
  Tensor t = Tensor::make(KEEL_I16, {3});
  int16_t values[3] = {0, 1, 2};
  std::memcpy(t.data.data(), values, sizeof values);
  std::string expected = npyV1("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
                               std::string("\x00\x00\x01\x00\x02\x00", 6));
  EXPECT_EQ(formatNpy(t), expected);
  EXPECT_EQ((formatNpy(t).find('\n') + 1) % 64, 0u); // data 64-byte aligned
}

TEST(NpyTest, FormatsNumpyLacksUseOneFieldStructuredTypes) {
  const std::pair<KeelDType, const char *> cases[] = {
      {KEEL_BF16, "[('bf16', '<u2')]"},         {KEEL_TF32, "[('tf32', '<u4')]"},
      {KEEL_FP8E4M3FN, "[('fp8e4m3fn', '|u1')]"}, {KEEL_FP8E5M2, "[('fp8e5m2', '|u1')]"},
      {KEEL_I4, "[('i4', '|i1')]"},             {KEEL_PRED, "'|b1'"},
      {KEEL_F16, "'<f2'"},                      {KEEL_U64, "'<u8'"}};
  for (auto [dtype, descr] : cases) {
    std::string bytes = formatNpy(Tensor::make(dtype, {2}));
    EXPECT_NE(bytes.find(std::string("'descr': ") + descr), std::string::npos) << dtypeName(dtype) << ": " << bytes;
  }
}

TEST(NpyTest, EveryDtypeRoundTrips) {
  for (int d = 0; d < KEEL_NUM_DTYPES; ++d) {
    KeelDType dtype = static_cast<KeelDType>(d);
    Tensor t = Tensor::make(dtype, {2, 3, 2});
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = static_cast<uint8_t>(i * 37 + 11);
    // Keep the values valid encodings of the type.
    for (size_t i = 0; i < t.data.size(); i += keel_dtype_size(dtype)) {
      if (dtype == KEEL_PRED) t.data[i] &= 1;
      if (dtype == KEEL_I4) t.data[i] = static_cast<uint8_t>(static_cast<int8_t>(t.data[i] % 16) - 8);
      if (dtype == KEEL_TF32) t.data[i] = 0, t.data[i + 1] &= 0xE0;
    }
    std::string error;
    std::optional<Tensor> back = parseNpy(formatNpy(t), error);
    ASSERT_TRUE(back) << dtypeName(dtype) << ": " << error;
    EXPECT_EQ(back->dtype, dtype);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->data, t.data) << dtypeName(dtype);
  }
}

TEST(NpyTest, LayoutsFortranOrderAndBigEndian) {
  std::string error;
  // Fortran order: the 2x3 matrix [[1,2,3],[4,5,6]] stored column by column.
  auto t = parseNpy(npyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32s({1, 4, 2, 5, 3, 6})),
                    error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->minorToMajor, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(formatNpy(*t).find("'fortran_order': True"), formatNpy(*t).find("'fortran_order'"));
  // A layout NumPy cannot express is written row-major: dims [2, 3] stored
  // with dimension 0 minor is column-major; transpose it by hand.
  Tensor odd = *t;
  odd.shape = {2, 3, 1};
  odd.minorToMajor = {0, 2, 1};
  auto back = parseNpy(formatNpy(odd), error);
  ASSERT_TRUE(back) << error;
  float values[6];
  std::memcpy(values, back->data.data(), sizeof values);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 2.0f); // row-major now: 1 2 3 4 5 6
  EXPECT_EQ(values[3], 4.0f);
  // Big-endian int32 1 and 258.
  auto be = parseNpy(npyV1("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                           std::string("\x00\x00\x00\x01\x00\x00\x01\x02", 8)),
                     error);
  ASSERT_TRUE(be) << error;
  int32_t ints[2];
  std::memcpy(ints, be->data.data(), sizeof ints);
  EXPECT_EQ(ints[0], 1);
  EXPECT_EQ(ints[1], 258);
}

TEST(NpyTest, MalformedFilesAreRefusedWithAReason) {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::pair<std::string, const char *> cases[] = {
      {"not a npy file at all", "no \\x93NUMPY magic"},
      {std::string("\x93NUMPY\x04\x00\x10\x00", 8) + std::string(16, ' '), "unsupported .npy format version 4.0"},
      {npyV1(good, f32s({1})), "(truncated file)"},
      {npyV1(good, f32s({1, 2, 3})), "(extra bytes after the data)"},
      {npyV1("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f32s({1, 2, 3, 4})),
       "unsupported element type '<c8'"},
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", ""), "a dimension of size 0"},
      {npyV1("{'descr': '<f4', 'shape': (2,), }", f32s({1, 2})), "it needs 'descr', 'fortran_order' and 'shape'"},
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f32s({1, 2})),
       "malformed .npy header"},
      {npyV1("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x01\x02", 2)),
       "element 1 is not a pred value"},
      {npyV1("{'descr': [('tf32', '<u4')], 'fortran_order': False, 'shape': (1,), }", std::string("\x01\x00\x80\x3f", 4)),
       "element 0 is not a tf32 value"},
      {npyV1("{'descr': [('i4', '|i1')], 'fortran_order': False, 'shape': (1,), }", std::string("\x09", 1)),
       "element 0 is not a i4 value"},
      {npyV1("{'descr' '<f4'}", ""), "malformed .npy header"},
      {std::string("\x93NUMPY\x01\x00\xff\x00", 10), "truncated .npy header"},
      {std::string("\x93NUMPY\x01", 7), "truncated .npy header"},
      // Only versions 1.0, 2.0 and 3.0 exist.
      {std::string("\x93NUMPY\x01\x09", 8) + npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                                        f32s({1})).substr(8),
       "unsupported .npy format version 1.9"},
      {npyV1("{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,), }", f32s({1, 2})),
       "'fortran_order' must be True or False"},
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': '2', }", f32s({1, 2})),
       "'shape' must be a tuple of integers"},
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,), }", f32s({1, 2})),
       "'shape' is given twice"},
      // A valid shape too large to hold: named as such, not as a malformed header.
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000000000000,), }", ""),
       "dimension 100000000000000000000 of the shape does not fit in 64 bits"},
      {npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
       "has more elements than fit in 64 bits"},
      {npyV1("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", ""),
       "needs more bytes than fit in 64 bits"},
  };
  for (const auto &[bytes, reason] : cases) {
    std::string error;
    EXPECT_FALSE(parseNpy(bytes, error).has_value()) << reason;
    EXPECT_NE(error.find(reason), std::string::npos) << "got: " << error << "\nwanted: " << reason;
  }
}

TEST(NpyTest, FilesAreWrittenWholeOrNotAtAll) {
  std::string error;
  Tensor t = Tensor::make(KEEL_F64, {4});
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", t, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos);
  std::string path = testing::TempDir() + "/keel-npy-test.npy";
  ASSERT_TRUE(writeNpy(path, t, error)) << error;
  auto back = readNpy(path, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->shape, t.shape);
  std::remove(path.c_str());
}

} // namespace

#include "keel/runtime/Print.h"

#include <unistd.h>

namespace {

/// Runs f with stdout captured.
template <typename F> std::string capture(F f) {
  std::fflush(stdout);
  int saved = dup(1);
  FILE *tmp = std::tmpfile();
  dup2(fileno(tmp), 1);
  f();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(tmp);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, tmp)) > 0)
    out.append(buf, n);
  std::fclose(tmp);
  return out;
}

TEST(PrintTest, TensorsPrintLikeNumpyInLogicalOrder) {
  Tensor t = Tensor::make(KEEL_F32, {2, 3});
  float v[6] = {1, 2.5f, -0.0f, 4, 1e30f, 0.1f};
  std::memcpy(t.data.data(), v, sizeof v);
  KeelBuffer b = t.view();
  EXPECT_EQ(capture([&] { keel_rt_print_tensor(&b); }), "[[1, 2.5, -0],\n [4, 1e+30, 0.1]]");
  // The same logical matrix stored column-major prints the same.
  Tensor c = Tensor::make(KEEL_F32, {2, 3});
  c.minorToMajor = {0, 1};
  float cv[6] = {1, 4, 2.5f, 1e30f, -0.0f, 0.1f};
  std::memcpy(c.data.data(), cv, sizeof cv);
  KeelBuffer cb = c.view();
  EXPECT_EQ(capture([&] { keel_rt_print_tensor(&cb); }), "[[1, 2.5, -0],\n [4, 1e+30, 0.1]]");
  // Long dimensions elide their middle; low precision prints its shortest decimal.
  Tensor l = Tensor::make(KEEL_BF16, {10});
  for (int i = 0; i < 10; ++i) {
    uint16_t bits = static_cast<uint16_t>(0x3f80 + i); // 1, 1.0078125, ...
    std::memcpy(&l.data[static_cast<size_t>(i) * 2], &bits, 2);
  }
  KeelBuffer lb = l.view();
  // 1 + k/128: the shortest decimals that read back in bf16 (steps of
  // 1/128 = 0.0078125): 1.0078125 -> 1.01, 1.015625 -> 1.016 (1.02 would
  // read as 1.0234375), 1.0546875 -> 1.055, 1.0625 -> 1.06, 1.0703125 -> 1.07.
  EXPECT_EQ(capture([&] { keel_rt_print_tensor(&lb); }), "[1, 1.01, 1.016, ..., 1.055, 1.06, 1.07]");
}

TEST(PrintTest, ImpossibleAllocationsAndBadIndexesStopWithTheLocation) {
  EXPECT_EXIT(keel_rt_alloc(INT64_MAX, "m.sfn", 3, 7), testing::ExitedWithCode(1),
              "cannot allocate 9223372036854775807 bytes for a tensor at m.sfn:3:7");
  EXPECT_EXIT(keel_rt_index_error(5, 4, 1, "m.sfn", 9, 2, 0), testing::ExitedWithCode(1),
              "index 5 is out of bounds for axis 1 of size 4 at m.sfn:9:2");
  EXPECT_EXIT(keel_rt_index_error(-1, 4, 0, "m.sfn", 9, 2, 1), testing::ExitedWithCode(1),
              "index 18446744073709551615 is out of bounds for axis 0 of size 4 at m.sfn:9:2");
  void *p = keel_rt_alloc(16, "m.sfn", 1, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  keel_rt_free(p);
  keel_rt_release_memory();
}

TEST(PrintTest, AllocationsStopAtTheMemoryLimitWithTheSizeAndLocation) {
  EXPECT_GT(keel_rt_machine_memory(), int64_t{1} << 20);
  EXPECT_EXIT(
      {
        keel_rt_set_memory_limit(int64_t{1} << 20); // 1 MiB
        void *a = keel_rt_alloc(600 << 10, "m.sfn", 2, 5);
        keel_rt_free(a); // cached: released when the next request needs the room
        void *b = keel_rt_alloc(900 << 10, "m.sfn", 3, 5);
        keel_rt_alloc(200 << 10, "m.sfn", 4, 9); // 900 KiB in use: over the limit
        keel_rt_free(b);
      },
      testing::ExitedWithCode(1),
      "cannot allocate 204800 bytes for a tensor at m.sfn:4:9: 921664 bytes are in use and the memory limit is "
      "1048576 bytes");
}

} // namespace
