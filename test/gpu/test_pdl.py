"""Programmatic dependent launch on a GPU: a decode step of several layers
(preprocess -> paged attention per layer, each layer its own caches, one
q_out buffer shared by all layers as engines share it) launched with PDL
(the default) and without (attnc.Context(disable_pdl=True)), eagerly and as
one CUDA graph. Both give the same bits, and match a float32 reference; the
outputs are poisoned (NaN) before every run.

What a missing or misplaced griddepcontrol.wait would break here: layer l's
attention reading q_out or its cache's new row before layer l's preprocess
wrote them (read after write), and layer l+1's preprocess overwriting the
shared q_out while layer l's attention still reads it (write after read).
The MLA decode step (mla_preprocess -> latent_attention, deepseek-v3 at TP
8) is checked the same way over test_mla_engine_path.py's DecodeStep."""

import os
import re
from pathlib import Path

import pytest

import attnc
from attnc_gpu_cases import LAYER, layer_spec
from attnc_gpu_reference import (assert_close, attention_reference, fused_columns,
                                 paged_sequences, torch)

NUM_LAYERS = 4
BLOCK_SIZE = 16
#: keys per sequence after the step (the step's token is each one's last)
KEY_COUNTS = [1, 300, 2049, 64, 1000, 17]

CASES = [  # (qk_head_dim, v_head_dim, q heads, kv heads)
    (128, 128, 32, 8),   # llama-3.1-8b
    (192, 128, 16, 2),   # the wgmma 192/128 form
]


def _case_id(case):
    dqk, dv, hq, hkv = case
    return f"{dqk}x{dv}-h{hq}-{hkv}"


@pytest.fixture(scope="module")
def contexts(tmp_path_factory):
    cache_dir = os.environ.get("ATTNC_CACHE_DIR") or str(tmp_path_factory.mktemp("attnc-pdl"))
    return {True: attnc.Context(cache_dir=cache_dir),
            False: attnc.Context(cache_dir=cache_dir, disable_pdl=True)}


class _Layer:
    """One layer's step inputs and its cache before the step."""

    def __init__(self, case, g):
        dqk, dv, hq, hkv = case
        self.q_cols, self.k_cols, self.v_cols, _, width = fused_columns(hq, hkv, dqk, dv, "none")
        tables, _, slots, num_blocks = paged_sequences(KEY_COUNTS, BLOCK_SIZE, g)
        self.tables = tables
        ends = torch.tensor(KEY_COUNTS, device="cuda").cumsum(0) - 1
        self.slots = slots[ends].contiguous()  # the step's token: each sequence's last
        self.all_slots = slots
        bf16 = torch.bfloat16
        self.k_cache0 = torch.randn(num_blocks, BLOCK_SIZE, hkv, dqk, device="cuda",
                                    generator=g).to(bf16)
        self.v_cache0 = torch.randn(num_blocks, BLOCK_SIZE, hkv, dv, device="cuda",
                                    generator=g).to(bf16)
        self.qkv = torch.randn(len(KEY_COUNTS), width, device="cuda", generator=g).to(bf16)
        self.k_cache = self.k_cache0.clone()
        self.v_cache = self.v_cache0.clone()

    def reset(self):
        self.k_cache.copy_(self.k_cache0)
        self.v_cache.copy_(self.v_cache0)

    def expected(self, case):
        """(k_cache, v_cache) after the step, and the float32 attention."""
        dqk, dv, hq, hkv = case
        cols = lambda c: torch.as_tensor(c.reshape(-1), device="cuda")  # noqa: E731
        q = self.qkv[:, cols(self.q_cols)].view(-1, hq, dqk)
        k_new = self.qkv[:, cols(self.k_cols)].view(-1, hkv, dqk)
        v_new = self.qkv[:, cols(self.v_cols)].view(-1, hkv, dv)
        k_cache = self.k_cache0.clone().view(-1, hkv, dqk)
        v_cache = self.v_cache0.clone().view(-1, hkv, dv)
        k_cache[self.slots] = k_new
        v_cache[self.slots] = v_new
        queries, keys, values, begin = [], [], [], 0
        for s, n in enumerate(KEY_COUNTS):
            rows = self.all_slots[begin:begin + n]
            begin += n
            queries.append(q[s:s + 1])
            keys.append(k_cache[rows])
            values.append(v_cache[rows])
        out = attention_reference(queries, keys, values, softmax_scale=dqk ** -0.5,
                                  with_magnitude=True)
        return (k_cache.view_as(self.k_cache), v_cache.view_as(self.v_cache), out)


def _step(layers, plans, q_out, outs, seq_lens, starts):
    for layer, (pre, att), out in zip(layers, plans, outs):
        pre.run(layer.qkv, layer.slots, q_out=q_out)
        att.run(q_out, layer.tables, seq_lens, starts, out=out)


def _run(model, case, layers, mode):
    """One decode step of every layer with `model`'s plans, eagerly or as a
    captured graph; returns (outs, k caches, v caches)."""
    dqk, dv, hq, hkv = case
    seq_lens = torch.tensor(KEY_COUNTS, dtype=torch.int32, device="cuda")
    starts = torch.arange(len(KEY_COUNTS) + 1, dtype=torch.int32, device="cuda")
    plans = [(model.preprocess_plan(LAYER, k_cache=l.k_cache, v_cache=l.v_cache),
              model.attention_plan(LAYER, k_cache=l.k_cache, v_cache=l.v_cache))
             for l in layers]
    q_out = torch.full((len(KEY_COUNTS), hq, dqk), float("nan"), dtype=torch.bfloat16,
                       device="cuda")
    outs = [torch.full((len(KEY_COUNTS), hq, dv), float("nan"), dtype=torch.bfloat16,
                       device="cuda") for _ in layers]
    for layer in layers:
        layer.reset()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        if mode == "eager":
            _step(layers, plans, q_out, outs, seq_lens, starts)
        else:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                _step(layers, plans, q_out, outs, seq_lens, starts)
            # Capturing ran nothing: poison and reset, then replay twice (the
            # second replay starts from the first's caches: the new rows
            # are rewritten with the same values, the outputs must agree).
            for out in outs:
                out.fill_(float("nan"))
            for layer in layers:
                layer.reset()
            graph.replay()
            graph.replay()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    flags = [(pre.programmatic_launch, att.programmatic_launch) for pre, att in plans]
    return outs, [l.k_cache.clone() for l in layers], [l.v_cache.clone() for l in layers], flags


@pytest.mark.parametrize("mode", ["eager", "graph"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_pdl_step_matches_plain_launches_and_reference(contexts, case, mode):
    dqk, dv, hq, hkv = case
    spec = layer_spec(dqk=dqk, dv=dv, hq=hq, hkv=hkv)
    models = {pdl: attnc.compile(spec, context=contexts[pdl], block_size=BLOCK_SIZE)
              for pdl in (True, False)}
    g = torch.Generator(device="cuda")
    g.manual_seed(1300 + dqk + hq)
    layers = [_Layer(case, g) for _ in range(NUM_LAYERS)]
    results = {pdl: _run(models[pdl], case, layers, mode) for pdl in (True, False)}

    major, _ = torch.cuda.get_device_capability()
    on_flags, off_flags = results[True][3], results[False][3]
    assert all(f == (False, False) for f in off_flags), off_flags
    if major >= 9:
        # (cuLaunchKernelEx is in every CUDA 12+ driver torch runs on)
        assert all(f == (True, True) for f in on_flags), on_flags

    for l, layer in enumerate(layers):
        k_want, v_want, out_want = layer.expected(case)
        for pdl in (True, False):
            outs, k_caches, v_caches, _ = results[pdl]
            tag = f"layer {l} pdl={pdl} {mode}"
            assert torch.equal(k_caches[l], k_want), f"{tag}: k_cache"
            assert torch.equal(v_caches[l], v_want), f"{tag}: v_cache"
            assert_close(f"{tag}: out", outs[l], out_want, "bf16")
        # Same kernels, same inputs: PDL changes when they start, not what
        # they compute.
        assert torch.equal(results[True][0][l], results[False][0][l]), f"layer {l}: out differs"


def test_mla_pdl_step_matches_plain_launches_and_reference(contexts):
    """Layers of (mla_preprocess -> latent_attention) through plans, one CUDA
    graph: PDL on and off give the same bits (cache, absorbed query, output)
    and the output matches a float32 attention over the kernels' own cache
    and query."""
    from test_mla_engine_path import DecodeStep
    config = Path(__file__).resolve().parents[2] / "examples" / "configs" / "deepseek-v3.json"
    models = {pdl: attnc.compile(str(config), tp=8, context=contexts[pdl]) for pdl in (True, False)}
    layer = next(k.layer for k in models[True].kernels if k.kind == "latent_attention")
    results, flags = {}, {}
    for pdl, model in models.items():
        steps = [DecodeStep(model, layer, 900 + l) for l in range(NUM_LAYERS)]
        plans = [(model.mla_preprocess_plan(layer, kv_norm_weight=s.weight, latent_cache=s.cache),
                  model.latent_attention_plan(layer, latent_cache=s.cache)) for s in steps]
        flags[pdl] = [(pre.programmatic_launch, dec.programmatic_launch) for pre, dec in plans]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            for s, (pre, dec) in zip(steps, plans):
                pre.run(s.kv_a, s.q_pe, s.slot_mapping, s.positions, latent_out=s.latent_out,
                        q_rope_out=s.q_abs[..., s.rank:])
                dec.run(s.q_abs, s.block_tables, s.seq_lens, s.query_start_loc, out=s.out)
        graph.replay()  # (capture ran nothing: the steps' poisoned outputs are intact)
        torch.cuda.synchronize()
        results[pdl] = [(s.cache.clone(), s.q_abs.clone(), s.out.clone()) for s in steps]
        ref_steps = steps
    assert all(f == (False, False) for f in flags[False]), flags[False]
    if torch.cuda.get_device_capability()[0] >= 9:
        assert all(f == (True, True) for f in flags[True]), flags[True]

    source = models[True].kernel(layer, "latent_attention").source
    scale = float(re.search(r"softmax_scale=([0-9.eE+-]+)", source).group(1))
    for l, s in enumerate(ref_steps):
        for part, name in enumerate(("latent_cache", "q_abs", "out")):
            assert torch.equal(results[True][l][part], results[False][l][part]), \
                f"layer {l}: {name} differs between PDL on and off"
        cache, q_abs, out = results[True][l]
        page = cache.shape[1]
        rows = cache.view(-1, cache.shape[-1])
        queries, keys, values = [], [], []
        for seq, n in enumerate(s.LENS):
            pos = torch.arange(n, device="cuda")
            slot = s.block_tables[seq].long()[pos // page] * page + pos % page
            queries.append(q_abs[seq:seq + 1])
            keys.append(rows[slot][:, None, :])
            values.append(rows[slot][:, None, :s.rank])
        want = attention_reference(queries, keys, values, softmax_scale=scale,
                                   with_magnitude=True)
        assert_close(f"layer {l} latent_attention", out, want, "bf16")
