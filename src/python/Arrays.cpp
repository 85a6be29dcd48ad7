//===- Arrays.cpp - NumPy arrays and DLPack tensors as Keel buffers -------===//
#include "Arrays.h"

#include "keel/runtime/Npy.h"

#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace keel::python {

ArrayView::ArrayView(ArrayView &&other) noexcept { *this = std::move(other); }

ArrayView &ArrayView::operator=(ArrayView &&other) noexcept {
  if (this != &other) {
    release();
    dtype = other.dtype;
    shape = std::move(other.shape);
    strides = std::move(other.strides);
    data = other.data;
    owner = std::move(other.owner);
    managed = other.managed;
    origin = std::move(other.origin);
    other.managed = nullptr;
    other.data = nullptr;
  }
  return *this;
}

ArrayView::~ArrayView() { release(); }

void ArrayView::release() {
  // The consumer of a DLPack capsule calls its deleter once it is done
  // (the capsule was renamed `used_dltensor`, so it will not).
  if (managed && managed->deleter)
    managed->deleter(managed);
  managed = nullptr;
}

void FreeDeleter::operator()(void *p) const { std::free(p); }

AlignedBytes alignedBytes(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    throw std::bad_alloc();
  return AlignedBytes(static_cast<uint8_t *>(p));
}

std::string dtypeText(KeelDType dtype) {
  switch (dtype) {
  case KEEL_PRED: return "bool";
  case KEEL_I8: return "int8";
  case KEEL_I16: return "int16";
  case KEEL_I32: return "int32";
  case KEEL_I64: return "int64";
  case KEEL_U8: return "uint8";
  case KEEL_U16: return "uint16";
  case KEEL_U32: return "uint32";
  case KEEL_U64: return "uint64";
  case KEEL_F16: return "float16";
  case KEEL_F32: return "float32";
  case KEEL_F64: return "float64";
  case KEEL_I4: case KEEL_BF16: case KEEL_TF32: case KEEL_FP8E4M3FN: case KEEL_FP8E5M2:
    return std::string(rt::dtypeName(dtype));
  case KEEL_NUM_DTYPES: break;
  }
  return "?";
}

namespace {

/// Keel's structured dtypes: field name and the storage it holds.
struct Structured {
  KeelDType dtype;
  const char *field, *storage;
};
constexpr Structured kStructured[] = {
    {KEEL_BF16, "bf16", "<u2"},          {KEEL_TF32, "tf32", "<u4"}, {KEEL_FP8E4M3FN, "fp8e4m3fn", "|u1"},
    {KEEL_FP8E5M2, "fp8e5m2", "|u1"}, {KEEL_I4, "i4", "|i1"},
};

/// NumPy's type numbers (numpy/ndarraytypes.h), fixed by its C API.
enum NumpyType : int {
  kBool = 0, kByte = 1, kUByte = 2, kShort = 3, kUShort = 4, kInt = 5, kUInt = 6, kLong = 7, kULong = 8,
  kLongLong = 9, kULongLong = 10, kFloat = 11, kDouble = 12, kHalf = 23,
};

std::optional<KeelDType> fromNumpyNumber(int number, int size) {
  switch (number) {
  case kBool: return KEEL_PRED;
  case kByte: return KEEL_I8;
  case kUByte: return KEEL_U8;
  case kShort: return KEEL_I16;
  case kUShort: return KEEL_U16;
  case kInt: case kLong: case kLongLong: // C's int and long: by their size
    return size == 4 ? KEEL_I32 : size == 8 ? std::optional<KeelDType>(KEEL_I64) : std::nullopt;
  case kUInt: case kULong: case kULongLong:
    return size == 4 ? KEEL_U32 : size == 8 ? std::optional<KeelDType>(KEEL_U64) : std::nullopt;
  case kFloat: return KEEL_F32;
  case kDouble: return KEEL_F64;
  case kHalf: return KEEL_F16;
  }
  return std::nullopt;
}

std::optional<KeelDType> fromStructured(const py::dtype &dt) {
  py::object names = dt.attr("names");
  if (names.is_none() || py::len(names) != 1)
    return std::nullopt;
  std::string field = py::str(names[py::int_(0)]);
  for (const Structured &s : kStructured)
    if (field == s.field) {
      py::object storage = dt.attr("fields")[py::str(field)][py::int_(0)];
      if (storage.equal(py::dtype(std::string(s.storage))))
        return s.dtype;
    }
  return std::nullopt;
}

std::string shapeString(const std::vector<int64_t> &shape) { return rt::shapeText(shape); }

ArrayView numpyView(const py::handle &obj, const std::string &argument) {
  auto *array = py::detail::array_proxy(obj.ptr());
  auto *descr = py::detail::array_descriptor_proxy(array->descr);
  py::dtype dt = py::reinterpret_borrow<py::dtype>(array->descr);
  ArrayView v;
  std::optional<KeelDType> t = descr->kind == 'V' ? fromStructured(dt) : fromNumpyNumber(descr->type_num, descr->elsize);
  if (!t)
    throw ArgumentProblem{ArgumentProblem::Type, argument + " is an array of " + std::string(py::str(dt)) +
                                                     ", which Keel has no element type for (bool, int8..int64, "
                                                     "uint8..uint64, float16, float32, float64, and Keel's "
                                                     "bf16, tf32, fp8e4m3fn, fp8e5m2, i4 dtypes)"};
  if (descr->byteorder == '>')
    throw ArgumentProblem{ArgumentProblem::Type, argument + " is a big-endian " + dtypeText(*t) +
                                                     " array; Keel reads native byte order "
                                                     "(a.astype(a.dtype.newbyteorder('=')))"};
  v.dtype = *t;
  v.origin = "a " + dtypeText(*t) + " array";
  v.data = reinterpret_cast<const uint8_t *>(array->data);
  for (int i = 0; i < array->nd; ++i) {
    v.shape.push_back(array->dimensions[i]);
    v.strides.push_back(array->strides[i]);
  }
  v.owner = py::reinterpret_borrow<py::object>(obj);
  return v;
}

std::optional<KeelDType> fromDLPack(DLDataType t) {
  if (t.lanes != 1)
    return std::nullopt;
  switch (t.code) {
  case kDLInt:
    return t.bits == 8 ? KEEL_I8 : t.bits == 16 ? KEEL_I16 : t.bits == 32 ? KEEL_I32
         : t.bits == 64 ? std::optional<KeelDType>(KEEL_I64) : std::nullopt;
  case kDLUInt:
    return t.bits == 8 ? KEEL_U8 : t.bits == 16 ? KEEL_U16 : t.bits == 32 ? KEEL_U32
         : t.bits == 64 ? std::optional<KeelDType>(KEEL_U64) : std::nullopt;
  case kDLFloat:
    return t.bits == 16 ? KEEL_F16 : t.bits == 32 ? KEEL_F32 : t.bits == 64 ? std::optional<KeelDType>(KEEL_F64)
                                                                               : std::nullopt;
  case kDLBfloat: return t.bits == 16 ? std::optional<KeelDType>(KEEL_BF16) : std::nullopt;
  }
  if (t.code == 6 && t.bits == 8) // kDLBool (DLPack 0.8)
    return KEEL_PRED;
  return std::nullopt;
}

std::string typeName(const py::handle &obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

ArrayView dlpackView(const py::handle &obj, const std::string &argument) {
  std::string kind = typeName(obj);
  if (py::hasattr(obj, "__dlpack_device__")) {
    py::tuple device = obj.attr("__dlpack_device__")();
    int type = device[0].cast<int>();
    if (type != kDLCPU && type != kDLCUDAHost)
      throw ArgumentProblem{ArgumentProblem::Type,
                            argument + " is a " + kind + " on device " + std::string(py::str(device)) +
                                " (DLPack's device type " + std::to_string(type) +
                                "): Keel computes on the CPU; move it there first (for PyTorch, x.cpu())"};
  }
  py::object capsule = obj.attr("__dlpack__")();
  auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed)
    throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor"); // ours now: release() returns it
  ArrayView v;
  v.managed = managed;
  v.owner = py::reinterpret_borrow<py::object>(obj);
  const DLTensor &t = managed->dl_tensor;
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    throw ArgumentProblem{ArgumentProblem::Type, argument + " is a " + kind + " on DLPack device type " +
                                                     std::to_string(t.device.device_type) +
                                                     ": Keel computes on the CPU; move it there first"};
  std::optional<KeelDType> dtype = fromDLPack(t.dtype);
  if (!dtype)
    throw ArgumentProblem{ArgumentProblem::Type, argument + " is a " + kind + " of DLPack type code " +
                                                     std::to_string(t.dtype.code) + ", " +
                                                     std::to_string(t.dtype.bits) + " bits, " +
                                                     std::to_string(t.dtype.lanes) + " lanes, which Keel has " +
                                                     "no element type for"};
  v.dtype = *dtype;
  v.origin = "a " + dtypeText(*dtype) + " " + kind;
  int64_t size = static_cast<int64_t>(keel_dtype_size(*dtype));
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides.resize(static_cast<size_t>(t.ndim));
  int64_t dense = size;
  for (int i = t.ndim - 1; i >= 0; --i) { // no strides: row-major
    v.strides[static_cast<size_t>(i)] = t.strides ? t.strides[i] * size : dense;
    dense *= t.shape[i];
  }
  v.data = static_cast<const uint8_t *>(t.data) + t.byte_offset;
  return v;
}

} // namespace

ArrayView viewOf(const py::handle &obj, const std::string &argument) {
  ArrayView v;
  if (py::isinstance<py::array>(obj))
    v = numpyView(obj, argument);
  else if (py::hasattr(obj, "__dlpack__"))
    v = dlpackView(obj, argument);
  else
    throw ArgumentProblem{ArgumentProblem::Type, argument + " is a " + typeName(obj) +
                                                     "; Keel takes NumPy arrays and objects with __dlpack__ "
                                                     "(PyTorch CPU tensors); numpy.asarray makes one"};
  if (v.shape.size() > KEEL_MAX_RANK)
    throw ArgumentProblem{ArgumentProblem::Shape, argument + " has rank " + std::to_string(v.shape.size()) +
                                                      "; Keel's tensors have at most " +
                                                      std::to_string(KEEL_MAX_RANK) + " dimensions"};
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] <= 0)
      throw ArgumentProblem{ArgumentProblem::Shape, argument + " has shape " + shapeString(v.shape) +
                                                        ": dimension " + std::to_string(d) +
                                                        " is empty, and Keel's dimensions are at least 1"};
  return v;
}

bool readsInPlace(const ArrayView &v, const std::vector<int64_t> &minorToMajor) {
  int64_t size = static_cast<int64_t>(keel_dtype_size(v.dtype));
  if (reinterpret_cast<uintptr_t>(v.data) % static_cast<uintptr_t>(size) != 0)
    return false;
  int64_t expected = size;
  for (int64_t d : minorToMajor) {
    size_t i = static_cast<size_t>(d);
    if (v.shape[i] != 1 && v.strides[i] != expected) // a dimension of 1 has any stride
      return false;
    expected *= v.shape[i];
  }
  return true;
}

namespace {

template <size_t Size>
void copyRows(const uint8_t *src, int64_t srcStride, uint8_t *dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i, src += srcStride, dst += Size)
    std::memcpy(dst, src, Size);
}

} // namespace

AlignedBytes gather(const ArrayView &v, const std::vector<int64_t> &minorToMajor) {
  size_t size = keel_dtype_size(v.dtype);
  size_t rank = v.shape.size();
  int64_t count = 1;
  for (int64_t d : v.shape)
    count *= d;
  AlignedBytes out = alignedBytes(static_cast<size_t>(count) * size);
  if (rank == 0) {
    std::memcpy(out.get(), v.data, size);
    return out;
  }
  // Walk the destination in order (its fastest dimension innermost),
  // reading the source through its strides.
  size_t inner = static_cast<size_t>(minorToMajor[0]);
  int64_t n = v.shape[inner], stride = v.strides[inner];
  std::vector<int64_t> index(rank, 0);
  uint8_t *dst = out.get();
  const uint8_t *src = v.data;
  for (int64_t row = 0; row < count / n; ++row) {
    switch (size) {
    case 1: copyRows<1>(src, stride, dst, n); break;
    case 2: copyRows<2>(src, stride, dst, n); break;
    case 4: copyRows<4>(src, stride, dst, n); break;
    case 8: copyRows<8>(src, stride, dst, n); break;
    }
    dst += n * static_cast<int64_t>(size);
    for (size_t k = 1; k < rank; ++k) { // the next row: an odometer over the outer dimensions
      size_t d = static_cast<size_t>(minorToMajor[k]);
      if (++index[d] < v.shape[d]) {
        src += v.strides[d];
        break;
      }
      src -= v.strides[d] * (v.shape[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

std::string invalidElements(KeelDType dtype, const uint8_t *data, int64_t count) {
  if (dtype == KEEL_PRED) {
    for (int64_t i = 0; i < count; ++i)
      if (data[i] > 1)
        return "element " + std::to_string(i) + " is the byte " + std::to_string(data[i]) +
               ", which is no boolean (0 or 1)";
  } else if (dtype == KEEL_I4) {
    for (int64_t i = 0; i < count; ++i)
      if (auto v = static_cast<int8_t>(data[i]); v < -8 || v > 7)
        return "element " + std::to_string(i) + " is " + std::to_string(v) + ", outside i4's -8..7";
  } else if (dtype == KEEL_TF32) {
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, data + 4 * i, 4);
      if (bits & 0x1FFF) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "%08x", bits);
        return "element " + std::to_string(i) + " is the bits 0x" + hex +
               ": a tf32 has its low 13 bits clear (keel.tf32 rounds a float32 array to tf32)";
      }
    }
  }
  return "";
}

py::dtype numpyDType(KeelDType dtype) {
  // Made once, under the GIL; kept for the life of the process (never
  // destroyed after the interpreter).
  static py::dtype *made[KEEL_NUM_DTYPES] = {};
  py::dtype *&d = made[dtype];
  if (!d) {
    py::object descr;
    switch (dtype) {
    case KEEL_PRED: descr = py::str("?"); break;
    case KEEL_I8: descr = py::str("i1"); break;
    case KEEL_I16: descr = py::str("<i2"); break;
    case KEEL_I32: descr = py::str("<i4"); break;
    case KEEL_I64: descr = py::str("<i8"); break;
    case KEEL_U8: descr = py::str("u1"); break;
    case KEEL_U16: descr = py::str("<u2"); break;
    case KEEL_U32: descr = py::str("<u4"); break;
    case KEEL_U64: descr = py::str("<u8"); break;
    case KEEL_F16: descr = py::str("<f2"); break;
    case KEEL_F32: descr = py::str("<f4"); break;
    case KEEL_F64: descr = py::str("<f8"); break;
    case KEEL_I4: case KEEL_BF16: case KEEL_TF32: case KEEL_FP8E4M3FN: case KEEL_FP8E5M2:
      for (const Structured &s : kStructured)
        if (s.dtype == dtype)
          descr = py::make_tuple(py::make_tuple(s.field, s.storage));
      descr = py::list(descr);
      break;
    case KEEL_NUM_DTYPES: break;
    }
    d = new py::dtype(py::dtype::from_args(descr));
  }
  return *d;
}

py::array newArray(KeelDType dtype, const std::vector<int64_t> &shape, const std::vector<int64_t> &minorToMajor) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end()), strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(keel_dtype_size(dtype));
  for (int64_t d : minorToMajor) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= shape[static_cast<size_t>(d)];
  }
  return py::array(numpyDType(dtype), dims, strides);
}

} // namespace keel::python
