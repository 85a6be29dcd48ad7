//===- Print.cpp - Printing and stopping for generated code --------------===//
#include "keel/runtime/Print.h"

#include "keel/runtime/Buffer.h"
#include "keel/runtime/Npy.h"

#include "keel/numerics/Format.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace {

FILE *out = stdout; // stderr while an assertion failure is being reported

void write(std::string_view s) { std::fwrite(s.data(), 1, s.size(), out); }

/// A stop (an error that ends the program) may come from several threads
/// of a parallel loop at once: the first to get here prints its message and
/// exits; any other waits here until the process has ended.
void stopping() {
  static std::mutex first;
  first.lock();
}

/// The shortest decimal that reads back as `bits` in `f`.
std::string shortest(keel::fp::Format f, uint64_t bits) {
  switch (keel::fp::classify(f, bits)) {
  case keel::fp::FpClass::NaN: return "nan";
  case keel::fp::FpClass::Infinity: return keel::fp::signBit(f, bits) ? "-inf" : "inf";
  case keel::fp::FpClass::Zero: case keel::fp::FpClass::Subnormal: case keel::fp::FpClass::Normal: break;
  }
  double v = keel::fp::toF64(f, bits);
  char buf[400];
  for (int digits = 1; digits <= 17; ++digits) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
    std::string text(buf, end);
    if (keel::fp::fromDecimal(f, text) != std::optional<uint64_t>(bits))
      continue;
    // The same digits without an exponent when that stays short: 448, 0.1.
    int exponent = std::stoi(text.substr(text.find('e') + 1));
    if (exponent >= -5 && exponent < 17) {
      auto [fixedEnd, fixedEc] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed,
                                               std::max(0, digits - 1 - exponent));
      return std::string(buf, fixedEnd);
    }
    return text;
  }
  return keel::fp::exactDecimal(f, bits);
}


/// One element as print() shows a scalar of its type.
std::string element(const KeelBuffer &b, int64_t offset) {
  const uint8_t *p = static_cast<const uint8_t *>(b.data) + offset * static_cast<int64_t>(keel_dtype_size(b.dtype));
  uint64_t bits = 0;
  __builtin_memcpy(&bits, p, keel_dtype_size(b.dtype));
  if (b.dtype >= KEEL_NUM_DTYPES)
    return "?"; // a code from outside the table (any byte)
  switch (static_cast<KeelDType>(b.dtype)) {
  case KEEL_PRED: return bits ? "true" : "false";
  case KEEL_I4: case KEEL_I8: return std::to_string(static_cast<int8_t>(bits));
  case KEEL_I16: return std::to_string(static_cast<int16_t>(bits));
  case KEEL_I32: return std::to_string(static_cast<int32_t>(bits));
  case KEEL_I64: return std::to_string(static_cast<int64_t>(bits));
  case KEEL_U8: case KEEL_U16: case KEEL_U32: case KEEL_U64: return std::to_string(bits);
  case KEEL_F16: return shortest(keel::fp::Format::F16, bits);
  case KEEL_BF16: return shortest(keel::fp::Format::BF16, bits);
  case KEEL_TF32: return shortest(keel::fp::Format::TF32, bits);
  case KEEL_FP8E4M3FN: return shortest(keel::fp::Format::FP8E4M3FN, bits);
  case KEEL_FP8E5M2: return shortest(keel::fp::Format::FP8E5M2, bits);
  case KEEL_F32: return shortest(keel::fp::Format::F32, bits);
  case KEEL_F64: return shortest(keel::fp::Format::F64, bits);
  case KEEL_NUM_DTYPES: break;
  }
  return "?";
}

bool printFull = false; // keel_rt_set_print_full

void tensorText(const KeelBuffer &b, std::vector<int64_t> &index, size_t axis, const std::vector<int64_t> &stride,
                std::string &out) {
  if (axis == b.rank) {
    int64_t offset = 0;
    for (size_t d = 0; d < b.rank; ++d)
      offset += index[d] * stride[d];
    out += element(b, offset);
    return;
  }
  out += "[";
  int64_t n = b.dims[axis];
  for (int64_t i = 0; i < n; ++i) {
    if (!printFull && n > 8 && i == 3) { // elide the middle of a long dimension
      out += "..., ";
      i = n - 3;
    }
    index[axis] = i;
    tensorText(b, index, axis + 1, stride, out);
    if (i + 1 < n)
      out += axis + 1 == b.rank ? ", " : ",\n" + std::string(axis + 1, ' ');
  }
  out += "]";
}

} // namespace

extern "C" {

void keel_rt_print_tensor(const KeelBuffer *buffer) {
  const KeelBuffer &b = *buffer;
  std::vector<int64_t> stride(b.rank), index(b.rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < b.rank; ++i) { // minor_to_major[0] is the fastest-varying dimension
    stride[static_cast<size_t>(b.minor_to_major[i])] = s;
    s *= b.dims[b.minor_to_major[i]];
  }
  std::string out;
  tensorText(b, index, 0, stride, out);
  write(out);
}

namespace {
/// Tensor memory: 64-byte aligned blocks with their capacity in a 64-byte
/// header. Freed blocks wait in a small cache and serve later requests of
/// up to their capacity (at most twice the request), so a program that
/// makes a tensor of the same size again and again neither returns pages
/// to the system nor faults them in afresh. Generated code writes every
/// element of a tensor before reading it, so memory is never cleared.
/// Parallel loops allocate and free on several threads: one lock guards
/// the cache and the counts.
constexpr size_t kHeader = 64;
constexpr size_t kCacheBlocks = 16;
constexpr size_t kCacheBytes = size_t{2} << 30;
struct Block {
  void *data;
  size_t capacity;
};
/// The cached blocks; what is still cached when the program ends goes back
/// to the system then (so that LeakSanitizer sees no tensor memory left).
std::vector<Block> &cache() {
  struct Cache {
    std::vector<Block> blocks;
    ~Cache() {
      for (const Block &b : blocks)
        std::free(static_cast<char *>(b.data) - kHeader);
    }
  };
  static Cache cached;
  return cached.blocks;
}
std::mutex memoryLock;
size_t cachedBytes = 0;
size_t liveBytes = 0; ///< every block from the system, in use or cached
int64_t memoryLimit = -1; ///< -1: not yet read from the machine
size_t &capacityOf(void *data) { return *reinterpret_cast<size_t *>(static_cast<char *>(data) - kHeader); }

/// Returns the oldest cached block to the system.
void releaseOldest() {
  std::vector<Block> &blocks = cache();
  cachedBytes -= blocks.front().capacity;
  liveBytes -= blocks.front().capacity + kHeader;
  std::free(static_cast<char *>(blocks.front().data) - kHeader);
  blocks.erase(blocks.begin());
}

void releaseCache() {
  while (!cache().empty())
    releaseOldest();
}

/// A number from a file such as /sys/fs/cgroup/memory.max; nullopt for
/// "max", a missing file or anything unreadable.
std::optional<uint64_t> readLimitFile(const char *path) {
  std::FILE *f = std::fopen(path, "r");
  if (!f)
    return std::nullopt;
  char text[64] = {};
  size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text, text + n, v);
  if (ec != std::errc() || end == text)
    return std::nullopt;
  return v;
}
} // namespace

int64_t keel_rt_machine_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  uint64_t bytes = pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
                                             : uint64_t{1} << 62;
  for (const char *cgroup : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    if (std::optional<uint64_t> v = readLimitFile(cgroup))
      bytes = std::min(bytes, *v);
  // An address-space limit (ulimit -v): what is left of it now, less a
  // margin for the code and the allocator's own use.
  struct rlimit as {};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    uint64_t used = 0;
    if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
      unsigned long long vmPages = 0;
      if (std::fscanf(f, "%llu", &vmPages) == 1 && pageSize > 0)
        used = vmPages * static_cast<uint64_t>(pageSize);
      std::fclose(f);
    }
    uint64_t left = as.rlim_cur > used ? static_cast<uint64_t>(as.rlim_cur) - used : 0;
    bytes = std::min(bytes, left - left / 8);
  }
  return static_cast<int64_t>(std::min<uint64_t>(bytes, uint64_t{1} << 62));
}

int64_t keel_rt_memory_limit(void) {
  if (memoryLimit < 0)
    memoryLimit = keel_rt_machine_memory();
  return memoryLimit;
}

void keel_rt_set_print_full(int32_t full) { printFull = full != 0; }

void keel_rt_set_memory_limit(int64_t bytes) { memoryLimit = bytes < 0 ? 0 : bytes; }

void keel_rt_release_memory(void) {
  std::lock_guard<std::mutex> hold(memoryLock);
  releaseCache();
}

void *keel_rt_alloc(int64_t bytes, const char *file, int32_t line, int32_t column) {
  bool overLimit = false;
  std::unique_lock<std::mutex> hold(memoryLock);
  if (bytes >= 0 && static_cast<uint64_t>(bytes) <= (uint64_t{1} << 62)) {
    size_t need = std::max<size_t>(static_cast<size_t>(bytes), 1);
    std::vector<Block> &blocks = cache();
    size_t best = blocks.size();
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].capacity >= need && blocks[i].capacity / 2 <= need &&
          (best == blocks.size() || blocks[i].capacity < blocks[best].capacity))
        best = i;
    if (best != blocks.size()) {
      void *data = blocks[best].data;
      cachedBytes -= blocks[best].capacity;
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(best));
      return data;
    }
    size_t capacity = (need + 63) / 64 * 64;
    uint64_t limit = static_cast<uint64_t>(keel_rt_memory_limit());
    if (liveBytes + kHeader + capacity > limit)
      releaseCache();
    overLimit = liveBytes + kHeader + capacity > limit;
    if (!overLimit)
      if (void *raw = std::aligned_alloc(64, kHeader + capacity)) {
        void *data = static_cast<char *>(raw) + kHeader;
        capacityOf(data) = capacity;
        liveBytes += kHeader + capacity;
        return data;
      }
  }
  size_t inUse = liveBytes;
  hold.unlock();
  stopping();
  std::fflush(stdout);
  std::fprintf(stderr, "error: cannot allocate %lld bytes for a tensor at %s:%d:%d", static_cast<long long>(bytes),
               file, line, column);
  if (overLimit)
    std::fprintf(stderr, ": %llu bytes are in use and the memory limit is %lld bytes (keel run --max-memory)",
                 static_cast<unsigned long long>(inUse), static_cast<long long>(keel_rt_memory_limit()));
  std::fprintf(stderr, "\n");
  std::exit(1);
}

void keel_rt_print_elements(const void *data, int32_t dtype, int32_t rank, const int64_t *dims) {
  if (rank > KEEL_MAX_RANK) {
    stopping();
  std::fflush(stdout);
    std::fprintf(stderr, "error: cannot print a tensor of rank %d; printing shows at most %d dimensions\n", rank,
                 KEEL_MAX_RANK);
    std::exit(1);
  }
  KeelBuffer b{};
  b.dtype = static_cast<uint8_t>(dtype);
  b.rank = static_cast<uint8_t>(rank);
  for (int32_t i = 0; i < rank; ++i) {
    b.dims[i] = dims[i];
    b.minor_to_major[i] = rank - 1 - i; // row-major
  }
  b.data = const_cast<void *>(data);
  keel_rt_print_tensor(&b);
}

namespace {
std::string bufferTypeText(int64_t dtype, int64_t rank, const int64_t *dims, const int64_t *minorToMajor) {
  std::string s = dtype >= 0 && dtype < KEEL_NUM_DTYPES ? std::string(keel::rt::dtypeName(static_cast<KeelDType>(dtype)))
                                                        : "dtype " + std::to_string(dtype);
  s += "[";
  for (int64_t i = 0; i < rank; ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  s += "]{";
  for (int64_t i = 0; i < rank; ++i)
    s += (i ? "," : "") + std::to_string(minorToMajor[i]);
  return s + "}";
}
} // namespace

void *keel_rt_buffer_data(const KeelBuffer *b, const int64_t *expected, int32_t argument, const char *function) {
  int64_t rank = expected[1];
  const int64_t *dims = expected + 2, *order = expected + 2 + rank;
  if (rank > KEEL_MAX_RANK) {
    stopping();
  std::fflush(stdout);
    std::fprintf(stderr, "error: argument %d of `%s` has rank %lld; a KeelBuffer holds at most %d dimensions\n",
                 argument, function, static_cast<long long>(rank), KEEL_MAX_RANK);
    std::exit(1);
  }
  bool same = b && b->dtype == expected[0] && b->rank == rank;
  for (int64_t i = 0; same && i < rank; ++i)
    same = b->dims[i] == dims[i] && b->minor_to_major[i] == order[i];
  if (same && b->data)
    return b->data;
  stopping();
  std::fflush(stdout);
  std::string got = !b ? "no buffer" : !b->data && same ? "a buffer without data"
                  : bufferTypeText(b->dtype, b->rank, b->dims, b->minor_to_major);
  std::fprintf(stderr, "error: argument %d of `%s` is %s, but `%s` takes %s\n", argument, function, got.c_str(),
               function, bufferTypeText(expected[0], rank, dims, order).c_str());
  std::exit(1);
}

void keel_rt_free(void *data) {
  if (!data)
    return;
  std::lock_guard<std::mutex> hold(memoryLock);
  std::vector<Block> &blocks = cache();
  blocks.push_back({data, capacityOf(data)});
  cachedBytes += blocks.back().capacity;
  while (blocks.size() > kCacheBlocks || cachedBytes > kCacheBytes) // the oldest go back
    releaseOldest();
}

void keel_rt_index_error(int64_t index, int64_t dimension, int64_t axis, const char *file, int32_t line,
                         int32_t column, int8_t isUnsigned) {
  stopping();
  std::fflush(stdout);
  std::string shown = isUnsigned ? std::to_string(static_cast<uint64_t>(index)) : std::to_string(index);
  std::fprintf(stderr, "error: index %s is out of bounds for axis %lld of size %lld at %s:%d:%d\n", shown.c_str(),
               static_cast<long long>(axis), static_cast<long long>(dimension), file, line, column);
  std::exit(1);
}

uint64_t keel_rt_stack_limit = 0;

void keel_rt_set_stack_limit(uint64_t bytes) {
  constexpr uint64_t kReserve = 256 << 10; // for the runtime's calls (printing, the message below)
  uint64_t here = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
  uint64_t limit = here > bytes ? here - bytes : 0;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *low = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &low, &size) == 0)
      limit = std::max(limit, reinterpret_cast<uint64_t>(low) + kReserve);
    pthread_attr_destroy(&attr);
  }
  keel_rt_stack_limit = limit;
}

void keel_rt_stack_overflow(const char *function, const char *file, int32_t line, int32_t column) {
  stopping();
  std::fflush(stdout);
  std::fprintf(stderr, "error: stack overflow (recursion too deep) in %s at %s:%d:%d\n", function, file, line,
               column);
  std::exit(1);
}

void keel_rt_print_text(const char *text, int64_t length) { write(std::string_view(text, static_cast<size_t>(length))); }
void keel_rt_print_bool(int8_t v) { write(v ? "true" : "false"); }
void keel_rt_print_i64(int64_t v) { write(std::to_string(v)); }
void keel_rt_print_u64(uint64_t v) { write(std::to_string(v)); }
void keel_rt_print_f32(float v) {
  uint32_t bits;
  __builtin_memcpy(&bits, &v, 4);
  write(shortest(keel::fp::Format::F32, bits));
}
void keel_rt_print_f64(double v) {
  uint64_t bits;
  __builtin_memcpy(&bits, &v, 8);
  write(shortest(keel::fp::Format::F64, bits));
}
void keel_rt_print_lowp(int32_t format, uint64_t bits) {
  write(shortest(static_cast<keel::fp::Format>(format), bits));
}
void keel_rt_print_end(void) { write("\n"); }

void keel_rt_assert_begin(const char *file, int32_t line, int32_t column, int8_t hasMessage) {
  stopping();
  std::fflush(stdout);
  out = stderr;
  write(std::string("assertion failed at ") + file + ":" + std::to_string(line) + ":" + std::to_string(column) +
        (hasMessage ? ": " : ""));
}
void keel_rt_assert_fail(void) {
  write("\n");
  std::fflush(stderr);
  std::exit(1);
}
void keel_rt_internal_error(const char *what) {
  stopping();
  std::fflush(stdout);
  std::fprintf(stderr, "internal compiler error in generated code: %s (a bug in Keel)\n", what);
  std::exit(70);
}

} // extern "C"
