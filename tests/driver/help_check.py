"""Helper of help.test: every subcommand's --help names every option its
parser accepts, and nothing else parses an option that is not in the table.

Reads src/driver/Options.def (the table the parsers accept options from)
and, for each subcommand, runs `keel COMMAND --help` and `-h`: exit 0, the
text on stdout, a `usage: keel COMMAND` line, and every row's spelling for
that command. Then scans the driver's sources for option spellings in
string literals: each must be a row of the table, so that no parser takes
an option --help does not list. A usage error (an unknown option) must end
with the pointer to --help.

usage: help_check.py KEEL OPTIONS.DEF DRIVER_SOURCE_DIR"""
import glob
import os
import re
import subprocess
import sys

LETTERS = {"c": "check", "r": "run", "t": "test", "e": "emit", "i": "ir", "o": "opt", "k": "cache"}


def main():
    keel, table, sources = sys.argv[1:4]
    rows = re.findall(r'^KEEL_OPTION\("([^"]+)", "([^"]*)", "([a-z]+)", "([^"]*)"\)', open(table).read(), re.M)
    problems = []
    if len(rows) < 30:
        problems.append(f"only {len(rows)} rows read from {table}")
    for letter, command in LETTERS.items():
        texts = []
        for flag in ("--help", "-h"):
            run = subprocess.run([keel, command, flag], capture_output=True, text=True)
            if run.returncode != 0 or run.stderr:
                problems.append(f"keel {command} {flag}: exit {run.returncode}, stderr {run.stderr!r}")
            texts.append(run.stdout)
        if texts[0] != texts[1]:
            problems.append(f"keel {command}: --help and -h differ")
        if not texts[0].startswith(f"usage: keel {command}"):
            problems.append(f"keel {command} --help does not start with its usage")
        listed = set(re.findall(r"^  (--[a-z-]+|-[a-z]\b)", texts[0], re.M))
        wanted = {spelling for spelling, _, commands, help in rows
                  if letter in commands and not help.startswith("test only:")}
        for missing in sorted(wanted - listed):
            problems.append(f"keel {command} --help does not name {missing}")
        for extra in sorted(listed - wanted):
            problems.append(f"keel {command} --help names {extra}, which its row does not give it")
        bad = subprocess.run([keel, command, "--no-such-option"], capture_output=True, text=True)
        last = bad.stderr.strip().splitlines()[-1] if bad.stderr.strip() else ""
        if bad.returncode != 2 or last != f"see 'keel {command} --help'":
            problems.append(f"keel {command} --no-such-option: exit {bad.returncode}, last line {last!r}")
    spellings = {spelling for spelling, _, _, _ in rows}
    for path in sorted(glob.glob(os.path.join(sources, "*.cpp")) + glob.glob(os.path.join(sources, "*.h"))):
        if os.path.basename(path) == "main.cpp":  # keel's own --help and --version: checked below
            continue
        for literal in re.findall(r'"(--[a-z][a-z-]*)', open(path).read()):
            if literal not in spellings:
                problems.append(f"{os.path.basename(path)} spells option {literal}, which Options.def does not have")
    top = subprocess.run([keel, "--help"], capture_output=True, text=True)
    for word in ("--stablehlo", "--linalg", "--help", "--version"):
        if word not in top.stdout:
            problems.append(f"keel --help does not mention {word}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(rows)} options, {len(LETTERS)} commands, {len(problems)} problems")


if __name__ == "__main__":
    main()
