"""Checks what a training run printed (tests/autodiff/train.test).

    trained.py loss-falls OUTPUT   the first loss is at least 20 times the last
    trained.py regression OUTPUT   w and b recovered within 1e-3 of the
                                   weights Inputs/regression.sfn's data was
                                   made from: [0.5, -2, 1] and 0.25
"""
import re
import sys


def numbers(line):
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", line)]


def main():
    mode, path = sys.argv[1], sys.argv[2]
    lines = [line.strip() for line in open(path) if line.strip()]
    if mode == "loss-falls":
        losses = [float(line) for line in lines if re.fullmatch(r"-?[\d.]+(?:e-?\d+)?", line)]
        ok = len(losses) >= 2 and losses[0] >= 20 * losses[-1]
        print(f"{'ok' if ok else 'FAIL'}: losses {losses}")
        return 0 if ok else 1
    w, b = numbers(lines[-2]), numbers(lines[-1])
    truth_w, truth_b = [0.5, -2.0, 1.0], [0.25]
    ok = len(w) == 3 and len(b) == 1 and all(abs(g - t) < 1e-3 for g, t in zip(w + b, truth_w + truth_b))
    print(f"{'ok' if ok else 'FAIL'}: w {w}, b {b}")
    return 0 if ok else 1


sys.exit(main())
