//===- Npy.cpp - The .npy format (NumPy NEP 1) ---------------------------===//
//
// file   = "\x93NUMPY" major minor header_len header data
//          header_len: 2 bytes little-endian (1.0) or 4 (2.0, 3.0)
// header = a Python dict literal, padded with spaces to 64-byte alignment and
//          ended by "\n": {'descr': D, 'fortran_order': B, 'shape': (d, ...), }
//
//===----------------------------------------------------------------------===//
#include "keel/runtime/Npy.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

extern "C" size_t keel_dtype_size(uint8_t dtype) {
  if (dtype >= KEEL_NUM_DTYPES)
    return 0; // a code from outside the table (any byte)
  switch (static_cast<KeelDType>(dtype)) {
  case KEEL_PRED: case KEEL_I4: case KEEL_I8: case KEEL_U8: case KEEL_FP8E4M3FN: case KEEL_FP8E5M2: return 1;
  case KEEL_I16: case KEEL_U16: case KEEL_F16: case KEEL_BF16: return 2;
  case KEEL_I32: case KEEL_U32: case KEEL_F32: case KEEL_TF32: return 4;
  case KEEL_I64: case KEEL_U64: case KEEL_F64: return 8;
  case KEEL_NUM_DTYPES: break;
  }
  return 0;
}

namespace keel::rt {

namespace {

struct DescrRow {
  KeelDType dtype;
  const char *numpy; ///< the NumPy descriptor without byte order, or null
  const char *field; ///< the structured-field convention for the rest
  const char *raw;   ///< the field's raw descriptor
};

constexpr DescrRow kDescrs[] = {
    {KEEL_PRED, "b1", nullptr, nullptr},      {KEEL_I4, nullptr, "i4", "|i1"},
    {KEEL_I8, "i1", nullptr, nullptr},        {KEEL_I16, "i2", nullptr, nullptr},
    {KEEL_I32, "i4", nullptr, nullptr},       {KEEL_I64, "i8", nullptr, nullptr},
    {KEEL_U8, "u1", nullptr, nullptr},        {KEEL_U16, "u2", nullptr, nullptr},
    {KEEL_U32, "u4", nullptr, nullptr},       {KEEL_U64, "u8", nullptr, nullptr},
    {KEEL_F16, "f2", nullptr, nullptr},       {KEEL_BF16, nullptr, "bf16", "<u2"},
    {KEEL_TF32, nullptr, "tf32", "<u4"},      {KEEL_FP8E4M3FN, nullptr, "fp8e4m3fn", "|u1"},
    {KEEL_FP8E5M2, nullptr, "fp8e5m2", "|u1"}, {KEEL_F32, "f4", nullptr, nullptr},
    {KEEL_F64, "f8", nullptr, nullptr},
};

constexpr const char *kNames[] = {"pred", "i4",  "i8",   "i16",  "i32",       "i64",     "u8",  "u16", "u32",
                                  "u64",  "f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2", "f32", "f64"};

/// A value of the header dict.
struct HeaderValue {
  enum class Kind { String, Bool, Tuple, Fields } kind = Kind::String;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
  std::vector<std::pair<std::string, std::string>> fields;
};

class HeaderParser {
public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  bool dict(std::vector<std::pair<std::string, HeaderValue>> &out, std::string &error) {
    if (!punct('{'))
      return fail(error, "the header is not a dict");
    while (!punct('}')) {
      std::string key;
      HeaderValue value;
      if (!string(key) || !punct(':') || !this->value(value))
        return fail(error, "malformed header entry");
      out.push_back({key, value});
      if (!punct(',')) {
        if (!punct('}'))
          return fail(error, "malformed header: expected `,` or `}`");
        break;
      }
    }
    skip();
    if (pos_ != s_.size())
      return fail(error, "text after the header dict");
    return true;
  }

private:
  bool fail(std::string &error, const std::string &message) {
    error = message;
    return false;
  }
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool punct(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    skip();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return false;
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos)
      return false;
    out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }
  bool integer(int64_t &out) {
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
      ++pos_;
    if (pos_ == start)
      return false;
    auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, out);
    if (ec != std::errc()) { // digits that do not fit: a dimension too large, not a malformed header
      tooLarge = std::string(s_.substr(start, pos_ - start));
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == 'L') // Python 2 longs
      ++pos_;
    return true;
  }
  bool value(HeaderValue &v) {
    skip();
    if (s_.substr(pos_, 4) == "True" || s_.substr(pos_, 5) == "False") {
      v.kind = HeaderValue::Kind::Bool;
      v.flag = s_[pos_] == 'T';
      pos_ += v.flag ? 4 : 5;
      return true;
    }
    if (punct('(')) {
      v.kind = HeaderValue::Kind::Tuple;
      while (!punct(')')) {
        int64_t n;
        if (!integer(n))
          return false;
        v.ints.push_back(n);
        if (!punct(',')) {
          if (!punct(')'))
            return false;
          break;
        }
      }
      return true;
    }
    if (punct('[')) {
      v.kind = HeaderValue::Kind::Fields;
      while (!punct(']')) {
        std::string name, type;
        if (!punct('(') || !string(name) || !punct(',') || !string(type))
          return false;
        punct(',');
        if (!punct(')'))
          return false;
        v.fields.push_back({name, type});
        if (!punct(',')) {
          if (!punct(']'))
            return false;
          break;
        }
      }
      return true;
    }
    v.kind = HeaderValue::Kind::String;
    return string(v.text);
  }

public:
  std::string tooLarge; ///< a dimension's digits that do not fit in 64 bits

private:
  std::string_view s_;
  size_t pos_ = 0;
};

/// The dtype of a descriptor, and whether its data is big-endian.
std::optional<KeelDType> dtypeOfDescr(const HeaderValue &descr, bool &bigEndian, std::string &error) {
  auto base = [&](std::string d) -> std::string {
    bigEndian = false;
    if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
      bigEndian = d[0] == '>';
      d = d.substr(1);
    }
    return d;
  };
  if (descr.kind == HeaderValue::Kind::String) {
    std::string b = base(descr.text);
    for (const DescrRow &r : kDescrs)
      if (r.numpy && b == r.numpy)
        return r.dtype;
    error = "unsupported element type '" + descr.text + "'";
    return std::nullopt;
  }
  if (descr.kind == HeaderValue::Kind::Fields && descr.fields.size() == 1) {
    const auto &[name, type] = descr.fields[0];
    for (const DescrRow &r : kDescrs)
      if (r.field && name == r.field && base(type) == base(r.raw))
        return r.dtype;
    error = "unsupported structured element type ('" + name + "', '" + type + "'); Keel's one-field types are";
    for (const DescrRow &r : kDescrs)
      if (r.field)
        error += std::string(r.dtype == KEEL_I4 ? "" : ",") + " ('" + r.field + "', '" + r.raw + "')";
    error += " (docs/numerics.md)";
    return std::nullopt;
  }
  error = "unsupported element type (a structured type other than Keel's one-field formats)";
  return std::nullopt;
}

std::vector<int64_t> rowMajor(size_t rank) {
  std::vector<int64_t> order(rank);
  for (size_t i = 0; i < rank; ++i)
    order[i] = static_cast<int64_t>(rank - 1 - i);
  return order;
}
std::vector<int64_t> columnMajor(size_t rank) {
  std::vector<int64_t> order(rank);
  for (size_t i = 0; i < rank; ++i)
    order[i] = static_cast<int64_t>(i);
  return order;
}

/// n bytes for the elements of a `dtype` `shape` tensor, or AllocationFailure.
std::vector<uint8_t> elementBytes(size_t n, KeelDType dtype, const std::vector<int64_t> &shape) {
  try {
    return std::vector<uint8_t>(n);
  } catch (const std::bad_alloc &) {
    throw AllocationFailure("out of memory: " + std::to_string(n) + " bytes for a " + std::string(kNames[dtype]) +
                            shapeText(shape) + " tensor could not be allocated");
  }
}

/// Each dimension's stride, in elements, of `shape` stored in layout
/// `minorToMajor`.
std::vector<int64_t> strides(const std::vector<int64_t> &shape, const std::vector<int64_t> &minorToMajor) {
  std::vector<int64_t> stride(shape.size());
  int64_t s = 1;
  for (int64_t dim : minorToMajor) {
    stride[static_cast<size_t>(dim)] = s;
    s *= shape[static_cast<size_t>(dim)];
  }
  return stride;
}

/// The tensor's elements in layout `to`, whatever its own.
std::vector<uint8_t> reorderedBytes(const Tensor &t, const std::vector<int64_t> &to) {
  size_t rank = t.shape.size(), size = keel_dtype_size(t.dtype);
  if (t.minorToMajor == to)
    return t.data;
  std::vector<int64_t> from = strides(t.shape, t.minorToMajor), into = strides(t.shape, to);
  std::vector<uint8_t> out = elementBytes(t.data.size(), t.dtype, t.shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < t.elementCount(); ++k) {
    int64_t source = 0, target = 0;
    for (size_t d = 0; d < rank; ++d) {
      source += index[d] * from[d];
      target += index[d] * into[d];
    }
    std::memcpy(&out[static_cast<size_t>(target) * size], &t.data[static_cast<size_t>(source) * size], size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < t.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

} // namespace

std::string_view dtypeName(KeelDType t) {
  return static_cast<unsigned>(t) < KEEL_NUM_DTYPES ? kNames[t] : "?";
}

Tensor Tensor::toRowMajor() const { return toLayout(rowMajor(shape.size())); }

Tensor Tensor::toLayout(const std::vector<int64_t> &layout) const {
  Tensor t; // not a copy of *this: the elements are copied once, reordered
  t.dtype = dtype;
  t.shape = shape;
  t.data = reorderedBytes(*this, layout);
  t.minorToMajor = layout;
  return t;
}

bool Tensor::isRowMajor() const { return minorToMajor == rowMajor(shape.size()); }

Tensor Tensor::make(KeelDType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.minorToMajor = rowMajor(shape.size());
  t.shape = std::move(shape);
  t.data = elementBytes(static_cast<size_t>(t.elementCount()) * keel_dtype_size(dtype), dtype, t.shape);
  return t;
}

int64_t Tensor::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

KeelBuffer Tensor::view() {
  KeelBuffer b{};
  b.dtype = static_cast<uint8_t>(dtype);
  b.rank = static_cast<uint8_t>(shape.size());
  for (size_t i = 0; i < shape.size() && i < KEEL_MAX_RANK; ++i) {
    b.dims[i] = shape[i];
    b.minor_to_major[i] = minorToMajor[i];
  }
  b.data = data.data();
  return b;
}

namespace {

/// What the first bytes of a .npy file say.
struct NpyHeader {
  Tensor tensor; ///< dtype, shape and layout; no data yet
  bool bigEndian = false;
  size_t dataStart = 0; ///< where the data begins
  uint64_t dataBytes = 0;
};

std::string dataSizeError(uint64_t present, uint64_t needed) {
  return "the data holds " + std::to_string(present) + " bytes where the shape needs " + std::to_string(needed) +
         (needed > present ? " (truncated file)" : " (extra bytes after the data)");
}

/// The magic, version and header length at the start of `bytes` (its first
/// 12 bytes, or the whole file if shorter): where the data starts, or 0
/// with `error` set.
size_t npyPrefix(std::string_view bytes, size_t &lengthBytes, std::string &error) {
  if (bytes.size() < 6 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return 0;
  }
  if (bytes.size() < 8) {
    error = "truncated .npy header";
    return 0;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
            " (Keel reads versions 1.0, 2.0 and 3.0)";
    return 0;
  }
  lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes) {
    error = "truncated .npy header";
    return 0;
  }
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  if (headerLength > kMaxNpyHeaderBytes) {
    error = "the .npy header is " + std::to_string(headerLength) + " bytes long; Keel reads headers of at most " +
            std::to_string(kMaxNpyHeaderBytes) + " bytes";
    return 0;
  }
  return 8 + lengthBytes + headerLength;
}

/// Parses the header at the start of `bytes` (which hold at least all of it).
std::optional<NpyHeader> parseNpyHeader(std::string_view bytes, std::string &error) {
  size_t lengthBytes = 0;
  size_t dataStart = npyPrefix(bytes, lengthBytes, error);
  if (dataStart == 0)
    return std::nullopt;
  if (bytes.size() < dataStart) {
    error = "truncated .npy header";
    return std::nullopt;
  }
  std::vector<std::pair<std::string, HeaderValue>> entries;
  HeaderParser parser(bytes.substr(8 + lengthBytes, dataStart - 8 - lengthBytes));
  if (!parser.dict(entries, error)) {
    error = parser.tooLarge.empty() ? "malformed .npy header: " + error
                                    : "dimension " + parser.tooLarge + " of the shape does not fit in 64 bits";
    return std::nullopt;
  }
  const HeaderValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const HeaderValue **slot = key == "descr"           ? &descr
                               : key == "fortran_order" ? &fortran
                               : key == "shape"         ? &shape
                                                        : nullptr;
    if (!slot) {
      error = "malformed .npy header: unexpected key '" + key + "'";
      return std::nullopt;
    }
    if (*slot) {
      error = "malformed .npy header: '" + key + "' is given twice";
      return std::nullopt;
    }
    *slot = &value;
  }
  if (!descr || !fortran || !shape) {
    error = "malformed .npy header: it needs 'descr', 'fortran_order' and 'shape'";
    return std::nullopt;
  }
  if (fortran->kind != HeaderValue::Kind::Bool) {
    error = "malformed .npy header: 'fortran_order' must be True or False";
    return std::nullopt;
  }
  if (shape->kind != HeaderValue::Kind::Tuple) {
    error = "malformed .npy header: 'shape' must be a tuple of integers";
    return std::nullopt;
  }
  NpyHeader h;
  h.dataStart = dataStart;
  std::optional<KeelDType> dtype = dtypeOfDescr(*descr, h.bigEndian, error);
  if (!dtype)
    return std::nullopt;
  if (shape->ints.size() > KEEL_MAX_RANK) {
    error = "rank " + std::to_string(shape->ints.size()) + " is above Keel's limit of " + std::to_string(KEEL_MAX_RANK);
    return std::nullopt;
  }
  Tensor &t = h.tensor;
  t.dtype = *dtype;
  t.shape = shape->ints;
  t.minorToMajor = fortran->flag ? columnMajor(t.shape.size()) : rowMajor(t.shape.size());
  int64_t count = 1, bytesNeeded = 0;
  for (int64_t d : t.shape) {
    if (d < 1) {
      error = "a dimension of size 0: Keel's dimensions are at least 1";
      return std::nullopt;
    }
    if (__builtin_mul_overflow(count, d, &count)) {
      error = "the shape " + shapeText(t.shape) + " has more elements than fit in 64 bits";
      return std::nullopt;
    }
  }
  if (__builtin_mul_overflow(count, static_cast<int64_t>(keel_dtype_size(t.dtype)), &bytesNeeded)) {
    error = "the shape " + shapeText(t.shape) + " needs more bytes than fit in 64 bits";
    return std::nullopt;
  }
  h.dataBytes = static_cast<uint64_t>(bytesNeeded);
  return h;
}

/// The tensor of `h`, whose data (h.dataBytes of it) is in place: byte
/// order fixed, every element checked.
std::optional<Tensor> withData(NpyHeader h, std::string &error) {
  Tensor t = std::move(h.tensor);
  size_t size = keel_dtype_size(t.dtype);
  if (h.bigEndian && size > 1)
    for (size_t i = 0; i < t.data.size(); i += size)
      std::reverse(t.data.begin() + static_cast<std::ptrdiff_t>(i), t.data.begin() + static_cast<std::ptrdiff_t>(i + size));
  // Values that are not encodings of the element type.
  for (size_t i = 0; i < t.data.size(); i += size) {
    bool bad = false;
    if (t.dtype == KEEL_PRED)
      bad = t.data[i] > 1;
    else if (t.dtype == KEEL_I4)
      bad = static_cast<int8_t>(t.data[i]) < -8 || static_cast<int8_t>(t.data[i]) > 7;
    else if (t.dtype == KEEL_TF32) {
      uint32_t v;
      std::memcpy(&v, &t.data[i], 4);
      bad = (v & 0x1FFFu) != 0;
    }
    if (bad) {
      error = "element " + std::to_string(i / size) + " is not a " + std::string(dtypeName(t.dtype)) + " value";
      return std::nullopt;
    }
  }
  return t;
}

} // namespace

std::optional<Tensor> parseNpy(std::string_view bytes, std::string &error) {
  std::optional<NpyHeader> h = parseNpyHeader(bytes, error);
  if (!h)
    return std::nullopt;
  uint64_t present = bytes.size() - h->dataStart;
  if (h->dataBytes != present) {
    error = dataSizeError(present, h->dataBytes);
    return std::nullopt;
  }
  std::string_view data = bytes.substr(h->dataStart);
  h->tensor.data.assign(data.begin(), data.end());
  return withData(std::move(*h), error);
}

std::string npyDescr(KeelDType t) {
  const DescrRow &row = kDescrs[t];
  if (row.numpy)
    return "'" + std::string(keel_dtype_size(t) == 1 ? "|" : "<") + row.numpy + "'";
  return "[('" + std::string(row.field) + "', '" + row.raw + "')]";
}

namespace {

/// The .npy prefix and header of `t` (its data follows: in column-major
/// order when `fortran`, else row-major), padded so that the data starts at
/// a multiple of 64 bytes.
std::string npyHeader(const Tensor &t, bool &fortran) {
  std::string descr = npyDescr(t.dtype);
  fortran = t.shape.size() > 1 && t.minorToMajor == columnMajor(t.shape.size());
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': " + descr + ", 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  size_t prefix = header.size() + 1 < 65536 - 10 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header;
}

/// Writes header and data; the data straight from the tensor when it is
/// already in the file's order (no copy of a large result), else reordered.
bool writeNpyStream(std::ostream &out, const Tensor &t) {
  bool fortran = false;
  std::string header = npyHeader(t, fortran);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (fortran || t.minorToMajor == rowMajor(t.shape.size())) {
    out.write(reinterpret_cast<const char *>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
  } else {
    std::vector<uint8_t> data = reorderedBytes(t, rowMajor(t.shape.size()));
    out.write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  return static_cast<bool>(out);
}

} // namespace

std::string formatNpy(const Tensor &t) {
  std::ostringstream out;
  writeNpyStream(out, t);
  return std::move(out).str();
}

namespace {

/// Reads only as much as the header says the file holds, after checking
/// that against `maxDataBytes`: a device or pipe is never read to its end.
std::optional<Tensor> readNpyFile(const std::string &path, std::string &error, uint64_t maxDataBytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = std::string("cannot read the file: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "a directory, not a .npy file";
    return std::nullopt;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    error = std::string("cannot read the file: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string bytes(12, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f.get()));
  size_t lengthBytes = 0;
  size_t dataStart = npyPrefix(bytes, lengthBytes, error);
  if (dataStart == 0)
    return std::nullopt;
  size_t have = bytes.size(); // 12 <= dataStart: no data read yet
  bytes.resize(dataStart);
  bytes.resize(have + std::fread(bytes.data() + have, 1, dataStart - have, f.get()));
  std::optional<NpyHeader> h = parseNpyHeader(bytes, error);
  if (!h)
    return std::nullopt;
  if (h->dataBytes > maxDataBytes) {
    error = "its " + std::string(dtypeName(h->tensor.dtype)) + shapeText(h->tensor.shape) + " data needs " +
            std::to_string(h->dataBytes) + " bytes, more than the memory limit of " + std::to_string(maxDataBytes) +
            " bytes (keel run --max-memory)";
    return std::nullopt;
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) != h->dataStart + h->dataBytes) {
    uint64_t size = static_cast<uint64_t>(st.st_size);
    error = dataSizeError(size > h->dataStart ? size - h->dataStart : 0, h->dataBytes);
    return std::nullopt;
  }
  std::vector<uint8_t> &data = h->tensor.data; // read in place: no second copy of a large file
  data = elementBytes(static_cast<size_t>(h->dataBytes), h->tensor.dtype, h->tensor.shape);
  size_t n = std::fread(data.data(), 1, data.size(), f.get());
  char extra;
  if (n != data.size()) {
    error = dataSizeError(n, h->dataBytes);
    return std::nullopt;
  }
  if (std::fread(&extra, 1, 1, f.get()) != 0) {
    error = "extra bytes after the data";
    return std::nullopt;
  }
  return withData(std::move(*h), error);
}

} // namespace

std::optional<Tensor> readNpy(const std::string &path, std::string &error, uint64_t maxDataBytes) {
  std::optional<Tensor> t = readNpyFile(path, error, maxDataBytes);
  if (!t)
    error = path + ": " + error;
  return t;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool writeNpyFiles(const std::vector<std::string> &paths, const std::vector<const Tensor *> &tensors,
                   std::string &error) {
  std::vector<std::string> temps;
  auto removeAll = [](auto begin, auto end) {
    for (auto it = begin; it != end; ++it)
      std::remove(it->c_str());
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    temps.push_back(paths[i] + ".tmp." + std::to_string(getpid()));
    std::ofstream out(temps.back(), std::ios::binary | std::ios::trunc);
    writeNpyStream(out, *tensors[i]);
    out.close(); // a full disk shows here
    if (!out) {
      removeAll(temps.begin(), temps.end());
      error = "cannot write '" + paths[i] + "'";
      return false;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (std::rename(temps[i].c_str(), paths[i].c_str()) != 0) {
      error = "cannot write '" + paths[i] + "': " + std::strerror(errno);
      removeAll(temps.begin() + static_cast<std::ptrdiff_t>(i), temps.end());
      removeAll(paths.begin(), paths.begin() + static_cast<std::ptrdiff_t>(i));
      return false;
    }
  return true;
}

bool writeNpy(const std::string &path, const Tensor &t, std::string &error) {
  return writeNpyFiles({path}, {&t}, error);
}

} // namespace keel::rt
