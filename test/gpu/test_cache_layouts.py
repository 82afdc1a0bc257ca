"""Engine cache layouts (issue 19, part 5): the fused preprocess writes, and
the paged attention reads, K and V caches that are strided views of an
engine's own allocation:

* contiguous: two [num_blocks, block_size, Hkv, D] tensors (the baseline);
* vllm: one [num_blocks, 2, block_size, Hkv, D] tensor, K = t[:, 0] and
  V = t[:, 1] (vLLM's FlashAttention backend; for qk_head_dim != v_head_dim
  D is the larger and V = t[:, 1, ..., :v_head_dim]);
* packed: K|V per token in one [num_blocks, block_size, Hkv, Dqk + Dv]
  tensor, K = t[..., :Dqk], V = t[..., Dqk:] (vLLM's qk != v backend);
* hnd: FlashInfer's HND pages [num_blocks, Hkv, block_size, D], passed as
  .transpose(1, 2) views.

Per case, one batch of decode rows, chunked-prefill appends and fresh
prefills (a 4097-key decode row: split-KV) is preprocessed into the layout's
views and attended over. Every allocation starts as 0xFF bytes (NaN in every
cache dtype) and the outputs as NaN. Checked: every byte of the allocations
that no written row covers is still poison (the other half, the padding
columns, unused slots); the written rows, q_out and the attention output
are bit-identical to the contiguous run's (NaN never equals); and the output
is within the activation dtype's tolerance of the float32 reference over
the cache's contents. Negative cases: views whose head dim is not
contiguous, or whose stride is not a multiple of 16 bytes, are refused with
an ArgumentError naming the cache."""

from dataclasses import dataclass
from typing import List, Tuple

import pytest

import attnc
from attnc_gpu_cases import LAYER, CacheDtypes, compile_key, layer_spec
from attnc_gpu_reference import (assert_close, assert_finite, attention_reference,
                                 fused_columns, torch, torch_dtype)

LAYOUTS = ["contiguous", "vllm", "packed", "hnd"]
K_SCALE = 0.05
V_SCALE = 0.05
#: (q_len, kv_len) per sequence: decode rows (one at 4097 keys: split-KV),
#: chunked-prefill appends and fresh prefills (tiles of more than 16 rows).
SEQUENCES = [(1, 1), (1, 300), (1, 4097), (17, 130), (200, 200), (1, 64), (5, 1000)]
PADDING_TOKENS = 5  # slot -1: written nowhere


@dataclass(frozen=True)
class LayoutCase(CacheDtypes):
    dims: Tuple[int, int]
    heads: Tuple[int, int]
    dtype: str
    cache: str        # same | fp8
    block_size: int
    norm: str         # none | rms
    rope: str         # none | neox
    layout: str

    def spec(self) -> dict:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        return layer_spec(dqk=dqk, dv=dv, hq=hq, hkv=hkv, norm=self.norm, rope=self.rope,
                          dtype=self.dtype)

    @property
    def compile_key(self):
        return compile_key(self.spec(), dtype=self.dtype, kv_dtype=self.kv_dtype,
                           block_size=self.block_size)

    def id(self) -> str:
        (dqk, dv), (hq, hkv) = self.dims, self.heads
        return (f"layout-{self.layout}-d{dqk}x{dv}-h{hq}x{hkv}-{self.dtype}-"
                f"kv{self.cache_dtype}-b{self.block_size}")


#: 128/128 and 192/128 (wgmma tiles), 192/128 with an fp8 cache (mma.sync),
#: and 320/384 (the CUDA-core form).
CONFIGS = [
    dict(dims=(128, 128), heads=(32, 4), dtype="bf16", cache="same", block_size=16,
         norm="rms", rope="neox"),
    dict(dims=(192, 128), heads=(16, 2), dtype="bf16", cache="same", block_size=64,
         norm="rms", rope="neox"),
    dict(dims=(192, 128), heads=(16, 2), dtype="bf16", cache="fp8", block_size=64,
         norm="rms", rope="neox"),
    dict(dims=(320, 384), heads=(8, 2), dtype="bf16", cache="same", block_size=16,
         norm="none", rope="none"),
]
CASES = [LayoutCase(layout=layout, **config) for config in CONFIGS for layout in LAYOUTS]


# ---- the layouts ------------------------------------------------------------------

def cache_views(layout: str, case: LayoutCase, num_blocks: int, fill: int):
    """(allocations, k_cache, v_cache): the layout's allocations (typed, every
    byte `fill`) and the [num_blocks, block_size, Hkv, D] views of K and V."""
    (dqk, dv), (_, hkv) = case.dims, case.heads
    bs = case.block_size
    dtype = torch_dtype(case.cache_dtype)
    item = torch.empty((), dtype=dtype).element_size()

    def alloc(*shape):
        raw = torch.full((*shape[:-1], shape[-1] * item), fill, dtype=torch.uint8,
                         device="cuda")
        return raw.view(dtype)

    if layout == "contiguous":
        k, v = alloc(num_blocks, bs, hkv, dqk), alloc(num_blocks, bs, hkv, dv)
        return [k, v], k, v
    if layout == "vllm":
        width = max(dqk, dv)
        t = alloc(num_blocks, 2, bs, hkv, width)
        return [t], t[:, 0, ..., :dqk], t[:, 1, ..., :dv]
    if layout == "packed":
        t = alloc(num_blocks, bs, hkv, dqk + dv)
        return [t], t[..., :dqk], t[..., dqk:]
    if layout == "hnd":
        k, v = alloc(num_blocks, hkv, bs, dqk), alloc(num_blocks, hkv, bs, dv)
        return [k, v], k.transpose(1, 2), v.transpose(1, 2)
    raise ValueError(layout)


def check_layout_strides(layout, k_cache, v_cache):
    """The views are what the layout says (a contiguous view would not test
    the strides)."""
    for view in (k_cache, v_cache):
        assert view.stride(-1) == 1
        assert view.is_contiguous() == (layout == "contiguous"), (layout, view.stride())


# ---- one batch ------------------------------------------------------------------------

@dataclass
class Batch:
    qkv: "torch.Tensor"
    positions: "torch.Tensor"
    slots: "torch.Tensor"        # [N] int64, -1 for padding
    blocks: "torch.Tensor"       # [written] block index of each written token
    offsets: "torch.Tensor"      # [written] offset within its block
    written: "torch.Tensor"      # [written] token index
    num_blocks: int
    block_tables: "torch.Tensor"
    seq_lens: "torch.Tensor"
    query_start_loc: "torch.Tensor"
    query_rows: "torch.Tensor"   # token index of each attention query row
    token_ranges: List[Tuple[int, int]]  # tokens of each sequence's keys
    weights: dict


def make_batch(case: LayoutCase, generator) -> Batch:
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    bs = case.block_size
    blocks_per_seq = [-(-kv // bs) for _, kv in SEQUENCES]
    trap = sum(blocks_per_seq)             # block-table padding: never written
    num_blocks = trap + 2                  # and one block nobody uses
    order = torch.randperm(trap, device="cuda", generator=generator).to(torch.int32)
    block_tables = torch.full((len(SEQUENCES), max(blocks_per_seq) + 1), trap,
                              dtype=torch.int32, device="cuda")
    slots, positions, query_rows, token_ranges = [], [], [], []
    used = token = 0
    for s, ((q_len, kv_len), n) in enumerate(zip(SEQUENCES, blocks_per_seq)):
        block_tables[s, :n] = order[used:used + n]
        used += n
        key = torch.arange(kv_len, device="cuda")
        slots.append(block_tables[s, key // bs].long() * bs + key % bs)
        positions.append(key)
        query_rows.append(token + kv_len - q_len + torch.arange(q_len, device="cuda"))
        token_ranges.append((token, token + kv_len))
        token += kv_len
    slots.append(torch.full((PADDING_TOKENS,), -1, dtype=torch.int64, device="cuda"))
    positions.append(torch.zeros(PADDING_TOKENS, dtype=torch.int64, device="cuda"))
    slots, positions = torch.cat(slots), torch.cat(positions)
    width = fused_columns(hq, hkv, dqk, dv, "none")[4]
    qkv = torch.randn(slots.numel(), width, device="cuda",
                      generator=generator).to(torch_dtype(case.dtype))
    weights = {}
    if case.norm != "none":
        for name in ("q_norm_weight", "k_norm_weight"):
            weights[name] = (1.0 + 0.2 * torch.randn(dqk, device="cuda", generator=generator)
                             ).to(torch_dtype(case.dtype))
    written = (slots >= 0).nonzero().flatten()
    q_lens = torch.tensor([q for q, _ in SEQUENCES], dtype=torch.int32, device="cuda")
    query_start_loc = torch.zeros(len(SEQUENCES) + 1, dtype=torch.int32, device="cuda")
    query_start_loc[1:] = torch.cumsum(q_lens, 0)
    return Batch(qkv=qkv, positions=positions, slots=slots,
                 blocks=slots[written] // bs, offsets=slots[written] % bs, written=written,
                 num_blocks=num_blocks, block_tables=block_tables,
                 seq_lens=torch.tensor([kv for _, kv in SEQUENCES], dtype=torch.int32,
                                       device="cuda"),
                 query_start_loc=query_start_loc, query_rows=torch.cat(query_rows),
                 token_ranges=token_ranges, weights=weights)


@dataclass
class Run:
    allocations: list
    k_cache: "torch.Tensor"
    v_cache: "torch.Tensor"
    q_out: "torch.Tensor"
    out: "torch.Tensor"


def scales(case: LayoutCase) -> dict:
    if case.cache != "fp8":
        return {}
    return dict(k_scale=torch.tensor(K_SCALE, dtype=torch.float32, device="cuda"),
                v_scale=torch.tensor(V_SCALE, dtype=torch.float32, device="cuda"))


def run_layout(model, case: LayoutCase, layout: str, batch: Batch) -> Run:
    """Preprocess into the layout's poisoned views, then attention over them
    into a NaN-poisoned output."""
    (dqk, dv), (hq, _) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    allocations, k_cache, v_cache = cache_views(layout, case, batch.num_blocks, 0xFF)
    check_layout_strides(layout, k_cache, v_cache)
    q_out = torch.full((batch.qkv.shape[0], hq, dqk), float("nan"), dtype=dtype,
                       device="cuda")
    extra = dict(batch.weights, **scales(case))
    if case.rope != "none":
        extra["positions"] = batch.positions
    model.preprocess(LAYER, batch.qkv, slot_mapping=batch.slots, k_cache=k_cache,
                     v_cache=v_cache, q_out=q_out, **extra)
    query = q_out[batch.query_rows]
    out = torch.full((query.shape[0], hq, dv), float("nan"), dtype=dtype, device="cuda")
    result = model.attention(LAYER, query, k_cache=k_cache, v_cache=v_cache,
                             block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                             query_start_loc=batch.query_start_loc, out=out, **scales(case))
    torch.cuda.synchronize()
    assert result is out
    return Run(allocations, k_cache, v_cache, q_out, out)


def written_rows(run: Run, batch: Batch):
    """[written tokens, Hkv, D] rows of K and V, gathered through the views."""
    return (run.k_cache[batch.blocks, batch.offsets],
            run.v_cache[batch.blocks, batch.offsets])


def assert_only_rows_written(case: LayoutCase, layout: str, run: Run, batch: Batch):
    """Every byte of the layout's allocations outside the written rows still
    holds the 0xFF poison: markers set through the same views on zeroed
    copies of the allocations say which bytes the rows cover."""
    markers, k_marker, v_marker = cache_views(layout, case, batch.num_blocks, 0)
    k_marker[batch.blocks, batch.offsets] = 1  # nonzero bytes in every cache dtype
    v_marker[batch.blocks, batch.offsets] = 1
    for i, (allocation, marker) in enumerate(zip(run.allocations, markers)):
        raw, covered = allocation.view(torch.uint8), marker.view(torch.uint8) != 0
        outside = raw[~covered]
        assert outside.numel() > 0
        if not bool((outside == 0xFF).all()):
            raise AssertionError(f"{layout}: allocation {i}: {int((outside != 0xFF).sum())} "
                                 f"bytes outside the written rows were overwritten")


def assert_bits_equal(name: str, got, want):
    assert_finite(name, got)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if not torch.equal(got.contiguous().view(torch.uint8), want.contiguous().view(torch.uint8)):
        raise AssertionError(f"{name}: not bit-identical to the contiguous layout's")


def reference_of(case: LayoutCase, run: Run, batch: Batch):
    """The float32 attention over what the cache holds (dequantised)."""
    k_rows, v_rows = written_rows(run, batch)
    k_scale, v_scale = (K_SCALE, V_SCALE) if case.cache == "fp8" else (1.0, 1.0)
    # written rows are in token order; padding tokens come last
    keys = [k_rows[a:b].float() * k_scale for a, b in batch.token_ranges]
    values = [v_rows[a:b].float() * v_scale for a, b in batch.token_ranges]
    bounds = batch.query_start_loc.tolist()
    queries = [run.q_out[batch.query_rows[bounds[s]:bounds[s + 1]]]
               for s in range(len(SEQUENCES))]
    return attention_reference(queries, keys, values, softmax_scale=case.dims[0] ** -0.5,
                               with_magnitude=True)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_cache_layout(models, case, generator):
    model = models.get(case.compile_key)
    batch = make_batch(case, generator)
    baseline = run_layout(model, case, "contiguous", batch)
    run = baseline if case.layout == "contiguous" else run_layout(model, case, case.layout,
                                                                  batch)
    assert_only_rows_written(case, case.layout, run, batch)
    if run is not baseline:
        for name, got, want in zip(("k_cache", "v_cache"), written_rows(run, batch),
                                   written_rows(baseline, batch)):
            assert_bits_equal(name, got, want)
        assert_bits_equal("q_out", run.q_out, baseline.q_out)
        assert_bits_equal("out", run.out, baseline.out)
    assert_close("out", run.out, reference_of(case, run, batch), case.dtype)


# ---- refused views ----------------------------------------------------------------------

NEGATIVE = CASES[0]  # 128/128, bf16, 16-token blocks


def _negative_arguments(models, generator):
    model = models.get(NEGATIVE.compile_key)
    batch = make_batch(NEGATIVE, generator)
    _, k_cache, v_cache = cache_views("contiguous", NEGATIVE, batch.num_blocks, 0xFF)
    return model, batch, k_cache, v_cache


def _expect_refused(model, batch, kind, name, **caches):
    (dqk, _), (hq, _) = NEGATIVE.dims, NEGATIVE.heads
    with pytest.raises(attnc.ArgumentError) as info:
        if kind == "preprocess":
            model.preprocess(LAYER, batch.qkv, slot_mapping=batch.slots,
                             positions=batch.positions, **batch.weights, **caches)
        else:
            query = torch.zeros(int(batch.query_start_loc[-1]), hq, dqk,
                                dtype=torch.bfloat16, device="cuda")
            model.attention(LAYER, query, block_tables=batch.block_tables,
                            seq_lens=batch.seq_lens, query_start_loc=batch.query_start_loc,
                            **caches)
    assert info.value.argument == name, str(info.value)
    return info.value.rule


@pytest.mark.parametrize("kind", ["preprocess", "attention"])
def test_layout_refuses_a_strided_head_dim(models, generator, kind):
    model, batch, k_cache, v_cache = _negative_arguments(models, generator)
    (dqk, _), (_, hkv) = NEGATIVE.dims, NEGATIVE.heads
    # every other element of a twice as wide row: innermost stride 2
    wide = torch.zeros(batch.num_blocks, NEGATIVE.block_size, hkv, 2 * dqk,
                       dtype=torch.bfloat16, device="cuda")
    rule = _expect_refused(model, batch, kind, "k_cache", k_cache=wide[..., ::2],
                           v_cache=v_cache)
    assert rule.startswith("the innermost dim must be contiguous (stride 1)"), rule
    # the same head dim transposed with the block size
    hnd_wrong = torch.zeros(batch.num_blocks, NEGATIVE.block_size, dqk, hkv,
                            dtype=torch.bfloat16, device="cuda").transpose(2, 3)
    rule = _expect_refused(model, batch, kind, "v_cache", k_cache=k_cache,
                           v_cache=hnd_wrong)
    assert rule.startswith("the innermost dim must be contiguous"), rule


@pytest.mark.parametrize("kind", ["preprocess", "attention"])
def test_layout_refuses_a_misaligned_stride(models, generator, kind):
    model, batch, k_cache, v_cache = _negative_arguments(models, generator)
    (_, dv), (_, hkv) = NEGATIVE.dims, NEGATIVE.heads
    # rows dv + 4 elements apart: 264 bytes, not a multiple of 16
    padded = torch.zeros(batch.num_blocks, NEGATIVE.block_size, hkv, dv + 4,
                         dtype=torch.bfloat16, device="cuda")
    rule = _expect_refused(model, batch, kind, "v_cache", k_cache=k_cache,
                           v_cache=padded[..., :dv])
    assert rule.startswith(f"stride of dim 2 (v_cache_head_stride) is {dv + 4} elements = "
                           f"{2 * (dv + 4)} bytes, not a multiple of 16 bytes"), rule
