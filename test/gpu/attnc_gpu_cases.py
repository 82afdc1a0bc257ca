"""The GPU suite's case matrices: attnc spec configs written
programmatically (docs/config-import.md), and pairwise covering arrays over
head shapes, head counts, norm, rope, gate, dtypes, caches, token counts and
page sizes, so that every pair of values meets in some case without paying
for the full product. Attention adds cases outside the matrix: contexts up
to 32768, split-KV, GQA tile shapes and causal mask edges."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from attnc_gpu_reference import pairwise

LAYER = "attn"

DIMS = [(2, 3), (64, 64), (96, 64), (128, 128), (192, 128), (256, 256)]  # (Dqk, Dv)
HEADS = [(1, 1), (8, 1), (16, 2), (32, 4), (64, 4)]                       # (Hq, Hkv)

#: Rope presets: style, rotary dim ("full" or a number), offset ("end": the
#: last rotary_dim dims, as MLA), theta, Hugging Face scaling.
ROPE = {
    "none": None,
    "neox": dict(style="neox", rotary_dim="full", theta=1e6),
    "gptj": dict(style="gptj", rotary_dim="full", theta=1e4),
    # partial rotary: 64 of the head dim (64 of 192 as MiMo, 64 of 256 as Qwen3-Next)
    "partial": dict(style="neox", rotary_dim=64, theta=1e7),
    # DeepSeek MLA: gptj over the last 64 dims, YaRN with mscale_all_dim
    "mla": dict(style="gptj", rotary_dim=64, offset="end", theta=1e4,
                scaling=dict(kind="yarn", factor=40.0, original_max_position=4096,
                             beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                             mscale_all_dim=1.0)),
    "llama3": dict(style="neox", rotary_dim="full", theta=5e5,
                   scaling=dict(kind="llama3", factor=8.0, original_max_position=8192,
                                low_freq_factor=1.0, high_freq_factor=4.0)),
    # gpt-oss style YaRN: attention factor 0.1 ln 32 + 1, no truncation
    "yarn": dict(style="neox", rotary_dim="full", theta=150000.0,
                 scaling=dict(kind="yarn", factor=32.0, original_max_position=4096,
                              beta_fast=32.0, beta_slow=1.0, truncate=False)),
    "linear": dict(style="gptj", rotary_dim="full", theta=1e4,
                   scaling=dict(kind="linear", factor=4.0)),
    # Phi-3 longrope over 96 dims (48 divisors each, growing as Phi-3's do);
    # the matrix's positions reach past original_max_position, so both
    # tables rotate some tokens
    "longrope": dict(style="neox", rotary_dim=96, theta=1e4,
                     scaling=dict(kind="longrope", factor=32.0, original_max_position=4096,
                                  short_factor=[1.0 + 0.02 * i for i in range(48)],
                                  long_factor=[1.0 + 1.3 * i for i in range(48)])),
}

NORM_EPS = 1e-6
#: Llama 4's attention temperature (floor_scale, attn_scale), its defaults:
#: positions up to MAX_POSITION scale q by up to log(17) * 0.1 + 1 = 1.28.
TEMPERATURE = (8192.0, 0.1)
MAX_POSITION = 131072


def compile_key(spec: dict, **options):
    """A hashable key for (spec, compile options)."""
    return (json.dumps(spec, sort_keys=True),
            tuple(sorted((k, v) for k, v in options.items() if v is not None)))


def layer_spec(*, dqk, dv, hq, hkv, gate="none", norm="none", rope="none",
               sliding_window=0, sinks=False, softmax_scale=None,
               logit_softcap=0.0, value_scale=1.0, dtype="bf16",
               attention_chunk=0) -> dict:
    """An attnc spec with one layer kind named LAYER."""
    kind = {"name": LAYER, "layers": [0], "num_q_heads": hq, "num_kv_heads": hkv,
            "qk_head_dim": dqk, "v_head_dim": dv, "gate": gate, "qk_norm": norm,
            "norm_eps": NORM_EPS, "sliding_window": sliding_window, "sinks": sinks,
            "logit_softcap": logit_softcap, "value_scale": value_scale}
    rope_params = rope_parameters(rope, dqk)
    if rope_params is None:
        kind["rope"] = {"style": "none"}
    else:
        style, rotary_dim, offset, theta, scaling = rope_params
        kind["rope"] = {"style": style, "rotary_dim": rotary_dim,
                        "rotary_offset": offset, "theta": theta}
        if scaling:
            kind["rope"]["scaling"] = dict(scaling)
    if softmax_scale is not None:
        kind["softmax_scale"] = softmax_scale
    if attention_chunk:
        kind["attention_chunk"] = attention_chunk
    return {"attnc_spec": 1, "model_type": "attnc_gpu_test", "dtype": dtype,
            "num_layers": 1, "max_position_embeddings": MAX_POSITION,
            "layer_kinds": [kind]}


def rope_parameters(name: str, dqk: int) -> Optional[Tuple[str, int, int, float, Optional[Dict]]]:
    """(style, rotary_dim, rotary_offset, theta, scaling) of a preset."""
    preset = ROPE[name]
    if preset is None:
        return None
    rotary_dim = dqk if preset["rotary_dim"] == "full" else preset["rotary_dim"]
    offset = dqk - rotary_dim if preset.get("offset") == "end" else 0
    return preset["style"], rotary_dim, offset, preset["theta"], preset.get("scaling")


def rope_valid(name: str, dqk: int) -> bool:
    preset = ROPE[name]
    if preset is None or preset["rotary_dim"] == "full":
        return True
    return preset["rotary_dim"] < dqk


# ---- preprocess ---------------------------------------------------------------------

class CacheDtypes:
    """The cache dtypes of a case with fields `dtype` (activations) and
    `cache` (same | fp8)."""

    @property
    def kv_dtype(self) -> Optional[str]:
        return "fp8" if self.cache == "fp8" else None

    @property
    def cache_dtype(self) -> str:
        return "fp8" if self.cache == "fp8" else self.dtype


@dataclass(frozen=True)
class PreprocessCase(CacheDtypes):
    dims: Tuple[int, int]
    heads: Tuple[int, int]
    norm: str          # none | rms | gemma
    rope: str          # a ROPE preset
    gate: str          # none | qkvg | interleaved | head_scalar
    dtype: str         # bf16 | fp16 (activations)
    cache: str         # same | fp8
    tokens: int
    block_size: int
    padding: Optional[bool] = None  # None: some padding slots when tokens > 1
    temperature: bool = False       # Llama 4's query temperature (TEMPERATURE)

    def spec(self) -> dict:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        spec = layer_spec(dqk=dqk, dv=dv, hq=hq, hkv=hkv, gate=self.gate,
                          norm=self.norm, rope=self.rope, dtype=self.dtype)
        if self.temperature:
            floor_scale, scale = TEMPERATURE
            spec["layer_kinds"][0]["query_temperature"] = {"floor_scale": floor_scale,
                                                           "scale": scale}
        return spec

    @property
    def compile_key(self):
        return compile_key(self.spec(), dtype=self.dtype, kv_dtype=self.kv_dtype,
                           block_size=self.block_size)

    def id(self) -> str:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        pad = "" if self.padding is None else ("-allpad" if self.padding else "-nopad")
        temperature = "-temperature" if self.temperature else ""
        return (f"d{dqk}x{dv}-h{hq}x{hkv}-{self.norm}-{self.rope}-g{self.gate}-"
                f"{self.dtype}-kv{self.cache_dtype}-t{self.tokens}-b{self.block_size}{pad}"
                f"{temperature}")


PREPROCESS_FACTORS = {
    "dims": DIMS,
    "rope": list(ROPE),
    "heads": HEADS,
    "norm": ["none", "rms", "gemma"],
    "gate": ["none", "qkvg", "interleaved"],
    "tokens": [1, 7, 300, 4096],
    "dtype": ["bf16", "fp16"],
    "cache": ["same", "fp8"],
    "block_size": [16, 64],
}


def _preprocess_valid(assignment) -> bool:
    if "dims" in assignment and "rope" in assignment:
        return rope_valid(assignment["rope"], assignment["dims"][0])
    return True


def preprocess_cases():
    cases = [PreprocessCase(**a) for a in pairwise(PREPROCESS_FACTORS, _preprocess_valid)]
    # Shapes of real models, and the edges the matrix may not reach.
    cases += [
        # Qwen3-Next full attention: gemma norm, 64 of 256 rotary, interleaved gate
        PreprocessCase((256, 256), (16, 2), "gemma", "partial", "interleaved", "bf16",
                       "same", 4096, 16),
        # DeepSeek-V3 MLA prefill (192/128, decompressed heads) with an fp8 cache
        PreprocessCase((192, 128), (64, 4), "none", "mla", "none", "bf16", "fp8",
                       4096, 64),
        # only padding: nothing may be written
        PreprocessCase((128, 128), (32, 4), "rms", "neox", "none", "bf16", "same",
                       7, 16, padding=True),
        PreprocessCase((2, 3), (8, 1), "gemma", "gptj", "qkvg", "fp16", "fp8", 1, 16,
                       padding=True),
        # no padding at all
        PreprocessCase((96, 64), (16, 2), "rms", "llama3", "qkvg", "fp16", "same",
                       300, 64, padding=False),
        # Phi-3-mini-128k heads (96/96, 32/32) with longrope
        PreprocessCase((96, 96), (32, 32), "none", "longrope", "none", "bf16", "same",
                       4096, 16),
        PreprocessCase((96, 64), (16, 2), "rms", "longrope", "head_scalar", "fp16",
                       "fp8", 300, 64),
        # Bailing: one gate value per query head
        PreprocessCase((192, 128), (16, 2), "none", "mla", "head_scalar", "bf16", "same",
                       4096, 64),
        PreprocessCase((2, 3), (8, 1), "gemma", "gptj", "head_scalar", "fp16", "same", 7, 16),
        # Llama 4: the query temperature on a NoPE layer (positions read for
        # it alone), and after rope and norm
        PreprocessCase((128, 128), (40, 8), "none", "none", "none", "bf16", "same", 4096, 16,
                       temperature=True),
        PreprocessCase((128, 128), (40, 8), "rms", "gptj", "none", "bf16", "fp8", 300, 64,
                       temperature=True),
        PreprocessCase((2, 3), (8, 1), "none", "none", "none", "fp16", "same", 7, 16,
                       padding=True, temperature=True),
    ]
    return cases


# ---- attention --------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionCase(CacheDtypes):
    dims: Tuple[int, int]
    heads: Tuple[int, int]
    dtype: str
    cache: str           # same | fp8
    block_size: int
    window: int          # 0: none
    sinks: bool
    gate: bool
    batch: str           # decode | prefill | mixed
    # none | softcap | value_scale | scale | chunk (attention_chunk 128) |
    # gate_scalar (with gate: one gate value per query head)
    extra: str = "none"
    # The compile target: sm_90a gives tiles of more than 16 rows wgmma where
    # the shape suits it (16-bit cache of the activation type, head dims
    # padded to 64, v <= 128); sm_90 keeps them on mma.sync (the form every
    # other arch runs), which the H200 runs as well.
    arch: str = "sm_90a"

    @property
    def softmax_scale(self) -> float:
        return 0.3 if self.extra == "scale" else self.dims[0] ** -0.5

    @property
    def logit_softcap(self) -> float:
        return 2.0 if self.extra == "softcap" else 0.0

    @property
    def value_scale(self) -> float:
        return 0.5 if self.extra == "value_scale" else 1.0

    @property
    def attention_chunk(self) -> int:
        return 128 if self.extra == "chunk" else 0

    @property
    def gate_layout(self) -> str:
        if not self.gate:
            return "none"
        return "head_scalar" if self.extra == "gate_scalar" else "qkvg"

    def spec(self) -> dict:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        return layer_spec(dqk=dqk, dv=dv, hq=hq, hkv=hkv,
                          gate=self.gate_layout, attention_chunk=self.attention_chunk,
                          sliding_window=self.window, sinks=self.sinks,
                          softmax_scale=0.3 if self.extra == "scale" else None,
                          logit_softcap=self.logit_softcap,
                          value_scale=self.value_scale, dtype=self.dtype)

    @property
    def compile_key(self):
        return compile_key(self.spec(), dtype=self.dtype, kv_dtype=self.kv_dtype,
                           block_size=self.block_size,
                           arch=None if self.arch == "sm_90a" else self.arch)

    def id(self) -> str:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        parts = [f"d{dqk}x{dv}", f"h{hq}x{hkv}", self.dtype, f"kv{self.cache_dtype}",
                 f"b{self.block_size}", self.batch]
        if self.arch != "sm_90a":
            parts.append(self.arch)
        if self.window:
            parts.append(f"w{self.window}")
        if self.sinks:
            parts.append("sinks")
        if self.gate:
            parts.append("gate")
        if self.extra != "none":
            parts.append(self.extra)
        return "-".join(parts)


ATTENTION_FACTORS = {
    "dims": DIMS,
    "heads": HEADS,
    "batch": ["decode", "prefill", "mixed"],
    "extra": ["none", "softcap", "value_scale", "scale"],
    "dtype": ["bf16", "fp16"],
    "cache": ["same", "fp8"],
    "block_size": [16, 64],
    "window": [0, 128],
    "sinks": [False, True],
    "gate": [False, True],
}

#: (q_len, kv_len) of each sequence of a batch kind. The pairwise matrix
#: uses the first three (contexts 1..2048); the others belong to the cases
#: below it.
BATCHES = {
    "decode": [(1, 1), (1, 17), (1, 300), (1, 1000), (1, 2048), (1, 64)],
    "prefill": [(1, 1), (33, 33), (700, 700), (2048, 2048)],
    # decode rows, chunked-prefill appends and fresh prefills in one batch
    "mixed": [(1, 2048), (64, 1500), (1, 1), (200, 200), (1, 16), (5, 5),
              (17, 130), (1, 129)],
    # long contexts, decode only: the automatic rule splits these across KV
    # (few sequences, long keys); 4097 and 16385 end one key into a page
    "long_decode": [(1, 32768), (1, 8192), (1, 4097), (1, 16385), (1, 1), (1, 300)],
    # long contexts mixed with a chunked-prefill append of 300 rows over
    # 32768 keys, a short append over 16385, and a fresh prefill
    "long_mixed": [(1, 32768), (300, 32768), (1, 8192), (1, 4097), (17, 16385),
                   (1, 1), (64, 64)],
    # sequences shorter than one split (split_kv_min_keys is 256) between
    # long ones: with a forced split count most of their splits are empty
    "split_short": [(1, 1), (1, 20000), (1, 5), (1, 64), (3, 64), (1, 4097),
                    (40, 9000), (1, 257), (5, 5)],
    # The splits of a launch are capped by (row blocks + sequences) * KV heads
    # * splits <= the workspace's capacity (2 * target_ctas), so forced
    # counts need batches with few row blocks.
    # A chunked-prefill append of 200 rows over 32768 keys with decode rows
    # (7 splits fit for 192/128 16/2, where the 300-row long_mixed takes 4)
    "split_append": [(1, 32768), (200, 32768), (1, 8192), (17, 16385), (1, 1)],
    # room for the most splits a kernel takes, over 32768 keys
    "split_few": [(1, 32768), (1, 1), (1, 5)],
    # speculative-decode rows: q_len 1..20 per sequence, so a KV group's
    # (token, head) rows (q_len * Hq / Hkv) cross the 16-row (one warp) and
    # 64/128-row (one tile) boundaries; contexts 137..1980
    "gqa_decode": [(q, 40 + 97 * q) for q in range(1, 21)],
    # prefills whose (token, head) rows per KV group are not a multiple of 64
    # for groups 8 and 16 (333 * 8 = 2664, 333 * 16 = 5328, 61 * 16 = 976)
    "gqa_prefill": [(333, 333), (61, 1000), (3, 3), (1, 1)],
    # causal mask edges: q_len == kv_len around one and two 64-row tiles
    "causal_edges": [(63, 63), (64, 64), (65, 65), (127, 127), (128, 128), (129, 129)],
    # The paged prefill kernel (prefill_cases): a long prefill (issue 17's
    # S 4096) beside short ones; chunked prefill of 1024 new tokens over 7168
    # cached (and a shorter chunk, sequence ends inside pages and tiles); a
    # varlen batch of 1..700 rows per sequence over 40 sequences, prefix
    # lengths varying.
    "long_prefill": [(4096, 4096), (1, 1), (129, 129), (1000, 1000)],
    "chunked_prefill": [(1024, 8192), (77, 5001), (1, 300), (300, 300)],
    "varlen_prefill": [(1 + (37 * s) % 700, 1 + (37 * s) % 700 + (101 * s) % 900)
                       for s in range(40)],
}

#: MiMo-like 192/128 heads, 16/2: bf16 cache with 64-token pages; the fp8
#: variant of the same; 128/128, 32/4 with 16-token pages; the same with a
#: window (longer than a split, so some splits see no key) and sinks.
LONG_192 = dict(dims=(192, 128), heads=(16, 2), dtype="bf16", block_size=64,
                window=0, sinks=False, gate=False)
LONG_128 = dict(dims=(128, 128), heads=(32, 4), dtype="bf16", block_size=16,
                window=0, sinks=False, gate=False)


def long_context_cases():
    """Contexts up to 32768 (split-KV territory) on the head shapes above."""
    return [
        AttentionCase(cache="same", batch="long_decode", **LONG_192),
        AttentionCase(cache="same", batch="long_mixed", **LONG_192),
        AttentionCase(cache="fp8", batch="long_mixed", **LONG_192),
        AttentionCase(cache="same", batch="long_decode", **LONG_128),
        AttentionCase(cache="same", batch="long_mixed", **LONG_128),
        AttentionCase(cache="same", batch="long_mixed",
                      **dict(LONG_128, window=1000, sinks=True)),
    ]


def feature_cases():
    """Chunked attention (Llama 4: a query sees its 128-key chunk only) and
    the per-head scalar gate (Bailing), on both forms of tiles (192/128 16/2
    bf16 takes wgmma on sm_90a, the fp8 cache mma.sync; 2x3 the CUDA-core
    form), over the batch kinds whose sequences cross chunk boundaries."""
    wg = dict(dims=(192, 128), heads=(16, 2), dtype="bf16", block_size=64,
              window=0, sinks=False)
    cases = []
    for batch in ("decode", "prefill", "mixed", "causal_edges"):
        cases.append(AttentionCase(cache="same", batch=batch, gate=False, extra="chunk", **wg))
    cases += [
        AttentionCase(cache="fp8", batch="mixed", gate=False, extra="chunk", **wg),
        AttentionCase(cache="same", batch="long_mixed", gate=False, extra="chunk", **wg),
        AttentionCase(dims=(128, 128), heads=(32, 4), dtype="bf16", cache="same",
                      block_size=16, window=1000, sinks=True, gate=False,
                      batch="long_mixed", extra="chunk"),
        AttentionCase(cache="same", batch="mixed", gate=True, extra="gate_scalar", **wg),
        AttentionCase(cache="fp8", batch="prefill", gate=True, extra="gate_scalar", **wg),
        AttentionCase(dims=(2, 3), heads=(8, 1), dtype="fp16", cache="same", block_size=16,
                      window=0, sinks=True, gate=True, batch="mixed", extra="gate_scalar"),
    ]
    return cases


def gqa_tile_cases():
    """GQA groups of 16 (64/4) and 8 (8/1, fp8 cache) with q_len 1..20 per
    sequence, and prefills whose row count per group is not a multiple of
    64. The configs are ones the matrix already compiles."""
    g16 = dict(dims=(128, 128), heads=(64, 4), dtype="bf16", cache="same",
               block_size=16, window=0, sinks=False, gate=False)
    g8 = dict(dims=(64, 64), heads=(8, 1), dtype="bf16", cache="fp8",
              block_size=64, window=0, sinks=False, gate=False)
    return [AttentionCase(batch=batch, **shape)
            for shape in (g16, g8) for batch in ("gqa_decode", "gqa_prefill")]


def causal_edge_cases():
    """q_len == kv_len at 63..129: one query row per tile row (1/1 heads),
    and a group of 8 (32/4, 16/2) where a 64-row tile holds 8 tokens."""
    return [
        AttentionCase((192, 128), (1, 1), "bf16", "same", 16, 0, False, False,
                      "causal_edges"),
        AttentionCase(cache="same", batch="causal_edges", **LONG_128),
        AttentionCase((2, 3), (1, 1), "bf16", "same", 16, 0, False, False, "causal_edges"),
        AttentionCase(cache="same", batch="causal_edges", **LONG_192),
    ]


def counting_cases():
    """Cases test_attention runs with counting batches (zero keys, +-1
    values: every key read exactly once shows exactly), at long contexts and
    on a GQA group of 16 with q_len 1..20."""
    return [
        AttentionCase(cache="same", batch="long_mixed", **LONG_192),
        AttentionCase(cache="fp8", batch="long_mixed", **LONG_192),
        AttentionCase(cache="same", batch="long_decode", **LONG_128),
        AttentionCase(cache="same", batch="long_mixed",
                      **dict(LONG_128, window=1000, sinks=True)),
        gqa_tile_cases()[0],
        # chunked attention: each row counts its own chunk's keys only
        feature_cases()[5],
    ]


def split_kv_cases():
    """Cases the split-KV tests force split counts on (test_split_kv.py):
    long contexts with an append, a long context with room for every split,
    short sequences between long ones, and the window with sinks (a sink
    counted once however many splits a row has)."""
    return [
        AttentionCase(cache="same", batch="split_append", **LONG_192),
        AttentionCase(cache="same", batch="split_few", **LONG_192),
        AttentionCase(cache="same", batch="split_short", **LONG_192),
        AttentionCase(cache="same", batch="split_short",
                      **dict(LONG_128, window=1000, sinks=True)),
    ]


def matrix_cases():
    """The pairwise matrix and the real models' shapes (batches decode,
    prefill, mixed: contexts 1..2048)."""
    cases = [AttentionCase(**a) for a in pairwise(ATTENTION_FACTORS, lambda a: True)]
    cases += [
        # gpt-oss: sinks, window 128, 64/4 heads of 64
        AttentionCase((64, 64), (64, 4), "bf16", "same", 16, 128, True, False, "mixed"),
        # MiMo-V2-Flash-like 192/128 with an fp8 cache and sinks
        AttentionCase((192, 128), (64, 4), "bf16", "fp8", 64, 128, True, False, "mixed"),
        # windows of 1 (only the diagonal) and 5
        AttentionCase((128, 128), (8, 1), "bf16", "same", 16, 1, False, False, "mixed"),
        AttentionCase((2, 3), (16, 2), "fp16", "fp8", 16, 5, True, True, "prefill"),
        # v_head_dim above 256: the CUDA-core form (no split-KV), with every
        # epilogue feature and an fp8 cache
        AttentionCase((320, 384), (8, 2), "bf16", "same", 16, 0, False, False, "mixed"),
        AttentionCase((384, 384), (4, 2), "fp16", "fp8", 64, 128, True, True, "mixed"),
    ]
    return cases


def mma_sync_cases():
    """Shapes whose tiles of more than 16 rows take wgmma on sm_90a, compiled
    for sm_90 so that their mma.sync form (what sm_80..sm_89 and sm_90 run)
    stays tested on the H200: prefill and mixed batches, both 16-bit types,
    every epilogue feature, GQA packing."""
    return [
        AttentionCase((192, 128), (16, 2), "bf16", "same", 64, 0, False, False, "prefill", arch="sm_90"),
        AttentionCase((192, 128), (16, 2), "fp16", "same", 16, 128, True, True, "mixed", arch="sm_90"),
        AttentionCase((128, 128), (32, 4), "bf16", "same", 16, 0, False, False, "mixed", "softcap", arch="sm_90"),
        AttentionCase((64, 64), (8, 8), "fp16", "same", 64, 0, True, False, "prefill", "value_scale", arch="sm_90"),
    ]


def tma_cases():
    """The wgmma form's TMA K/V loads beyond the matrix: pages of 64 (the
    smallest that takes TMA) on 64/64 heads and on 192/128 in fp16, and
    pages of 128 (boxes of 64 rows at row 0 or 64 of a page); sequence ends
    inside a page in every batch."""
    return [
        AttentionCase((64, 64), (12, 3), "bf16", "same", 64, 0, False, False, "prefill"),
        AttentionCase((192, 128), (16, 2), "fp16", "same", 64, 0, False, False, "mixed"),
        AttentionCase((128, 128), (32, 4), "bf16", "same", 128, 0, False, False, "mixed"),
    ]


def prefill_cases():
    """The warp-specialised paged prefill kernel (kind prefill_attention,
    sm_90a; test_attention.py's test_prefill_kernel launches it by name):
    GQA groups 1, 2, 4, 8 and 16 (one KV head), pages of 16 and 64, head
    dims 64/64 to 256/256 (80/48 padded at the tile), both 16-bit types,
    sinks, the gate (element-wise and per head), sliding window, chunked
    attention, soft-cap, value and softmax scales, over long, chunked,
    varlen and mixed prefill batches."""
    A = AttentionCase
    return [
        A((192, 128), (16, 2), "bf16", "same", 64, 0, False, False, "long_prefill"),
        A((192, 128), (16, 2), "bf16", "same", 16, 1000, True, True, "chunked_prefill"),
        A((128, 128), (32, 8), "bf16", "same", 16, 0, False, True, "mixed", "gate_scalar"),
        A((64, 64), (16, 16), "fp16", "same", 64, 0, False, False, "varlen_prefill", "softcap"),
        A((256, 256), (16, 1), "bf16", "same", 64, 0, True, False, "chunked_prefill"),
        A((80, 48), (12, 3), "bf16", "same", 16, 0, False, False, "prefill", "value_scale"),
        A((128, 128), (32, 4), "fp16", "same", 16, 128, False, False, "varlen_prefill", "chunk"),
        A((128, 128), (16, 8), "bf16", "same", 64, 0, True, True, "mixed", "scale"),
        A((192, 128), (16, 2), "fp16", "same", 16, 0, False, False, "causal_edges"),
        # 256/256 on pages of 16: block_n 80 (5 boxes a tile)
        A((256, 256), (16, 2), "bf16", "same", 16, 0, True, False, "mixed"),
    ]


def prefill_counting_cases():
    """Counting batches (every key read exactly once) on the prefill kernel:
    pages of 16 (a box per page, 8 a tile) and 64 over the chunked batch."""
    A = AttentionCase
    return [
        A((192, 128), (16, 2), "bf16", "same", 16, 0, False, False, "chunked_prefill"),
        A((256, 256), (16, 1), "bf16", "same", 64, 0, True, False, "chunked_prefill"),
        A((256, 256), (16, 2), "bf16", "same", 16, 0, False, False, "chunked_prefill"),
    ]


def attention_cases():
    """Every attention case test_attention.py runs: the matrix, long
    contexts, GQA tile shapes, causal edges, the mma.sync form on sm_90 and
    the prefill kernel's cases. The split-KV cases (split_kv_cases) use
    configs from these, so that the CPU compile check of every suite
    configuration (python/tests) covers them too."""
    return (matrix_cases() + long_context_cases() + gqa_tile_cases() + causal_edge_cases()
            + mma_sync_cases() + feature_cases() + tma_cases() + prefill_cases())
