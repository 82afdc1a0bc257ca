"""MLA's absorbed decode kernel (attn.latent_attention) from the package,
without a GPU: compile_ir of a layer with the op gives a "latent_attention"
kernel whose ABI, split-KV hints, workspace and split rule are those of
plan/LatentAttention.h (worked out by hand below for an H200's 132 SMs:
one CTA per SM), and an fp8 latent cache is refused by name. kv_lora_rank
256 (Mistral 4), 384 and 128 compile too, with their own maps and
workspaces; other ranks are refused naming the rule."""

import json
from pathlib import Path

import pytest

import attnc

R, P = 512, 64
HF_CONFIGS = Path(__file__).resolve().parents[2] / "test" / "model" / "configs" / "hf"


def layer_ir(heads, page=64, cache="bf16", scale_arg=False, rank=R):
    scale = " scale %s" if scale_arg else ""
    scale_type = " scale tensor<f32>" if scale_arg else ""
    extra = ", %s: tensor<f32>" if scale_arg else ""
    d = rank + P
    return f"""
func.func @mla(%q: tensor<?x{heads}x{d}xbf16>, %cache: tensor<?x{page}x{d}x{cache}>,
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
    assert names == ["query", "latent_cache", "latent_cache_block_stride",
                     "latent_cache_token_stride", "block_tables", "seq_lens",
                     "query_start_loc", "output", "workspace", "num_tokens",
                     "num_seqs", "max_blocks_per_seq", "num_kv_splits"]
    assert kernel.abi["hints"] == {"target_ctas": 132, "max_kv_splits": 32}
    assert kernel.abi["block"] == [256, 1, 1]
    # Q (64 x 576 x 2) + two K tiles + P (64 x 64 x 2) + 1 KB of row maxima
    # + 512 B of row sums + 32 B (split flag, the tile's sequence).
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * 73728 + 8192 + 1024 + 512 + 32
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


def test_fp8_latent_cache_is_refused(context):
    with pytest.raises(attnc.ConfigError) as error:
        attnc.compile_ir(layer_ir(16, cache="f8E4M3FN", scale_arg=True), context=context)
    assert "fp8 latent caches" in str(error.value)


def test_rank_256_kernel(context):
    """kv_lora_rank 256: rows of 320 values; Q (64 x 320 x 2 = 40960) + two
    K tiles + P (8192) + 1 KB of row maxima + 512 B of row sums + 32 B;
    the workspace's partials are 64 x 256 floats; an NVRTC cubin."""
    model = attnc.compile_ir(layer_ir(32, page=16, rank=256), context=context)
    kernel = model.kernel("mla", "latent_attention")
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * 40960 + 8192 + 1024 + 512 + 32
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
    assert kernel.abi["dynamic_shared_memory_bytes"] == 3 * tile + 8192 + 1024 + 512 + 32
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
