//===- keel/runtime/Npy.h - Host tensors and .npy files ---------*- C++ -*-===//
//
// The host side of the buffer descriptor: a Tensor owns its bytes, and reads
// and writes NumPy's .npy format (versions 1.0, 2.0 and 3.0).
//
// Element types NumPy has map to its descriptors (`|b1` pred, `|i1` i8,
// `<i2`..`<i8`, `|u1`..`<u8`, `<f2` f16, `<f4` f32, `<f8` f64). Those it
// lacks are written as a one-field structured type whose field names the
// format and whose type holds the raw encoding: `[('bf16', '<u2')]`,
// `[('tf32', '<u4')]`, `[('fp8e4m3fn', '|u1')]`, `[('fp8e5m2', '|u1')]`,
// `[('i4', '|i1')]`. NumPy reads these as they are (`a['bf16']` is the bit
// pattern); Keel reads them back as the format. Fortran order is kept as a
// column-major layout; big-endian data is byte-swapped on reading.
//
// Reading refuses, with a message naming the problem: a wrong magic string
// or version, a malformed header, an unsupported descriptor, a zero
// dimension, truncated or surplus data, a non-boolean pred byte, a tf32 with
// its low bits set. Writing goes to a temporary file renamed into place, so
// a failed write leaves nothing half-written.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_RUNTIME_NPY_H
#define KEEL_RUNTIME_NPY_H

#include "keel/runtime/Buffer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <new>
#include <string_view>
#include <vector>

namespace keel::rt {

std::string_view dtypeName(KeelDType t);

/// The NumPy dtype a .npy file of `t` has, as NumPy writes it: `'<f4'`, or
/// for the formats NumPy lacks Keel's one-field structured type of raw
/// encodings, `[('fp8e4m3fn', '|u1')]` (docs/numerics.md).
std::string npyDescr(KeelDType t);

/// A host tensor's memory could not be had (an address-space limit, a
/// cgroup, overcommit off): what() names the tensor and the bytes. The
/// driver reports it as an error, exit status 1, before writing anything.
class AllocationFailure : public std::bad_alloc {
public:
  explicit AllocationFailure(std::string message) : message_(std::move(message)) {}
  const char *what() const noexcept override { return message_.c_str(); }

private:
  std::string message_;
};

struct Tensor {
  KeelDType dtype = KEEL_F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> minorToMajor; ///< row-major when empty is not allowed: always rank entries
  std::vector<uint8_t> data;         ///< elements in layout order

  static Tensor make(KeelDType dtype, std::vector<int64_t> shape); ///< row-major, zero-filled
  int64_t elementCount() const;
  /// A descriptor pointing at this tensor's bytes.
  KeelBuffer view();
  /// The same elements in row-major layout (a copy, reordered).
  Tensor toRowMajor() const;
  /// The same elements in `minorToMajor` (a permutation of the
  /// dimensions), a copy reordered.
  Tensor toLayout(const std::vector<int64_t> &minorToMajor) const;
  bool isRowMajor() const;
};

/// The longest .npy header Keel reads (NumPy's own default is 10,000).
inline constexpr size_t kMaxNpyHeaderBytes = size_t{1} << 20;

/// `[2,3]`
std::string shapeText(const std::vector<int64_t> &shape);

/// Parses .npy bytes; nullopt with `error` set when they are not a valid file.
std::optional<Tensor> parseNpy(std::string_view bytes, std::string &error);
std::string formatNpy(const Tensor &t);

/// Reads a .npy file. Only as much is read as its header says it holds, and
/// nothing past the header when its data would need more than
/// `maxDataBytes`; directories, other versions than 1.0, 2.0 and 3.0, and
/// headers over kMaxNpyHeaderBytes are refused with a message.
std::optional<Tensor> readNpy(const std::string &path, std::string &error,
                              uint64_t maxDataBytes = UINT64_MAX);
/// Writes each tensor to its path, all or none: each goes to a temporary
/// file beside its destination, and only when all are written are they
/// renamed into place; on failure nothing new is left behind.
bool writeNpyFiles(const std::vector<std::string> &paths, const std::vector<const Tensor *> &tensors,
                   std::string &error);
bool writeNpy(const std::string &path, const Tensor &t, std::string &error);

} // namespace keel::rt

#endif // KEEL_RUNTIME_NPY_H
