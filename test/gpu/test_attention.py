"""The paged attention kernel against a float32 reference: varlen batches of
decode rows, chunked-prefill appends and fresh prefills (contexts 1..2048),
GQA, page sizes 16 and 64, sliding windows, sinks, soft-cap, value scale,
output gate, bf16/fp16/fp8 caches.

The cache is poisoned with 0xFF bytes (NaN in every cache dtype): slots past
each sequence's length, unreferenced blocks, and the block-table padding all
point at poison, so reading them shows up as NaN, or as a zeroed row (the
kernel maps a NaN softmax state to 0). Keys before every row's window hold
huge finite values, so attending to them shows up too. The output is
poisoned with NaN."""

from dataclasses import dataclass
from typing import List

import pytest

from attnc_gpu_cases import LAYER, AttentionCase, BATCHES, attention_cases
from attnc_gpu_reference import (assert_close, attention_reference, fp8_quantize,
                                 torch, torch_dtype)

CASES = attention_cases()
K_SCALE = 0.05
V_SCALE = 0.05


@dataclass
class Batch:
    query: "torch.Tensor"
    k_cache: "torch.Tensor"
    v_cache: "torch.Tensor"
    block_tables: "torch.Tensor"
    seq_lens: "torch.Tensor"
    query_start_loc: "torch.Tensor"
    keys: List["torch.Tensor"]     # per sequence, dequantised float32
    values: List["torch.Tensor"]
    queries: List["torch.Tensor"]


def _store(x, cache_dtype: str, scale: float):
    """What the cache holds for float32 x, and its dequantised value."""
    if cache_dtype == "fp8":
        stored = fp8_quantize(x, scale)
        return stored, stored.float() * scale
    stored = x.to(torch_dtype(cache_dtype))
    return stored, stored.float()


def make_batch(case: AttentionCase, generator, sequences=None) -> Batch:
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    sequences = sequences if sequences is not None else BATCHES[case.batch]
    window = case.window
    block_size = case.block_size
    dtype = torch_dtype(case.dtype)
    cache_dtype = case.cache_dtype
    blocks_per_seq = [-(-kv // block_size) for _, kv in sequences]
    trap = sum(blocks_per_seq)             # a poisoned block for table padding
    num_blocks = trap + 2                  # and one more that nobody uses
    order = torch.randperm(trap, device="cuda", generator=generator).to(torch.int32)
    max_blocks = max(blocks_per_seq) + 1
    block_tables = torch.full((len(sequences), max_blocks), trap, dtype=torch.int32,
                              device="cuda")
    item = torch.empty((), dtype=torch_dtype(cache_dtype)).element_size()
    k_cache = torch.full((num_blocks, block_size, hkv, dqk * item), 0xFF,
                         dtype=torch.uint8, device="cuda").view(torch_dtype(cache_dtype))
    v_cache = torch.full((num_blocks, block_size, hkv, dv * item), 0xFF,
                         dtype=torch.uint8, device="cuda").view(torch_dtype(cache_dtype))
    k_rows, v_rows = k_cache.view(-1, hkv, dqk), v_cache.view(-1, hkv, dv)
    keys, values = [], []
    used = 0
    for s, ((q_len, kv_len), n) in enumerate(zip(sequences, blocks_per_seq)):
        block_tables[s, :n] = order[used:used + n]
        used += n
        key = torch.arange(kv_len, device="cuda")
        slots = block_tables[s, key // block_size].long() * block_size + key % block_size
        k = torch.randn(kv_len, hkv, dqk, device="cuda", generator=generator)
        v = torch.randn(kv_len, hkv, dv, device="cuda", generator=generator)
        if window:
            # keys no row of this sequence may see: huge, so that using them
            # would swamp the softmax
            first_visible = kv_len - q_len - window + 1
            if first_visible > 0:
                k[:first_visible] *= 30.0
                v[:first_visible] = 1e3
        k_stored, k_float = _store(k, cache_dtype, K_SCALE)
        v_stored, v_float = _store(v, cache_dtype, V_SCALE)
        k_rows[slots] = k_stored
        v_rows[slots] = v_stored
        keys.append(k_float)
        values.append(v_float)
    q_lens = torch.tensor([q for q, _ in sequences], dtype=torch.int32, device="cuda")
    query_start_loc = torch.zeros(len(sequences) + 1, dtype=torch.int32, device="cuda")
    query_start_loc[1:] = torch.cumsum(q_lens, 0)
    seq_lens = torch.tensor([kv for _, kv in sequences], dtype=torch.int32, device="cuda")
    tokens = int(query_start_loc[-1])
    query = torch.randn(tokens, hq, dqk, device="cuda", generator=generator).to(dtype)
    bounds = query_start_loc.tolist()
    queries = [query[bounds[s]:bounds[s + 1]] for s in range(len(sequences))]
    return Batch(query, k_cache, v_cache, block_tables, seq_lens, query_start_loc,
                 keys, values, queries)


def run_case(models, case: AttentionCase, generator, *, sequences=None,
             before_launch=None, reference_overrides=None):
    """Launches the case on a poisoned output; returns (model, output,
    reference output). before_launch(batch) may alter what the kernel gets
    (negative controls); reference_overrides alter the reference."""
    model = models.get(case.compile_key)
    batch = make_batch(case, generator, sequences)
    if before_launch is not None:
        before_launch(batch)
    (_, dv), (hq, _) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    tokens = batch.query.shape[0]
    out = torch.full((tokens, hq, dv), float("nan"), dtype=dtype, device="cuda")
    kwargs = dict(k_cache=batch.k_cache, v_cache=batch.v_cache,
                  block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                  query_start_loc=batch.query_start_loc, out=out)
    sinks = gate = None
    if case.sinks:
        sinks = torch.randn(hq, device="cuda", generator=generator) * 2
        kwargs["sinks"] = sinks
    if case.gate:
        gate = torch.randn(tokens, hq, dv, device="cuda", generator=generator).to(dtype)
        kwargs["gate"] = gate
    if case.cache == "fp8":
        kwargs["k_scale"] = torch.tensor(K_SCALE, dtype=torch.float32, device="cuda")
        kwargs["v_scale"] = torch.tensor(V_SCALE, dtype=torch.float32, device="cuda")
    result = model.attention(LAYER, batch.query, **kwargs)
    torch.cuda.synchronize()
    assert result is out
    options = dict(softmax_scale=case.softmax_scale, sliding_window=case.window,
                   sinks=sinks, logit_softcap=case.logit_softcap,
                   value_scale=case.value_scale, gate=gate)
    options.update(reference_overrides or {})
    expected = attention_reference(batch.queries, batch.keys, batch.values, **options)
    return model, out, expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_attention(models, case, generator):
    model, out, expected = run_case(models, case, generator)
    assert_close("out", out, expected, case.dtype)
    # the scale the reference used is the one the model was compiled with
    kind = model.config["layer_kinds"][0]
    assert abs(kind["softmax_scale"] - case.softmax_scale) <= 1e-12 * case.softmax_scale


def test_attention_allocates_output(models, generator):
    case = AttentionCase((128, 128), (32, 4), "bf16", "same", 16, 0, False, False, "mixed")
    model = models.get(case.compile_key)
    batch = make_batch(case, generator)
    out = model.attention(LAYER, batch.query, k_cache=batch.k_cache, v_cache=batch.v_cache,
                          block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                          query_start_loc=batch.query_start_loc)
    torch.cuda.synchronize()
    assert out.shape == (batch.query.shape[0], 32, 128) and out.dtype == torch.bfloat16
    expected = attention_reference(batch.queries, batch.keys, batch.values,
                                   softmax_scale=128 ** -0.5)
    assert_close("out", out, expected, "bf16")


def test_empty_sequences_in_a_batch(models, generator):
    """A sequence with no new query rows (q_len 0) between others."""
    case = AttentionCase((64, 64), (8, 1), "bf16", "same", 16, 0, False, False, "mixed")
    model, out, expected = run_case(models, case, generator,
                                    sequences=[(3, 40), (0, 17), (1, 1), (0, 5), (9, 9)])
    assert_close("out", out, expected, "bf16")
