"""docs/ir.md's attribute table against Ops.def and the parser.

Builds the table from include/keel/ir/Ops.def (each operation's attribute
column, each attribute's key and kind), checks that docs/ir.md holds exactly
it between its `<!-- attribute table -->` markers, and checks the parser
against it: for each operation, an unknown key must be refused naming the
keys the table gives it, in order, and each key of another operation must be
refused as not the operation's.

usage: attribute_table.py KEEL SOURCE_DIR WORK
prints `ok: N operations, M attributes` or the differences (exit 1);
with --print, prints the table docs/ir.md should hold."""
import os
import re
import subprocess
import sys

KIND_TEXT = {"IntList": "`[0, 2]`", "Int": "`1`", "DType": "`f32`", "Encodings": "`[0x3f800000, ...]`",
             "Unit": "present or not", "Order": "`tree` (`sequential`, the default, unwritten)"}
# How an operation is written up to its attributes, for the parser check.
HEADS = {"unary": "unary.neg(%a)", "binary": "binary.add(%a, %a)", "compare": "compare.eq(%a, %a)",
         "reduce": "reduce.sum(%a)", "call": "call @f(%a)"}


def read_table(source_dir):
    text = open(os.path.join(source_dir, "include", "keel", "ir", "Ops.def")).read()
    ops = re.findall(r'^KEEL_IR_OP\((\w+), "(\w+)", [^,]+, [^,]+, \w+, \w+, ([\w| ]+)\)', text, re.M)
    attrs = re.findall(r'^KEEL_IR_ATTR\((\w+), "(\w+)", (\w+), \w+\)', text, re.M)
    keys = {name: (key, kind) for name, key, kind in attrs}
    order = [name for name, _, _ in attrs]
    table = []
    for _, mnemonic, column in ops:
        names = [] if column.strip() == "None" else [n.strip() for n in column.split("|")]
        names.sort(key=order.index)  # printed in the attribute table's order
        table.append((mnemonic, [keys[n] for n in names]))
    return table, [keys[n] for n in order]


def markdown(table):
    lines = ["| operation | attributes (key: how it is written) |", "| --- | --- |"]
    for mnemonic, attrs in table:
        cell = ", ".join(f"`{key}`: {KIND_TEXT[kind]}" for key, kind in attrs) or "none"
        lines.append(f"| {mnemonic} | {cell} |")
    return "\n".join(lines)


def parser_problems(keel, table, all_attrs, work):
    problems = []
    cases = []
    for mnemonic, attrs in table:
        if mnemonic == "return":  # `return %a`: no attribute syntax at all
            continue
        head = HEADS.get(mnemonic, f"{mnemonic}(%a)")
        own = [key for key, _ in attrs]
        cases.append((mnemonic, "zzz", own, f"unknown attribute `zzz`"))
        for key, _ in all_attrs:
            if key not in own:
                cases.append((mnemonic, key, own, f"has no attribute `{key}`"))
    for mnemonic, key, own, message in cases:
        head = HEADS.get(mnemonic, f"{mnemonic}(%a)")
        path = os.path.join(work, "case.kir")
        with open(path, "w") as f:
            f.write(f"func @f(%a: f32[2]) -> f32[2] {{\n  %r = {head} {{{key}}} : f32[2]\n  return %r\n}}\n")
        run = subprocess.run([keel, "opt", path], capture_output=True, text=True)
        first = run.stderr.splitlines()[0] if run.stderr else ""
        takes = ", ".join(own) if own else "no attributes"
        if run.returncode != 1 or message not in first or not first.endswith(f"takes {takes})"):
            problems.append(f"`{mnemonic}` with `{key}`: {first or 'accepted'}")
    return problems, len(cases)


def main():
    if "--print" in sys.argv:
        print(markdown(read_table(sys.argv[1])[0]))
        return 0
    keel, source_dir, work = sys.argv[1:4]
    table, all_attrs = read_table(source_dir)
    docs = open(os.path.join(source_dir, "docs", "ir.md")).read()
    found = re.search(r"<!-- attribute table -->\n(.*?)\n<!-- end attribute table -->", docs, re.S)
    problems = []
    if not found:
        problems.append("docs/ir.md has no <!-- attribute table --> ... <!-- end attribute table --> section")
    elif found.group(1).strip() != markdown(table):
        problems.append("docs/ir.md's attribute table is not Ops.def's; it should be:\n" + markdown(table))
    os.makedirs(work, exist_ok=True)
    parser, cases = parser_problems(keel, table, all_attrs, work)
    problems += parser
    if problems:
        print("\n".join(problems))
        return 1
    print(f"ok: {len(table)} operations, {len(all_attrs)} attributes, {cases} refusals as the table says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
