"""Helper of numpy-interop.test: `write DIR` saves arrays with NumPy,
`compare DIR` checks that each FILE.npy.keel (written back by Keel) holds the
same array as FILE.npy."""
import os
import sys

import numpy as np

ARRAYS = {
    "pred": np.array([True, False, True]),
    "i8": np.array([-128, 0, 127], dtype=np.int8),
    "i16": np.arange(6, dtype="<i2").reshape(2, 3),
    "i32_big_endian": np.array([1, 258, -3], dtype=">i4"),
    "i64": np.array([[-(2**63), 2**63 - 1]], dtype=np.int64),
    "u8": np.array([0, 255], dtype=np.uint8),
    "u16": np.array([65535], dtype=np.uint16),
    "u32": np.array([4294967295, 1], dtype=np.uint32),
    "u64": np.array([2**64 - 1], dtype=np.uint64),
    "f16": np.array([[0.1, -2.0, 65504.0], [np.inf, -0.0, 6e-8]], dtype=np.float16),
    "f32_fortran": np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
    "f64": np.array([np.pi, -np.e, 1e-308]),
    # Keel's convention for formats NumPy lacks: one field, raw encodings.
    "bf16": np.array([(0x3F80,), (0xBF80,), (0x7FC0,), (0x0001,)], dtype=[("bf16", "<u2")]),
    "tf32": np.array([(0x3F800000,), (0x40490000,)], dtype=[("tf32", "<u4")]),
    "fp8e4m3fn": np.array([[(0x7E,), (0xFE,)], [(0x01,), (0x7F,)]], dtype=[("fp8e4m3fn", "|u1")]),
    "fp8e5m2": np.array([(0x7C,), (0x42,)], dtype=[("fp8e5m2", "|u1")]),
    "i4": np.array([(-8,), (7,), (0,)], dtype=[("i4", "|i1")]),
}


def main() -> int:
    mode, folder = sys.argv[1], sys.argv[2]
    for name, array in ARRAYS.items():
        path = os.path.join(folder, name + ".npy")
        if mode == "write":
            np.save(path, array)
            continue
        back = np.load(path + ".keel")
        # Keel writes native little-endian row-major or Fortran order; values
        # and shapes must be equal, bit for bit for floats.
        if back.shape != array.shape or back.dtype.names != array.dtype.names:
            print(f"{name}: shape or fields differ: {back.dtype} {back.shape} vs {array.dtype} {array.shape}")
            return 1
        expected = array.astype(array.dtype.newbyteorder("<")) if array.dtype.byteorder == ">" else array
        if expected.tobytes(order="C") != back.tobytes(order="C"):
            print(f"{name}: values differ")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
