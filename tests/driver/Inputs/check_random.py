"""Checks elements of a random:SEED argument against SplitMix64 computed
here, element k from seed + (k + 1) * golden, independently of Keel's
piecewise generation: argv = NPY SEED INDEX..."""
import sys
import numpy as np

values = np.load(sys.argv[1])
seed = int(sys.argv[2])
mask = (1 << 64) - 1
for k in map(int, sys.argv[3:]):
    z = (seed + (k + 1) * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    want = np.float32((z >> 40) / 2.0**24)
    if values[k] != want:
        sys.exit("element %d: got %r, SplitMix64 gives %r" % (k, values[k], want))
print("random ok")
