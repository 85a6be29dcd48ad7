"""Writes the hostile inputs of reliability.test into a folder: source too
deep or too long, recursion without end, bytes that are not UTF-8, .npy
files that lie about themselves, IR that calls itself."""
import os
import struct
import sys

out = sys.argv[1]


def write(name, text, mode="w"):
    with open(os.path.join(out, name), mode) as f:
        f.write(text)


# Nesting: 20,000 of each kind; the parser stops at 256 with one error.
write("parens.sfn", "fn f() -> int { return " + "(" * 20000 + "1" + ")" * 20000 + "; }\n")
write("blocks.sfn", "fn f() { " + "{" * 20000 + "}" * 20000 + " }\nfn g() -> int { return 1 }\n")
write("ifs.sfn", "fn f(x: int) -> int { " + "if x > 0 { " * 10000 + "}" * 10000 + " return 1; }\n")
write("negs.sfn", "fn f() -> int { return " + "-" * 20000 + "1; }\n")
write("bangs.sfn", "fn f() -> bool { return " + "!" * 100000 + "true; }\n")
write("calls.sfn", "fn f(x: int) -> int { return " + "f(" * 5000 + "1" + ")" * 5000 + "; }\n")
write("dims.sfn", "fn f(x: Tensor<f32, [" + "(" * 5000 + "N" + ")" * 5000 + "]>) { }\n")
write("interp.sfn", 'fn main() ![io] { print("${' + "(" * 300 + "1" + ")" * 300 + '}"); }\n')
# Long chains are valid programs, up to 131,072 operations deep.
write("sum.sfn", "fn f(a: i64) -> i64 { return " + " + ".join(["a"] * 100000) + "; }\n"
      "fn main() ![io] { print(\"${f(3)}\"); }\n")
write("toolong.sfn", "fn f(a: i64) -> i64 { return " + " + ".join(["a"] * 140000) + "; }\n")
# An else-if chain is not nesting: 20,000 branches go through every stage
# of the compiler (to LLVM IR); 2,000 are run, since LLVM's -O2 spends time
# quadratic in the branches on a chain of tests of one value (InstCombine's
# dominating conditions: 2,000 take 1.5 s, 20,000 take 350 s).
def elseif(name, n):
    write(name, "fn f(x: int) -> int { "
          + " else ".join("if x == %d { return %d; }" % (i, i % 100) for i in range(n))
          + " return 0; }\nfn main() ![io] { print(\"else-if ${f(%d)}\"); }\n" % (n - 1))
elseif("elseif.sfn", 20000)
elseif("elseif-run.sfn", 2000)
write("tensorsum.sfn", "fn f(x: Tensor<f32, [N]>) -> Tensor<f32, [N]> { return "
      + " + ".join(["x"] * 5000) + "; }\n")
write("tensorchain.sfn", "fn g(x: Tensor<f32, [N]>) -> Tensor<f32, [N]> {\n  let y0 = x;\n"
      + "".join("  let y%d = relu(y%d) + x;\n" % (i + 1, i) for i in range(2000)) + "  return y2000;\n}\n")
write("dimsum.sfn", "fn f(x: Tensor<f32, [" + " + ".join(["N"] * 140000) + "]>) { }\n")

# Bytes that are not UTF-8, a byte-order mark.
write("badutf8.sfn", b"fn main() { let x = 1 \xff; } // caf\xe9\n", "wb")
write("bom.sfn", b'\xef\xbb\xbffn main() ![io] { print("bom ok"); }\n', "wb")


def npy(header, data=b"", version=(1, 0)):
    h = header.encode()
    total = 10 + len(h) + 1
    h += b" " * ((64 - total % 64) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(h)) + h + data


write("v19.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", b"\0" * 8, (1, 9)), "wb")
write("huge.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }"), "wb")
write("hugedigits.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"), "wb")
write("fortran.npy", npy("{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,), }", b"\0" * 8), "wb")
write("bigheader.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 1 << 30), "wb")
