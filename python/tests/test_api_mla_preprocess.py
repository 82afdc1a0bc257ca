"""MLA's preprocess kernel (attn.mla_preprocess) from hand-written IR: its
ABI, what its PTX holds for each optional feature, and Model.mla_preprocess's
argument checks through the fake CUDA driver (no GPU needed)."""

import ctypes
import re

import pytest

import attnc
from attnc_cpu_helpers import FakeTensor, fake_args

LAYER = "attnc_test_mla"  # the fake driver resolves attnc_test_* kernels only
KIND = "mla_preprocess"


def mla_ir(*, heads=16, rank=512, rope=64, block=64, cache="bf16", style="gptj",
           deinterleave=True, latent_scale=None, scaling=None, layer=LAYER, act="bf16",
           index="i64", schedule=None):
    """One layer function holding one attn.mla_preprocess."""
    cache_type = "f8E4M3FN" if cache == "fp8" else act
    width = rank + rope
    scale_operand = " scale %s" if cache == "fp8" else ""
    scale_type = " scale tensor<f32>" if cache == "fp8" else ""
    scale_arg = ", %s: tensor<f32>" if cache == "fp8" else ""
    attrs = [f"num_heads = {heads}", f"kv_lora_rank = {rank}", f"rope_head_dim = {rope}",
             "norm_eps = 1.0e-6 : f64", f"rope_style = #attn.rope_style<{style}>",
             "theta = 1.0e4 : f64"]
    if deinterleave:
        attrs.append("rope_deinterleave = true")
    if latent_scale is not None:
        attrs.append(f"latent_scale = {latent_scale} : f64")
    if scaling is not None:
        attrs.append(f"scaling = {scaling}")
    if schedule is not None:
        attrs.append(f"schedule = #attn.mla_preprocess_schedule<{schedule}>")
    cache_t = f"tensor<?x{block}x{width}x{cache_type}>"
    return f"""
func.func @{layer}(%kv_a: tensor<?x{width}x{act}>, %q_pe: tensor<?x{heads}x{rope}x{act}>,
    %slots: tensor<?x{index}>, %pos: tensor<?x{index}>, %w: tensor<{rank}x{act}>,
    %cache: {cache_t}{scale_arg})
    -> (tensor<?x{width}x{act}>, tensor<?x{heads}x{rope}x{act}>, {cache_t}) {{
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache{scale_operand}
      {{{", ".join(attrs)}}}
      : tensor<?x{width}x{act}>, tensor<?x{heads}x{rope}x{act}>, tensor<?x{index}>,
        tensor<?x{index}>, tensor<{rank}x{act}> into {cache_t}{scale_type}
  return %lat, %qr, %c : tensor<?x{width}x{act}>, tensor<?x{heads}x{rope}x{act}>, {cache_t}
}}
"""


STEPS_SCHEDULE = ("vector_width = 8, warps_per_token = 1, tokens_per_block = 2, "
                  "threads_per_block = 128, min_blocks_per_sm = 5, token_steps = 2, "
                  "l2_prefetch = true")
STAGED_SCHEDULE = ("vector_width = 8, warps_per_token = 2, tokens_per_block = 1, "
                   "threads_per_block = 96, min_blocks_per_sm = 8, token_steps = 3, "
                   "streaming_stores = true, stage_in_shared = true")


@pytest.fixture(scope="module")
def kernels(context):
    """name -> the compiled kernel of each variant (compiled once)."""
    variants = {
        "bf16": mla_ir(),
        "fp8": mla_ir(cache="fp8"),
        "interleaved": mla_ir(deinterleave=False),
        "neox": mla_ir(style="neox", deinterleave=False),
        "scaled": mla_ir(latent_scale=1.5),
        "h128": mla_ir(heads=128),
        # f16, i32 indices, a rank and a rope dim of no 16-byte vectors
        # (width 2), 3 units a head (not dividing a warp), 3 heads.
        "odd": mla_ir(heads=3, rank=20, rope=12, block=16, style="neox",
                      deinterleave=False, act="f16", index="i32"),
        # Explicit schedules (kept by attn-specialize) with the memory-level
        # knobs: register double buffer and L2 prefetch loads; shared-memory
        # staging with evict-first stores.
        "steps": mla_ir(schedule=STEPS_SCHEDULE),
        "staged": mla_ir(schedule=STAGED_SCHEDULE),
    }
    # The models stay referenced: a Kernel does not keep its model alive.
    models = {name: attnc.compile_ir(text, context=context)
              for name, text in variants.items()}
    kernels.models = models
    return {name: model.kernel(LAYER, KIND) for name, model in models.items()}


# ---- ABI ------------------------------------------------------------------------

def test_abi_parameters_and_launch_shape(kernels):
    kernel = kernels["bf16"]
    assert kernel.kind == KIND and kernel.name == f"{LAYER}__{KIND}"
    params = {p["name"]: p for p in kernel.abi["params"]}
    assert kernel.params == [
        "kv_a", "q_rope", "slot_mapping", "positions", "kv_norm_weight", "latent_cache",
        "latent_out", "q_rope_out", "kv_a_row_stride", "q_rope_token_stride",
        "q_rope_head_stride", "latent_out_row_stride", "q_rope_out_token_stride",
        "q_rope_out_head_stride", "latent_cache_block_stride", "latent_cache_token_stride",
        "num_tokens"]
    assert params["kv_a"]["shape"] == ["num_tokens", 576]
    assert params["kv_a"]["strides"] == ["kv_a_row_stride", 1]
    assert params["q_rope"]["shape"] == ["num_tokens", 16, 64]
    assert params["q_rope"]["strides"] == ["q_rope_token_stride", "q_rope_head_stride", 1]
    assert params["q_rope_out"]["strides"] == ["q_rope_out_token_stride",
                                               "q_rope_out_head_stride", 1]
    assert params["latent_out"]["strides"] == ["latent_out_row_stride", 1]
    assert params["latent_cache"]["shape"] == ["num_blocks", 64, 576]
    assert params["latent_cache"]["strides"] == ["latent_cache_block_stride",
                                                 "latent_cache_token_stride", 1]
    assert params["kv_norm_weight"]["shape"] == [512]
    written = {name for name, p in params.items() if p.get("writes")}
    assert written == {"latent_cache", "latent_out", "q_rope_out"}
    # 16 heads: one query warp and the latent warp per token, two tokens a
    # block (attn-specialize's rule).
    assert kernel.abi["block"] == [128, 1, 1]
    assert kernel.abi["grid"][0] == {"value": "num_tokens", "multiplier": 1, "divisor": 2}
    # 128 heads: eight query warps and the latent warp, one token a block.
    assert kernels["h128"].abi["block"] == [288, 1, 1]
    assert kernels["h128"].abi["grid"][0]["divisor"] == 1


def test_odd_shape_compiles(kernels):
    kernel = kernels["odd"]
    params = {p["name"]: p for p in kernel.abi["params"]}
    assert params["kv_a"]["dtype"] == "f16" and params["kv_a"]["shape"] == ["num_tokens", 32]
    assert params["slot_mapping"]["dtype"] == "i32"
    assert "static constexpr int vector_width = 2;" in kernel.source
    assert kernel.ptx()


def test_fp8_cache_takes_its_scale(kernels):
    params = {p["name"]: p for p in kernels["fp8"].abi["params"]}
    assert params["latent_cache"]["dtype"] == "fp8_e4m3"
    assert params["cache_scale"]["dtype"] == "f32" and params["cache_scale"]["shape"] == []
    assert "cache_scale" not in kernels["bf16"].params


def test_config_says_the_features(kernels):
    assert "static constexpr bool rope_deinterleave = true;" in kernels["bf16"].source
    assert "rope_deinterleave" not in kernels["interleaved"].source.split("struct Config")[1]
    assert "static constexpr bool fp8_cache = true;" in kernels["fp8"].source
    assert "static constexpr float latent_scale = 1.5f;" in kernels["scaled"].source
    assert "latent_scale" not in kernels["bf16"].source.split("struct Config")[1]
    assert "RopeStyle::neox" in kernels["neox"].source


# ---- absent features leave no instruction (PTX) ---------------------------------

def test_fp8_conversion_only_with_an_fp8_cache(kernels):
    assert "e4m3" in kernels["fp8"].ptx()
    for name in ("bf16", "interleaved", "neox", "scaled"):
        assert "e4m3" not in kernels[name].ptx(), name


def test_latent_scale_only_when_not_one(kernels):
    # 1.5f is 0f3FC00000 in PTX.
    assert "0f3FC00000" in kernels["scaled"].ptx()
    assert "0f3FC00000" not in kernels["bf16"].ptx()


def test_explicit_schedule_is_kept(kernels):
    # A block is tokens_per_block x token_steps tokens.
    assert kernels["steps"].abi["block"] == [128, 1, 1]
    assert kernels["steps"].abi["grid"][0] == {"value": "num_tokens", "multiplier": 1,
                                               "divisor": 4}
    assert kernels["staged"].abi["block"] == [96, 1, 1]
    assert kernels["staged"].abi["grid"][0]["divisor"] == 3
    assert "static constexpr int token_steps = 3;" in kernels["staged"].source


def test_memory_knobs_only_when_asked(kernels):
    """Each knob's instruction is in the kernels that ask for it and in no
    other: the L2 prefetch hint on loads, cp.async into shared memory,
    evict-first stores (the default stores are st.global.cg)."""
    ptx = {name: kernels[name].ptx() for name in ("bf16", "h128", "steps", "staged")}
    assert "L2::256B" in ptx["steps"] and "cp.async" not in ptx["steps"]
    assert "cp.async.cg.shared.global" in ptx["staged"] and "st.global.cs" in ptx["staged"]
    assert "L2::256B" not in ptx["staged"]
    for name in ("bf16", "h128"):
        for marker in ("L2::256B", "cp.async", "st.global.cs"):
            assert marker not in ptx[name], (name, marker)
        assert "st.global.cg.v4" in ptx[name]
    assert "st.global.cs.v4" not in ptx["steps"]


def _load_offsets(ptx):
    """Byte offsets of the 16-byte loads from their base register."""
    return {int(m) for m in re.findall(r"ld\.global\.v4\.u32\s+\{[^}]*\},\s+\[%rd\d+\+(\d+)\]", ptx)}


def test_rope_style_decides_the_unit_layout(kernels):
    # A unit reads two vectors: neox the same place in both halves (32
    # elements, 64 bytes apart), gptj two neighbours (16 bytes apart).
    assert 64 in _load_offsets(kernels["neox"].ptx())
    assert 16 not in _load_offsets(kernels["neox"].ptx())
    assert 16 in _load_offsets(kernels["interleaved"].ptx())


# ---- the launcher's checks (fake driver) ------------------------------------------

SIZES = {"num_tokens": 7, "num_blocks": 3}


@pytest.fixture(scope="module")
def fake_models(fake_context):
    return {"bf16": attnc.compile_ir(mla_ir(), context=fake_context),
            "fp8": attnc.compile_ir(mla_ir(cache="fp8"), context=fake_context)}


def mla_args(model, **override):
    args = fake_args(model.kernel(LAYER, KIND), SIZES)
    args.update(override)
    return args


def call(model, **override):
    args = mla_args(model, **override)
    return model.mla_preprocess(LAYER, args.pop("kv_a"), args.pop("q_rope"), **args)


def error_of(model, **override):
    with pytest.raises(attnc.ArgumentError) as info:
        call(model, **override)
    names = [k for k in override]
    if len(names) == 1:
        assert info.value.argument == names[0], str(info.value)
    return info.value.rule


def test_launch_returns_the_outputs(fake_models):
    args = mla_args(fake_models["bf16"])
    latent, q = fake_models["bf16"].mla_preprocess(LAYER, args.pop("kv_a"),
                                                   args.pop("q_rope"), **args)
    assert latent is args["latent_out"] and q is args["q_rope_out"]


def test_views_bind_their_strides(fake_models, monkeypatch):
    """q_rope as the rope part of a [T, H, 192] query, q_rope_out as that of
    the absorbed [T, H, 576] query, kv_a as rows of a wider projection, the
    cache as one half of a [blocks, 2, 64, 576] allocation: every stride
    reaches the kernel as its i64 parameter."""
    model = fake_models["bf16"]
    lib = model._lib  # the Library instance the launch calls through
    seen = {}
    real = lib.attnc_kernel_launch
    abi = model.kernel(LAYER, KIND).abi

    def spy(kernel, stream, args, num_args, scalars, num_scalars):
        for i, param in enumerate(abi["params"]):
            if param["kind"] == "i64":
                seen[param["name"]] = ctypes.c_int64.from_address(args[i]).value
            elif param["kind"] == "i32":
                seen[param["name"]] = ctypes.c_int32.from_address(args[i]).value
        return real(kernel, stream, args, num_args, scalars, num_scalars)

    monkeypatch.setattr(lib, "attnc_kernel_launch", spy)
    call(model,
         kv_a=FakeTensor((7, 576), "<V2", strides=(2112 * 2, 2)),
         q_rope=FakeTensor((7, 16, 64), "<V2", strides=(16 * 192 * 2, 192 * 2, 2)),
         q_rope_out=FakeTensor((7, 16, 64), "<V2", strides=(16 * 576 * 2, 576 * 2, 2)),
         latent_cache=FakeTensor((3, 64, 576), "<V2", strides=(2 * 64 * 576 * 2, 576 * 2, 2)))
    assert seen == {"kv_a_row_stride": 2112, "q_rope_token_stride": 16 * 192,
                    "q_rope_head_stride": 192, "latent_out_row_stride": 576,
                    "q_rope_out_token_stride": 16 * 576, "q_rope_out_head_stride": 576,
                    "latent_cache_block_stride": 2 * 64 * 576,
                    "latent_cache_token_stride": 576, "num_tokens": 7}


def test_in_place_outputs_are_accepted(fake_models):
    args = mla_args(fake_models["bf16"])
    kv_a, q_rope = args.pop("kv_a"), args.pop("q_rope")
    args["latent_out"], args["q_rope_out"] = kv_a, q_rope
    latent, q = fake_models["bf16"].mla_preprocess(LAYER, kv_a, q_rope, **args)
    assert latent is kv_a and q is q_rope


def test_missing_positions(fake_models):
    assert error_of(fake_models["bf16"], positions=None).startswith("missing")


def test_cache_scale_only_with_fp8(fake_models):
    rule = error_of(fake_models["bf16"], cache_scale=FakeTensor((), "<f4"))
    assert rule.startswith("this model's kernel has no fp8 latent cache")
    rule = error_of(fake_models["fp8"], cache_scale=None)
    assert "fp8 latent cache" in rule and "cache_scale" in rule


def test_wrong_head_count(fake_models):
    rule = error_of(fake_models["bf16"], q_rope=FakeTensor((7, 8, 64), "<V2"))
    assert "dim 1 is 8, expected 16" in rule


def test_token_counts_must_agree(fake_models):
    rule = error_of(fake_models["bf16"], positions=FakeTensor((6,), "<i8"))
    assert "num_tokens is 7" in rule


def test_non_contiguous_rope_dim(fake_models):
    rule = error_of(fake_models["bf16"],
                    q_rope=FakeTensor((7, 16, 64), "<V2", strides=(16 * 128 * 2, 128 * 2, 4)))
    assert "innermost dim must be contiguous" in rule


def test_misaligned_view(fake_models):
    # q_rope at element 4 of a row: 8 bytes off the 16-byte grid.
    base = FakeTensor._next
    FakeTensor._next += 1 << 24
    rule = error_of(fake_models["bf16"],
                    q_rope=FakeTensor((7, 16, 64), "<V2", ptr=base + 8,
                                      strides=(16 * 192 * 2, 192 * 2, 2)))
    assert "16-byte aligned" in rule


def test_wrong_cache_dtype(fake_models):
    rule = error_of(fake_models["bf16"], latent_cache=FakeTensor((3, 64, 576), "|V1"))
    assert "dtype" in rule


def test_read_only_output(fake_models):
    rule = error_of(fake_models["bf16"],
                    q_rope_out=FakeTensor((7, 16, 64), "<V2", readonly=True))
    assert "read-only" in rule
