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

Poisoning: outputs are NaN-filled before each launch; the workspace's
partial area is NaN-filled (its counters zero, as the contract asks); cache
rows past every sequence's end and a block no sequence owns (where unused
block-table entries point) hold NaN, so a key read past a sequence's end
reaches the output (0 x NaN is NaN in P V). NaN never passes.
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


def layer_ir(heads: int, page: int, causal: bool = True, rank: int = R) -> str:
    d = rank + P
    return f"""
func.func @{LAYER}(%q: tensor<?x{heads}x{d}xbf16>, %cache: tensor<?x{page}x{d}xbf16>,
                   %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> tensor<?x{heads}x{rank}xbf16> {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {{kv_lora_rank = {rank}, softmax_scale = {SCALE} : f64, causal = {str(causal).lower()}}}
      : tensor<?x{heads}x{d}xbf16>, tensor<?x{page}x{d}xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{heads}x{rank}xbf16>
  return %o : tensor<?x{heads}x{rank}xbf16>
}}
"""


_MODELS = {}


def model_for(heads: int, page: int, causal: bool = True, rank: int = R):
    key = (heads, page, causal, rank)
    if key not in _MODELS:
        _MODELS[key] = attnc.compile_ir(layer_ir(heads, page, causal, rank))
    return _MODELS[key]


class Batch:
    """Random queries and a paged latent cache for `lens` sequences of `mtp`
    query rows each; NaN in every cache row no sequence owns."""

    def __init__(self, heads, page, lens, mtp, seed, strided=False, trend=0.0, rank=R):
        # Every query row sees at least one key (seq_len >= query rows).
        assert min(lens) >= mtp, (lens, mtp)
        gen = torch.Generator().manual_seed(seed)
        self.heads, self.page, self.lens, self.mtp = heads, page, list(lens), mtp
        self.rank = R = rank
        blocks = [max(1, -(-n // page)) for n in lens]
        num_blocks = sum(blocks) + 2  # block 0: owned by nobody
        width = R + P + (64 if strided else 0)
        cache = torch.full((num_blocks, page, width), float("nan"), dtype=torch.bfloat16)
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
                cache[b, :chunk.shape[0], :R + P] = chunk.to(torch.bfloat16)
        self.cache_storage = cache.cuda()
        self.cache = self.cache_storage[..., :R + P]  # a strided view when strided
        self.tables = tables.cuda()
        self.seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        tokens = len(lens) * mtp
        query = torch.randn(tokens, heads, R + P, generator=gen)
        if trend:
            query[..., R] = trend
        self.query = query.to(torch.bfloat16).cuda()
        self.query_start_loc = torch.arange(0, tokens + 1, mtp, dtype=torch.int32, device="cuda")

    def reference(self, causal=True):
        R = self.rank
        out = torch.empty(self.query.shape[0], self.heads, R, dtype=torch.float64, device="cuda")
        for s, n in enumerate(self.lens):
            nb = max(1, -(-n // self.page))
            rows = self.cache[self.tables[s, :nb].long()].reshape(-1, R + P)[:n].double()
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


def assert_matches(name, out, ref):
    assert out.shape == ref.shape, (name, out.shape, ref.shape)
    assert bool(torch.isfinite(ref).all()), f"{name}: the reference is not finite"
    bad = ~torch.isfinite(out)
    assert not bool(bad.any()), f"{name}: {int(bad.sum())} non-finite outputs, first at " \
        f"{tuple(int(i) for i in bad.nonzero()[0])}"
    diff = out.double() - ref
    rel = float(diff.norm() / ref.norm())
    assert rel < REL_L2, f"{name}: relative L2 error {rel:.3e} >= {REL_L2}"
    row_rel = diff.norm(dim=-1) / ref.norm(dim=-1).clamp_min(1e-30)
    worst = float(row_rel.max())
    assert worst < ROW_REL_L2, (f"{name}: row {tuple(int(i) for i in (row_rel == row_rel.max()).nonzero()[0])} "
                                f"relative L2 error {worst:.3e} >= {ROW_REL_L2}")


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
        out = torch.full((batch.query.shape[0], heads, rank), float("nan"),
                         dtype=torch.bfloat16, device="cuda")
        model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                               block_tables=batch.tables, seq_lens=batch.seq_lens,
                               query_start_loc=batch.query_start_loc, out=out,
                               workspace=ws, num_kv_splits=count)
        torch.cuda.synchronize()
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


@pytest.mark.parametrize("rank", [R, 256])
def test_strided_cache_view_and_default_workspace(rank):
    model = model_for(16, 64, rank=rank)
    batch = Batch(16, 64, [70, 2, 2000], 2, seed=7, strided=True, rank=rank)
    assert batch.cache.stride(1) == rank + P + 64
    out = model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                 block_tables=batch.tables, seq_lens=batch.seq_lens,
                                 query_start_loc=batch.query_start_loc)
    torch.cuda.synchronize()
    assert_matches("strided view", out, batch.reference())


@pytest.mark.parametrize("heads,splits,rank", [(128, 1, R), (16, 1, R), (128, "max", R),
                                               (128, 1, 256), (16, "max", 256)])
def test_row_maxima_rising_on_both_warpgroups_tiles(heads, splits, rank):
    """Scores that rise along the keys move the running row maxima in most
    64-key tiles, those of either warpgroup (even and odd tiles), so the
    rescale of both output halves is exercised each way."""
    model = model_for(heads, 64, rank=rank)
    batch = Batch(heads, 64, [4096, 777, 130, 64], 1, seed=23, trend=14.0, rank=rank)
    count = {"max": max_splits_accepted(model, batch)}.get(splits, splits)
    out = torch.full((batch.query.shape[0], heads, rank), float("nan"), dtype=torch.bfloat16, device="cuda")
    model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                           block_tables=batch.tables, seq_lens=batch.seq_lens,
                           query_start_loc=batch.query_start_loc, out=out,
                           workspace=poisoned_workspace(model), num_kv_splits=count)
    torch.cuda.synchronize()
    assert_matches(f"R {rank} rising scores, splits {splits}", out, batch.reference())


@pytest.mark.parametrize("rank", [R, 256])
def test_non_causal(rank):
    model = model_for(64, 64, causal=False, rank=rank)
    batch = Batch(64, 64, [100, 1000], 3, seed=11, rank=rank)
    out = model.latent_attention(LAYER, batch.query, latent_cache=batch.cache,
                                 block_tables=batch.tables, seq_lens=batch.seq_lens,
                                 query_start_loc=batch.query_start_loc)
    torch.cuda.synchronize()
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
