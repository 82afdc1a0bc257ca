"""MLA's absorbed decode kernel (attn.latent_attention) from the package,
without a GPU: compile_ir of a layer with the op gives a "latent_attention"
kernel whose ABI, split-KV hints, workspace and split rule are those of
plan/LatentAttention.h (worked out by hand below for an H200's 132 SMs:
one CTA per SM), and an fp8 latent cache is refused by name."""

import pytest

import attnc

R, P = 512, 64


def layer_ir(heads, page=64, cache="bf16", scale_arg=False):
    scale = " scale %s" if scale_arg else ""
    scale_type = " scale tensor<f32>" if scale_arg else ""
    extra = ", %s: tensor<f32>" if scale_arg else ""
    return f"""
func.func @mla(%q: tensor<?x{heads}x576xbf16>, %cache: tensor<?x{page}x576x{cache}>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>{extra})
    -> tensor<?x{heads}x512xbf16> {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts{scale}
      {{kv_lora_rank = 512, softmax_scale = 0.1352 : f64}}
      : tensor<?x{heads}x576xbf16>, tensor<?x{page}x576x{cache}>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32>{scale_type} -> tensor<?x{heads}x512xbf16>
  return %o : tensor<?x{heads}x512xbf16>
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
