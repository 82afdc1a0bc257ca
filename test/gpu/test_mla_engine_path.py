"""The engine path of MLA's latent_attention, varlen_attention and
latent_gather kernels on a GPU: launch plans (Model.latent_attention_plan /
varlen_attention_plan / latent_gather_plan) and the torch ops
(torch.ops.attnc.latent_attention / varlen_attention / latent_gather), each
bit-exact against the checked path (Model.<method>) on the same fresh random
inputs with NaN-poisoned outputs: eager, on a side stream, captured in a CUDA
graph and replayed on the inputs of another seed (copied into the captured
buffers), and (the ops) under torch.compile(fullgraph=True). The checked
path's own accuracy is test_mla_decode.py's, test_varlen_attention.py's and
test_latent_gather.py's; here its outputs must also be NaN-free. A wrong
tensor at launch is named, and nothing is written."""

import pytest

import attnc

try:
    import torch
except ImportError:  # collected on machines without torch, never run there
    torch = None

LAYER = "mla"
H, R, P, PAGE = 16, 512, 64, 64
QK, V = 192, 128
SCALE = 0.1352
#: Decode: (query rows, keys) per sequence; 41 block-table columns.
DECODE = [(1, 1), (1, 300), (2, 97), (1, 2049), (1, 64), (2, 2600)]
MAX_BLOCKS = 41
#: Prefill: (query rows, keys) per sequence (causal: the last rows).
PREFILL = [(1, 1), (17, 300), (64, 64), (5, 700), (130, 130)]


def layer_ir(gather_fp8: bool) -> str:
    """One layer with the three kernels; latent_gather over an fp8 cache with
    a scale when `gather_fp8` (latent_attention's cache stays bf16)."""
    gcache = "f8E4M3FN" if gather_fp8 else "bf16"
    extra = f", %gcache: tensor<?x{PAGE}x{R + P}x{gcache}>, %s: tensor<f32>" if gather_fp8 else ""
    gather_in = "%gcache" if gather_fp8 else "%cache"
    scale = " scale %s" if gather_fp8 else ""
    scale_type = " scale tensor<f32>" if gather_fp8 else ""
    return f"""
func.func @{LAYER}(%q: tensor<?x{H}x{R + P}xbf16>, %cache: tensor<?x{PAGE}x{R + P}xbf16>,
    %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>,
    %qv: tensor<?x{H}x{QK}xbf16>, %k: tensor<?x{H}x{QK}xbf16>, %v: tensor<?x{H}x{V}xbf16>,
    %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>{extra})
    -> (tensor<?x{H}x{R}xbf16>, tensor<?x{H}x{V}xbf16>, tensor<?x{R + P}xbf16>) {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {{kv_lora_rank = {R}, softmax_scale = {SCALE} : f64}}
      : tensor<?x{H}x{R + P}xbf16>, tensor<?x{PAGE}x{R + P}xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{H}x{R}xbf16>
  %ov = attn.varlen_attention %qv, %k, %v, %cu_q, %cu_k {{softmax_scale = {SCALE} : f64}}
      : tensor<?x{H}x{QK}xbf16>, tensor<?x{H}x{QK}xbf16>, tensor<?x{H}x{V}xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{H}x{V}xbf16>
  %rows = attn.latent_gather {gather_in}, %tables, %cu_k{scale}
      : tensor<?x{PAGE}x{R + P}x{gcache}>, tensor<?x?xi32>, tensor<?xi32>{scale_type}
        -> tensor<?x{R + P}xbf16>
  return %o, %ov, %rows : tensor<?x{H}x{R}xbf16>, tensor<?x{H}x{V}xbf16>, tensor<?x{R + P}xbf16>
}}
"""


_MODELS = {}


@pytest.fixture(scope="module")
def model(attnc_context):
    if False not in _MODELS:
        _MODELS[False] = attnc.compile_ir(layer_ir(False), context=attnc_context)
    return _MODELS[False]


@pytest.fixture(scope="module")
def fp8_model(attnc_context):
    if True not in _MODELS:
        _MODELS[True] = attnc.compile_ir(layer_ir(True), context=attnc_context)
    return _MODELS[True]


def poisoned(shape, dtype=None):
    return torch.full(shape, float("nan"), dtype=dtype or torch.bfloat16, device="cuda")


def cumulative(counts):
    out = torch.zeros(len(counts) + 1, dtype=torch.int32)
    out[1:] = torch.tensor(counts, dtype=torch.int32).cumsum(0)
    return out.cuda()


class Decode:
    """Fresh random decode inputs (seed `seed`) of the DECODE batch shape:
    queries, a latent cache that is a [..., :576] view of 640-wide rows,
    block tables of a random block order, seq_lens, query_start_loc."""

    def __init__(self, seed, cache_dtype=None):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        counts = [-(-n // PAGE) for _, n in DECODE]
        self.num_blocks = sum(counts) + 3
        self.tokens = sum(q for q, _ in DECODE)
        self.seqs = len(DECODE)
        base = torch.randn(self.num_blocks, PAGE, 640, device="cuda", generator=g)
        self.cache_base = base.to(torch.bfloat16)
        self.cache = self.cache_base[..., :R + P]
        order = torch.randperm(self.num_blocks, device="cuda", generator=g).int()
        self.block_tables = torch.zeros(self.seqs, MAX_BLOCKS, dtype=torch.int32,
                                        device="cuda")
        used = 0
        for s, n in enumerate(counts):
            self.block_tables[s, :n] = order[used:used + n]
            used += n
        self.seq_lens = torch.tensor([n for _, n in DECODE], dtype=torch.int32,
                                     device="cuda")
        self.query_start_loc = cumulative([q for q, _ in DECODE])
        self.query = torch.randn(self.tokens, H, R + P, device="cuda",
                                 generator=g).to(torch.bfloat16)

    def step(self):
        return self.query, self.block_tables, self.seq_lens, self.query_start_loc

    def copy_into(self, other):
        """Writes this step's values into `other`'s tensors (a captured
        graph's inputs)."""
        other.cache_base.copy_(self.cache_base)
        for name in ("query", "block_tables", "seq_lens", "query_start_loc"):
            getattr(other, name).copy_(getattr(self, name))


def checked_decode(model, d, num_kv_splits=None):
    out = poisoned((d.tokens, H, R))
    model.latent_attention(LAYER, d.query, latent_cache=d.cache,
                           block_tables=d.block_tables, seq_lens=d.seq_lens,
                           query_start_loc=d.query_start_loc, out=out,
                           num_kv_splits=num_kv_splits)
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()
    return out


def replayed(fn, fresh_inputs, outputs):
    """Captures fn() on a side stream, writes `fresh_inputs()` (the next
    step's values) into the captured buffers, re-poisons `outputs`, replays."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        fn()
    torch.cuda.synchronize()
    fresh_inputs()
    for out in outputs:
        out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()


def on_side_stream(fn):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    side.synchronize()


# ---- latent_attention ---------------------------------------------------------------

@pytest.mark.parametrize("splits", [None, 1, 7])
def test_latent_attention_plan(model, splits):
    d = Decode(seed=11)
    want = checked_decode(model, d, splits)
    plan = model.latent_attention_plan(LAYER, latent_cache=d.cache)
    got = plan.plan(d.tokens, d.seqs, num_kv_splits=splits)
    assert got == model.latent_attention_splits(LAYER, d.tokens, d.seqs,
                                                num_kv_splits=splits)
    out = poisoned((d.tokens, H, R))
    plan.run(*d.step(), out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, want)

    out.fill_(float("nan"))
    on_side_stream(lambda: plan.run(*d.step(), out=out))
    assert torch.equal(out, want)

    # Captured once, replayed on another seed's values.
    fresh = Decode(seed=12)
    want2 = checked_decode(model, fresh, splits)
    replayed(lambda: plan.run(*d.step(), out=out), lambda: fresh.copy_into(d), [out])
    assert torch.equal(out, want2)


def test_latent_attention_op(model):
    import attnc.torch_ops as ops
    backend = ops.load("auto")
    print(f"torch ops backend: {backend}")
    binding = ops.binding(model, LAYER, "latent_attention")
    ws = ops.workspace(model, LAYER, kind="latent_attention")
    assert ws.numel() == model.latent_attention_workspace_size(LAYER)
    d = Decode(seed=21)
    want = checked_decode(model, d)
    out = poisoned((d.tokens, H, R))

    def run(query, block_tables, seq_lens, query_start_loc):
        torch.ops.attnc.latent_attention(binding, query, d.cache, block_tables, seq_lens,
                                         query_start_loc, None, out, ws, 0)

    run(*d.step())
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    out.fill_(float("nan"))
    torch.compile(run, fullgraph=True, dynamic=False)(*d.step())
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    fresh = Decode(seed=22)
    want2 = checked_decode(model, fresh)
    replayed(lambda: run(*d.step()), lambda: fresh.copy_into(d), [out])
    assert torch.equal(out, want2)

    expected = ValueError if backend == "cpp" else attnc.ArgumentError
    out.fill_(float("nan"))
    with pytest.raises(expected, match="cache_scale"):
        torch.ops.attnc.latent_attention(binding, d.query, d.cache, d.block_tables,
                                         d.seq_lens, d.query_start_loc,
                                         torch.tensor(1.0, device="cuda"), out, ws, 0)
    with pytest.raises(expected, match="num_kv_splits"):
        torch.ops.attnc.latent_attention(binding, d.query, d.cache, d.block_tables,
                                         d.seq_lens, d.query_start_loc, None, out, ws, 33)
    with pytest.raises(expected, match="query"):
        torch.ops.attnc.latent_attention(binding, d.query.half(), d.cache, d.block_tables,
                                         d.seq_lens, d.query_start_loc, None, out, ws, 0)
    torch.cuda.synchronize()
    assert torch.isnan(out).all()  # nothing launched


def test_latent_attention_plan_errors(model):
    d = Decode(seed=31)
    plan = model.latent_attention_plan(LAYER, latent_cache=d.cache)
    out = poisoned((d.tokens, H, R))
    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(d.query.half(), *d.step()[1:], out=out)
    assert info.value.argument == "query" and info.value.rule.startswith("dtype is f16")
    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(*d.step(), out=out[:-1])
    assert info.value.argument == "out" and "num_tokens" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(d.query, d.block_tables, d.seq_lens[:-1], d.query_start_loc, out=out)
    assert info.value.argument == "seq_lens" and "num_seqs" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(d.query, d.block_tables.t().contiguous().t(), d.seq_lens,
                 d.query_start_loc, out=out)
    assert info.value.argument == "block_tables" and "C-contiguous" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        model.latent_attention_plan(LAYER, latent_cache=d.cache_base[..., 1:R + P + 1])
    assert info.value.argument == "latent_cache" and "aligned" in info.value.rule
    torch.cuda.synchronize()
    assert torch.isnan(out).all()


# ---- varlen_attention ---------------------------------------------------------------

class Prefill:
    """Fresh random prefill inputs: query [T, H, 192]; key = [k_nope | k_pe]
    and value as views of one [Tk, H, 320] buffer (kv_b_proj's k_nope 128 |
    v 128, then k_pe 64: key is [..., :192] of a 128 + 64 layout built by
    putting v last), cu_seqlens."""

    def __init__(self, seed):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        self.tokens = sum(q for q, _ in PREFILL)
        self.kv_tokens = sum(k for _, k in PREFILL)
        self.seqs = len(PREFILL)
        self.query = torch.randn(self.tokens, H, QK, device="cuda",
                                 generator=g).to(torch.bfloat16)
        # [k_nope 128 | k_pe 64 | v 128] per head: key [..., :192], value [..., 192:].
        self.kv = torch.randn(self.kv_tokens, H, QK + V, device="cuda",
                              generator=g).to(torch.bfloat16)
        self.key, self.value = self.kv[..., :QK], self.kv[..., QK:]
        self.cu_q = cumulative([q for q, _ in PREFILL])
        self.cu_k = cumulative([k for _, k in PREFILL])

    def step(self):
        return self.query, self.key, self.value, self.cu_q, self.cu_k

    def copy_into(self, other):
        for name in ("query", "kv", "cu_q", "cu_k"):
            getattr(other, name).copy_(getattr(self, name))


def checked_prefill(model, p):
    out = poisoned((p.tokens, H, V))
    model.varlen_attention(LAYER, p.query, p.key, p.value, cu_seqlens_q=p.cu_q,
                           cu_seqlens_k=p.cu_k, out=out)
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()
    return out


def test_varlen_attention_plan(model):
    p = Prefill(seed=41)
    assert p.key.stride() == (H * (QK + V), QK + V, 1)  # strided views, taken as is
    want = checked_prefill(model, p)
    plan = model.varlen_attention_plan(LAYER)
    out = poisoned((p.tokens, H, V))
    plan.run(*p.step(), out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    out.fill_(float("nan"))
    on_side_stream(lambda: plan.run(*p.step(), out=out))
    assert torch.equal(out, want)
    fresh = Prefill(seed=42)
    want2 = checked_prefill(model, fresh)
    replayed(lambda: plan.run(*p.step(), out=out), lambda: fresh.copy_into(p), [out])
    assert torch.equal(out, want2)

    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(p.query, p.kv[..., 1:QK + 1], p.value, p.cu_q, p.cu_k, out=out)
    assert info.value.argument == "key" and "aligned" in info.value.rule


def test_varlen_attention_op(model):
    import attnc.torch_ops as ops
    backend = ops.load("auto")
    binding = ops.binding(model, LAYER, "varlen_attention")
    ws = ops.workspace(model, LAYER, kind="varlen_attention")
    p = Prefill(seed=51)
    want = checked_prefill(model, p)
    out = poisoned((p.tokens, H, V))

    def run(query, key, value, cu_q, cu_k):
        torch.ops.attnc.varlen_attention(binding, query, key, value, cu_q, cu_k, out, ws, 0)

    run(*p.step())
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    out.fill_(float("nan"))
    torch.compile(run, fullgraph=True, dynamic=False)(*p.step())
    torch.cuda.synchronize()
    assert torch.equal(out, want)
    fresh = Prefill(seed=52)
    want2 = checked_prefill(model, fresh)
    replayed(lambda: run(*p.step()), lambda: fresh.copy_into(p), [out])
    assert torch.equal(out, want2)

    expected = ValueError if backend == "cpp" else attnc.ArgumentError
    out.fill_(float("nan"))
    with pytest.raises(expected, match="cu_seqlens_k"):
        torch.ops.attnc.varlen_attention(binding, *p.step()[:4], p.cu_k[:-1], out, ws, 0)
    torch.cuda.synchronize()
    assert torch.isnan(out).all()


# ---- latent_gather ------------------------------------------------------------------

class Gather:
    """A paged latent cache (bf16, or fp8 with a scale) as a [..., :576] view
    of 640-wide rows, and the sequences of DECODE's key counts."""

    def __init__(self, seed, fp8):
        d = Decode(seed)
        self.block_tables = d.block_tables
        self.cu_seqlens = cumulative([n for _, n in DECODE])
        self.rows = sum(n for _, n in DECODE)
        if fp8:
            self.cache_base = (d.cache_base.float() * 20).to(torch.float8_e4m3fn)
            self.scale = torch.tensor(0.05, device="cuda")
        else:
            self.cache_base, self.scale = d.cache_base, None
        self.cache = self.cache_base[..., :R + P]

    def copy_into(self, other):
        other.cache_base.copy_(self.cache_base)
        other.block_tables.copy_(self.block_tables)
        other.cu_seqlens.copy_(self.cu_seqlens)


def checked_gather(model, gather):
    out = poisoned((gather.rows + 5, R + P))  # rows past cu_seqlens[-1] stay NaN
    model.latent_gather(LAYER, latent_cache=gather.cache, block_tables=gather.block_tables,
                        cu_seqlens=gather.cu_seqlens, cache_scale=gather.scale, out=out)
    torch.cuda.synchronize()
    assert not torch.isnan(out[:gather.rows]).any()
    assert torch.isnan(out[gather.rows:]).all()
    return out


def same(a, b):
    """Bitwise equal, NaN where the other is NaN included."""
    return torch.equal(a.view(torch.int16), b.view(torch.int16))


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_latent_gather_plan_and_op(model, fp8_model, fp8):
    m = fp8_model if fp8 else model
    g = Gather(seed=61, fp8=fp8)
    want = checked_gather(m, g)
    plan = m.latent_gather_plan(LAYER, latent_cache=g.cache, cache_scale=g.scale)
    out = poisoned(want.shape)
    plan.run(g.block_tables, g.cu_seqlens, out=out)
    torch.cuda.synchronize()
    assert same(out, want)
    fresh = Gather(seed=62, fp8=fp8)
    want2 = checked_gather(m, fresh)
    replayed(lambda: plan.run(g.block_tables, g.cu_seqlens, out=out),
             lambda: fresh.copy_into(g), [out])
    assert same(out, want2)

    import attnc.torch_ops as ops
    backend = ops.load("auto")
    binding = ops.binding(m, LAYER, "latent_gather")
    g = Gather(seed=63, fp8=fp8)
    want = checked_gather(m, g)
    out = poisoned(want.shape)

    def run(block_tables, cu_seqlens):
        torch.ops.attnc.latent_gather(binding, g.cache, block_tables, cu_seqlens, g.scale,
                                      out)

    run(g.block_tables, g.cu_seqlens)
    torch.cuda.synchronize()
    assert same(out, want)
    out.fill_(float("nan"))
    torch.compile(run, fullgraph=True, dynamic=False)(g.block_tables, g.cu_seqlens)
    torch.cuda.synchronize()
    assert same(out, want)
    fresh = Gather(seed=64, fp8=fp8)
    want2 = checked_gather(m, fresh)
    replayed(lambda: run(g.block_tables, g.cu_seqlens), lambda: fresh.copy_into(g), [out])
    assert same(out, want2)

    expected = ValueError if backend == "cpp" else attnc.ArgumentError
    out.fill_(float("nan"))
    wrong_scale = None if fp8 else torch.tensor(1.0, device="cuda")
    with pytest.raises(expected, match="cache_scale"):
        torch.ops.attnc.latent_gather(binding, g.cache, g.block_tables, g.cu_seqlens,
                                      wrong_scale, out)
    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(g.block_tables, g.cu_seqlens, out=out.float())
    assert info.value.argument == "out" and "dtype" in info.value.rule
    torch.cuda.synchronize()
    assert torch.isnan(out).all()


# ---- mla_preprocess -----------------------------------------------------------------

PRE_TOKENS, PRE_BLOCKS = 37, 3


def preprocess_ir(fp8: bool) -> str:
    cache = f"tensor<?x{PAGE}x{R + P}x{'f8E4M3FN' if fp8 else 'bf16'}>"
    scale, scale_type = (" scale %s", " scale tensor<f32>") if fp8 else ("", "")
    return f"""
func.func @{LAYER}(%kv_a: tensor<?x{R + P}xbf16>, %q_pe: tensor<?x{H}x{P}xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<{R}xbf16>,
    %cache: {cache}{", %s: tensor<f32>" if fp8 else ""})
    -> (tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, {cache}) {{
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache{scale}
      {{num_heads = {H}, kv_lora_rank = {R}, rope_head_dim = {P}, norm_eps = 1.0e-6 : f64,
        rope_style = #attn.rope_style<gptj>, rope_deinterleave = true, theta = 1.0e4 : f64}}
      : tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, tensor<?xi64>, tensor<?xi64>,
        tensor<{R}xbf16> into {cache}{scale_type}
  return %lat, %qr, %c : tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, {cache}
}}
"""


@pytest.fixture(scope="module")
def pre_models(attnc_context):
    return {fp8: attnc.compile_ir(preprocess_ir(fp8), context=attnc_context)
            for fp8 in (False, True)}


class PreStep:
    """Fresh random preprocess inputs as an engine holds them: kv_a the last
    576 columns of a [T, 2112] projection output, q_rope the rope part of q
    [T, H, 192]; slots a random subset of the cache's rows with two padding
    (-1) tokens; outputs poisoned: a NaN cache (0xFF bytes), latent_out, and
    q_rope_out as the rope part of a NaN absorbed query [T, H, 576]."""

    def __init__(self, seed, fp8):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        T = PRE_TOKENS
        self.kv_base = torch.randn(T, 2112, device="cuda", generator=g).to(torch.bfloat16)
        self.kv_a = self.kv_base[:, 2112 - (R + P):]
        self.q = torch.randn(T, H, 192, device="cuda", generator=g).to(torch.bfloat16)
        self.q_rope = self.q[..., 128:]
        slots = torch.randperm(PRE_BLOCKS * PAGE, device="cuda", generator=g)[:T]
        slots[3] = slots[20] = -1
        self.slot_mapping = slots.to(torch.int64)
        self.positions = torch.randint(0, 8192, (T,), device="cuda", generator=g)
        self.weight = (1 + 0.1 * torch.randn(R, device="cuda", generator=g)).to(torch.bfloat16)
        dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
        self.cache = torch.empty(PRE_BLOCKS, PAGE, R + P, dtype=dtype, device="cuda")
        self.scale = torch.tensor(0.05, device="cuda") if fp8 else None
        self.latent_out = poisoned((T, R + P))
        self.q_abs = poisoned((T, H, R + P))
        self.q_rope_out = self.q_abs[..., R:]
        self.poison()

    def poison(self):
        self.cache.view(torch.uint8).fill_(0xFF)
        self.latent_out.fill_(float("nan"))
        self.q_abs.fill_(float("nan"))

    def inputs(self):
        return self.kv_a, self.q_rope, self.slot_mapping, self.positions

    def copy_into(self, other):
        # (the norm weight too: the plan holds other's weight tensor, and
        # this step's reference was computed with this step's weight)
        for name in ("kv_base", "q", "slot_mapping", "positions", "weight"):
            getattr(other, name).copy_(getattr(self, name))

    def results(self):
        return (self.cache.view(torch.uint8), self.latent_out.view(torch.int16),
                self.q_abs.view(torch.int16))


def checked_preprocess(model, s):
    model.mla_preprocess(LAYER, *s.inputs()[:2], slot_mapping=s.slot_mapping,
                         positions=s.positions, kv_norm_weight=s.weight,
                         latent_cache=s.cache, cache_scale=s.scale,
                         latent_out=s.latent_out, q_rope_out=s.q_rope_out)
    torch.cuda.synchronize()
    assert not torch.isnan(s.latent_out).any()
    assert not torch.isnan(s.q_rope_out).any()
    assert torch.isnan(s.q_abs[..., :R]).all()  # outside q_rope_out: untouched
    return s.results()


def assert_same(got, want):
    for g, w in zip(got, want):
        assert torch.equal(g, w)


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_mla_preprocess_plan(pre_models, fp8):
    model = pre_models[fp8]
    want = checked_preprocess(model, PreStep(71, fp8))
    s = PreStep(71, fp8)
    plan = model.mla_preprocess_plan(LAYER, kv_norm_weight=s.weight, latent_cache=s.cache,
                                     cache_scale=s.scale)

    def run():
        plan.run(*s.inputs(), latent_out=s.latent_out, q_rope_out=s.q_rope_out)

    run()
    torch.cuda.synchronize()
    assert_same(s.results(), want)
    s.poison()
    on_side_stream(run)
    assert_same(s.results(), want)

    fresh = PreStep(72, fp8)
    want2 = checked_preprocess(model, PreStep(72, fp8))
    replayed(run, lambda: (fresh.copy_into(s), s.poison()), [])
    assert_same(s.results(), want2)

    # In place: latent_out is kv_a, q_rope_out is q_rope.
    ref, s = PreStep(73, fp8), PreStep(73, fp8)
    model.mla_preprocess(LAYER, ref.kv_a, ref.q_rope, slot_mapping=ref.slot_mapping,
                         positions=ref.positions, kv_norm_weight=ref.weight,
                         latent_cache=ref.cache, cache_scale=ref.scale,
                         latent_out=ref.kv_a, q_rope_out=ref.q_rope)
    plan = model.mla_preprocess_plan(LAYER, kv_norm_weight=s.weight, latent_cache=s.cache,
                                     cache_scale=s.scale)
    plan.run(*s.inputs(), latent_out=s.kv_a, q_rope_out=s.q_rope)
    torch.cuda.synchronize()
    assert torch.equal(s.kv_base.view(torch.int16), ref.kv_base.view(torch.int16))
    assert torch.equal(s.q.view(torch.int16), ref.q.view(torch.int16))
    assert torch.equal(s.cache.view(torch.uint8), ref.cache.view(torch.uint8))

    with pytest.raises(attnc.ArgumentError) as info:
        plan.run(s.kv_a, s.q_rope, s.slot_mapping, s.positions[:-1], latent_out=s.latent_out,
                 q_rope_out=s.q_rope_out)
    assert info.value.argument == "positions" and "num_tokens" in info.value.rule


# ---- one decode step of a real config, as docs/mla.md's engine guide ---------------

class DecodeStep:
    """One decode step of deepseek-v3 at TP 8 (16 heads): fresh random kv_a,
    q_pe and absorbed q_nope, a random latent cache holding each sequence's
    earlier rows, the new token at position seq_len - 1."""

    LENS = [1, 65, 300, 1000]

    def __init__(self, model, layer, seed):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        abi = {p["name"]: p for p in model.kernel(layer, "latent_attention").abi["params"]}
        _, self.heads, width = abi["query"]["shape"]
        _, page, _ = abi["latent_cache"]["shape"]
        self.rank = abi["output"]["shape"][2]
        T = len(self.LENS)
        blocks = [-(-n // page) for n in self.LENS]
        num_blocks = sum(blocks) + 2
        self.cache = torch.randn(num_blocks, page, width, device="cuda",
                                 generator=g).to(torch.bfloat16)
        order = torch.randperm(num_blocks, device="cuda", generator=g).int()
        self.block_tables = torch.zeros(T, max(blocks), dtype=torch.int32, device="cuda")
        used = 0
        for s, n in enumerate(blocks):
            self.block_tables[s, :n] = order[used:used + n]
            used += n
        last = torch.tensor([n - 1 for n in self.LENS], device="cuda")
        rows = self.block_tables.long().gather(1, (last // page)[:, None])[:, 0]
        self.slot_mapping = (rows * page + last % page).contiguous()
        self.positions = last.contiguous()
        self.seq_lens = torch.tensor(self.LENS, dtype=torch.int32, device="cuda")
        self.query_start_loc = cumulative([1] * T)
        self.kv_a = torch.randn(T, width, device="cuda", generator=g).to(torch.bfloat16)
        self.q_pe = torch.randn(T, self.heads, width - self.rank, device="cuda",
                                generator=g).to(torch.bfloat16)
        self.q_abs = torch.randn(T, self.heads, width, device="cuda",
                                 generator=g).to(torch.bfloat16)
        self.q_abs[..., self.rank:] = float("nan")  # the preprocess writes it
        self.weight = (1 + 0.1 * torch.randn(self.rank, device="cuda",
                                             generator=g)).to(torch.bfloat16)
        self.latent_out = poisoned((T, width))
        self.out = poisoned((T, self.heads, self.rank))

    def copy_into(self, other):
        for name in ("cache", "block_tables", "slot_mapping", "positions", "seq_lens",
                     "query_start_loc", "kv_a", "q_pe", "q_abs", "latent_out", "out",
                     "weight"):  # (the plan holds other's weight tensor)
            getattr(other, name).copy_(getattr(self, name))


def test_decode_step_in_one_graph(attnc_context):
    """mla_preprocess (q_pe into the absorbed query) then latent_attention,
    through the two plans captured in one CUDA graph, bit-exact against the
    checked path on the same step; replayed on another seed's step."""
    import pathlib
    config = pathlib.Path(__file__).resolve().parents[2] / "examples" / "configs" / "deepseek-v3.json"
    model = attnc.compile(str(config), tp=8, context=attnc_context)
    layer = next(k.layer for k in model.kernels if k.kind == "latent_attention")

    def checked(step):
        model.mla_preprocess(layer, step.kv_a, step.q_pe, slot_mapping=step.slot_mapping,
                             positions=step.positions, kv_norm_weight=step.weight,
                             latent_cache=step.cache, latent_out=step.latent_out,
                             q_rope_out=step.q_abs[..., step.rank:])
        model.latent_attention(layer, step.q_abs, latent_cache=step.cache,
                               block_tables=step.block_tables, seq_lens=step.seq_lens,
                               query_start_loc=step.query_start_loc, out=step.out)
        torch.cuda.synchronize()
        assert not torch.isnan(step.out).any()
        return step.cache.clone(), step.q_abs.clone(), step.out.clone()

    want = checked(DecodeStep(model, layer, 81))
    s = DecodeStep(model, layer, 81)
    pre = model.mla_preprocess_plan(layer, kv_norm_weight=s.weight, latent_cache=s.cache)
    dec = model.latent_attention_plan(layer, latent_cache=s.cache)
    dec.plan(len(s.LENS), len(s.LENS))

    def step_fn():
        pre.run(s.kv_a, s.q_pe, s.slot_mapping, s.positions, latent_out=s.latent_out,
                q_rope_out=s.q_abs[..., s.rank:])
        dec.run(s.q_abs, s.block_tables, s.seq_lens, s.query_start_loc, out=s.out)

    def same(expected):
        torch.cuda.synchronize()
        cache, q_abs, out = expected
        assert torch.equal(s.cache, cache)
        assert torch.equal(s.q_abs, q_abs)
        assert torch.equal(s.out, out)

    fresh = DecodeStep(model, layer, 82)
    want2 = checked(DecodeStep(model, layer, 82))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        step_fn()
    torch.cuda.synchronize()
    # Capture ran nothing: the buffers still hold seed 81's step.
    graph.replay()
    same(want)
    fresh.copy_into(s)
    graph.replay()
    same(want2)
