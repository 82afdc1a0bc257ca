"""varlen_attention on the GPU: attention over ragged contiguous K/V
(cu_seqlens_q / cu_seqlens_k), against a float64 reference per sequence.

Kernels come from hand-written attn IR (attnc.compile_ir): sm_90a (the
warp-specialised kernel, schedule mma "wgmma_ws": a TMA producer warpgroup
and two wgmma consumer warpgroups, for every layer here since their head
dims are multiples of 8 with v_dim_padded <= 256) and sm_90 (mma.sync
everywhere). Batches: one long prefill, 1..16 sequences of
1..~2000 rows (length-1 sequences included), chunked prefill (a chunk of
new rows after cached keys: Tq < Tk, causal aligned bottom-right), decode
rows, non-causal layers, GQA groups 1/4/16, strided key/value views (k =
[k_nope | k_pe] assembled in a wider buffer, v the second half of
kv_b_proj's output), bf16 and fp16. Outputs are NaN-poisoned first; NaN
never passes (attnc_gpu_reference.assert_close).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import pytest

from attnc_gpu_reference import AttentionExpected, assert_close, torch_dtype

try:
    import torch
except ImportError:  # collected (and skipped) without torch
    torch = None


@dataclass(frozen=True)
class Layer:
    dtype: str
    hq: int
    hkv: int
    dqk: int
    dv: int
    causal: bool = True
    arch: str = "sm_90a"
    # attn-specialize's warp-specialised schedule with persistent blocks,
    # written in the IR (attn.keep_schedule)
    persistent: bool = False

    @property
    def scale(self) -> float:
        return self.dqk ** -0.5

    @property
    def name(self) -> str:
        return (f"{self.dtype}_h{self.hq}_{self.hkv}_d{self.dqk}_{self.dv}"
                f"{'' if self.causal else '_noncausal'}_{self.arch}"
                f"{'_persistent' if self.persistent else ''}")

    def persistent_schedule(self) -> str:
        """The schedule attn-specialize gives (block_n 176 at 128/128, 80 at
        256/256, else 128 where two stages fit, else 64), persistent."""
        pad = lambda d: -(-d // 64) * 64  # noqa: E731
        qk, v = pad(self.dqk), pad(self.dv)
        fits = lambda n: 2 * 64 * qk * 2 + 2 * n * (qk + v) * 2 + 256 <= 227 * 1024  # noqa: E731
        block_n = {(128, 128): 176, (256, 256): 80}.get((qk, v)) or (128 if fits(128) else 64)
        group = self.hq // self.hkv
        pack = max(d for d in range(1, min(group, 128) + 1) if group % d == 0)
        return (f"#attn.attention_schedule<block_m = 128, block_n = {block_n}, num_warps = 12, "
                f"pipeline_stages = 2, qk_dim_padded = {qk}, v_dim_padded = {v}, gqa_pack = {pack}, "
                f"split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, "
                f'mma = "wgmma_ws", persistent = true>')

    def ir(self) -> str:
        t = {"bf16": "bf16", "fp16": "f16"}[self.dtype]
        q = f"tensor<?x{self.hq}x{self.dqk}x{t}>"
        k = f"tensor<?x{self.hkv}x{self.dqk}x{t}>"
        v = f"tensor<?x{self.hkv}x{self.dv}x{t}>"
        o = f"tensor<?x{self.hq}x{self.dv}x{t}>"
        causal = "" if self.causal else ", causal = false"
        if self.persistent:
            causal += f", attn.keep_schedule, schedule = {self.persistent_schedule()}"
        return f"""
func.func @varlen(%q: {q}, %k: {k}, %v: {v}, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> {o} {{
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {{softmax_scale = {self.scale!r} : f64{causal}}}
      : {q}, {k}, {v}, tensor<?xi32>, tensor<?xi32> -> {o}
  return %o : {o}
}}
"""


@dataclass(frozen=True)
class Batch:
    name: str
    q_lens: Sequence[int]
    k_lens: Sequence[int]   # >= q_lens for causal chunks; any for non-causal
    views: bool = False     # key/value as strided views of wider buffers


MLA = Layer("bf16", 16, 16, 192, 128)

LAYERS = [
    MLA,
    Layer("fp16", 16, 16, 192, 128),
    Layer("bf16", 16, 16, 192, 128, causal=False),
    Layer("bf16", 16, 4, 128, 128),          # group 4
    Layer("fp16", 16, 1, 64, 64),            # group 16
    Layer("bf16", 8, 8, 64, 64, causal=False),
    Layer("bf16", 16, 2, 256, 256),          # block_n 80 (2 stages of 128 do not fit)
    Layer("bf16", 12, 3, 80, 48),            # dims padded to 128/64 at the tile
    # persistent blocks (one an SM, striding over row tiles x KV head packs)
    Layer("bf16", 16, 16, 192, 128, persistent=True),
    Layer("bf16", 16, 4, 128, 128, persistent=True),
    Layer("bf16", 16, 2, 256, 256, persistent=True),
    Layer("bf16", 12, 3, 80, 48, causal=False, persistent=True),
    Layer("bf16", 16, 16, 192, 128, arch="sm_90"),   # mma.sync tiles
    Layer("fp16", 16, 4, 128, 128, causal=False, arch="sm_90"),
]


def _lengths(seed: int, count: int, low: int, high: int) -> List[int]:
    import random
    rng = random.Random(seed)
    return [rng.randint(low, high) for _ in range(count)]


_VARLEN_Q = [1] + _lengths(1, 13, 2, 300) + [1, 129]
_CHUNK_Q = [1, 17, 300, 64, 1, 200]
_CHUNK_CACHED = [0, 100, 700, 1, 1000, 63]

BATCHES = [
    Batch("prefill_2000", [2000], [2000]),
    Batch("one_row", [1], [1]),
    Batch("varlen_16", _VARLEN_Q, _VARLEN_Q),
    Batch("chunked", _CHUNK_Q, [q + c for q, c in zip(_CHUNK_Q, _CHUNK_CACHED)]),
    Batch("decode_rows", [1, 1, 3, 1], [513, 64, 1000, 1]),
    Batch("views", [5, 150, 1], [90, 150, 40], views=True),
    Batch("varlen_64", _lengths(2, 64, 1, 200), _lengths(2, 64, 1, 200)),
]


def cases():
    for layer in LAYERS:
        for batch in BATCHES:
            # the long prefill on the MLA layouts only (its reference is the
            # slowest part of the suite)
            if batch.name in ("prefill_2000", "varlen_64") and layer.dqk != 192:
                continue
            yield pytest.param(layer, batch, id=f"{layer.name}-{batch.name}")


_models = {}


def model_for(context, layer: Layer):
    import attnc
    if layer not in _models:
        _models[layer] = attnc.compile_ir(layer.ir(), arch=layer.arch, context=context)
    return _models[layer]


def reference(q, k, v, cu_q: List[int], cu_k: List[int], layer: Layer) -> AttentionExpected:
    """float64 attention per sequence; a row that sees no key is 0. Returns
    the output and its magnitude sqrt(sum_j w_j^2 v_j^2) (assert_close's
    allowance for softmax weights rounded to 16 bits)."""
    group = layer.hq // layer.hkv
    outs, mags = [], []
    for s in range(len(cu_q) - 1):
        qs = q[cu_q[s]:cu_q[s + 1]].double()
        ks = k[cu_k[s]:cu_k[s + 1]].double().repeat_interleave(group, dim=1)
        vs = v[cu_k[s]:cu_k[s + 1]].double().repeat_interleave(group, dim=1)
        n, m = qs.shape[0], ks.shape[0]
        if n == 0:
            continue
        scores = torch.einsum("qhd,khd->hqk", qs, ks) * layer.scale
        if layer.causal:
            position = m - n + torch.arange(n, device=q.device)
            allowed = torch.arange(m, device=q.device)[None, :] <= position[:, None]
            scores = scores.masked_fill(~allowed[None], float("-inf"))
        row_max = scores.amax(dim=-1, keepdim=True)
        row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
        p = torch.exp(scores - row_max)
        denominator = p.sum(dim=-1, keepdim=True)
        seen = denominator > 0
        denominator = torch.where(seen, denominator, torch.ones_like(denominator))
        w = p / denominator
        outs.append(torch.einsum("hqk,khd->qhd", w, vs))
        mags.append(torch.einsum("hqk,khd->qhd", w * w, vs * vs).sqrt())
    return AttentionExpected(out=torch.cat(outs).float(), magnitude=torch.cat(mags).float())


def make_inputs(layer: Layer, batch: Batch, generator):
    dtype = torch_dtype(layer.dtype)
    tq, tk = sum(batch.q_lens), sum(batch.k_lens)

    def rand(*shape):
        return torch.randn(*shape, generator=generator, device="cuda").to(dtype)

    if batch.views:
        # a query view too (rows of a wider per-head allocation)
        q = rand(tq, layer.hq, layer.dqk + 64)[..., :layer.dqk]
    else:
        q = rand(tq, layer.hq, layer.dqk)
    if batch.views:
        # k inside [Tk, Hkv, Dqk + 64] rows (MLA's [k_nope | k_pe] assembled
        # in a wider buffer), v the second half of [Tk, Hkv, Dv + Dv]
        # (kv_b_proj's [k_nope | v] output when nope = v)
        k = rand(tk, layer.hkv, layer.dqk + 64)[..., :layer.dqk]
        v = rand(tk, layer.hkv, 2 * layer.dv)[..., layer.dv:]
        assert not k.is_contiguous() and not v.is_contiguous()
    else:
        k = rand(tk, layer.hkv, layer.dqk)
        v = rand(tk, layer.hkv, layer.dv)
    cu_q = [0]
    for n in batch.q_lens:
        cu_q.append(cu_q[-1] + n)
    cu_k = [0]
    for n in batch.k_lens:
        cu_k.append(cu_k[-1] + n)
    return q, k, v, cu_q, cu_k


@pytest.mark.parametrize("layer,batch", list(cases()))
def test_varlen_attention(attnc_context, generator, layer, batch):
    model = model_for(attnc_context, layer)
    q, k, v, cu_q, cu_k = make_inputs(layer, batch, generator)
    cu_q_t = torch.tensor(cu_q, dtype=torch.int32, device="cuda")
    cu_k_t = torch.tensor(cu_k, dtype=torch.int32, device="cuda")
    out = torch.full((q.shape[0], layer.hq, layer.dv), float("nan"),
                     dtype=q.dtype, device="cuda")
    result = model.varlen_attention("varlen", q, k, v, cu_seqlens_q=cu_q_t,
                                    cu_seqlens_k=cu_k_t, out=out)
    assert result is out
    torch.cuda.synchronize()
    expected = reference(q, k, v, cu_q, cu_k, layer)
    assert_close(f"{layer.name} {batch.name}", out, expected, layer.dtype)


#: The MLA layer on sm_90: the mma.sync tiles, which split the keys (the
#: sm_90a warp-specialised form computes a row tile's keys in one block).
MLA_SM90 = Layer("bf16", 16, 16, 192, 128, arch="sm_90")


def test_split_counts_agree(attnc_context, generator):
    """Every split count gives the same attention (the split merge): 1, the
    rule's (8: busy = 2 sequences x 16 heads, 264 / 32), 3, and the most the
    workspace takes for this batch (grid x 1 + 2 = 3, y 16: 3 x 16 x 11 <=
    2 x 264)."""
    MLA = MLA_SM90
    model = model_for(attnc_context, MLA)
    batch = Batch("chunked", [3, 40], [900, 1500])
    q, k, v, cu_q, cu_k = make_inputs(MLA, batch, generator)
    cu_q_t = torch.tensor(cu_q, dtype=torch.int32, device="cuda")
    cu_k_t = torch.tensor(cu_k, dtype=torch.int32, device="cuda")
    expected = reference(q, k, v, cu_q, cu_k, MLA)
    for splits in (1, None, 3, 11):
        out = torch.full((q.shape[0], MLA.hq, MLA.dv), float("nan"), dtype=q.dtype,
                         device="cuda")
        model.varlen_attention("varlen", q, k, v, cu_seqlens_q=cu_q_t, cu_seqlens_k=cu_k_t,
                               out=out, num_kv_splits=splits)
        torch.cuda.synchronize()
        assert_close(f"num_kv_splits={splits}", out, expected, MLA.dtype)


def test_warp_specialised_form_has_no_splits(attnc_context, generator):
    """sm_90a 192/128: the warp-specialised schedule (mma "wgmma_ws",
    max_kv_splits 1). The split rule picks 1 and the result is right; an
    explicit count above 1 is refused by name before anything launches."""
    import attnc
    model = model_for(attnc_context, MLA)
    kernel = model.kernel("varlen", "varlen_attention")
    assert "mma=wgmma_ws" in kernel.source
    batch = Batch("chunked", [3, 40], [900, 1500])
    q, k, v, cu_q, cu_k = make_inputs(MLA, batch, generator)
    cu_q_t = torch.tensor(cu_q, dtype=torch.int32, device="cuda")
    cu_k_t = torch.tensor(cu_k, dtype=torch.int32, device="cuda")
    out = torch.full((q.shape[0], MLA.hq, MLA.dv), float("nan"), dtype=q.dtype, device="cuda")
    model.varlen_attention("varlen", q, k, v, cu_seqlens_q=cu_q_t, cu_seqlens_k=cu_k_t, out=out)
    torch.cuda.synchronize()
    assert_close("rule's split count", out, reference(q, k, v, cu_q, cu_k, MLA), MLA.dtype)
    poisoned = torch.full_like(out, float("nan"))
    with pytest.raises(attnc.ArgumentError, match="num_kv_splits"):
        model.varlen_attention("varlen", q, k, v, cu_seqlens_q=cu_q_t, cu_seqlens_k=cu_k_t,
                               out=poisoned, num_kv_splits=3)
    torch.cuda.synchronize()
    assert bool(torch.isnan(poisoned).all()), "a refused launch writes nothing"


def test_rows_without_keys_are_zero(attnc_context, generator):
    """Causal with fewer keys than query rows: the first rows see no key
    (position < 0) and are 0, the rest attend as usual."""
    model = model_for(attnc_context, MLA)
    batch = Batch("short_keys", [40], [10])
    q, k, v, cu_q, cu_k = make_inputs(MLA, batch, generator)
    out = torch.full((40, MLA.hq, MLA.dv), float("nan"), dtype=q.dtype, device="cuda")
    model.varlen_attention("varlen", q, k, v,
                           cu_seqlens_q=torch.tensor(cu_q, dtype=torch.int32, device="cuda"),
                           cu_seqlens_k=torch.tensor(cu_k, dtype=torch.int32, device="cuda"),
                           out=out)
    torch.cuda.synchronize()
    assert bool((out[:30] == 0).all()), "rows before the first key must be 0"
    assert_close("short_keys", out, reference(q, k, v, cu_q, cu_k, MLA), MLA.dtype)


def test_output_allocated(attnc_context, generator):
    model = model_for(attnc_context, MLA)
    batch = Batch("small", [7, 3], [7, 9])
    q, k, v, cu_q, cu_k = make_inputs(MLA, batch, generator)
    out = model.varlen_attention(
        "varlen", q, k, v, cu_seqlens_q=torch.tensor(cu_q, dtype=torch.int32, device="cuda"),
        cu_seqlens_k=torch.tensor(cu_k, dtype=torch.int32, device="cuda"))
    assert out.shape == (10, MLA.hq, MLA.dv) and out.dtype == q.dtype
    torch.cuda.synchronize()
    assert_close("allocated", out, reference(q, k, v, cu_q, cu_k, MLA), MLA.dtype)
