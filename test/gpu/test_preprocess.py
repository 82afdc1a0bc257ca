"""The fused preprocess kernel against a float32 reference: split, q/k norm,
rope (float64 angles), paged cache write (bf16/fp16/fp8), q and gate out.

Outputs are poisoned with NaN and the caches with 0xFF bytes (NaN in every
cache dtype) before each run; every cache row the kernel must not write
(padding tokens, unused slots) is checked to still hold the poison."""

import re

import pytest

from attnc_gpu_cases import (LAYER, MAX_POSITION, NORM_EPS, TEMPERATURE, PreprocessCase,
                             preprocess_cases, rope_parameters)
from attnc_gpu_reference import (assert_close, assert_finite, assert_fp8_close, np,
                                 fused_columns, preprocess_reference, rope_inv_freq,
                                 torch, torch_dtype)

CASES = preprocess_cases()
K_SCALE = 0.008  # k / 0.008: values beyond ~3.6 saturate at 448
V_SCALE = 0.25


def _poisoned_cache(num_blocks, block_size, heads, dim, dtype_name):
    dtype = torch_dtype(dtype_name)
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = torch.full((num_blocks, block_size, heads, dim * itemsize), 0xFF,
                     dtype=torch.uint8, device="cuda")
    return raw.view(dtype)


def make_inputs(case: PreprocessCase, generator):
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    tokens = case.tokens
    _, _, _, _, width = fused_columns(hq, hkv, dqk, dv, case.gate)
    qkv = (torch.randn(tokens, width, device="cuda", generator=generator) * 2).to(dtype)

    # positions: uniform in [0, MAX_POSITION], the extremes included
    positions = torch.randint(0, MAX_POSITION + 1, (tokens,), device="cuda",
                              generator=generator, dtype=torch.int64)
    positions[0] = MAX_POSITION
    if tokens > 1:
        positions[1] = 0

    # slots: distinct, scattered over the cache; some padding (-1)
    block_size = case.block_size
    num_blocks = -(-tokens * 3 // (2 * block_size)) + 2
    slots = torch.randperm(num_blocks * block_size, device="cuda",
                           generator=generator)[:tokens].to(torch.int64)
    if case.padding is True:
        slots[:] = -1
    elif case.padding is None and tokens > 1:
        pad = torch.randperm(tokens, device="cuda", generator=generator)[:tokens // 8 + 1]
        slots[pad] = -1

    weights = {}
    if case.norm != "none":
        base = 1.0 if case.norm == "rms" else 0.0  # gemma scales by 1 + w
        for name in ("q_norm_weight", "k_norm_weight"):
            weights[name] = (base + 0.2 * torch.randn(dqk, device="cuda",
                                                      generator=generator)).to(dtype)
    return qkv, positions, slots, num_blocks, weights


def run_preprocess(models, case: PreprocessCase, generator):
    """Launches the case's kernel on poisoned outputs; returns everything the
    checks need."""
    model = models.get(case.compile_key)
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    qkv, positions, slots, num_blocks, weights = make_inputs(case, generator)
    k_cache = _poisoned_cache(num_blocks, case.block_size, hkv, dqk, case.cache_dtype)
    v_cache = _poisoned_cache(num_blocks, case.block_size, hkv, dv, case.cache_dtype)
    dtype = torch_dtype(case.dtype)
    q_out = torch.full((case.tokens, hq, dqk), float("nan"), dtype=dtype, device="cuda")
    kwargs = dict(slot_mapping=slots, k_cache=k_cache, v_cache=v_cache, q_out=q_out,
                  **weights)
    gate_out = None
    if case.gate != "none":
        gate_width = 1 if case.gate == "head_scalar" else dv
        gate_out = torch.full((case.tokens, hq, gate_width), float("nan"), dtype=dtype,
                              device="cuda")
        kwargs["gate_out"] = gate_out
    if case.rope != "none" or case.temperature:
        kwargs["positions"] = positions
    if case.cache == "fp8":
        kwargs["k_scale"] = torch.tensor(K_SCALE, dtype=torch.float32, device="cuda")
        kwargs["v_scale"] = torch.tensor(V_SCALE, dtype=torch.float32, device="cuda")
    result = model.preprocess(LAYER, qkv, **kwargs)
    torch.cuda.synchronize()
    return dict(model=model, result=result, qkv=qkv, positions=positions, slots=slots,
                weights=weights, k_cache=k_cache, v_cache=v_cache, q_out=q_out,
                gate_out=gate_out)


def reference_for(case: PreprocessCase, run):
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    rope = rope_parameters(case.rope, dqk)
    style, rotary_dim, offset, theta, scaling = rope if rope else ("none", 0, 0, 0.0, None)
    return preprocess_reference(
        run["qkv"], hq=hq, hkv=hkv, dqk=dqk, dv=dv, gate=case.gate, norm=case.norm,
        norm_eps=NORM_EPS, q_norm_weight=run["weights"].get("q_norm_weight"),
        k_norm_weight=run["weights"].get("k_norm_weight"), rope=style,
        rotary_dim=rotary_dim, rotary_offset=offset, theta=theta, scaling=scaling,
        positions=run["positions"], temperature=TEMPERATURE if case.temperature else None)


def check_cache(name, cache, heads, dim, slots, expected, case, exact_source=None):
    """Rows of written slots against `expected` [T, heads, dim] (float32);
    every other row still poisoned."""
    rows = cache.view(-1, heads, dim)
    written = slots >= 0
    tokens = written.nonzero().flatten()
    got = rows[slots[written]]
    want = expected[tokens]
    if case.cache == "fp8":
        scale = K_SCALE if name == "k_cache" else V_SCALE
        assert_fp8_close(name, got, want / scale)
    elif exact_source is not None:
        # no arithmetic on the way: the bits must be the input's
        assert_finite(name, got)
        assert torch.equal(got, exact_source[tokens]), f"{name}: not an exact copy"
    else:
        assert_close(name, got, want, case.dtype)
    raw = cache.view(torch.uint8).reshape(rows.shape[0], -1)
    untouched = torch.ones(rows.shape[0], dtype=torch.bool, device="cuda")
    untouched[slots[written]] = False
    poisoned = (raw[untouched] == 0xFF).all(dim=1)
    if not bool(poisoned.all()):
        bad = untouched.nonzero().flatten()[~poisoned]
        raise AssertionError(f"{name}: {bad.numel()} rows that no token maps to were "
                             f"written (first slot {int(bad[0])})")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_preprocess(models, case, generator):
    run = run_preprocess(models, case, generator)
    ref = reference_for(case, run)
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    q_cols, k_cols, v_cols, g_cols, _ = fused_columns(hq, hkv, dqk, dv, case.gate)
    columns = lambda cols: torch.from_numpy(cols).cuda()  # noqa: E731
    qkv = run["qkv"]

    # the return value is the outputs passed in
    if case.gate != "none":
        assert isinstance(run["result"], tuple) and len(run["result"]) == 2
        assert run["result"][0] is run["q_out"] and run["result"][1] is run["gate_out"]
    else:
        assert run["result"] is run["q_out"]

    # q_out: every token, padding included
    if case.norm == "none" and case.rope == "none" and not case.temperature:
        assert_finite("q_out", run["q_out"])
        assert torch.equal(run["q_out"], ref.q_raw), "q_out: not an exact copy of q"
    else:
        assert_close("q_out", run["q_out"], ref.q, case.dtype)

    # gate_out: a copy of the gate segment
    if case.gate != "none":
        assert_finite("gate_out", run["gate_out"])
        assert torch.equal(run["gate_out"], qkv[:, columns(g_cols)]), \
            "gate_out: not an exact copy of the gate segment"

    # caches
    untouched_k = case.norm == "none" and case.rope == "none"
    check_cache("k_cache", run["k_cache"], hkv, dqk, run["slots"], ref.k, case,
                exact_source=qkv[:, columns(k_cols)] if untouched_k else None)
    check_cache("v_cache", run["v_cache"], hkv, dv, run["slots"], ref.v, case,
                exact_source=qkv[:, columns(v_cols)])


# The generated source's table and the Config's factor (emitPreprocess).
_INV_FREQ = re.compile(r"rope_inv_freq\[(\d+)\]\s*=\s*\{([^}]*)\}")
_FACTOR = re.compile(r"rope_attention_factor\s*=\s*([0-9.eE+-]+)f;")
_INV_FREQ_LONG = re.compile(r"rope_inv_freq_long\[(\d+)\]\s*=\s*\{([^}]*)\}")


@pytest.mark.parametrize("case", [c for c in CASES if c.rope != "none"
                                  and c.tokens == 7][:8] +
                         [c for c in CASES if c.rope in ("mla", "yarn", "llama3", "linear",
                                                         "longrope")
                          and c.tokens != 7],
                         ids=lambda c: c.id())
def test_rope_table_matches_reference(models, case):
    """The inverse frequencies baked into the kernel (printed in double) match
    the float64 Hugging Face computation, so a table error shows up here by
    itself rather than only as a rotated-value mismatch."""
    model = models.get(case.compile_key)
    source = model.kernel(LAYER, "preprocess").source
    match = _INV_FREQ.search(source)
    assert match, "no rope_inv_freq table in the generated source"
    table = [float(x) for x in match.group(2).replace("\n", " ").split(",") if x.strip()]
    assert len(table) == int(match.group(1))
    _, rotary_dim, _, theta, scaling = rope_parameters(case.rope, case.dims[0])
    inv_freq, factor = rope_inv_freq(rotary_dim, theta, scaling)
    assert len(table) == len(inv_freq)
    for i, (got, want) in enumerate(zip(table, inv_freq)):
        assert abs(got - want) <= 1e-12 * abs(want), (i, got, want)
    factor_match = _FACTOR.search(source)
    assert factor_match, "no rope_attention_factor in the generated source's Config"
    got_factor = float(factor_match.group(1))
    assert abs(got_factor - factor) <= 1e-6 * factor, (got_factor, factor)
    long_match = _INV_FREQ_LONG.search(source)
    if scaling and scaling["kind"] == "longrope":
        # from original_max_position on: the long divisors
        assert long_match, "no rope_inv_freq_long table for longrope"
        long_table = [float(x) for x in long_match.group(2).replace("\n", " ").split(",")
                      if x.strip()]
        base = 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
        want_long = base / np.asarray(scaling["long_factor"], dtype=np.float64)
        assert len(long_table) == len(want_long)
        for i, (got, want) in enumerate(zip(long_table, want_long)):
            assert abs(got - want) <= 1e-12 * abs(want), (i, got, want)
        assert f"rope_long_from = {scaling['original_max_position']};" in source
    else:
        assert long_match is None, "a second rope table without longrope"


def test_preprocess_allocates_outputs(models):
    """q_out and gate_out are allocated with torch when not given."""
    case = PreprocessCase((128, 128), (16, 2), "gemma", "partial", "interleaved",
                          "bf16", "same", 7, 16)
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    run = run_preprocess(models, case, g)
    qkv, positions, slots, weights = run["qkv"], run["positions"], run["slots"], run["weights"]
    q_out, gate_out = run["model"].preprocess(
        LAYER, qkv, positions=positions, slot_mapping=slots, k_cache=run["k_cache"],
        v_cache=run["v_cache"], **weights)
    torch.cuda.synchronize()
    assert q_out.shape == (7, 16, 128) and q_out.dtype == torch.bfloat16
    assert gate_out.shape == (7, 16, 128) and q_out.device == qkv.device
    assert torch.equal(q_out, run["q_out"]) and torch.equal(gate_out, run["gate_out"])
