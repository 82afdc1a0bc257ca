"""The q/k norm variants of the fused preprocess kernel (LayerNorm with and
without a bias, Llama 4's unweighted norm, weights per head, statistics over
the whole projection; before and after rope; bf16 and fp8 caches) against
the float64 Hugging Face formulas (attnc_gpu_reference.qk_norm).

Each case is a preprocess-only layer compiled from attn IR
(attnc_norm_layers). Inputs are scaled per head and shifted per token, so
that a kernel taking its statistics over the wrong values (a head instead of
the projection, or without the mean) is off by far more than bf16 rounding;
outputs are poisoned (q_out NaN, caches 0xFF bytes) before each run and the
rows the kernel must not write are checked to still hold the poison."""

import pytest

from attnc_gpu_reference import (apply_rope, assert_close, assert_finite, assert_fp8_close,
                                 fused_columns, np, qk_norm, rope_inv_freq, torch)
from attnc_norm_layers import NORM_LAYER, NormCase, norm_cases

CASES = norm_cases()
K_SCALE = 0.05
V_SCALE = 0.25
THETA = 1.0e4
MAX_POSITION = 4096

_models = {}


def model_for(attnc_context, case: NormCase):
    import attnc
    if case not in _models:
        _models[case] = attnc.compile_ir(case.ir(), context=attnc_context)
    return _models[case]


def make_inputs(case: NormCase, generator):
    hq, hkv, dqk, dv = case.hq, case.hkv, case.dqk, case.dv
    _, _, _, _, width = fused_columns(hq, hkv, dqk, dv, "none")
    tokens = case.tokens
    x = torch.randn(tokens, width, device="cuda", generator=generator, dtype=torch.float64)
    # Every head its own scale (0.25 to 4), every token its own shift (-1..1):
    # per-head and projection statistics differ, and so do centred and plain.
    q_cols, k_cols, v_cols, _, _ = fused_columns(hq, hkv, dqk, dv, "none")
    for cols, heads, dim in ((q_cols, hq, dqk), (k_cols, hkv, dqk), (v_cols, hkv, dv)):
        index = torch.from_numpy(cols).cuda().reshape(heads, dim)
        scale = 2.0 ** (4 * torch.rand(heads, 1, device="cuda", generator=generator,
                                       dtype=torch.float64) - 2)
        for h in range(heads):
            x[:, index[h]] *= scale[h]
    x += 2 * torch.rand(tokens, 1, device="cuda", generator=generator, dtype=torch.float64) - 1
    qkv = x.to(torch.bfloat16)

    positions = torch.randint(0, MAX_POSITION + 1, (tokens,), device="cuda",
                              generator=generator, dtype=torch.int64)
    num_blocks = -(-tokens * 3 // (2 * 16)) + 2
    slots = torch.randperm(num_blocks * 16, device="cuda", generator=generator)[:tokens]
    slots = slots.to(torch.int64)
    if tokens > 1:
        pad = torch.randperm(tokens, device="cuda", generator=generator)[:tokens // 8 + 1]
        slots[pad] = -1

    params = {}
    base = 0.0 if case.style == "gemma" else 1.0
    for which, heads in (("q", hq), ("k", hkv)):
        shape = case.weight_shape(heads)
        if case.weighted:
            params[f"{which}_norm_weight"] = (
                base + 0.3 * torch.randn(*shape, device="cuda", generator=generator)
            ).to(torch.bfloat16)
        if case.bias:
            params[f"{which}_norm_bias"] = (
                0.5 * torch.randn(*shape, device="cuda", generator=generator)
            ).to(torch.bfloat16)
    return qkv, positions, slots, num_blocks, params


def poisoned_cache(num_blocks, heads, dim, cache):
    dtype = torch.float8_e4m3fn if cache == "fp8" else torch.bfloat16
    itemsize = 1 if cache == "fp8" else 2
    raw = torch.full((num_blocks, 16, heads, dim * itemsize), 0xFF, dtype=torch.uint8,
                     device="cuda")
    return raw.view(dtype)


def reference(case: NormCase, qkv, positions, params):
    """q [T, Hq, Dqk], k [T, Hkv, Dqk] and v, float64: split, then the norm
    and the rope in the case's order."""
    hq, hkv, dqk, dv = case.hq, case.hkv, case.dqk, case.dv
    q_cols, k_cols, v_cols, _, _ = fused_columns(hq, hkv, dqk, dv, "none")
    x = qkv.double()
    cols = lambda c: torch.from_numpy(c).to(qkv.device)  # noqa: E731
    q, k, v = x[:, cols(q_cols)], x[:, cols(k_cols)], x[:, cols(v_cols)]

    def norm(t, which):
        return qk_norm(t, params.get(f"{which}_norm_weight"), params.get(f"{which}_norm_bias"),
                       style=case.style, scope=case.scope, eps=case.eps)

    def rope(t):
        if not case.rope:
            return t
        # Angles, cos and sin in float64 (no scaling: factor 1).
        inv_freq, _ = rope_inv_freq(case.rotary, THETA, None)
        angles = positions.cpu().numpy().astype(np.float64)[:, None] * inv_freq[None, :]
        cos = torch.from_numpy(np.cos(angles)).to(t.device)
        sin = torch.from_numpy(np.sin(angles)).to(t.device)
        return apply_rope(t, cos, sin, case.rope, 0, case.rotary)

    if case.after_rope:
        q, k = norm(rope(q), "q"), norm(rope(k), "k")
    else:
        q, k = rope(norm(q, "q")), rope(norm(k, "k"))
    return q, k, v


def check_cache(name, cache, heads, dim, slots, expected, case):
    rows = cache.view(-1, heads, dim)
    written = slots >= 0
    got = rows[slots[written]]
    want = expected[written.nonzero().flatten()]
    if case.cache == "fp8":
        assert_fp8_close(name, got, want / (K_SCALE if name == "k_cache" else V_SCALE))
    else:
        assert_close(name, got, want.float(), "bf16")
    raw = cache.view(torch.uint8).reshape(rows.shape[0], -1)
    untouched = torch.ones(rows.shape[0], dtype=torch.bool, device="cuda")
    untouched[slots[written]] = False
    assert bool((raw[untouched] == 0xFF).all()), f"{name}: a row no token maps to was written"


def run_case(model, case: NormCase, generator, *, plan=False):
    qkv, positions, slots, num_blocks, params = make_inputs(case, generator)
    k_cache = poisoned_cache(num_blocks, case.hkv, case.dqk, case.cache)
    v_cache = poisoned_cache(num_blocks, case.hkv, case.dv, case.cache)
    q_out = torch.full((case.tokens, case.hq, case.dqk), float("nan"), dtype=torch.bfloat16,
                       device="cuda")
    bound = dict(params)
    if case.cache == "fp8":
        bound["k_scale"] = torch.tensor(K_SCALE, dtype=torch.float32, device="cuda")
        bound["v_scale"] = torch.tensor(V_SCALE, dtype=torch.float32, device="cuda")
    if plan:
        run = model.preprocess_plan(NORM_LAYER, k_cache=k_cache, v_cache=v_cache, **bound)
        run.run(qkv, slots, positions if case.rope else None, q_out=q_out)
    else:
        if case.rope:
            bound["positions"] = positions
        model.preprocess(NORM_LAYER, qkv, slot_mapping=slots, k_cache=k_cache,
                         v_cache=v_cache, q_out=q_out, **bound)
    torch.cuda.synchronize()
    return qkv, positions, slots, params, k_cache, v_cache, q_out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_norm_variant(attnc_context, case, generator):
    model = model_for(attnc_context, case)
    qkv, positions, slots, params, k_cache, v_cache, q_out = run_case(model, case, generator)
    q, k, v = reference(case, qkv, positions, params)
    assert_finite("q_out", q_out)
    assert_close("q_out", q_out, q.float(), "bf16")
    check_cache("k_cache", k_cache, case.hkv, case.dqk, slots, k, case)
    check_cache("v_cache", v_cache, case.hkv, case.dv, slots, v, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.scope == "projection"][:2] +
                         [c for c in CASES if c.style == "layernorm"], ids=lambda c: c.id())
def test_reference_discriminates(case, generator):
    """The inputs make the variants differ by far more than the tolerance:
    statistics per head instead of over the projection, or without the
    mean, would fail test_norm_variant (bf16's relative L2 bound is 1e-2)."""
    qkv, positions, _, _, params = make_inputs(case, generator)
    hq, dqk = case.hq, case.dqk
    q_cols, _, _, _, _ = fused_columns(hq, case.hkv, dqk, case.dv, "none")
    q = qkv.double()[:, torch.from_numpy(q_cols).cuda()]
    right = qk_norm(q, params.get("q_norm_weight"), params.get("q_norm_bias"),
                    style=case.style, scope=case.scope, eps=case.eps)
    if case.scope == "projection":
        wrong = qk_norm(q, None, None, style="unweighted", scope="head", eps=case.eps)
        wrong = wrong * params["q_norm_weight"].double().reshape(hq, dqk)
    else:
        wrong = qk_norm(q, params.get("q_norm_weight"), params.get("q_norm_bias"),
                        style="rms", scope=case.scope, eps=case.eps)
        if case.bias:
            wrong = wrong + params["q_norm_bias"].double().reshape(-1, dqk)
    rel = float((right - wrong).norm() / right.norm())
    assert rel > 0.05, rel


def test_plan_binds_biases(attnc_context, generator):
    """A launch plan binds the LayerNorm weights and biases once (Phi)."""
    case = next(c for c in CASES if c.family == "phi")
    model = model_for(attnc_context, case)
    qkv, positions, slots, params, k_cache, v_cache, q_out = run_case(
        model, case, generator, plan=True)
    q, k, _ = reference(case, qkv, positions, params)
    assert_close("q_out", q_out, q.float(), "bf16")
    check_cache("k_cache", k_cache, case.hkv, case.dqk, slots, k, case)


def test_torch_op_takes_biases(attnc_context, generator):
    """torch.ops.attnc.preprocess passes the LayerNorm biases (its last two,
    optional arguments) to a kernel that has them (Persimmon, fp8 cache)."""
    import attnc.torch_ops as ops
    ops.load()
    case = next(c for c in CASES if c.family == "persimmon")
    model = model_for(attnc_context, case)
    qkv, positions, slots, num_blocks, params = make_inputs(case, generator)
    k_cache = poisoned_cache(num_blocks, case.hkv, case.dqk, case.cache)
    v_cache = poisoned_cache(num_blocks, case.hkv, case.dv, case.cache)
    q_out = torch.full((case.tokens, case.hq, case.dqk), float("nan"), dtype=torch.bfloat16,
                       device="cuda")
    k_scale = torch.tensor(K_SCALE, dtype=torch.float32, device="cuda")
    v_scale = torch.tensor(V_SCALE, dtype=torch.float32, device="cuda")
    binding = ops.binding(model, NORM_LAYER, "preprocess")
    torch.ops.attnc.preprocess(binding, qkv, slots, k_cache, v_cache, positions,
                               params["q_norm_weight"], params["k_norm_weight"], k_scale,
                               v_scale, q_out, None, params["q_norm_bias"],
                               params["k_norm_bias"])
    torch.cuda.synchronize()
    q, k, v = reference(case, qkv, positions, params)
    assert_close("q_out", q_out, q.float(), "bf16")
    check_cache("k_cache", k_cache, case.hkv, case.dqk, slots, k, case)
    check_cache("v_cache", v_cache, case.hkv, case.dv, slots, v, case)
