"""The layering of docs/architecture.md, checked on what was built.

Each library may use only the layers below it. Two checks, each able to
fail on its own:
  * links: the transitive closure of each library's CMake link libraries
    (written by CMake into layers.txt) holds only layers it may use; in
    particular the tensor IR core, the transforms, the loop IR and code
    generation never link the front end (keel_syntax, keel_sema, Z3);
  * symbols: every C++ symbol a library's objects leave undefined (nm) is
    in a namespace of a layer it may use, and only keel_sema calls Z3.

    check_layers.py LAYERS.TXT LIBRARY-DIR
"""
import os
import re
import subprocess
import sys

# library: (its namespaces, the libraries below it that it may use)
LAYERS = {
    "keel_support": ({""}, set()),
    "keel_numerics": ({"fp"}, set()),
    "keel_runtime": ({"rt"}, {"keel_numerics"}),
    "keel_syntax": ({"syntax"}, {"keel_support"}),
    "keel_sema": ({"sema"}, {"keel_syntax", "keel_numerics", "keel_support"}),
    "keel_ir": ({"ir"}, {"keel_numerics", "keel_support"}),
    "keel_transforms": ({"transforms"}, {"keel_ir", "keel_numerics", "keel_support"}),
    "keel_autodiff": ({"autodiff"}, {"keel_ir", "keel_numerics", "keel_support"}),
    "keel_exits": ({"exits"}, {"keel_transforms", "keel_ir", "keel_numerics", "keel_support"}),
    "keel_loop": ({"loop"}, {"keel_runtime", "keel_numerics", "keel_support"}),
    "keel_codegen": ({"codegen"}, {"keel_loop", "keel_runtime", "keel_numerics", "keel_support"}),
    "keel_cpu": ({"cpu"}, {"keel_loop", "keel_transforms", "keel_ir", "keel_runtime", "keel_numerics",
                           "keel_support"}),
    "keel_instantiate": ({"instantiate"}, {"keel_sema", "keel_syntax", "keel_ir", "keel_transforms", "keel_autodiff", "keel_cpu", "keel_loop",
                                           "keel_runtime", "keel_numerics", "keel_support"}),
}
LAYERS["keel_pipeline"] = ({"pipeline"}, set(LAYERS) - {"keel_pipeline"})
NAMESPACE_OF = {}
for library, (namespaces, _) in LAYERS.items():
    for n in namespaces:
        NAMESPACE_OF[n] = library
FRONT_END = {"keel_syntax", "keel_sema"}


def read_links(path):
    links = {}
    with open(path) as f:
        for line in f:
            name, _, deps = line.strip().partition(":")
            links[name] = [d for d in deps.strip().split(";") if d]
    return links


def closure(links, library):
    seen, work = set(), list(links.get(library, []))
    while work:
        d = work.pop()
        if d not in seen:
            seen.add(d)
            work += links.get(d, [])
    return seen


# The tools built on the pipeline's entry: the driver and the Python
# module. Each source may include the pipeline's entry and the headers of
# the layers named, and its objects may use those namespaces (the runtime
# is keel::rt, support the global keel::, numerics keel::fp).
HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = {
    # name: (sources, objects under the build's src/, own namespace, header layers, extra per file)
    "driver": (os.path.join(HERE, "..", "..", "src", "driver"), os.path.join("driver", "CMakeFiles", "keel.dir"),
               "driver", {"runtime", "support"}, {"FpCommand.cpp": {"numerics"}}),
    "python": (os.path.join(HERE, "..", "..", "src", "python"),
               os.path.join("python", "CMakeFiles", "keel_python.dir"), "python",
               {"runtime", "support", "numerics"}, {}),
}
NAMESPACE_OF_LAYER = {"runtime": "rt", "support": "", "numerics": "fp"}


def check_tool(tool, library_dir):
    sources_dir, objects_dir, own, layers, extras = TOOLS[tool]
    objects = os.path.join(library_dir, objects_dir)
    if tool == "python" and not os.path.isdir(objects):
        return []  # built without the Python module (KEEL_BUILD_PYTHON=OFF)
    problems = []
    sources = sorted(n for n in os.listdir(sources_dir) if n.endswith((".cpp", ".h")))
    for name in sources:
        allowed = layers | extras.get(name, set())
        with open(os.path.join(sources_dir, name)) as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s*"(keel/[^"]+)"', line)
                if not m:
                    continue
                header = m.group(1)
                if header != "keel/pipeline/Pipeline.h" and header.split("/")[1] not in allowed:
                    problems.append(f"{tool}: {name} includes {header}, not the pipeline's entry or "
                                    f"{', '.join(sorted(allowed))}")
        if not name.endswith(".cpp"):
            continue
        obj = os.path.join(objects, name + ".o")
        if not os.path.exists(obj):
            problems.append(f"{tool}: {obj} not found")
            continue
        namespaces = {own, "pipeline"} | {NAMESPACE_OF_LAYER[layer] for layer in allowed}
        nm = subprocess.run(["nm", "-C", "--undefined-only", obj], capture_output=True, text=True, check=True)
        for symbol in nm.stdout.splitlines():
            m = re.search(r"\bkeel::(?:([a-z]+)::)?", symbol)
            if m and (m.group(1) or "") not in namespaces:
                problems.append(f"{tool}: {name} uses keel::{m.group(1)}:: ({symbol.strip()})")
    return problems


def main():
    links, library_dir = read_links(sys.argv[1]), sys.argv[2]
    problems = []
    for library, (_, allowed) in LAYERS.items():
        reached = closure(links, library)
        for d in sorted(reached):
            if d.startswith("keel_") and d not in allowed:
                problems.append(f"{library} links {d}, a layer it may not use")
            if "z3" in d.lower() and library not in ("keel_sema", "keel_instantiate", "keel_pipeline"):
                problems.append(f"{library} links Z3 ({d})")
        if library in ("keel_ir", "keel_transforms", "keel_exits", "keel_loop", "keel_codegen", "keel_cpu") and \
                reached & FRONT_END:
            problems.append(f"{library} links the front end: {sorted(reached & FRONT_END)}")

        archive = None
        for root, _, names in os.walk(library_dir):
            if f"lib{library}.a" in names:
                archive = os.path.join(root, f"lib{library}.a")
        if archive is None:
            problems.append(f"lib{library}.a not found under {library_dir}")
            continue
        nm = subprocess.run(["nm", "-C", "--undefined-only", archive], capture_output=True, text=True, check=True)
        own = LAYERS[library][0]
        used = set()
        for symbol in nm.stdout.splitlines():
            m = re.search(r"\bkeel::(?:([a-z]+)::)?", symbol)
            if m:
                used.add(m.group(1) or "")
            if re.search(r"\bZ3_", symbol) and library != "keel_sema":
                problems.append(f"{library} calls Z3: {symbol.strip()}")
        for n in sorted(used):
            if n in own:
                continue
            owner = NAMESPACE_OF.get(n)
            if owner is None:
                problems.append(f"{library} uses keel::{n}::, which no layer declares")
            elif owner not in allowed:
                problems.append(f"{library} uses keel::{n}:: (layer {owner}), which is above it or beside it")
    for tool in TOOLS:
        problems += check_tool(tool, library_dir)
    for p in problems:
        print("layering:", p)
    print(f"{len(LAYERS)} libraries, the driver and the Python module checked, {len(problems)} problems")
    sys.exit(1 if problems else 0)


main()
