"""MLA's preprocess kernel (attn.mla_preprocess) against a float64 reference
written here from Hugging Face's formulas (DeepseekV3RMSNorm,
apply_rotary_pos_emb_interleave, rotate_half, _compute_yarn_parameters):
RMSNorm of c_kv (times latent_scale), rope on k_pe and on every query head,
the latent cache row, latent_out and q_rope_out.

Outputs are poisoned with NaN and caches with 0xFF bytes (NaN in every cache
dtype) before each run. Written cache rows must match; rows no token maps
to (padding slots, unused slots) and the columns around strided views must
still hold the poison. Layouts: outputs allocated by the package; strided
views (q_rope inside a [T, H, 192] query, q_rope_out inside the absorbed
[T, H, 576] query, kv_a rows of a wider projection output, a cache with
padded rows); and in place (latent_out is kv_a, q_rope_out is q_rope)."""

import math
from dataclasses import dataclass
from typing import Optional

import pytest

from attnc_gpu_reference import assert_close, assert_finite, assert_fp8_close, torch

LAYER = "mla"
RANK = 512
ROPE = 64
NORM_EPS = 1e-6
CACHE_SCALE = 0.008  # normalised values beyond ~3.6 saturate at 448
MAX_POSITION = 163840  # DeepSeek-V3's max_position_embeddings

#: DeepSeek-V3's rope_scaling (mscale == mscale_all_dim: cos and sin are
#: not scaled; the softmax scale carries mscale^2).
DEEPSEEK_YARN = dict(kind="yarn", factor=40.0, original_max_position=4096, beta_fast=32.0,
                     beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0)
#: A yarn whose attention factor is not 1: (0.1 ln 40 + 1) / (0.05 ln 40 + 1).
SCALED_YARN = dict(DEEPSEEK_YARN, mscale_all_dim=0.5)


@dataclass(frozen=True)
class Variant:
    """What one compiled kernel is."""
    heads: int = 128
    block_size: int = 64
    cache: str = "bf16"          # or "fp8"
    dtype: str = "bf16"          # or "fp16"
    style: str = "gptj"          # or "neox"
    deinterleave: bool = True
    latent_scale: Optional[float] = None
    theta: float = 10000.0
    scaling: Optional[dict] = None
    # An explicit #attn.mla_preprocess_schedule (its text between < and >),
    # kept by attn-specialize; None: attn-specialize's choice.
    schedule: Optional[str] = None

    def ir(self) -> str:
        act = {"bf16": "bf16", "fp16": "f16"}[self.dtype]
        cache_t = "f8E4M3FN" if self.cache == "fp8" else act
        width, h = RANK + ROPE, self.heads
        attrs = [f"num_heads = {h}", f"kv_lora_rank = {RANK}", f"rope_head_dim = {ROPE}",
                 f"norm_eps = {NORM_EPS:.6e} : f64",
                 f"rope_style = #attn.rope_style<{self.style}>", f"theta = {self.theta!r} : f64"]
        if self.deinterleave:
            attrs.append("rope_deinterleave = true")
        if self.latent_scale is not None:
            attrs.append(f"latent_scale = {self.latent_scale!r} : f64")
        if self.scaling is not None:
            s = self.scaling
            attrs.append(
                f"scaling = #attn.rope_scaling<kind = {s['kind']}, factor = {s['factor']!r}, "
                f"original_max_position = {s['original_max_position']}, "
                f"beta_fast = {s['beta_fast']!r}, beta_slow = {s['beta_slow']!r}, "
                f"mscale = {s['mscale']!r}, mscale_all_dim = {s['mscale_all_dim']!r}>")
        if self.schedule is not None:
            attrs.append(f"schedule = #attn.mla_preprocess_schedule<{self.schedule}>")
        cache = f"tensor<?x{self.block_size}x{width}x{cache_t}>"
        scale_arg = ", %s: tensor<f32>" if self.cache == "fp8" else ""
        scale_op = " scale %s" if self.cache == "fp8" else ""
        scale_ty = " scale tensor<f32>" if self.cache == "fp8" else ""
        kv, q = f"tensor<?x{width}x{act}>", f"tensor<?x{h}x{ROPE}x{act}>"
        return f"""
func.func @{LAYER}(%kv_a: {kv}, %q_pe: {q}, %slots: tensor<?xi64>, %pos: tensor<?xi64>,
    %w: tensor<{RANK}x{act}>, %cache: {cache}{scale_arg}) -> ({kv}, {q}, {cache}) {{
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache{scale_op}
      {{{", ".join(attrs)}}}
      : {kv}, {q}, tensor<?xi64>, tensor<?xi64>, tensor<{RANK}x{act}> into {cache}{scale_ty}
  return %lat, %qr, %c : {kv}, {q}, {cache}
}}
"""


def schedule(warps_per_token, tokens_per_block, min_blocks_per_sm, vector_width=8, **knobs):
    """The text of an explicit schedule with the memory-level knobs
    (token_steps, l2_prefetch, streaming_stores) off their defaults."""
    threads = 32 * (warps_per_token + 1) * tokens_per_block
    text = (f"vector_width = {vector_width}, warps_per_token = {warps_per_token}, "
            f"tokens_per_block = {tokens_per_block}, threads_per_block = {threads}, "
            f"min_blocks_per_sm = {min_blocks_per_sm}")
    for name, value in knobs.items():
        text += f", {name} = {str(value).lower()}"
    return text


DEEPSEEK = Variant(scaling=DEEPSEEK_YARN)
CASES = [
    # (variant, tokens, layout)
    *[(DEEPSEEK, t, "allocated") for t in (1, 7, 300, 4096)],
    (DEEPSEEK, 300, "views"),
    (DEEPSEEK, 300, "in_place"),
    (Variant(heads=16, cache="fp8", block_size=16, scaling=DEEPSEEK_YARN), 7, "allocated"),
    (Variant(heads=16, cache="fp8", block_size=16, scaling=DEEPSEEK_YARN), 4096, "views"),
    (Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN), 300, "in_place"),
    (Variant(heads=16, deinterleave=False), 300, "allocated"),
    (Variant(heads=16, deinterleave=False), 300, "in_place"),
    (Variant(heads=128, style="neox", deinterleave=False, latent_scale=1.5, block_size=16),
     300, "views"),
    (Variant(heads=16, latent_scale=2.0, theta=1e7), 300, "in_place"),
    (Variant(heads=16, scaling=SCALED_YARN), 300, "allocated"),
    (Variant(heads=16, dtype="fp16", block_size=16, scaling=DEEPSEEK_YARN), 300, "views"),
    # Explicit schedules (bench/sweep_mla_preprocess.py's knobs): token
    # steps with a token count that leaves the last block part-filled (300
    # = 150 x 2, 301 = 100 x 3 + 1, 7 < 8 tokens a block), in place
    # (the de-interleaving lanes' __syncwarp between steps), views, the L2
    # prefetch loads and evict-first stores, four query warps a token.
    (Variant(scaling=DEEPSEEK_YARN, schedule=schedule(8, 1, 2, token_steps=2)), 300, "in_place"),
    (Variant(scaling=DEEPSEEK_YARN, schedule=schedule(8, 1, 2, token_steps=3, l2_prefetch=True,
                                                      streaming_stores=True)), 301, "views"),
    (Variant(scaling=DEEPSEEK_YARN, schedule=schedule(4, 1, 5, l2_prefetch=True,
                                                      streaming_stores=True)), 300, "in_place"),
    (Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN,
             schedule=schedule(1, 2, 4, token_steps=4, l2_prefetch=True)), 7, "allocated"),
    (Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN,
             schedule=schedule(1, 2, 4, token_steps=4, streaming_stores=True)), 4096, "views"),
    (Variant(heads=16, deinterleave=False, schedule=schedule(2, 2, 5, token_steps=2)), 300,
     "in_place"),
    (Variant(heads=128, style="neox", deinterleave=False, latent_scale=1.5, block_size=16,
             schedule=schedule(8, 1, 2, token_steps=2, l2_prefetch=True)), 301, "views"),
    # The rows loaded into registers, one token a place (the schedule
    # attn-specialize chose before stage_in_shared).
    (Variant(scaling=DEEPSEEK_YARN, schedule=schedule(8, 1, 3)), 300, "in_place"),
    (Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN, schedule=schedule(1, 2, 7)), 4096,
     "views"),
    # Staged in shared memory with more steps than stages in flight (128
    # heads: 2 stages fit 48 KB; 16 heads: 5), so stages are reused.
    (Variant(scaling=DEEPSEEK_YARN, schedule=schedule(8, 1, 3, token_steps=4, l2_prefetch=True,
                                                      stage_in_shared=True)), 301, "in_place"),
    (Variant(heads=16, scaling=DEEPSEEK_YARN,
             schedule=schedule(1, 2, 7, token_steps=8, stage_in_shared=True)), 4096, "views"),
    (Variant(heads=16, cache="fp8", block_size=16, scaling=DEEPSEEK_YARN,
             schedule=schedule(1, 2, 7, token_steps=8, streaming_stores=True,
                               stage_in_shared=True)), 300, "in_place"),
]


def case_id(case):
    v, tokens, layout = case
    parts = [f"h{v.heads}", v.dtype, f"cache_{v.cache}", f"bs{v.block_size}", v.style,
             "deint" if v.deinterleave else "pairs"]
    if v.latent_scale is not None:
        parts.append(f"ls{v.latent_scale}")
    if v.scaling is not None:
        parts.append("yarn" if v.scaling["mscale_all_dim"] == v.scaling["mscale"] else "yarn_af")
    if v.schedule is not None:
        # warps, tokens, min blocks and the knobs off their defaults, short.
        fields = dict(f.split(" = ") for f in v.schedule.split(", "))
        tag = f"w{fields['warps_per_token']}t{fields['tokens_per_block']}" \
              f"b{fields['min_blocks_per_sm']}"
        tag += f"s{fields['token_steps']}" if "token_steps" in fields else ""
        tag += "l2" if "l2_prefetch" in fields else ""
        tag += "cs" if "streaming_stores" in fields else ""
        tag += "sh" if "stage_in_shared" in fields else ""
        parts.append(tag)
    return "-".join(parts + [f"t{tokens}", layout])


@pytest.fixture(scope="module")
def compiled(attnc_context):
    import attnc
    models = {}

    def get(variant):
        key = variant.ir()  # (a Variant holds a dict: not hashable)
        if key not in models:
            models[key] = attnc.compile_ir(key, context=attnc_context)
        return models[key]

    return get


# ---- the reference (float64) ----------------------------------------------------

def inv_freq_and_factor(v: Variant):
    """Inverse frequencies and the cos/sin factor, as Hugging Face computes
    them (modeling_rope_utils: default and _compute_yarn_parameters), in
    float64."""
    exponents = torch.arange(0, ROPE, 2, dtype=torch.float64) / ROPE
    pos_freqs = v.theta ** exponents
    if v.scaling is None:
        return 1.0 / pos_freqs, 1.0
    s = v.scaling
    factor = s["factor"]

    def get_mscale(scale, mscale=1.0):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    if s["mscale"] and s["mscale_all_dim"]:
        attention_factor = get_mscale(factor, s["mscale"]) / get_mscale(factor, s["mscale_all_dim"])
    else:
        attention_factor = get_mscale(factor)

    def correction_dim(rotations):
        return (ROPE * math.log(s["original_max_position"] / (rotations * 2 * math.pi))) / (
            2 * math.log(v.theta))

    low = max(math.floor(correction_dim(s["beta_fast"])), 0)
    high = min(math.ceil(correction_dim(s["beta_slow"])), ROPE - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(ROPE // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    extrapolation = 1.0 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation
    return inv_freq, attention_factor


def rotate(x, cos, sin, v: Variant):
    """x [..., P] float64; cos, sin [..., P/2] broadcastable."""
    if v.style == "neox":
        x1, x2 = x[..., :ROPE // 2], x[..., ROPE // 2:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    r1, r2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    if v.deinterleave:  # apply_rotary_pos_emb_interleave: halves out
        return torch.cat([r1, r2], dim=-1)
    out = torch.empty_like(x)
    out[..., 0::2], out[..., 1::2] = r1, r2
    return out


def reference(v: Variant, kv_a, q_rope, positions, weight):
    """(latent [T, R + P], q_rope_out [T, H, P]) in float64."""
    inv_freq, factor = inv_freq_and_factor(v)
    angles = positions.to(torch.float64)[:, None] * inv_freq.cuda()[None, :]
    cos, sin = angles.cos() * factor, angles.sin() * factor
    kv = kv_a.to(torch.float64)
    c_kv, k_pe = kv[:, :RANK], kv[:, RANK:]
    variance = c_kv.pow(2).mean(-1, keepdim=True)
    normed = c_kv * torch.rsqrt(variance + NORM_EPS) * weight.to(torch.float64)
    if v.latent_scale is not None:
        normed = normed * v.latent_scale
    latent = torch.cat([normed, rotate(k_pe, cos, sin, v)], dim=-1)
    q = rotate(q_rope.to(torch.float64), cos[:, None, :], sin[:, None, :], v)
    return latent, q


# ---- one run ---------------------------------------------------------------------

def poisoned(shape, dtype):
    """A tensor of `dtype` whose every byte is 0xFF (NaN in bf16, fp16 and
    e4m3)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = torch.full((*shape[:-1], shape[-1] * itemsize), 0xFF, dtype=torch.uint8, device="cuda")
    return raw.view(dtype)


def torch_dtype(name):
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[name]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_mla_preprocess(compiled, case, generator):
    v, tokens, layout = case
    model = compiled(v)
    dtype = torch_dtype(v.dtype)
    width, h = RANK + ROPE, v.heads

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, device="cuda", generator=generator) * scale).to(dtype)

    # Inputs. kv_a's c_kv part is far from normalised (scale 3) so that the
    # norm matters; the weights are 1 +- 0.2.
    if layout == "views":
        # kv_a: rows of a wider [T, 1536 + 576] projection output (q_a | kv_a).
        fused = randn(tokens, 1536 + width, scale=3.0)
        kv_a = fused[:, 1536:]
        # q_rope: the rope part of a [T, H, 128 + 64] query.
        q_full = randn(tokens, h, 128 + ROPE)
        q_rope = q_full[..., 128:]
    else:
        kv_a = randn(tokens, width, scale=3.0)
        q_rope = randn(tokens, h, ROPE)
    weight = (1.0 + 0.2 * torch.randn(RANK, device="cuda", generator=generator)).to(dtype)
    positions = torch.randint(0, MAX_POSITION, (tokens,), device="cuda", generator=generator)
    positions[0] = MAX_POSITION - 1
    if tokens > 1:
        positions[1] = 0
    # Distinct slots scattered over the cache, some padding (-1).
    num_blocks = -(-tokens * 3 // (2 * v.block_size)) + 2
    slots = torch.randperm(num_blocks * v.block_size, device="cuda",
                           generator=generator)[:tokens].to(torch.int64)
    if tokens > 1:
        pad = torch.randperm(tokens, device="cuda", generator=generator)[:tokens // 8 + 1]
        slots[pad] = -1
    kv_a_in, q_rope_in = kv_a.clone(), q_rope.clone()  # the kernel may overwrite them

    cache_dtype = torch.float8_e4m3fn if v.cache == "fp8" else dtype
    if layout == "views":
        # Rows padded to 640 columns: the pad must stay poisoned.
        cache_storage = poisoned((num_blocks, v.block_size, 640), cache_dtype)
        cache = cache_storage[..., :width]
    else:
        cache_storage = poisoned((num_blocks, v.block_size, width), cache_dtype)
        cache = cache_storage
    kwargs = dict(slot_mapping=slots, positions=positions, kv_norm_weight=weight,
                  latent_cache=cache)
    if v.cache == "fp8":
        kwargs["cache_scale"] = torch.tensor(CACHE_SCALE, dtype=torch.float32, device="cuda")
    absorbed = None
    if layout == "views":
        # q_rope_out into the absorbed query [T, H, 512 + 64]; latent_out
        # into the right part of a [T, 64 + 576] buffer.
        absorbed = torch.full((tokens, h, RANK + ROPE), float("nan"), dtype=dtype, device="cuda")
        kwargs["q_rope_out"] = absorbed[..., RANK:]
        latent_storage = torch.full((tokens, 64 + width), float("nan"), dtype=dtype,
                                    device="cuda")
        kwargs["latent_out"] = latent_storage[:, 64:]
    elif layout == "in_place":
        kwargs["latent_out"], kwargs["q_rope_out"] = kv_a, q_rope
    latent_out, q_rope_out = model.mla_preprocess(LAYER, kv_a, q_rope, **kwargs)
    torch.cuda.synchronize()

    if layout != "allocated":
        assert latent_out is kwargs["latent_out"] and q_rope_out is kwargs["q_rope_out"]
    want_latent, want_q = reference(v, kv_a_in, q_rope_in, positions, weight)

    # Every token's rows, padding tokens included.
    assert_close("latent_out", latent_out, want_latent, v.dtype)
    assert_close("q_rope_out", q_rope_out, want_q, v.dtype)
    if layout == "views":
        # Nothing written around the views.
        assert bool(absorbed[..., :RANK].isnan().all()), "absorbed query's q_nope part written"
        assert bool(latent_storage[:, :64].isnan().all()), "columns before latent_out written"

    # The cache: written rows, then the poison everywhere else.
    rows = cache.reshape(-1, width)
    written = slots >= 0
    got = rows[slots[written]]
    want = want_latent[written.nonzero().flatten()]
    if v.cache == "fp8":
        assert_fp8_close("latent_cache", got, want / CACHE_SCALE)
    else:
        assert_close("latent_cache", got, want, v.dtype)
    raw = cache_storage.view(torch.uint8).reshape(num_blocks * v.block_size, -1)
    untouched = torch.ones(raw.shape[0], dtype=torch.bool, device="cuda")
    untouched[slots[written]] = False
    assert bool((raw[untouched] == 0xFF).all()), "rows no token maps to were written"
    itemsize = cache_storage.element_size()
    assert bool((raw[~untouched][:, width * itemsize:] == 0xFF).all()), \
        "columns past the row were written"


def test_nan_stays_nan_in_the_fp8_cache(compiled, generator):
    """A NaN in k_pe stays NaN in the fp8 cache (saturation clamps finite
    values only)."""
    v = Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN)
    model = compiled(v)
    tokens = 4
    kv_a = torch.randn(tokens, RANK + ROPE, device="cuda", generator=generator).to(torch.bfloat16)
    kv_a[0, RANK + 5] = float("nan")
    kv_a[1, 7] = 1e4  # c_kv: normalised to ~sqrt(512) = 22.6, / 0.008 saturates
    q_rope = torch.randn(tokens, 16, ROPE, device="cuda", generator=generator).to(torch.bfloat16)
    cache = poisoned((1, 64, RANK + ROPE), torch.float8_e4m3fn)
    slots = torch.arange(tokens, device="cuda", dtype=torch.int64)
    model.mla_preprocess(LAYER, kv_a, q_rope, slot_mapping=slots,
                         positions=torch.zeros(tokens, dtype=torch.int64, device="cuda"),
                         kv_norm_weight=torch.ones(RANK, dtype=torch.bfloat16, device="cuda"),
                         latent_cache=cache,
                         cache_scale=torch.tensor(CACHE_SCALE, device="cuda"))
    torch.cuda.synchronize()
    row0 = cache[0, 0].float()
    # Position 0: no rotation; de-interleaved, element 5 (odd: x2 of pair 2)
    # lands at P/2 + 2.
    assert bool(row0[RANK + ROPE // 2 + 2].isnan())
    assert int(row0[:RANK].isnan().sum()) == 0
    assert float(cache[0, 1, 7].float()) == 448.0
    assert_finite("latent_cache row 1", cache[0, 1])


def test_torch_op_matches_checked_path(compiled, generator):
    """torch.ops.attnc.mla_preprocess: eager, torch.compile(fullgraph=True)
    and CUDA-graph replay, each bit-exact against Model.mla_preprocess; a
    wrong argument is named."""
    import attnc
    import attnc.torch_ops as ops
    backend = ops.load("auto")
    v = Variant(heads=16, cache="fp8", scaling=DEEPSEEK_YARN)
    model = compiled(v)
    binding = ops.binding(model, LAYER, "mla_preprocess")
    tokens = 37
    kv_a = torch.randn(tokens, RANK + ROPE, device="cuda", generator=generator).to(torch.bfloat16)
    q_rope = torch.randn(tokens, 16, ROPE, device="cuda", generator=generator).to(torch.bfloat16)
    weight = torch.randn(RANK, device="cuda", generator=generator).to(torch.bfloat16)
    positions = torch.randint(0, 4096, (tokens,), device="cuda", generator=generator)
    slots = torch.randperm(2 * 64, device="cuda", generator=generator)[:tokens]
    scale = torch.tensor(CACHE_SCALE, device="cuda")

    def fresh():
        return (poisoned((2, 64, RANK + ROPE), torch.float8_e4m3fn),
                torch.full((tokens, RANK + ROPE), float("nan"), dtype=torch.bfloat16,
                           device="cuda"),
                torch.full((tokens, 16, ROPE), float("nan"), dtype=torch.bfloat16,
                           device="cuda"))

    want = fresh()
    model.mla_preprocess(LAYER, kv_a, q_rope, slot_mapping=slots, positions=positions,
                         kv_norm_weight=weight, latent_cache=want[0], cache_scale=scale,
                         latent_out=want[1], q_rope_out=want[2])

    def run(out):
        torch.ops.attnc.mla_preprocess(binding, kv_a, q_rope, slots, positions, weight,
                                       out[0], scale, out[1], out[2])

    def same(got):
        torch.cuda.synchronize()
        assert torch.equal(got[0].view(torch.uint8), want[0].view(torch.uint8))
        assert torch.equal(got[1], want[1]) and torch.equal(got[2], want[2])

    got = fresh()
    run(got)
    same(got)
    got = fresh()
    torch.compile(run, fullgraph=True, dynamic=False)(got)
    same(got)
    got = fresh()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        run(got)
    torch.cuda.synchronize()
    for t in got:
        t.view(torch.uint8).fill_(0xFF)
    graph.replay()
    same(got)

    expected = ValueError if backend == "cpp" else attnc.ArgumentError
    with pytest.raises(expected, match="cache_scale"):
        torch.ops.attnc.mla_preprocess(binding, kv_a, q_rope, slots, positions, weight,
                                       got[0], None, got[1], got[2])
