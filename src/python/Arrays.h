//===- Arrays.h - NumPy arrays and DLPack tensors as Keel buffers -*- C++ -*-===//
//
// The Python module's boundary with array libraries. An argument (a NumPy
// array, or any object with `__dlpack__`) becomes an ArrayView: its Keel
// element type, shape, byte strides and data, and what keeps the data
// alive. A view whose strides are the parameter's layout, densely, and
// whose data is aligned to its element is read in place; any other is
// copied into the layout (Gathered). Results are NumPy arrays that Keel
// writes into directly.
//
// Element types: NumPy's own where it has one (bool, int8..uint64, float16,
// float32, float64), Keel's one-field structured dtypes for the others
// (`[('bf16', '<u2')]`, as in .npy files, docs/numerics.md), and DLPack's
// codes (PyTorch's bfloat16 is bf16).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_PYTHON_ARRAYS_H
#define KEEL_PYTHON_ARRAYS_H

#include "keel/runtime/Buffer.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct DLManagedTensor; // dlpack/dlpack.h

namespace keel::python {

namespace py = pybind11;

/// An argument's elements, as the caller holds them.
struct ArrayView {
  KeelDType dtype = KEEL_F32;
  std::vector<int64_t> shape, strides; ///< strides in bytes; any sign
  const uint8_t *data = nullptr;
  py::object owner;               ///< the array, or the DLPack capsule
  ::DLManagedTensor *managed = nullptr; ///< a DLPack tensor, returned to its owner by release()
  std::string origin;             ///< for messages: `a float64 array`, `a torch tensor`
  ArrayView() = default;
  ArrayView(ArrayView &&other) noexcept;
  ArrayView &operator=(ArrayView &&other) noexcept;
  ~ArrayView();
  void release();
};

/// A problem with an argument: the exception type the module raises.
struct ArgumentProblem {
  enum Kind { Type, Shape, Value } kind;
  std::string message;
};

/// `obj` as a view; throws ArgumentProblem when it is no array Keel reads.
ArrayView viewOf(const py::handle &obj, const std::string &argument);

/// Whether `v` is its elements in `minorToMajor`, densely, and aligned to
/// its element: then compiled code reads it where it is.
bool readsInPlace(const ArrayView &v, const std::vector<int64_t> &minorToMajor);

/// Memory 64-byte aligned, freed with std::free.
struct FreeDeleter {
  void operator()(void *p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;
AlignedBytes alignedBytes(size_t bytes);

/// `v`'s elements copied into `minorToMajor`, densely (a copy that also
/// reorders, for any strides).
AlignedBytes gather(const ArrayView &v, const std::vector<int64_t> &minorToMajor);

/// Checks elements the storage type admits but the element type does not
/// (a pred byte other than 0 and 1, a tf32 with its low 13 bits set, an i4
/// outside -8..7), in `count` dense elements; the message, or empty.
std::string invalidElements(KeelDType dtype, const uint8_t *data, int64_t count);

/// The NumPy dtype results of `dtype` have.
py::dtype numpyDType(KeelDType dtype);
/// A new NumPy array of `dtype` and `shape` laid out in `minorToMajor`
/// (its strides say so), uninitialized.
py::array newArray(KeelDType dtype, const std::vector<int64_t> &shape, const std::vector<int64_t> &minorToMajor);

/// `float32`, `bf16`: how messages name an element type.
std::string dtypeText(KeelDType dtype);

} // namespace keel::python

#endif // KEEL_PYTHON_ARRAYS_H
