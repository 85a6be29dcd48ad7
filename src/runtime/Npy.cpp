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
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

extern "C" size_t keel_dtype_size(uint8_t dtype) {
  switch (dtype) {
  case KEEL_PRED: case KEEL_I4: case KEEL_I8: case KEEL_U8: case KEEL_FP8E4M3FN: case KEEL_FP8E5M2: return 1;
  case KEEL_I16: case KEEL_U16: case KEEL_F16: case KEEL_BF16: return 2;
  case KEEL_I32: case KEEL_U32: case KEEL_F32: case KEEL_TF32: return 4;
  case KEEL_I64: case KEEL_U64: case KEEL_F64: return 8;
  default: return 0;
  }
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
    if (pos_ == start || pos_ - start > 18)
      return false;
    out = std::stoll(std::string(s_.substr(start, pos_ - start)));
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
    error = "unsupported structured element type ('" + name + "', '" + type + "')";
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

/// The tensor's elements in row-major order, whatever its layout.
std::vector<uint8_t> rowMajorBytes(const Tensor &t) {
  size_t rank = t.shape.size(), size = keel_dtype_size(t.dtype);
  if (t.minorToMajor == rowMajor(rank))
    return t.data;
  // Strides of the stored layout, in elements.
  std::vector<int64_t> stride(rank);
  int64_t s = 1;
  for (int64_t dim : t.minorToMajor) {
    stride[static_cast<size_t>(dim)] = s;
    s *= t.shape[static_cast<size_t>(dim)];
  }
  std::vector<uint8_t> out(t.data.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < t.elementCount(); ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += index[d] * stride[d];
    std::memcpy(&out[static_cast<size_t>(k) * size], &t.data[static_cast<size_t>(offset) * size], size);
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

Tensor Tensor::toRowMajor() const {
  Tensor t = *this;
  t.data = rowMajorBytes(*this);
  t.minorToMajor = rowMajor(shape.size());
  return t;
}

Tensor Tensor::make(KeelDType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.minorToMajor = rowMajor(shape.size());
  t.shape = std::move(shape);
  t.data.assign(static_cast<size_t>(t.elementCount()) * keel_dtype_size(dtype), 0);
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

std::optional<Tensor> parseNpy(std::string_view bytes, std::string &error) {
  if (bytes.size() < 6 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return std::nullopt;
  }
  if (bytes.size() < 8) {
    error = "truncated .npy header";
    return std::nullopt;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    error = "unsupported .npy version " + std::to_string(major) + "." +
            std::to_string(static_cast<unsigned char>(bytes[7]));
    return std::nullopt;
  }
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes) {
    error = "truncated .npy header";
    return std::nullopt;
  }
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart) {
    error = "truncated .npy header";
    return std::nullopt;
  }
  std::vector<std::pair<std::string, HeaderValue>> entries;
  if (!HeaderParser(bytes.substr(8 + lengthBytes, headerLength)).dict(entries, error)) {
    error = "malformed .npy header: " + error;
    return std::nullopt;
  }
  const HeaderValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    if (key == "descr") descr = &value;
    else if (key == "fortran_order" && value.kind == HeaderValue::Kind::Bool) fortran = &value;
    else if (key == "shape" && value.kind == HeaderValue::Kind::Tuple) shape = &value;
    else {
      error = "malformed .npy header: unexpected key '" + key + "'";
      return std::nullopt;
    }
  }
  if (!descr || !fortran || !shape || entries.size() != 3) {
    error = "malformed .npy header: it needs 'descr', 'fortran_order' and 'shape'";
    return std::nullopt;
  }
  bool bigEndian = false;
  std::optional<KeelDType> dtype = dtypeOfDescr(*descr, bigEndian, error);
  if (!dtype)
    return std::nullopt;
  if (shape->ints.size() > KEEL_MAX_RANK) {
    error = "rank " + std::to_string(shape->ints.size()) + " is above Keel's limit of " + std::to_string(KEEL_MAX_RANK);
    return std::nullopt;
  }
  Tensor t;
  t.dtype = *dtype;
  t.shape = shape->ints;
  t.minorToMajor = fortran->flag ? columnMajor(t.shape.size()) : rowMajor(t.shape.size());
  int64_t count = 1;
  for (int64_t d : t.shape) {
    if (d < 1) {
      error = "a dimension of size 0: Keel's dimensions are at least 1";
      return std::nullopt;
    }
    if (__builtin_mul_overflow(count, d, &count)) {
      error = "the element count overflows";
      return std::nullopt;
    }
  }
  size_t size = keel_dtype_size(t.dtype);
  unsigned __int128 expected = static_cast<unsigned __int128>(count) * size;
  size_t present = bytes.size() - dataStart;
  if (expected != present) {
    error = "the data holds " + std::to_string(present) + " bytes where the shape needs " +
            std::to_string(static_cast<unsigned long long>(expected)) +
            (expected > present ? " (truncated file)" : " (extra bytes after the data)");
    return std::nullopt;
  }
  t.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end());
  if (bigEndian && size > 1)
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

std::string formatNpy(const Tensor &t) {
  const DescrRow &row = kDescrs[t.dtype];
  std::string descr;
  if (row.numpy)
    descr = "'" + std::string(keel_dtype_size(t.dtype) == 1 ? "|" : "<") + row.numpy + "'";
  else
    descr = "[('" + std::string(row.field) + "', '" + row.raw + "')]";
  bool fortran = t.shape.size() > 1 && t.minorToMajor == columnMajor(t.shape.size());
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': " + descr + ", 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t prefix = header.size() + 1 < 65536 - 10 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  out += header;
  std::vector<uint8_t> data = fortran ? t.data : rowMajorBytes(t);
  out.append(reinterpret_cast<const char *>(data.data()), data.size());
  return out;
}

std::optional<Tensor> readNpy(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::optional<Tensor> t = parseNpy(bytes.str(), error);
  if (!t)
    error = path + ": " + error;
  return t;
}

bool writeNpy(const std::string &path, const Tensor &t, std::string &error) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    std::string bytes = formatNpy(t);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::remove(temp.c_str());
      error = "cannot write '" + path + "'";
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace keel::rt
