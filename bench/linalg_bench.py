"""The CPU oracle's workloads W1-W5 (bench/oracle.sfn, the sizes of
bench/oracle_bench.py) through the MLIR linalg exit, lowered by the
documented upstream pipeline (scripts/mlir-run.sh: linalg to loops, then
LLVM) and run by mlir-runner, beside `keel run` in the same run.

usage: python3 bench/linalg_bench.py [KEEL] [--quick]
       (--quick: every size divided so that each workload takes well under a
       second; for trying the script)

Keel's time is `keel run --entry ... --repeat 3`'s best call. The exit's is
the best of 3 calls of the entry inside mlir-runner, timed by the runner
utilities' rtclock() around each call, on inputs filled with 0.5 (each
workload's time does not depend on its values). Both exclude compilation;
both run on one core. The exit uses `math` dialect transcendentals (libm)."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARGS = [a for a in sys.argv[1:] if a != "--quick"]
QUICK = "--quick" in sys.argv
KEEL = ARGS[0] if ARGS else os.path.join(ROOT, "build", "src", "driver", "keel")
SOURCE = os.path.join(HERE, "oracle.sfn")
MLIR_RUN = os.path.join(ROOT, "scripts", "mlir-run.sh")
BIN = os.environ.get("KEEL_MLIR_BIN", "/usr/lib/llvm-22/bin")

WORKLOADS = [  # name, entry, parameters, sizes
    ("W1 tanh(x*1.5+0.5)*x 16M", "w1", ["x"], {"N": 16 * 2**20}),
    ("W2 layer norm [4096,4096]", "w2", ["x", "gamma", "beta"], {"S": 4096, "D": 4096}),
    ("W3 matmul [1024,1024]^2", "w3", ["a", "b"], {"M": 1024, "K": 1024, "N": 1024}),
    ("W3 batched [16,256,256]^2", "w3b", ["a", "b"], {"B": 16, "M": 256, "K": 256, "N": 256}),
    ("W4 attention B=8 S=512 D=64", "w4", ["q", "k", "v"], {"B": 8, "S": 512, "D": 64}),
    ("W5 MLP 2048x1024->4096->1024", "w5", ["x", "w1", "b1", "w2", "b2"], {"S": 2048, "D": 1024, "F": 4096}),
]


def bindings(sizes):
    if QUICK:
        sizes = {k: max(1, v // 16) for k, v in sizes.items()}
    return ",".join(f"{k}={v}" for k, v in sizes.items())


def keel_ms(entry, params, sizes):
    command = [KEEL, "run", SOURCE, "--entry", entry, "--repeat", "3", "--bind", bindings(sizes)]
    for i, p in enumerate(params):
        command += ["--arg", f"{p}=random:{i + 1}"]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(re.search(r"best ([0-9.]+) ms", run.stderr).group(1))


def timing_main(module):
    """A @main that fills each parameter with 0.5, calls the entry three
    times and prints each call's seconds (rtclock), plus one result element
    so that nothing is removed as unused."""
    head = re.search(r"func\.func @(\w+)\((.*?)\) -> (tensor<[^>]*>)", module)
    entry, params, result = head.group(1), head.group(2), head.group(3)
    types = re.findall(r"tensor<[^>]*>", params)
    lines = ["  func.func private @rtclock() -> f64", "  func.func private @printF64(f64)",
             "  func.func private @printNewline()", "  func.func @main() {",
             "    %half = arith.constant 0.5 : f32"]
    names = []
    for i, t in enumerate(types):
        lines += [f"    %e{i} = tensor.empty() : {t}",
                  f"    %a{i} = linalg.fill ins(%half : f32) outs(%e{i} : {t}) -> {t}"]
        names.append(f"%a{i}")
    rank = result.count("x")
    zeros = ", ".join(["%c0"] * rank)
    lines.append("    %c0 = arith.constant 0 : index")
    for k in range(3):
        lines += [f"    %s{k} = func.call @rtclock() : () -> f64",
                  f"    %r{k} = func.call @{entry}({', '.join(names)}) : ({', '.join(types)}) -> {result}",
                  f"    %f{k} = func.call @rtclock() : () -> f64",
                  f"    %d{k} = arith.subf %f{k}, %s{k} : f64",
                  f"    func.call @printF64(%d{k}) : (f64) -> ()",
                  "    func.call @printNewline() : () -> ()",
                  f"    %x{k} = tensor.extract %r{k}[{zeros}] : {result}",
                  f"    %y{k} = arith.extf %x{k} : f32 to f64",
                  f"    func.call @printF64(%y{k}) : (f64) -> ()",
                  "    func.call @printNewline() : () -> ()"]
    lines += ["    return", "  }"]
    at = module.rstrip().rfind("}")
    return module[:at] + "\n".join(lines) + "\n}\n"


def linalg_ms(entry, sizes, work):
    emit = subprocess.run([KEEL, "emit", "--linalg", SOURCE, "--entry", entry, "--bind", bindings(sizes)],
                          capture_output=True, text=True, check=True)
    path = os.path.join(work, entry + ".mlir")
    with open(path, "w") as f:
        f.write(timing_main(emit.stdout))
    lowered = subprocess.run([MLIR_RUN, "--lower-only", path], capture_output=True, text=True, check=True)
    lib = [p for p in os.listdir(os.path.join(BIN, "..", "lib")) if p.startswith("libmlir_c_runner_utils.so")][0]
    run = subprocess.run([os.path.join(BIN, "mlir-runner"), "-e", "main", "-entry-point-result=void",
                          "-shared-libs=" + os.path.join(BIN, "..", "lib", lib)], input=lowered.stdout,
                         capture_output=True, text=True, check=True)
    values = [float(v) for v in run.stdout.split()]
    return min(values[0::2]) * 1e3


def main():
    print(f"{'workload':32} {'keel run ms':>12} {'linalg ms':>12} {'linalg/keel':>12}")
    with tempfile.TemporaryDirectory() as work:
        for name, entry, params, sizes in WORKLOADS:
            k = keel_ms(entry, params, sizes)
            m = linalg_ms(entry, sizes, work)
            print(f"{name:32} {k:12.3f} {m:12.3f} {m / max(k, 1e-3):12.1f}", flush=True)


if __name__ == "__main__":
    main()
