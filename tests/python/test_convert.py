"""keel.bf16, f16, tf32, fp8e4m3fn, fp8e5m2 and to_float32 against
independent roundings: PyTorch's (bf16), NumPy's (f16) and an exact one
written here from the formats' definitions (tf32, fp8)."""
from fractions import Fraction
import math

import numpy as np
import pytest

import keel

rng = np.random.default_rng(11)


def nearest_even(value, mantissa_bits, min_exponent, max_finite, saturate, has_inf):
    """`value` (a float) rounded once to the nearest number with
    `mantissa_bits` fraction bits and exponents from `min_exponent`
    (subnormals below), ties to even; past max_finite: saturated or inf."""
    if math.isnan(value):
        return math.nan
    if math.isinf(value):
        return math.copysign(max_finite if saturate else math.inf, value)
    x = Fraction(value)
    sign = -1 if x < 0 else 1
    x = abs(x)
    if x == 0:
        return math.copysign(0.0, value)
    exponent = max(math.floor(math.log2(x)), min_exponent)
    while Fraction(2) ** exponent > x and exponent > min_exponent:  # log2's float rounding
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= x:
        exponent += 1
    exponent = max(exponent, min_exponent)
    quantum = Fraction(2) ** (exponent - mantissa_bits)
    q, r = divmod(x, quantum)
    if r * 2 > quantum or (r * 2 == quantum and q % 2 == 1):
        q += 1
    result = q * quantum
    if result > max_finite:
        if saturate or not has_inf:
            return sign * max_finite
        return sign * math.inf
    return math.copysign(float(result), value)  # zero keeps the sign


FORMATS = {  # fraction bits, smallest normal exponent, largest finite, saturates
    "tf32": (10, -126, float((2 - Fraction(1, 2 ** 10)) * Fraction(2) ** 127), False),
    "fp8e4m3fn": (3, -6, 448.0, True),
    "fp8e5m2": (2, -14, 57344.0, False),
}


def samples():
    x = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-8, 6, 300),
                        [0.0, -0.0, 1.0, 448.0, 464.0, 480.0, 1000.0, 57344.0, 61440.0, 1e30, -1e30,
                         np.inf, -np.inf, 2.0 ** -9, 2.0 ** -10, 1.5 * 2.0 ** -17, 3.0 * 2.0 ** -18]])
    return x


@pytest.mark.parametrize("name", list(FORMATS))
def test_tf32_and_fp8_round_once_to_nearest_even(name):
    bits, min_exp, largest, saturate = FORMATS[name]
    x = samples()
    got = keel.to_float32(getattr(keel, name)(x)).astype(np.float64)
    want = np.array([nearest_even(v, bits, min_exp, largest, saturate, name != "fp8e4m3fn") for v in x])
    assert np.array_equal(got, want, equal_nan=True), [(v, g, w) for v, g, w in zip(x, got, want) if g != w][:5]
    assert np.all(np.signbit(got) == np.signbit(want))


def test_nan_stays_nan():
    for name in ("bf16", "tf32", "fp8e4m3fn", "fp8e5m2"):
        assert np.isnan(keel.to_float32(getattr(keel, name)(np.array([np.nan])))).all()


@pytest.mark.filterwarnings("ignore:overflow")
def test_f16_is_numpys_rounding():
    x = samples()
    assert np.array_equal(keel.f16(x).view(np.uint16), x.astype(np.float16).view(np.uint16))
    y = x.astype(np.float32)
    assert np.array_equal(keel.f16(y).view(np.uint16), y.astype(np.float16).view(np.uint16))


def test_bf16_is_torchs_rounding():
    torch = pytest.importorskip("torch")
    x = samples().astype(np.float32)
    got = keel.bf16(x)
    want = torch.from_numpy(x).to(torch.bfloat16)
    assert np.array_equal(got.view(np.uint16), want.view(torch.int16).numpy().view(np.uint16))
    assert np.array_equal(keel.to_float32(got), want.to(torch.float32).numpy(), equal_nan=True)


def test_integers_and_shapes():
    i = np.array([[1, -3], [1 << 40, 7]], np.int64)
    got = keel.to_float32(keel.bf16(i))
    assert got.shape == (2, 2) and got[0, 1] == -3.0 and got[1, 0] == float(1 << 40)
    assert keel.bf16(np.float32(2.5)).shape == ()
    with pytest.raises(keel.ArgumentError):
        keel.bf16(np.array([True]))
    with pytest.raises(keel.ArgumentError):
        keel.to_float32(np.array([1, 2]))
