"""References for the GPU correctness suite, written from the kernels'
contract (python/README.md, "Kernel contract"), not from the package.

* Rotary tables are computed in numpy float64 following Hugging Face's rope
  initialisation (transformers/modeling_rope_utils.py), angles in float64.
* Preprocess and attention references run in PyTorch float32 (TF32 off) on
  the GPU, from the same bf16/fp16/fp8 inputs the kernels see.
* Comparisons fail on any NaN/Inf, then check a relative L2 bound and an
  elementwise rtol/atol bound per dtype; for attention the elementwise
  bound also allows for softmax weights rounded to the activation dtype
  (WEIGHT_ROUNDING, scaled per element by the reference's magnitude).

Nothing here imports attnc. torch is imported lazily so that the suite
collects (and skips) on machines without it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

try:
    import numpy as np
except ImportError:  # collected on machines without numpy, never run there
    np = None
try:
    import torch
except ImportError:  # collected on CPU-only machines, never run there
    torch = None


# ---- dtypes and tolerances ---------------------------------------------------

def torch_dtype(name: str):
    return {"bf16": torch.bfloat16, "fp16": torch.float16,
            "fp8": torch.float8_e4m3fn}[name]


#: Per output dtype: the relative L2 bound, and the elementwise bound
#: |out - ref| <= rtol * |ref| + atol_rms * rms(ref). bf16 keeps 8 significant
#: bits (half an ulp is 2^-9 relative), fp16 11 (2^-11); the float32 math
#: before the final rounding differs from the reference by ~1e-6 relative.
TOLERANCE = {
    "bf16": dict(rel_l2=1e-2, rtol=2.0 ** -7, atol_rms=2.0 ** -8),
    "fp16": dict(rel_l2=3e-3, rtol=2.0 ** -9, atol_rms=2.0 ** -10),
}

#: fp8 e4m3 keeps 4 significant bits: rounding to nearest is off by at most
#: 2^-4 relative for normal numbers, and by half the smallest subnormal
#: step (2^-10) below 2^-6. A value near a rounding boundary may round the
#: other way when the float32 math differs slightly (the 1e-3 slack).
FP8_RTOL = 2.0 ** -4 * (1 + 1e-3)
FP8_ATOL = 2.0 ** -10 * (1 + 1e-3)
FP8_MAX = 448.0
FP8_REL_L2 = 6e-2

#: Attention only: a tensor-core kernel rounds its softmax weights P to the
#: activation dtype before the P @ V product (mma.sync takes bf16/fp16
#: operands), which moves an output element by sum_j w_j d_j v_j (w_j =
#: p_j / l, |d_j| <= u, the unit roundoff: 2^-9 bf16, 2^-11 fp16). Where the
#: output is a small difference of large terms that can exceed the
#: output-rounding bound above, so the bound gains WEIGHT_ROUNDING times
#: the reference's magnitude M = sqrt(sum_j w_j^2 v_j^2): 8u * M is the
#: worst case sum_j w_j |v_j| u for up to 64 keys (Cauchy-Schwarz), and over
#: 13 standard deviations (u M / sqrt(3)) of the sum of independent
#: roundings for more. (The worst case u * sum_j w_j |v_j| itself would allow
#: a fifth of a typical output at 32768 keys.) A kernel that reads a wrong
#: key (a poisoned, unmasked or out-of-window one) is still off by far more;
#: test_attention's counting batches check every key exactly.
WEIGHT_ROUNDING = {"bf16": 8 * 2.0 ** -9, "fp16": 8 * 2.0 ** -11}


@dataclass
class AttentionExpected:
    """The attention reference with the scale of its rounding error."""
    out: "torch.Tensor"        # [T, Hq, Dv] float32
    magnitude: "torch.Tensor"  # [T, Hq, Dv]: sqrt(sum_j w_j^2 v_j^2), times
    #                            the value scale and sigmoid(gate)


def assert_finite(name: str, tensor) -> None:
    bad = ~torch.isfinite(tensor.float())
    if bool(bad.any()):
        index = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(f"{name}: {int(bad.sum())} non-finite values "
                             f"(first at {index}: {tensor[index]})")


def assert_close(name: str, actual, expected, dtype: str, *,
                 rel_l2: Optional[float] = None) -> None:
    """actual (kernel output, any float dtype) against expected (float32, or
    an AttentionExpected): no NaN/Inf, relative L2 and elementwise bounds of
    `dtype` (for an AttentionExpected, plus WEIGHT_ROUNDING[dtype] times its
    magnitude)."""
    magnitude = None
    if isinstance(expected, AttentionExpected):
        expected, magnitude = expected.out, expected.magnitude
    assert actual.shape == expected.shape, (name, actual.shape, expected.shape)
    assert_finite(name, actual)
    assert_finite(f"{name} (reference)", expected)
    tol = TOLERANCE[dtype]
    a = actual.float()
    e = expected.float()
    if e.numel() == 0:
        return
    diff = (a - e).abs()
    norm = float(e.norm())
    rel = float(diff.norm()) / norm if norm > 0 else float(diff.norm())
    bound = rel_l2 if rel_l2 is not None else tol["rel_l2"]
    assert rel < bound, f"{name}: relative L2 error {rel:.3e} >= {bound:.1e}"
    rms = float(e.pow(2).mean().sqrt())
    allowed = tol["rtol"] * e.abs() + tol["atol_rms"] * rms
    if magnitude is not None:
        allowed = allowed + WEIGHT_ROUNDING[dtype] * magnitude.float()
    over = diff > allowed
    if bool(over.any()):
        index = tuple(int(i) for i in over.nonzero()[0])
        raise AssertionError(
            f"{name}: {int(over.sum())} of {e.numel()} elements exceed "
            f"rtol={tol['rtol']:.2e} atol={tol['atol_rms'] * rms:.2e}"
            + (f" + {WEIGHT_ROUNDING[dtype]:.2e} * magnitude" if magnitude is not None else "")
            + f"; first at {index}: got {float(a[index])}, expected {float(e[index])}"
            + (f" (magnitude {float(magnitude[index]):.3e})" if magnitude is not None else "")
            + f" (relative L2 {rel:.2e})")


def assert_fp8_close(name: str, stored, expected_unscaled) -> None:
    """An fp8 e4m3 tensor (as stored, i.e. x / scale) against the float32
    reference of x / scale, before saturation and rounding."""
    assert stored.shape == expected_unscaled.shape
    assert_finite(name, stored)
    got = stored.float()
    want = expected_unscaled.float().clamp(-FP8_MAX, FP8_MAX)
    diff = (got - want).abs()
    over = diff > FP8_RTOL * want.abs() + FP8_ATOL
    if bool(over.any()):
        index = tuple(int(i) for i in over.nonzero()[0])
        raise AssertionError(
            f"{name}: {int(over.sum())} of {want.numel()} fp8 values are more than "
            f"half an e4m3 step off; first at {index}: got {float(got[index])}, "
            f"expected {float(want[index])} (before rounding)")
    norm = float(want.norm())
    if norm > 0:
        rel = float(diff.norm()) / norm
        assert rel < FP8_REL_L2, f"{name}: relative L2 error {rel:.3e}"


def fp8_quantize(x, scale: float):
    """x / scale saturated to +-448 and rounded to e4m3 (the cache's rule)."""
    return (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


# ---- the fused QKV(G) layout ------------------------------------------------------

def paged_sequences(key_counts: Sequence[int], block_size: int, generator):
    """A paged layout for sequences of `key_counts` keys: each gets whole
    blocks in a random order, its unused table entries point at one spare
    last block. Returns (block_tables [seqs, max_blocks] int32, positions
    0..len-1 of every sequence, concatenated (int64), their slots (int64),
    num_blocks)."""
    blocks = [-(-kv // block_size) for kv in key_counts]
    num_blocks = sum(blocks) + 1
    order = torch.randperm(sum(blocks), device="cuda", generator=generator)
    tables = torch.full((len(key_counts), max(blocks)), num_blocks - 1, dtype=torch.int32,
                        device="cuda")
    positions, slots, used = [], [], 0
    for s, (kv, n) in enumerate(zip(key_counts, blocks)):
        tables[s, :n] = order[used:used + n].int()
        used += n
        pos = torch.arange(kv, device="cuda")
        positions.append(pos)
        slots.append(tables[s, pos // block_size].long() * block_size + pos % block_size)
    return tables, torch.cat(positions), torch.cat(slots), num_blocks


def fused_columns(hq: int, hkv: int, dqk: int, dv: int, gate: str):
    """Column indices of q, k, v and the gate in one fused row, each shaped
    [heads, head_dim] (gate None without one), and the fused width.

    "qkvg": [q | k | v | g]; "interleaved": [q0 g0 q1 g1 ... | k | v];
    "head_scalar": [q | k | v | g] with one g per query head; "none":
    [q | k | v]."""
    def block(offset, heads, size, stride):
        return (offset + np.arange(heads)[:, None] * stride
                + np.arange(size)[None, :])

    if gate == "interleaved":
        q = block(0, hq, dqk, dqk + dv)
        g = block(dqk, hq, dv, dqk + dv)
        k_offset = hq * (dqk + dv)
    else:
        q = block(0, hq, dqk, dqk)
        g = None
        k_offset = hq * dqk
    k = block(k_offset, hkv, dqk, dqk)
    v_offset = k_offset + hkv * dqk
    v = block(v_offset, hkv, dv, dv)
    width = v_offset + hkv * dv
    if gate == "qkvg":
        g = block(width, hq, dv, dv)
        width += hq * dv
    if gate == "head_scalar":  # one value per query head, after v
        g = block(width, hq, 1, 1)
        width += hq
    return q, k, v, g, width


# ---- rotary tables (numpy float64, Hugging Face's rules) ---------------------------

DEFAULT_SCALING = dict(kind="none", factor=1.0, original_max_position=0,
                       low_freq_factor=1.0, high_freq_factor=4.0, beta_fast=32.0,
                       beta_slow=1.0, mscale=1.0, mscale_all_dim=0.0, truncate=True)


def _yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    if scale <= 1.0:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def rope_inv_freq(rotary_dim: int, theta: float,
                  scaling: Optional[Dict] = None) -> Tuple[np.ndarray, float]:
    """(inv_freq [rotary_dim / 2] float64, attention factor) as Hugging Face
    computes them (default, linear, llama3 and yarn rope types), in float64.
    The attention factor (yarn's mscale) multiplies cos and sin."""
    s = dict(DEFAULT_SCALING, **(scaling or {}))
    inv_freq = 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
    kind, factor = s["kind"], float(s["factor"])
    if kind == "none":
        return inv_freq, 1.0
    if kind == "linear":
        return inv_freq / factor, 1.0
    if kind == "llama3":
        old_context = float(s["original_max_position"])
        low, high = float(s["low_freq_factor"]), float(s["high_freq_factor"])
        low_wavelen, high_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        scaled = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return np.where(medium, smoothed, scaled), 1.0
    if kind == "yarn":
        original = float(s["original_max_position"])
        mscale, mscale_all_dim = float(s["mscale"]), float(s["mscale_all_dim"])
        if mscale and mscale_all_dim:
            attention_factor = (_yarn_get_mscale(factor, mscale)
                                / _yarn_get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = _yarn_get_mscale(factor)

        def correction_dim(rotations):
            return (rotary_dim * math.log(original / (rotations * 2 * math.pi))
                    / (2 * math.log(theta)))

        low = correction_dim(float(s["beta_fast"]))
        high = correction_dim(float(s["beta_slow"]))
        if s["truncate"]:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, rotary_dim - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(rotary_dim // 2, dtype=np.float64) - low) / (high - low),
                       0.0, 1.0)
        extrapolation = 1.0 - ramp
        interpolated = inv_freq / factor
        return interpolated * (1 - extrapolation) + inv_freq * extrapolation, attention_factor
    if kind == "longrope":
        # Phi-3 (transformers' _compute_longrope_parameters): the short
        # divisors; rope_cos_sin switches to the long ones per position.
        return inv_freq / np.asarray(s["short_factor"], dtype=np.float64), \
            longrope_attention_factor(s)
    raise ValueError(f"unsupported rope scaling kind {kind!r}")


def longrope_attention_factor(s: Dict) -> float:
    """An explicit attention_factor, else sqrt(1 + ln(factor) / ln(original))
    (1 when factor <= 1)."""
    if s.get("attention_factor"):
        return float(s["attention_factor"])
    factor, original = float(s["factor"]), float(s["original_max_position"])
    return 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))


def rope_cos_sin(positions, rotary_dim: int, theta: float,
                 scaling: Optional[Dict] = None, device="cuda"):
    """cos and sin [tokens, rotary_dim / 2] as float32 torch tensors; angles
    position * inv_freq in float64, times the attention factor."""
    inv_freq, factor = rope_inv_freq(rotary_dim, theta, scaling)
    positions = np.asarray(positions, dtype=np.float64)
    angles = positions[:, None] * inv_freq[None, :]
    if scaling and scaling.get("kind") == "longrope":
        # positions at or past original_max_position: the long divisors
        base = 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
        long_freq = base / np.asarray(scaling["long_factor"], dtype=np.float64)
        use_long = positions >= float(scaling["original_max_position"])
        angles = np.where(use_long[:, None], positions[:, None] * long_freq[None, :], angles)
    cos = torch.from_numpy(np.cos(angles) * factor).float().to(device)
    sin = torch.from_numpy(np.sin(angles) * factor).float().to(device)
    return cos, sin


# ---- preprocess reference --------------------------------------------------------

@dataclass
class PreprocessReference:
    q: "torch.Tensor"      # [T, Hq, Dqk] float32, after norm and rope
    k: "torch.Tensor"      # [T, Hkv, Dqk] float32, after norm and rope
    v: "torch.Tensor"      # [T, Hkv, Dv] float32
    gate: Optional["torch.Tensor"]  # [T, Hq, Dv] float32 (a copy)
    q_raw: "torch.Tensor"  # the q segment as given (for exact checks)


def rms_norm(x, weight, eps: float, style: str):
    """Per head over the last dim, in float32: x * rsqrt(mean(x^2) + eps) * w
    (rms) or * (1 + w) (gemma)."""
    w = weight.float()
    if style == "gemma":
        w = 1.0 + w
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def qk_norm(x, weight, bias, *, style: str, scope: str, eps: float):
    """The q/k norm as Hugging Face defines it, in float64. x: [T, H, D].

    style: rms (x * w), gemma (x * (1 + w)), unweighted (Llama 4's L2Norm:
    no weight), layernorm ((x - mean) * w [+ b], the biased variance).
    scope: head (statistics per head, weight [D]), head_weights (per head,
    weight [H, D]: Cohere, StableLM), projection (statistics over the token's
    H * D values together, weight [H * D]: OLMo-2, MiniMax-M2). The bias has
    the weight's shape."""
    tokens, heads, dim = x.shape
    y = x.double()
    if scope == "projection":
        y = y.reshape(tokens, 1, heads * dim)
    if style == "layernorm":
        y = y - y.mean(-1, keepdim=True)
    y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)
    y = y.reshape(tokens, heads, dim)
    if style != "unweighted":
        w = weight.double().reshape(-1, dim) if scope != "head" else weight.double()
        y = y * (1.0 + w if style == "gemma" else w)
    if bias is not None:
        y = y + (bias.double().reshape(-1, dim) if scope != "head" else bias.double())
    return y


def apply_rope(x, cos, sin, style: str, rotary_offset: int, rotary_dim: int):
    """Rotates dims [rotary_offset, rotary_offset + rotary_dim) of each head:
    neox pairs (j, j + rotary_dim/2), gptj pairs (2i, 2i+1). x: [T, H, D]."""
    out = x.clone()
    c, s = cos[:, None, :], sin[:, None, :]
    part = x[..., rotary_offset:rotary_offset + rotary_dim]
    if style == "neox":
        half = rotary_dim // 2
        x1, x2 = part[..., :half], part[..., half:]
        rotated = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    elif style == "gptj":
        even, odd = part[..., 0::2], part[..., 1::2]
        rotated = torch.stack([even * c - odd * s, odd * c + even * s], dim=-1).flatten(-2)
    else:
        raise ValueError(style)
    out[..., rotary_offset:rotary_offset + rotary_dim] = rotated
    return out


def preprocess_reference(qkv, *, hq, hkv, dqk, dv, gate, norm, norm_eps,
                         q_norm_weight, k_norm_weight, rope, rotary_dim,
                         rotary_offset, theta, scaling, positions,
                         temperature=None) -> PreprocessReference:
    """The fused preprocess in float32: split, [norm], [rope], then with
    temperature = (floor_scale, scale) Llama 4's query temperature:
    q * (log(floor((pos + 1) / floor_scale) + 1) * scale + 1)."""
    q_cols, k_cols, v_cols, g_cols, width = fused_columns(hq, hkv, dqk, dv, gate)
    assert qkv.shape[1] == width
    x = qkv.float()
    index = lambda cols: torch.from_numpy(cols).to(qkv.device)  # noqa: E731
    q = x[:, index(q_cols)]
    k = x[:, index(k_cols)]
    v = x[:, index(v_cols)]
    g = x[:, index(g_cols)] if g_cols is not None else None
    q_raw = qkv[:, index(q_cols)]
    if norm != "none":
        q = rms_norm(q, q_norm_weight, norm_eps, norm)
        k = rms_norm(k, k_norm_weight, norm_eps, norm)
    if rope != "none":
        cos, sin = rope_cos_sin(positions.cpu().numpy(), rotary_dim, theta, scaling,
                                device=qkv.device)
        q = apply_rope(q, cos, sin, rope, rotary_offset, rotary_dim)
        k = apply_rope(k, cos, sin, rope, rotary_offset, rotary_dim)
    if temperature is not None:
        floor_scale, scale = temperature
        p = positions.double()
        factor = torch.log1p(torch.floor((p + 1.0) / floor_scale)) * scale + 1.0
        q = q * factor.float()[:, None, None]
    return PreprocessReference(q=q, k=k, v=v, gate=g, q_raw=q_raw)


# ---- attention reference --------------------------------------------------------

#: Scores the attention reference holds at once, per sequence (float32: 512
#: MiB per tensor): longer sequences are computed in chunks of query rows.
REFERENCE_CHUNK_ELEMENTS = 1 << 27


def attention_reference(queries: Sequence, keys: Sequence, values: Sequence, *,
                        softmax_scale: float, sliding_window: int = 0,
                        attention_chunk: int = 0,
                        sinks=None, logit_softcap: float = 0.0,
                        value_scale: float = 1.0, gate=None,
                        with_magnitude: bool = False):
    """Causal varlen attention in float32.

    queries[s]: [q_len, Hq, Dqk]; keys[s]: [kv_len, Hkv, Dqk]; values[s]:
    [kv_len, Hkv, Dv] (dequantised). Row i of sequence s sits at key position
    kv_len - q_len + i and sees keys j <= that position (and j > position -
    window when a window is set); query head h uses KV head h // (Hq / Hkv).
    Sinks add one logit per head to the denominator only; value_scale
    multiplies the output; the gate epilogue multiplies by sigmoid(gate).
    Returns [sum q_len, Hq, Dv]; with_magnitude: an AttentionExpected, whose
    magnitude is sqrt(sum_j w_j^2 v_j^2) per element, w_j the softmax weights
    (for assert_close's bound on rounded softmax weights).

    Memory stays bounded for long contexts (32768 keys and more): the query
    heads of a KV group are batched against that KV head (no repeated K/V),
    and a sequence's rows are taken in chunks of at most
    REFERENCE_CHUNK_ELEMENTS scores, each against only the keys its rows can
    see (the causal end, and the window's start)."""
    outputs, magnitudes = [], []
    for q, k, v in zip(queries, keys, values):
        q_len, hq, _ = q.shape
        kv_len, hkv, _ = k.shape
        dv = v.shape[-1]
        if q_len == 0:
            outputs.append(torch.zeros(0, hq, dv, device=q.device))
            magnitudes.append(outputs[-1])
            continue
        group = hq // hkv
        qf = q.float().view(q_len, hkv, group, -1)
        kf, vf = k.float(), v.float()
        sink = None
        if sinks is not None:
            sink = sinks.float().view(hkv, group)[:, :, None, None]
        chunk = max(1, REFERENCE_CHUNK_ELEMENTS // (hq * max(kv_len, 1)))
        for begin in range(0, q_len, chunk):
            end = min(q_len, begin + chunk)
            position = kv_len - q_len + torch.arange(begin, end, device=q.device)
            # keys past the last row's position, or before the first row's
            # window, are masked for every row of the chunk
            hi = kv_len - q_len + end
            lo = max(0, kv_len - q_len + begin - sliding_window + 1) if sliding_window > 0 else 0
            key = torch.arange(lo, hi, device=q.device)
            scores = torch.einsum("qhgd,khd->hgqk", qf[begin:end], kf[lo:hi]) * softmax_scale
            if logit_softcap > 0:
                scores = logit_softcap * torch.tanh(scores / logit_softcap)
            allowed = key[None, :] <= position[:, None]
            if sliding_window > 0:
                allowed &= key[None, :] > position[:, None] - sliding_window
            if attention_chunk > 0:  # a query sees its own chunk's keys only
                allowed &= key[None, :] >= position[:, None] - position[:, None] % attention_chunk
            scores = scores.masked_fill(~allowed, float("-inf"))
            row_max = scores.max(dim=-1, keepdim=True).values      # [Hkv, g, rows, 1]
            if sink is not None:
                row_max = torch.maximum(row_max, sink)
            row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
            p = torch.exp(scores - row_max)
            del scores
            denominator = p.sum(dim=-1, keepdim=True)
            if sink is not None:
                denominator = denominator + torch.exp(sink - row_max)
            denominator = denominator.permute(2, 0, 1, 3)
            out = torch.einsum("hgqk,khd->qhgd", p, vf[lo:hi]) / denominator
            outputs.append(out.reshape(end - begin, hq, dv))
            if with_magnitude:
                size = torch.einsum("hgqk,khd->qhgd", p * p, vf[lo:hi] * vf[lo:hi])
                size = size.sqrt() / denominator
                magnitudes.append(size.reshape(end - begin, hq, dv))
    out = torch.cat(outputs, dim=0) * value_scale
    if gate is not None:
        out = out * torch.sigmoid(gate.float())
    if not with_magnitude:
        return out
    magnitude = torch.cat(magnitudes, dim=0) * abs(value_scale)
    if gate is not None:
        magnitude = magnitude * torch.sigmoid(gate.float())
    return AttentionExpected(out=out, magnitude=magnitude)


# ---- pairwise case generation ----------------------------------------------------

def pairwise(factors: Dict[str, List], valid) -> List[Dict]:
    """A small covering array: every pair of values of two factors that
    `valid` accepts appears in at least one case (greedy, deterministic).
    valid(partial_assignment) -> bool must accept partial dicts."""
    names = list(factors)
    uncovered = set()
    for a, b in itertools.combinations(range(len(names)), 2):
        for i, j in itertools.product(range(len(factors[names[a]])),
                                      range(len(factors[names[b]]))):
            if valid({names[a]: factors[names[a]][i], names[b]: factors[names[b]][j]}):
                uncovered.add((a, i, b, j))

    def covered_by(case_indices):
        pairs = set()
        items = sorted(case_indices.items())
        for (a, i), (b, j) in itertools.combinations(items, 2):
            pairs.add((a, i, b, j))
        return pairs

    cases = []
    while uncovered:
        a, i, b, j = min(uncovered)
        chosen = {a: i, b: j}
        for f in range(len(names)):
            if f in chosen:
                continue
            best, best_gain = None, -1
            for v in range(len(factors[names[f]])):
                trial = {**chosen, f: v}
                assignment = {names[k]: factors[names[k]][x] for k, x in trial.items()}
                if not valid(assignment):
                    continue
                gain = len(covered_by(trial) & uncovered)
                if gain > best_gain:
                    best, best_gain = v, gain
            if best is None:
                raise ValueError(f"no valid value of {names[f]} for {chosen}")
            chosen[f] = best
        uncovered -= covered_by(chosen)
        cases.append({names[k]: factors[names[k]][x] for k, x in sorted(chosen.items())})
    return cases
