"""Helper of stablehlo-versions.test: `keel emit --stablehlo --target-version
V` refuses exactly what the pinned StableHLO release cannot serialize to V.

The modules: every tensor IR operation on every dtype the exit takes (the
groups of exit_ops.py: elementwise, compare, convert, structure, tf32) and
the examples' blocks. For each module and each version V, Keel either emits
it for V (the module must record V, and `stablehlo-translate --serialize
--target=V` must accept it) or refuses with E0915 (and the translator must
then fail to serialize the module Keel writes by default to V). Versions
chosen around each op or attribute later than 0.9.0 that Keel writes
(src/exits/StableHloVersions.def), and the ends of the range.

usage: stablehlo_versions.py KEEL EXAMPLES_DIR WORKDIR"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exit_ops  # noqa: E402
import stablehlo_check  # noqa: E402

VERSIONS = ["0.9.0", "0.18.0", "0.19.0", "1.5.0", "1.6.0", "1.13.8"]


def emit(keel, source, entry, bindings, version, path):
    command = [keel, "emit", "--stablehlo", source, "--entry", entry]
    if bindings:
        command += ["--bind", bindings]
    if version:
        command += ["--target-version", version]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode == 0:
        with open(path, "w") as f:
            f.write(run.stdout)
    return run


def serializes(path, version, work):
    out = os.path.join(work, "artifact.mlirbc")
    run = subprocess.run([stablehlo_check.tool("stablehlo-translate"), "--serialize", f"--target={version}", path,
                          "-o", out], capture_output=True, text=True)
    return run.returncode == 0


def main():
    keel, examples, work = sys.argv[1:4]
    missing = stablehlo_check.tools_missing()
    if missing:
        print(f"unsupported: {missing}")
        return 0
    os.makedirs(work, exist_ok=True)
    lengths = {t: 8 for t in exit_ops.DTYPES}
    modules = []
    for group in ("elementwise", "compare", "convert", "structure", "tf32"):
        text = exit_ops.build(group, lengths, [t for t in exit_ops.DTYPES if t != "tf32"], True)[0]
        path = os.path.join(work, f"{group}.kir")
        with open(path, "w") as f:
            f.write(text)
        modules.append((group, path, "all", ""))
    modules += [("gpt_block", os.path.join(examples, "gpt.sfn"), "gpt_block", "T=4,C=8,H=2,Dh=4"),
                ("llama", os.path.join(examples, "llama.sfn"), "llama_decoder_layer", "B=1,T=4,C=16,H=4,KV=2,F=8")]
    failures, refused, accepted = 0, 0, 0
    for label, source, entry, bindings in modules:
        default = os.path.join(work, f"{label}.default.mlir")
        run = emit(keel, source, entry, bindings, "", default)
        if run.returncode != 0:
            print(f"FAIL {label}: keel emit --stablehlo exited {run.returncode}: {run.stderr[-2000:]}")
            failures += 1
            continue
        for version in VERSIONS:
            path = os.path.join(work, f"{label}.{version}.mlir")
            run = emit(keel, source, entry, bindings, version, path)
            if run.returncode == 0:
                accepted += 1
                recorded = f'keel.stablehlo_version = "{version}"' in open(path).read()
                if not recorded or not serializes(path, version, work):
                    print(f"FAIL {label} {version}: Keel emits it, but " +
                          ("the module does not record the version" if not recorded
                           else f"stablehlo-translate --serialize --target={version} refuses it"))
                    failures += 1
            else:
                refused += 1
                if "error[E0915]" not in run.stderr:
                    print(f"FAIL {label} {version}: refused without E0915: {run.stderr[-2000:]}")
                    failures += 1
                elif serializes(default, version, work):
                    print(f"FAIL {label} {version}: Keel refuses it, but stablehlo-translate serializes it to "
                          f"{version}: {run.stderr.splitlines()[0]}")
                    failures += 1
    print(f"{len(modules)} modules, {len(VERSIONS)} versions: {accepted} emitted, {refused} refused, "
          f"{failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
