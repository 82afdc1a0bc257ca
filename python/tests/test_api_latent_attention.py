"""MLA's absorbed decode kernel (attn.latent_attention) from the package,
without a GPU: compile_ir of a layer with the op gives a "latent_attention"
kernel whose ABI, split-KV hints, workspace and split rule are those of
plan/LatentAttention.h (worked out by hand below for an H200's 132 SMs:
one CTA per SM); an fp8 latent cache adds cache_scale to the ABI, the
widening to the PTX and nothing to the shared memory, and the checked launch
(through the project's fake CUDA driver) asks for the scale by name.
kv_lora_rank 256 (Mistral 4), 384 and 128 compile too, with their own maps
and workspaces; other ranks are refused naming the rule."""

import json
from pathlib import Path

import pytest

import attnc
from attnc_cpu_helpers import FakeTensor, TYPESTR, fake_args

R, P = 512, 64
HF_CONFIGS = Path(__file__).resolve().parents[2] / "test" / "model" / "configs" / "hf"


def layer_ir(heads, page=64, cache="bf16", scale_arg=False, rank=R, layer="mla"):
    scale = " scale %s" if scale_arg else ""
    scale_type = " scale tensor<f32>" if scale_arg else ""
    extra = ", %s: tensor<f32>" if scale_arg else ""
    d = rank + P
    return f"""
func.func @{layer}(%q: tensor<?x{heads}x{d}xbf16>, %cache: tensor<?x{page}x{d}x{cache}>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>{extra})
    -> tensor<?x{heads}x{rank}xbf16> {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts{scale}
      {{kv_lora_rank = {rank}, softmax_scale = 0.1352 : f64}}
      : tensor<?x{heads}x{d}xbf16>, tensor<?x{page}x{d}x{cache}>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32>{scale_type} -> tensor<?x{heads}x{rank}xbf16>
  return %o : tensor<?x{heads}x{rank}xbf16>
}}
"""


@pytest.fixture(scope="module")
def models(context):
    return {h: attnc.compile_ir(layer_ir(h), context=context) for h in (128, 16)}


def test_kernel_and_abi(models):
    model = models[128]
    kernel = model.kernel("mla", "latent_attention")
    assert kernel.name == "mla__latent_attention"
    names = [p["name"] for p in kernel.abi["params"]]
    assert names == ["query", "latent_cache", "latent_cache_map", "latent_cache_block_stride",
                     "latent_cache_token_stride", "block_tables", "seq_lens",
                     "query_start_loc", "output", "workspace", "num_tokens",
                     "num_seqs", "max_blocks_per_seq", "num_kv_splits"]
    assert kernel.abi["hints"] == {"target_ctas": 132, "max_kv_splits": 32}
    assert kernel.abi["block"] == [256, 1, 1]
    # Q (64 x 576 x 2) + two K tiles + P (64 x 64 x 2) + 1 KB of row maxima
    # + 512 B of row sums + 32 B (split flag, the tile's sequence) + the K
    # tiles' mbarriers (2 buffers x 9 column blocks x 8 B).
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * 73728 + 8192 + 1024 + 512 + 32 + 144
    assert kernel.cubin()[:4] == b"\x7fELF"


def test_workspace_size(models):
    # 2 x 132 CTAs of 64 rows x (512 + 2) floats, then 132 counters.
    assert models[16].latent_attention_workspace_size("mla") == 264 * 64 * 514 + 132


@pytest.mark.parametrize("heads,tokens,seqs,expected", [
    (128, 1, 1, 32),     # busy 2: min(32, 132 // 2)
    (128, 8, 8, 8),      # busy 16: 132 // 16
    (128, 64, 64, 1),    # busy 128: 132 // 128
    (128, 128, 128, 1),  # busy 256 >= 132
    (16, 8, 8, 16),      # busy max(2, 8) = 8: 132 // 8
    (16, 128, 128, 1),   # busy 128
    (16, 256, 64, 2),    # MTP 4: busy max(64, 64) = 64: 132 // 64
])
def test_split_rule(models, heads, tokens, seqs, expected):
    assert models[heads].latent_attention_splits("mla", tokens, seqs) == expected


def test_split_counts_out_of_range(models):
    model = models[128]
    assert model.latent_attention_splits("mla", 1, 1, num_kv_splits=32) == 32
    for bad in (0, 33):
        with pytest.raises(attnc.ArgumentError) as error:
            model.latent_attention_splits("mla", 1, 1, num_kv_splits=bad)
        assert error.value.argument == "num_kv_splits"
    # B 64: base = 128 row tiles + 64 spares = 192; 3 splits need 576 CTAs
    # of workspace, more than its 264.
    with pytest.raises(attnc.ArgumentError) as error:
        model.latent_attention_splits("mla", 64, 64, num_kv_splits=3)
    assert "264" in str(error.value)


FP8 = dict(cache="f8E4M3FN", scale_arg=True)


def test_fp8_latent_cache_kernel_and_abi(context, models):
    model = attnc.compile_ir(layer_ir(16, **FP8), context=context)
    kernel = model.kernel("mla", "latent_attention")
    params = {p["name"]: p for p in kernel.abi["params"]}
    assert [p["name"] for p in kernel.abi["params"]] == [
        "query", "latent_cache", "latent_cache_block_stride", "latent_cache_token_stride",
        "block_tables", "seq_lens", "query_start_loc", "cache_scale", "output",
        "workspace", "num_tokens", "num_seqs", "max_blocks_per_seq", "num_kv_splits"]
    assert params["latent_cache"]["dtype"] == "fp8_e4m3"
    assert params["latent_cache"]["shape"] == ["num_blocks", 64, 576]
    assert params["cache_scale"]["dtype"] == "f32" and params["cache_scale"]["shape"] == []
    assert params["output"]["dtype"] == "bf16"
    # The fp8 rows land in the 16-bit K tiles: the bf16 kernel's map.
    bf16 = models[16].kernel("mla", "latent_attention")
    assert kernel.abi["dynamic_shared_memory_bytes"] == bf16.abi["dynamic_shared_memory_bytes"]
    assert kernel.abi["grid"] == bf16.abi["grid"] and kernel.abi["hints"] == bf16.abi["hints"]
    assert model.latent_attention_workspace_size("mla") == 264 * 64 * 514 + 132
    assert kernel.cubin()[:4] == b"\x7fELF"
    # The widening (e4m3 pairs to f16 pairs) is in the fp8 kernel only.
    assert "cvt.rn.f16x2.e4m3x2" in kernel.ptx()
    assert "e4m3" not in bf16.ptx()


# ---- the checked launch of an fp8 kernel (fake CUDA driver) ---------------------------

LAYER = "attnc_test_mla"  # the fake driver resolves attnc_test_* kernels only
SIZES = {"num_tokens": 4, "num_blocks": 5, "num_seqs": 2, "max_blocks_per_seq": 3,
         "num_seqs_plus_one": 3}


@pytest.fixture(scope="module")
def fake_models(fake_context):
    return {cache: attnc.compile_ir(layer_ir(16, layer=LAYER, **kw), context=fake_context)
            for cache, kw in (("bf16", {}), ("fp8", FP8))}


def launch(model, **override):
    args = fake_args(model.kernel(LAYER, "latent_attention"), SIZES)
    args["out"] = args.pop("output")
    args.update(override)
    return model.latent_attention(LAYER, args.pop("query"), num_kv_splits=1, **args)


def test_fp8_launch_takes_cache_scale(fake_models):
    out = launch(fake_models["fp8"])
    assert out.__cuda_array_interface__["shape"] == (4, 16, 512)


def test_fp8_launch_without_cache_scale(fake_models):
    with pytest.raises(attnc.ArgumentError) as error:
        launch(fake_models["fp8"], cache_scale=None)
    assert error.value.argument == "cache_scale"
    assert "fp8 latent cache" in error.value.rule


def test_cache_scale_with_a_bf16_cache(fake_models):
    with pytest.raises(attnc.ArgumentError) as error:
        launch(fake_models["bf16"], cache_scale=FakeTensor((), TYPESTR["f32"]))
    assert error.value.argument == "cache_scale"
    assert "no fp8 latent cache" in error.value.rule


def test_fp8_cache_of_another_dtype(fake_models):
    bf16_cache = FakeTensor((SIZES["num_blocks"], 64, 576), TYPESTR["bf16"])
    with pytest.raises(attnc.ArgumentError) as error:
        launch(fake_models["fp8"], latent_cache=bf16_cache)
    assert error.value.argument == "latent_cache"


def test_rank_256_kernel(context):
    """kv_lora_rank 256: rows of 320 values; Q (64 x 320 x 2 = 40960) + two
    K tiles + P (8192) + 1 KB of row maxima + 512 B of row sums + 32 B;
    the workspace's partials are 64 x 256 floats; an NVRTC cubin."""
    model = attnc.compile_ir(layer_ir(32, page=16, rank=256), context=context)
    kernel = model.kernel("mla", "latent_attention")
    # (+ the K tiles' mbarriers: 2 buffers x 5 column blocks x 8 bytes)
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * 40960 + 8192 + 1024 + 512 + 32 + 80
    params = {p["name"]: p for p in kernel.abi["params"]}
    assert params["query"]["shape"] == ["num_tokens", 32, 320]
    assert params["latent_cache"]["shape"] == ["num_blocks", 16, 320]
    assert params["output"]["shape"] == ["num_tokens", 32, 256]
    assert model.latent_attention_workspace_size("mla") == 264 * 64 * 258 + 132
    assert kernel.abi["hints"] == {"target_ctas": 132, "max_kv_splits": 32}
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in kernel.ptx()
    assert "m64n256k16" not in kernel.ptx()
    assert kernel.cubin()[:4] == b"\x7fELF"


@pytest.mark.parametrize("rank,wgmma", [(384, "m64n192k16"), (128, "m64n64k16")])
def test_ranks_384_and_128_compile(context, rank, wgmma):
    """The other multiples of 128 up to 512: rows of R + 64 values, P V by
    wgmma m64n(R / 2)k16 (at R 128 the scores' shape too), the map and the
    workspace by R."""
    model = attnc.compile_ir(layer_ir(16, rank=rank), context=context)
    kernel = model.kernel("mla", "latent_attention")
    tile = 64 * (rank + P) * 2
    bars = 2 * (rank + P) // 64 * 8  # the K tiles' mbarriers
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * tile + 8192 + 1024 + 512 + 32 + bars
    assert model.latent_attention_workspace_size("mla") == 264 * 64 * (rank + 2) + 132
    ptx = kernel.ptx()
    assert f"wgmma.mma_async.sync.aligned.{wgmma}.f32.bf16.bf16" in ptx
    for other in {"m64n256k16", "m64n192k16", "m64n128k16"} - {wgmma}:
        assert other not in ptx
    assert kernel.cubin()[:4] == b"\x7fELF"


@pytest.mark.parametrize("rank", [64, 320, 448])
def test_other_ranks_are_refused(context, rank):
    """Ranks that are not a multiple of 128 (or below 128) with rows of
    whole 64-value blocks: refused naming the rule."""
    with pytest.raises(attnc.ConfigError) as error:
        attnc.compile_ir(layer_ir(16, rank=rank), context=context)
    assert "kv_lora_rank must be a multiple of 128 from 128 to 512" in str(error.value)
    assert f"got {rank}" in str(error.value)


def test_mistral4_compiles(compiled):
    """Mistral 4 (kv_lora_rank 256, rope 64, 32 heads): its latent kind
    compiles to the four MLA kernels, each an sm_90a NVRTC cubin."""
    config = json.loads((HF_CONFIGS / "mistral4.json").read_text())
    model = compiled(config)
    assert len(model.kernels) == 4 * len(model.layers)
    for layer in model.layers:
        for kind in ("mla_preprocess", "latent_attention", "varlen_attention",
                     "latent_gather"):
            assert model.kernel(layer, kind).cubin()[:4] == b"\x7fELF"
        params = {p["name"]: p for p in model.kernel(layer, "latent_attention").abi["params"]}
        assert params["latent_cache"]["shape"][1:] == [64, 320]
        assert params["output"]["shape"][1:] == [32, 256]
