# lit configuration for Keel's command-line tests: tests/**/*.test and the
# annotated programs tests/**/*.sfn (run with keel check --verify).
import os
import shutil
import lit.formats

config.name = "Keel"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".sfn"]  # .kir files are IR inputs, read by tests
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.keel_bin_dir), "..", "tests", "lit")
# Inputs/ holds files that tests read; they are not tests themselves.
config.excludes = ["Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.keel_bin_dir, config.keel_test_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# The compile cache: one directory for the whole suite, in the build tree
# (never the user's). CTest runs the value tests a second time against it
# (cli_cached), so every one of them also runs from cached objects.
config.environment["KEEL_CACHE_DIR"] = os.path.normpath(os.path.join(config.keel_bin_dir, "..", "..", "tests", "cache"))
# `%keel-run ARGS` is `keel run ARGS` fused (the default), unfused and through
# --exit reference, failing unless all give the same bytes.
config.substitutions.append(("%keel-run", f"{config.system_python} {os.path.join(os.path.dirname(__file__), 'run', 'both_exits.py')} keel run"))
config.substitutions.append(("%python", config.system_python))
config.substitutions.append(("%examples", os.path.join(config.keel_source_dir, "examples")))
# The MLIR linalg exit's tests run MLIR 22's own tools (Debian's
# mlir-22-tools, a test dependency; KEEL_MLIR_BIN elsewhere): `REQUIRES: mlir`
# tests are reported unsupported where they are absent.
mlir_bin = os.environ.get("KEEL_MLIR_BIN", "/usr/lib/llvm-22/bin")
if all(os.access(os.path.join(mlir_bin, t), os.X_OK) for t in ("mlir-opt", "mlir-runner")):
    config.available_features.add("mlir")
    config.environment["KEEL_MLIR_BIN"] = mlir_bin
else:
    lit_config.note(f"MLIR linalg exit tests unsupported: no mlir-opt and mlir-runner in {mlir_bin} "
                    "(apt-get install mlir-22-tools, or set KEEL_MLIR_BIN)")
config.substitutions.append(("%mlir-run", os.path.join(config.keel_source_dir, "scripts", "mlir-run.sh")))
config.substitutions.append(("%mlir-opt", os.path.join(mlir_bin, "mlir-opt")))
# The StableHLO exit's tests run the pinned StableHLO 1.13.8 tools
# (scripts/stablehlo-tools.sh builds them; KEEL_STABLEHLO_BIN names their
# folder, else PATH): `REQUIRES: stablehlo` tests are reported unsupported
# where they are absent. Keel itself never needs them.
stablehlo_bin = os.environ.get("KEEL_STABLEHLO_BIN")
stablehlo_tools = [os.path.join(stablehlo_bin, t) if stablehlo_bin else shutil.which(t) or ""
                   for t in ("stablehlo-opt", "stablehlo-translate")]
if all(t and os.access(t, os.X_OK) for t in stablehlo_tools):
    config.available_features.add("stablehlo")
    config.environment["KEEL_STABLEHLO_BIN"] = os.path.dirname(stablehlo_tools[0])
    config.substitutions.append(("%stablehlo-opt", stablehlo_tools[0]))
else:
    lit_config.note("StableHLO exit validation tests unsupported: no stablehlo-opt and stablehlo-translate in "
                    f"{stablehlo_bin or 'PATH'} (build StableHLO 1.13.8's with scripts/stablehlo-tools.sh and set "
                    "KEEL_STABLEHLO_BIN)")
# The sanitizer build (scripts/test.sh --sanitize): AddressSanitizer maps
# terabytes of shadow memory, so tests under an address-space limit
# (ulimit -v) cannot run there (UNSUPPORTED: sanitizer).
if getattr(config, "keel_sanitize", "").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitizer")
# The sanitizer suite's settings reach the commands the tests run.
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "KEEL_FUZZ_ITERATIONS", "KEEL_LINALG_ITERATIONS",
             "KEEL_STABLEHLO_ITERATIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
