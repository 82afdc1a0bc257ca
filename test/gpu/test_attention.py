"""The paged attention kernel against a float32 reference, over varlen
batches of decode rows, chunked-prefill appends and fresh prefills:

* the pairwise matrix over head dims (2/3 to 256/256, 192/128 included), head
  counts (GQA groups 1 to 16), bf16/fp16 activations, bf16/fp16/fp8 caches,
  page sizes 16 and 64, sliding windows, sinks, soft-cap, value scale and
  the output gate, at contexts 1..2048 (batches decode, prefill, mixed);
* long contexts: decode rows at 4097, 8192, 16385 and 32768 keys, and a
  300-row chunked-prefill append over 32768 keys in the same batch as decode
  rows, on 192/128 16/2 (64-token pages; bf16 and fp8 caches) and 128/128
  32/4 (16-token pages; without, and with a 1000-key window and sinks):
  split-KV territory under the automatic split rule;
* GQA tile shapes: groups of 16 (64/4) and 8 (8/1) with q_len 1..20 per
  sequence, so that a group's (token, head) rows cross the 16- and 64-row
  boundaries, and prefills whose row count is not a multiple of 64;
* causal mask edges: q_len == kv_len at 63, 64, 65, 127, 128 and 129 in one
  batch, with and without GQA;
* counting batches: zero keys and +-1 values (counting_values), for which the
  output is exact up to its rounding, so that one key dropped or read twice
  anywhere in a 32768-key context fails (random data cannot show one key of
  thousands).

Forced split counts and the split-KV workspace are in test_split_kv.py.

On sm_90a a layer whose shape takes it also has the warp-specialised prefill
kernel (kind prefill_attention), which Model.attention launches for
prefill-heavy batches (Model.attention_kind): test_attention then runs the
decode-capable kernel on the same batch as well (kind="attention"), and
test_prefill_kernel launches the prefill kernel by name over its own cases
(prefill_cases: long, chunked, varlen and mixed prefills, GQA 1..16, pages
of 16 and 64, sinks, gate, window, chunked attention, soft-cap), with
counting batches in test_prefill_kernel_counts_every_key.

The cache is poisoned with 0xFF bytes (NaN in every cache dtype): slots past
each sequence's length, unreferenced blocks, and the block-table padding all
point at poison, so reading them shows up as NaN, or as a zeroed row (the
kernel maps a NaN softmax state to 0). Keys before every row's window hold
huge finite values, so attending to them shows up too. The output is
poisoned with NaN before every launch. The reference is computed per
sequence in float32, in chunks of query rows for long contexts; the bound
allows for softmax weights rounded to the activation dtype before P @ V
(attnc_gpu_reference.WEIGHT_ROUNDING)."""

from dataclasses import dataclass
from typing import List, Optional

import pytest

from attnc_gpu_cases import (LAYER, AttentionCase, BATCHES, attention_cases, counting_cases,
                             prefill_cases, prefill_counting_cases)
from attnc_gpu_reference import (AttentionExpected, assert_close, assert_finite,
                                 attention_reference, fp8_quantize, torch, torch_dtype)

PREFILL_CASES = prefill_cases()
CASES = [case for case in attention_cases() if case not in PREFILL_CASES]
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


def counting_values(kv_len: int, hkv: int, dv: int):
    """Values of the counting batches: v[j, h, d] = (-1)^(j >> (d % 16) + h),
    so that v[:, h, d] flips sign every 2^(d % 16) keys. With all keys zero
    every visible key has weight exactly 1 / count, and the output is a sum
    of +-1 over the visible keys (exact in fp32) over their count: dropping or
    repeating any run of keys changes some d by at least one key's share,
    far more than rounding."""
    j = torch.arange(kv_len, device="cuda")[:, None, None]
    h = torch.arange(hkv, device="cuda")[None, :, None]
    d = torch.arange(dv, device="cuda")[None, None, :] % 16
    return 1.0 - 2.0 * (((j >> d) + h) % 2).float()


def make_batch(case: AttentionCase, generator, sequences=None, *,
               counting: bool = False) -> Batch:
    """The case's batch in poisoned paged caches. counting: zero keys and
    counting_values (see there) instead of random ones."""
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
        if counting:
            k.zero_()
            v = counting_values(kv_len, hkv, dv)
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


@dataclass
class Prepared:
    """A case's batch and launch arguments, ready to launch (repeatedly) and
    to check."""
    model: object
    case: AttentionCase
    batch: Batch
    kwargs: dict
    sinks: Optional["torch.Tensor"]
    gate: Optional["torch.Tensor"]

    def launch(self, **extra) -> "torch.Tensor":
        """One launch into a fresh NaN-poisoned output (extra: more keywords
        of Model.attention, e.g. num_kv_splits, workspace)."""
        (_, dv), (hq, _) = self.case.dims, self.case.heads
        tokens = self.batch.query.shape[0]
        out = torch.full((tokens, hq, dv), float("nan"), dtype=torch_dtype(self.case.dtype),
                         device="cuda")
        result = self.model.attention(LAYER, self.batch.query, out=out, **self.kwargs, **extra)
        torch.cuda.synchronize()
        assert result is out
        return out

    def reference(self, **overrides) -> AttentionExpected:
        """The float32 reference and its magnitude (for assert_close)."""
        case = self.case
        options = dict(softmax_scale=case.softmax_scale, sliding_window=case.window,
                       attention_chunk=case.attention_chunk,
                       sinks=self.sinks, logit_softcap=case.logit_softcap,
                       value_scale=case.value_scale, gate=self.gate, with_magnitude=True)
        options.update(overrides)
        batch = self.batch
        return attention_reference(batch.queries, batch.keys, batch.values, **options)


def prepare(models, case: AttentionCase, generator, *, sequences=None,
            before_launch=None, counting: bool = False) -> Prepared:
    """The case's model, a poisoned batch (BATCHES[case.batch] unless
    `sequences` is given) and the launch keywords. before_launch(batch) may
    alter what the kernel gets (negative controls). counting: a counting
    batch (make_batch), with sinks of -30 (exp(-30) is below any rounding
    of the counts) where the model has sinks."""
    model = models.get(case.compile_key)
    batch = make_batch(case, generator, sequences, counting=counting)
    if before_launch is not None:
        before_launch(batch)
    (_, dv), (hq, _) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    tokens = batch.query.shape[0]
    kwargs = dict(k_cache=batch.k_cache, v_cache=batch.v_cache,
                  block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                  query_start_loc=batch.query_start_loc)
    sinks = gate = None
    if case.sinks:
        sinks = torch.randn(hq, device="cuda", generator=generator) * 2
        if counting:
            sinks = torch.full((hq,), -30.0, device="cuda")
        kwargs["sinks"] = sinks
    if case.gate:
        gate_width = 1 if case.gate_layout == "head_scalar" else dv
        gate = torch.randn(tokens, hq, gate_width, device="cuda",
                           generator=generator).to(dtype)
        kwargs["gate"] = gate
    if case.cache == "fp8":
        kwargs["k_scale"] = torch.tensor(K_SCALE, dtype=torch.float32, device="cuda")
        kwargs["v_scale"] = torch.tensor(V_SCALE, dtype=torch.float32, device="cuda")
    return Prepared(model, case, batch, kwargs, sinks, gate)


def assert_keys_counted(name: str, out, prepared: Prepared) -> None:
    """A counting batch's output (make_batch): each element within output
    rounding (2^-8 relative) plus a sixteenth of one key's share (1 / the
    row's visible keys) of the exact sum, so that one key dropped or read
    twice anywhere fails. NaN fails."""
    case, batch = prepared.case, prepared.batch
    assert_finite(name, out)
    expected = prepared.reference().out
    window = case.window
    share = []
    bounds = batch.query_start_loc.tolist()
    for s, kv_len in enumerate(batch.seq_lens.tolist()):
        q_len = bounds[s + 1] - bounds[s]
        visible = kv_len - q_len + 1 + torch.arange(q_len, device="cuda")
        if window:
            visible = visible.clamp(max=window)
        if case.attention_chunk:  # position p sees p % chunk + 1 keys
            position = kv_len - q_len + torch.arange(q_len, device="cuda")
            visible = torch.minimum(visible, position % case.attention_chunk + 1)
        share.append(1.0 / visible.float())
    share = torch.cat(share)[:, None, None] * case.value_scale
    diff = (out.float() - expected).abs()
    over = diff > 2.0 ** -8 * expected.abs() + share / 16
    if bool(over.any()):
        row, head, dim = (int(i) for i in over.nonzero()[0])
        s = max(i for i in range(len(bounds) - 1) if bounds[i] <= row)
        raise AssertionError(
            f"{name}: {int(over.sum())} of {over.numel()} elements miscount the keys; "
            f"first at row {row} (sequence {s}, kv_len {int(batch.seq_lens[s])}, "
            f"query {row - bounds[s]}), head {head}, dim {dim}: got "
            f"{float(out[row, head, dim])}, expected {float(expected[row, head, dim])} "
            f"(one key is {float(share[row]):.3e})")


def run_case(models, case: AttentionCase, generator, *, sequences=None,
             before_launch=None, reference_overrides=None):
    """Launches the case on a poisoned output; returns (model, output,
    reference: an AttentionExpected). before_launch(batch) may alter what the kernel gets
    (negative controls); reference_overrides alter the reference."""
    prepared = prepare(models, case, generator, sequences=sequences,
                       before_launch=before_launch)
    out = prepared.launch()
    expected = prepared.reference(**(reference_overrides or {}))
    return prepared.model, out, expected


def takes_prefill_kernel(prepared: Prepared) -> bool:
    """Whether Model.attention launches the prefill kernel for the batch."""
    batch = prepared.batch
    return prepared.model.attention_kind(LAYER, batch.query.shape[0],
                                         batch.seq_lens.shape[0]) == "prefill_attention"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_attention(models, case, generator):
    prepared = prepare(models, case, generator)
    out = prepared.launch()
    expected = prepared.reference()
    model = prepared.model
    assert_close("out", out, expected, case.dtype)
    if takes_prefill_kernel(prepared):
        # the rule took the prefill kernel: the decode-capable one too
        assert_close("out (kind attention)", prepared.launch(kind="attention"), expected,
                     case.dtype)
    # the scale the reference used is the one the model was compiled with
    kind = model.config["layer_kinds"][0]
    assert abs(kind["softmax_scale"] - case.softmax_scale) <= 1e-12 * case.softmax_scale


@pytest.mark.parametrize("case", PREFILL_CASES, ids=lambda c: c.id())
def test_prefill_kernel(models, case, generator):
    """The warp-specialised paged prefill kernel, launched by name into a
    NaN-poisoned output, against the float32 reference; the rule takes it
    for these prefill batches."""
    prepared = prepare(models, case, generator)
    assert prepared.model.has_prefill_attention(LAYER), case.id()
    assert prepared.model.kernel(LAYER, "prefill_attention").abi["block"] == [384, 1, 1]
    # every case's batch is prefill-heavy: tokens x gqa_pack >= 64 x sequences
    assert takes_prefill_kernel(prepared)
    out = prepared.launch(kind="prefill_attention")
    assert_close("out", out, prepared.reference(), case.dtype)


@pytest.mark.parametrize("case", prefill_counting_cases(), ids=lambda c: c.id())
def test_prefill_kernel_counts_every_key(models, case, generator):
    """Counting batches on the prefill kernel: a key dropped or read twice
    at a page box, tile or sequence edge fails."""
    prepared = prepare(models, case, generator, counting=True)
    assert_keys_counted("out", prepared.launch(kind="prefill_attention"), prepared)


@pytest.mark.parametrize("case", counting_cases(), ids=lambda c: c.id())
def test_every_key_counted_once(models, case, generator):
    """Zero keys and +-1 values: the output is exact up to its rounding, so
    a key dropped or read twice (at a page, tile or split edge, or the end
    of a 32768-key context) fails."""
    prepared = prepare(models, case, generator, counting=True)
    assert_keys_counted("out", prepared.launch(), prepared)


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
                                   softmax_scale=128 ** -0.5, with_magnitude=True)
    assert_close("out", out, expected, "bf16")


def test_empty_sequences_in_a_batch(models, generator):
    """A sequence with no new query rows (q_len 0) between others."""
    case = AttentionCase((64, 64), (8, 1), "bf16", "same", 16, 0, False, False, "mixed")
    model, out, expected = run_case(models, case, generator,
                                    sequences=[(3, 40), (0, 17), (1, 1), (0, 5), (9, 9)])
    assert_close("out", out, expected, "bf16")


@pytest.mark.parametrize("count", [512, 513, 700])
def test_many_sequences(models, generator, count):
    """Batches of up to 4 x 128 sequences find each tile's sequence in one
    parallel pass, larger ones by a binary search: both sides of the
    threshold, with empty and multi-row sequences among the decode rows."""
    case = AttentionCase((192, 128), (16, 2), "bf16", "same", 16, 0, True, False, "mixed")
    sequences = [(1, 1 + (7 * s) % 61) for s in range(count)]
    sequences[3] = (0, 9)
    sequences[count // 2] = (40, 70)
    sequences[-1] = (17, 33)
    model, out, expected = run_case(models, case, generator, sequences=sequences)
    assert_close("out", out, expected, "bf16")
