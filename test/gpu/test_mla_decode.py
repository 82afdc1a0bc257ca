"""MLA's absorbed decode (attn.latent_attention) through Model.latent_attention,
against a float64 reference written from the op's contract:

    out[t, h] = softmax(q[t, h] . K^T * scale) V,  K = the sequence's latent
    cache rows [c_kv | k_pe] (R + P = 576 values), V = their first R = 512
    (R = 256, rows of 320, for Mistral 4: CASES_R256 and the tests named
    r256; 384 and 128 in CASES_OTHER_RANKS),

causal with MTP rows (row i of n sees keys up to seq_len - n + i). Cases:
H 128, 64 and 16 heads (TP 8), 1 to 4 query rows per sequence, pages of 16
and 64, sequence lengths 1 .. 4096 (lengths that are not a multiple of the
64-key tile, a single key, a batch mixing long and short), split counts at
their bounds (1, the automatic rule, the largest the launch accepts), a
strided latent-cache view, and one workspace reused across launches.

An fp8 e4m3 latent cache (rows stored divided by cache_scale, as the MLA
preprocess writes them): the kernel computes with the exact e4m3 values and
folds the scale into the softmax and output scales, so its output is
compared with the float64 reference of the dequantised cache (fp8 value x
cache_scale) under the bf16 bounds, and with the reference of the rows
before quantisation under a bound derived from e4m3's rounding
(Batch.fp8_bound).

Poisoning: outputs are NaN-filled before each launch; the workspace's
partial area is NaN-filled (its counters zero, as the contract asks); cache
rows past every sequence's end and a block no sequence owns (where unused
block-table entries point) hold NaN (e4m3's NaN in an fp8 cache, which the
kernel's widening keeps NaN), so a key read past a sequence's end reaches
the output (0 x NaN is NaN in P V). NaN never passes.
"""

import math

import pytest

import attnc

try:
    import torch
except ImportError:  # collected on machines without torch, never run there
    torch = None

R, P = 512, 64
SCALE = 0.1352
LAYER = "mla"
#: Relative L2 error bound for bf16 inputs: P is rounded to bf16 before the
#: P V product and the output is bf16 (each about 2^-9 relative).
REL_L2 = 1e-2
#: Per (token, head) row: the same bound, with room for short rows.
ROW_REL_L2 = 2.5e-2
#: The fp8 cache's scale (not a power of two, so folding it is exercised):
#: rows of N(0, 1) (and the rising-score column, up to 14) stay below e4m3's
#: 448 once divided by it.
CACHE_SCALE = 0.0371
#: e4m3 keeps 3 mantissa bits: neighbouring values are 2^-3 apart relative
#: to the smaller, so round to nearest errs by at most 2^-4 relative (normal
#: values; the few subnormals err more, relative to a tiny value).
E4M3_REL = 2.0 ** -4


def layer_ir(heads: int, page: int, causal: bool = True, fp8: bool = False, rank: int = R) -> str:
    d = rank + P
    cache = "f8E4M3FN" if fp8 else "bf16"
    scale_arg = ", %scale: tensor<f32>" if fp8 else ""
    scale_use = " scale %scale" if fp8 else ""
    scale_type = " scale tensor<f32>" if fp8 else ""
    return f"""
func.func @{LAYER}(%q: tensor<?x{heads}x{d}xbf16>, %cache: tensor<?x{page}x{d}x{cache}>,
                   %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>{scale_arg})
    -> tensor<?x{heads}x{rank}xbf16> {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts{scale_use}
      {{kv_lora_rank = {rank}, softmax_scale = {SCALE} : f64, causal = {str(causal).lower()}}}
      : tensor<?x{heads}x{d}xbf16>, tensor<?x{page}x{d}x{cache}>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32>{scale_type} -> tensor<?x{heads}x{rank}xbf16>
  return %o : tensor<?x{heads}x{rank}xbf16>
}}
"""


_MODELS = {}


def model_for(heads: int, page: int, causal: bool = True, fp8: bool = False, rank: int = R):
    key = (heads, page, causal, fp8, rank)
    if key not in _MODELS:
        _MODELS[key] = attnc.compile_ir(layer_ir(heads, page, causal, fp8, rank))
    return _MODELS[key]


class Batch:
    """Random queries and a paged latent cache for `lens` sequences of `mtp`
    query rows each; NaN in every cache row no sequence owns. With `fp8`,
    the cache holds the rows divided by CACHE_SCALE in e4m3 (`cache_scale`
    the scalar tensor), `rows_cache` their float64 dequantised values and
    `exact_cache` the rows before quantisation; otherwise all three are the
    bf16 cache."""

    def __init__(self, heads, page, lens, mtp, seed, strided=False, trend=0.0, fp8=False,
                 rank=R):
        self.rank = R = rank
        # Every query row sees at least one key (seq_len >= query rows).
        assert min(lens) >= mtp, (lens, mtp)
        gen = torch.Generator().manual_seed(seed)
        self.heads, self.page, self.lens, self.mtp = heads, page, list(lens), mtp
        blocks = [max(1, -(-n // page)) for n in lens]
        num_blocks = sum(blocks) + 2  # block 0: owned by nobody
        width = R + P + (64 if strided else 0)
        cache = torch.full((num_blocks, page, width), float("nan"),
                           dtype=torch.float32 if fp8 else torch.bfloat16)
        order = (torch.randperm(num_blocks - 1, generator=gen) + 1).tolist()
        tables = torch.zeros(len(lens), max(blocks) + 1, dtype=torch.int32)
        for s, (n, nb) in enumerate(zip(lens, blocks)):
            mine = [order.pop() for _ in range(nb)]
            tables[s, :nb] = torch.tensor(mine, dtype=torch.int32)
            rows = torch.randn(n, R + P, generator=gen)
            if trend:  # scores rising along the sequence (first rope column)
                rows[:, R] = trend * torch.arange(n) / n
            for i, b in enumerate(mine):
                chunk = rows[i * page:(i + 1) * page]
                cache[b, :chunk.shape[0], :R + P] = chunk.to(cache.dtype)
        self.cache_scale = None
        if fp8:
            exact = cache[..., :R + P]
            # float32 -> e4m3 rounds to nearest and keeps NaN (the poison)
            cache = (cache / CACHE_SCALE).to(torch.float8_e4m3fn)
            self.exact_cache = exact.double().cuda()
            self.rows_cache = (cache[..., :R + P].float().double() * CACHE_SCALE).cuda()
            self.cache_scale = torch.tensor(CACHE_SCALE, dtype=torch.float32, device="cuda")
        self.cache_storage = cache.cuda()
        self.cache = self.cache_storage[..., :R + P]  # a strided view when strided
        if not fp8:
            self.rows_cache = self.exact_cache = self.cache
        self.tables = tables.cuda()
        self.seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        tokens = len(lens) * mtp
        query = torch.randn(tokens, heads, R + P, generator=gen)
        if trend:
            query[..., R] = trend
        self.query = query.to(torch.bfloat16).cuda()
        self.query_start_loc = torch.arange(0, tokens + 1, mtp, dtype=torch.int32, device="cuda")

    def owned_rows(self, cache):
        """The rows some sequence owns, [sum(lens), R + P] float64."""
        R = self.rank
        parts = []
        for s, n in enumerate(self.lens):
            nb = max(1, -(-n // self.page))
            parts.append(cache[self.tables[s, :nb].long()].reshape(-1, R + P)[:n].double())
        return torch.cat(parts)

    def fp8_bound(self):
        """The relative L2 error the e4m3 quantisation alone may cause against
        the exact reference. Each cached value errs by at most E4M3_REL
        relative (the test checks its own cache's error against that). V's
        share of the output error is about E4M3_REL relative; a score
        q . k = sum_d q_d k_d errs by about E4M3_REL sqrt(sum_d q_d^2 k_d^2)
        (independent per-value errors), softmax_scale times that in the
        exponent (sigma), which perturbs the weights, and so the output,
        relatively by as much: E4M3_REL sqrt(1 + sigma^2), sigma the rms
        over query rows and keys. (Random rows: sigma = softmax_scale |q|,
        about 3.2, and a bound near 0.21 where about 0.06 is seen in a float64
        simulation; the rising-score rows put much of q and k in one column:
        sigma near 16, bound near 1, seen 0.43.)"""
        R = self.rank
        exact, rows = self.owned_rows(self.exact_cache), self.owned_rows(self.rows_cache)
        e = float((rows - exact).norm() / exact.norm())
        assert e <= E4M3_REL, f"the test's fp8 cache errs by {e:.3e} relative (> 2^-4)"
        k_square = exact.pow(2).mean(dim=0)  # [R + P]: E over keys of k_d^2
        q = self.query.double().reshape(-1, R + P)
        sigma = SCALE * math.sqrt(float((q.pow(2) @ k_square).mean()))
        return E4M3_REL * math.sqrt(1.0 + sigma ** 2)

    def reference(self, causal=True, exact=False):
        """float64 attention over the cache's values (`rows_cache`), or with
        `exact` over the rows before fp8 quantisation."""
        R = self.rank
        cache = self.exact_cache if exact else self.rows_cache
        out = torch.empty(self.query.shape[0], self.heads, R, dtype=torch.float64, device="cuda")
        for s, n in enumerate(self.lens):
            nb = max(1, -(-n // self.page))
            rows = cache[self.tables[s, :nb].long()].reshape(-1, R + P)[:n].double()
            q = self.query[s * self.mtp:(s + 1) * self.mtp].double()
            scores = torch.einsum("thd,kd->thk", q, rows) * SCALE
            if causal:
                for i in range(self.mtp):
                    scores[i, :, n - self.mtp + i + 1:] = -math.inf
            out[s * self.mtp:(s + 1) * self.mtp] = torch.softmax(scores, -1) @ rows[:, :R]
        return out


def poisoned_workspace(model):
    """The kernel's workspace: NaN partials, zero counters (the last
    target_ctas floats), as a first use after torch.zeros would see after
    a launch that left garbage partials."""
    size = model.latent_attention_workspace_size(LAYER)
    hints = model.kernel(LAYER, "latent_attention").abi["hints"]
    ws = torch.full((size,), float("nan"), dtype=torch.float32, device="cuda")
    ws[size - int(hints["target_ctas"]):] = 0
    return ws


def launch_decode(model, batch, workspace, num_kv_splits):
    """One latent_attention launch of `batch` into a NaN-poisoned output,
    returned once the launch has finished."""
    out = torch.full((batch.query.shape[0], batch.heads, batch.rank), float("nan"),
                     dtype=torch.bfloat16, device="cuda")
    model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                           block_tables=batch.tables, seq_lens=batch.seq_lens,
                           query_start_loc=batch.query_start_loc, cache_scale=batch.cache_scale,
                           out=out, workspace=workspace, num_kv_splits=num_kv_splits)
    torch.cuda.synchronize()
    return out


def assert_matches(name, out, ref, rel_bound=REL_L2, row_bound=ROW_REL_L2):
    """`out` within `rel_bound` relative L2 of `ref` over all rows, and each
    (token, head) row within `row_bound` (None: not checked); no NaN/inf."""
    assert out.shape == ref.shape, (name, out.shape, ref.shape)
    assert bool(torch.isfinite(ref).all()), f"{name}: the reference is not finite"
    bad = ~torch.isfinite(out)
    assert not bool(bad.any()), f"{name}: {int(bad.sum())} non-finite outputs, first at " \
        f"{tuple(int(i) for i in bad.nonzero()[0])}"
    diff = out.double() - ref
    rel = float(diff.norm() / ref.norm())
    assert rel < rel_bound, f"{name}: relative L2 error {rel:.3e} >= {rel_bound:.3e}"
    if row_bound is None:
        return
    row_rel = diff.norm(dim=-1) / ref.norm(dim=-1).clamp_min(1e-30)
    worst = float(row_rel.max())
    assert worst < row_bound, (f"{name}: row {tuple(int(i) for i in (row_rel == row_rel.max()).nonzero()[0])} "
                               f"relative L2 error {worst:.3e} >= {row_bound}")


def assert_matches_fp8(name, out, batch, causal=True):
    """An fp8-cache output: bf16 bounds against the dequantised cache's
    reference, the quantisation's bound (plus bf16's) against the exact one."""
    assert_matches(f"{name} (dequantised reference)", out, batch.reference(causal))
    assert_matches(f"{name} (unquantised reference)", out, batch.reference(causal, exact=True),
                   rel_bound=batch.fp8_bound() + REL_L2, row_bound=None)


def max_splits_accepted(model, batch):
    """The largest count the launch accepts: max_kv_splits, lowered to what
    the workspace holds for this batch's grid (base = grid x)."""
    hints = model.kernel(LAYER, "latent_attention").abi["hints"]
    tokens = batch.query.shape[0]
    base = -(-tokens * batch.heads // 64) + len(batch.lens)
    return max(1, min(int(hints["max_kv_splits"]), 2 * int(hints["target_ctas"]) // base))


CASES = [
    # heads, page, lens, mtp, splits
    (128, 64, [1, 63, 64, 65, 130, 4096], 1, "auto"),
    (128, 64, [777, 4096], 1, 1),
    (128, 64, [3000], 1, "max"),
    (128, 16, [5, 200, 1031], 2, "auto"),
    (128, 64, [4, 64, 300], 3, "max"),
    (64, 64, [1, 100, 2049], 1, "auto"),
    (64, 16, [33, 64, 65, 700], 2, 7),
    (64, 64, [4096, 10], 4, "max"),
    (16, 64, [1, 63, 65, 130, 1000], 1, "auto"),
    (16, 16, [4, 64, 200, 333], 4, "auto"),
    (16, 64, [4096], 1, "max"),
    (16, 64, [4096], 4, 1),
    (16, 16, [17, 1500, 4, 64, 129, 900, 3, 4000], 3, "max"),
]


#: kv_lora_rank 256 (Mistral 4: each warpgroup keeps 128 output columns, K
#: tiles of 5 column blocks): H 16 and 128, 1 and 3 query rows, pages of 16
#: and 64, no split, the automatic rule (which splits these small batches)
#: and the most the launch accepts.
CASES_R256 = [
    # heads, page, lens, mtp, splits
    (128, 64, [1, 63, 64, 65, 130, 4096], 1, "auto"),
    (128, 64, [777, 4096], 1, 1),
    (128, 16, [5, 200, 1031], 3, "max"),
    (128, 16, [3, 64, 129, 2000], 3, 1),
    (16, 64, [1, 63, 65, 130, 1000], 1, "auto"),
    (16, 16, [4, 64, 200, 333], 3, "auto"),
    (16, 64, [4096], 3, "max"),
    (16, 16, [4096, 77], 1, 1),
    (16, 16, [17, 1500, 4, 64, 129, 900, 3, 4000], 1, "max"),
]


def check_against_reference(heads, page, lens, mtp, splits, rank=R):
    model = model_for(heads, page, rank=rank)
    key = (heads, page, tuple(lens), mtp) + ((rank,) if rank != R else ())
    batch = Batch(heads, page, lens, mtp, seed=hash(key) % 2**31, rank=rank)
    count = {"auto": None, "max": max_splits_accepted(model, batch)}.get(splits, splits)
    ws = poisoned_workspace(model)
    ref = batch.reference()
    for launch in range(2):  # the second reuses the workspace
        out = launch_decode(model, batch, ws, count)
        assert_matches(f"R {rank} launch {launch} splits {splits} ({count})", out, ref)


@pytest.mark.parametrize("heads,page,lens,mtp,splits", CASES,
                         ids=[f"h{c[0]}-p{c[1]}-mtp{c[3]}-s{c[4]}-{i}" for i, c in enumerate(CASES)])
def test_latent_attention_matches_reference(heads, page, lens, mtp, splits):
    check_against_reference(heads, page, lens, mtp, splits)


@pytest.mark.parametrize("heads,page,lens,mtp,splits", CASES_R256,
                         ids=[f"h{c[0]}-p{c[1]}-mtp{c[3]}-s{c[4]}-{i}" for i, c in enumerate(CASES_R256)])
def test_r256_matches_reference(heads, page, lens, mtp, splits):
    check_against_reference(heads, page, lens, mtp, splits, rank=256)


#: The other ranks the kernel takes (multiples of 128 up to 512): 384
#: (wgmma n192, K tiles of 7 column blocks) and 128 (n64, 3 blocks).
CASES_OTHER_RANKS = [
    # rank, heads, page, lens, mtp, splits
    (384, 128, 64, [1, 63, 65, 130, 4096], 1, "auto"),
    (384, 16, 16, [4, 64, 200, 333], 3, "max"),
    (384, 16, 64, [2000, 9], 1, 1),
    (128, 128, 64, [1, 63, 65, 130, 4096], 1, "auto"),
    (128, 16, 16, [4, 64, 200, 333], 3, "max"),
    (128, 16, 64, [2000, 9], 1, 1),
]


@pytest.mark.parametrize("rank,heads,page,lens,mtp,splits", CASES_OTHER_RANKS,
                         ids=[f"r{c[0]}-h{c[1]}-p{c[2]}-mtp{c[4]}-s{c[5]}-{i}"
                              for i, c in enumerate(CASES_OTHER_RANKS)])
def test_other_ranks_match_reference(rank, heads, page, lens, mtp, splits):
    check_against_reference(heads, page, lens, mtp, splits, rank=rank)


def test_r256_splits_happen():
    """The R 256 cases above split where the rule says so (the "auto" ones
    with few row tiles), so the R-sized workspace partials and the merge
    run."""
    model = model_for(16, 64, rank=256)
    assert model.latent_attention_splits(LAYER, 5, 5) > 1
    assert model.latent_attention_workspace_size(LAYER) == \
        2 * int(model.kernel(LAYER, "latent_attention").abi["hints"]["target_ctas"]) * 64 * (256 + 2) \
        + int(model.kernel(LAYER, "latent_attention").abi["hints"]["target_ctas"])


FP8_CASES = [
    # heads, page, lens, mtp, splits (the cache fp8 e4m3, cache_scale CACHE_SCALE)
    (128, 64, [1, 63, 64, 65, 130, 4096], 1, "auto"),
    (128, 16, [5, 200, 1031], 3, 1),
    (128, 64, [3000, 777], 1, "max"),
    (16, 64, [1, 63, 65, 130, 1000], 1, 1),
    (16, 16, [4, 64, 200, 333], 3, "max"),
    (16, 64, [4096, 2049], 1, "auto"),
    (16, 16, [17, 1500, 4, 64, 129, 900, 3, 4000], 3, "auto"),
]


@pytest.mark.parametrize("heads,page,lens,mtp,splits", FP8_CASES,
                         ids=[f"fp8-h{c[0]}-p{c[1]}-mtp{c[3]}-s{c[4]}-{i}" for i, c in enumerate(FP8_CASES)])
def test_fp8_latent_cache_matches_reference(heads, page, lens, mtp, splits):
    model = model_for(heads, page, fp8=True)
    batch = Batch(heads, page, lens, mtp, seed=hash((heads, page, tuple(lens), mtp, 8)) % 2**31, fp8=True)
    count = {"auto": None, "max": max_splits_accepted(model, batch)}.get(splits, splits)
    if splits == "auto":  # the rule splits these batches (split-KV on)
        assert model.latent_attention_splits(LAYER, batch.query.shape[0], len(lens)) > 1
    ws = poisoned_workspace(model)
    for launch in range(2):  # the second reuses the workspace
        out = launch_decode(model, batch, ws, count)
        assert_matches_fp8(f"launch {launch} splits {splits}", out, batch)


@pytest.mark.parametrize("fp8,rank", [(False, R), (True, R), (False, 256), (True, 256)],
                         ids=["bf16", "fp8", "bf16-r256", "fp8-r256"])
def test_strided_cache_view_and_default_workspace(fp8, rank):
    model = model_for(16, 64, fp8=fp8, rank=rank)
    batch = Batch(16, 64, [70, 2, 2000], 2, seed=7, strided=True, fp8=fp8, rank=rank)
    assert batch.cache.stride(1) == rank + P + 64
    out = model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                 block_tables=batch.tables, seq_lens=batch.seq_lens,
                                 query_start_loc=batch.query_start_loc,
                                 cache_scale=batch.cache_scale)
    torch.cuda.synchronize()
    if fp8:
        assert_matches_fp8("strided view", out, batch)
    else:
        assert_matches("strided view", out, batch.reference())


@pytest.mark.parametrize("heads,splits,fp8,rank", [
    (128, 1, False, R), (16, 1, False, R), (128, "max", False, R),
    (128, 1, True, R), (16, "max", True, R), (128, 1, False, 256), (16, "max", False, 256)])
def test_row_maxima_rising_on_both_warpgroups_tiles(heads, splits, fp8, rank):
    """Scores that rise along the keys move the running row maxima in most
    64-key tiles, those of either warpgroup (even and odd tiles), so the
    rescale of both output halves is exercised each way."""
    model = model_for(heads, 64, fp8=fp8, rank=rank)
    batch = Batch(heads, 64, [4096, 777, 130, 64], 1, seed=23, trend=14.0, fp8=fp8, rank=rank)
    count = {"max": max_splits_accepted(model, batch)}.get(splits, splits)
    out = launch_decode(model, batch, poisoned_workspace(model), count)
    if fp8:
        assert_matches_fp8(f"R {rank} rising scores, splits {splits}", out, batch)
    else:
        assert_matches(f"R {rank} rising scores, splits {splits}", out, batch.reference())


def test_fp8_cache_scale_is_read_at_launch():
    """One compiled kernel, two scales: the same e4m3 bytes read with
    cache_scale 2c mean rows twice as large (scores doubled, output
    doubled), checked against the reference of those rows."""
    model = model_for(16, 64, fp8=True)
    batch = Batch(16, 64, [300, 1000], 1, seed=5, fp8=True)
    doubled = torch.tensor(2 * CACHE_SCALE, dtype=torch.float32, device="cuda")
    out = model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                 block_tables=batch.tables, seq_lens=batch.seq_lens,
                                 query_start_loc=batch.query_start_loc, cache_scale=doubled)
    torch.cuda.synchronize()
    batch.rows_cache = batch.rows_cache * 2  # exact: a power of two
    assert_matches("cache_scale doubled", out, batch.reference())


@pytest.mark.parametrize("fp8,rank", [(False, R), (True, R), (False, 256)],
                         ids=["bf16", "fp8", "bf16-r256"])
def test_non_causal(fp8, rank):
    model = model_for(64, 64, causal=False, fp8=fp8, rank=rank)
    batch = Batch(64, 64, [100, 1000], 3, seed=11, fp8=fp8, rank=rank)
    out = model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                 block_tables=batch.tables, seq_lens=batch.seq_lens,
                                 query_start_loc=batch.query_start_loc,
                                 cache_scale=batch.cache_scale)
    torch.cuda.synchronize()
    if fp8:
        assert_matches_fp8("non-causal", out, batch, causal=False)
    else:
        assert_matches("non-causal", out, batch.reference(causal=False))


def test_split_counts_out_of_range_are_refused():
    model = model_for(128, 64)
    batch = Batch(128, 64, [300, 200], 1, seed=3)
    top = max_splits_accepted(model, batch)
    for bad in (0, -1, top + 1):
        with pytest.raises(attnc.ArgumentError) as error:
            model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                   block_tables=batch.tables, seq_lens=batch.seq_lens,
                                   query_start_loc=batch.query_start_loc, num_kv_splits=bad)
        assert error.value.argument == "num_kv_splits"


def test_automatic_split_rule_fills_the_gpu():
    """B 1 and B 8 at H 128 split; B 64 and 128 (H 128) and B 128 (H 16) do
    not: their busy CTAs fill the SMs."""
    model = model_for(128, 64)
    target = int(model.kernel(LAYER, "latent_attention").abi["hints"]["target_ctas"])
    maximum = int(model.kernel(LAYER, "latent_attention").abi["hints"]["max_kv_splits"])
    assert model.latent_attention_splits(LAYER, 1, 1) == min(maximum, target // 2)
    assert model.latent_attention_splits(LAYER, 8, 8) == min(maximum, target // 16)
    assert model.latent_attention_splits(LAYER, 64, 64) == max(1, target // 128)
    assert model.latent_attention_splits(LAYER, 128, 128) == 1
    assert model_for(16, 64).latent_attention_splits(LAYER, 128, 128) == max(1, target // 128)


#: The split-KV merge (a binary tree over a row tile's splits: the second
#: state to reach a node adds the first's into its registers, the root's
#: CTA writes the output): the most splits with one row tile (H 64) and two
#: (H 128), split counts that are not powers of two (nodes without a right
#: run), more splits than key tiles (empty splits: no keys, maxima -inf),
#: the long decode the tree is for (B 1, L 32768, H 128 and H 16), R 256,
#: 384 and 128.
CASES_MERGE = [
    # rank, heads, page, lens, mtp, splits
    (R, 64, 64, [4096], 1, "max"),
    (R, 128, 64, [4096], 1, "max"),
    (R, 128, 64, [32768], 1, "auto"),
    (R, 128, 64, [32768], 1, "max"),
    (R, 16, 64, [32768], 1, "auto"),
    (R, 16, 16, [32768], 2, "max"),
    (R, 128, 64, [5000], 1, 31),
    (R, 128, 64, [5000], 1, 7),
    (R, 64, 64, [3000], 1, 3),
    (R, 128, 64, [700], 1, "max"),  # 11 key tiles for 32 splits
    (R, 16, 64, [1, 65], 1, "max"),  # a single key: one split of keys
    (256, 128, 64, [32768], 1, "max"),
    (256, 16, 16, [9000, 3], 3, 13),
    (384, 128, 64, [20000], 1, "max"),  # 24 accumulator groups a thread
    (128, 16, 64, [20000], 1, "max"),
]


@pytest.mark.parametrize("rank,heads,page,lens,mtp,splits", CASES_MERGE,
                         ids=[f"merge-r{c[0]}-h{c[1]}-p{c[2]}-L{max(c[3])}-mtp{c[4]}-s{c[5]}-{i}"
                              for i, c in enumerate(CASES_MERGE)])
def test_merge_tree_matches_reference(rank, heads, page, lens, mtp, splits):
    check_against_reference(heads, page, lens, mtp, splits, rank=rank)


@pytest.mark.parametrize("fp8,rank", [(False, R), (True, R), (False, 256)],
                         ids=["bf16", "fp8", "bf16-r256"])
def test_merge_tree_reuses_the_workspace_across_split_counts(fp8, rank):
    """One workspace, launches of different split counts (different trees,
    so different node flags): each matches the reference and leaves every
    counter word zero (the contract that makes the workspace reusable, CUDA
    graph replays included)."""
    heads = 128
    model = model_for(heads, 64, fp8=fp8, rank=rank)
    batch = Batch(heads, 64, [32768 if not fp8 else 8192, 1000], 1, seed=29, fp8=fp8, rank=rank)
    top = max_splits_accepted(model, batch)
    target = int(model.kernel(LAYER, "latent_attention").abi["hints"]["target_ctas"])
    ws = poisoned_workspace(model)
    ref = batch.reference()
    for count in (top, 5, top, 2, top - 1):
        out = launch_decode(model, batch, ws, count)
        if fp8:
            assert_matches_fp8(f"splits {count}", out, batch)
        else:
            assert_matches(f"R {rank} splits {count}", out, ref)
        counters = ws[ws.numel() - target:].view(torch.int32)  # (bits: -0.0 == 0 as floats)
        assert int((counters != 0).sum()) == 0, f"splits {count}: counter words left set"


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_merge_tree_fp8_and_bf16_at_most_splits(fp8):
    """B 1 and B 2 at the most splits the launch takes, fp8 and bf16 caches,
    rising scores (the splits' maxima differ widely, so the tree's weights
    span many powers of two)."""
    model = model_for(128, 64, fp8=fp8)
    for lens in ([20000], [9000, 12000]):
        batch = Batch(128, 64, lens, 1, seed=31 + len(lens), trend=14.0, fp8=fp8)
        count = max_splits_accepted(model, batch)
        out = launch_decode(model, batch, poisoned_workspace(model), count)
        if fp8:
            assert_matches_fp8(f"B {len(lens)} splits {count}", out, batch)
        else:
            assert_matches(f"B {len(lens)} splits {count}", out, batch.reference())
