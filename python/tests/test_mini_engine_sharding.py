"""The mini engine's tensor-parallel weight slicing (examples/mini_engine/
sharding.py; plain Python, no torch, no GPU).

* Field for field equal to the layout library's shards as ``attnc layout
  --tp N --json`` prints them, for every rank of the TP check's models
  (mini_engine.families) and of bundled real configs at several tp.
* Hand-derived rows of one small gated, KV-replicated case.
* What the engine relies on: the ranks' query heads partition the heads,
  each rank's KV head is the one its query heads read, and the o_proj
  column slices partition o_proj's input.
"""

import json
import os
import subprocess
import sys

import pytest

from attnc_cpu_helpers import CONFIG_DIR, REPO

sys.path.insert(0, str(REPO / "examples"))
from mini_engine import families, sharding  # noqa: E402

from pathlib import Path

#: The CLI of this checkout's build ($ATTNC_CLI to use another build's).
ATTNC_CLI = Path(os.environ.get("ATTNC_CLI") or REPO / "build" / "bin" / "attnc")

needs_cli = pytest.mark.skipif(not ATTNC_CLI.is_file(),
                               reason="skipped: build/bin/attnc is not built")

#: The models of the TP check (examples/mini_engine/check_tp.py).
TP_FAMILIES = ["llama", "gemma3_1b", "mimo_v2_flash", "qwen3_next"]

#: Bundled real configs and the degrees their heads allow (replication
#: where tp > num_kv_heads).
REAL = [("llama-3.1-8b-instruct.json", (2, 8, 16, 32)),
        ("qwen3-next-80b-a3b.json", (2, 4, 8, 16)),
        ("gemma-3-27b-it.json", (2, 16, 32)),
        ("mimo-v2-flash.json", (2, 4, 8)),
        ("gpt-oss-20b.json", (2, 8, 16, 64))]


def _layout(path, tp):
    out = subprocess.run([str(ATTNC_CLI), "layout", str(path), "--tp", str(tp), "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["layer_kinds"]


def _check_against_cli(path, tp):
    kinds = _layout(path, tp)
    assert kinds
    for kind in kinds:
        assert sharding.fused_layout(sharding.head_shape(kind)) == (
            kind["fused_width"], kind["segments"]), kind["name"]
        ranks = kind["tensor_parallel"]["ranks"]
        assert [r["rank"] for r in ranks] == list(range(tp))
        for expected in ranks:
            got = sharding.rank_shard(kind, tp, expected["rank"])
            assert got == expected, (kind["name"], tp, expected["rank"])


@needs_cli
@pytest.mark.parametrize("tp", [1, 2])
@pytest.mark.parametrize("name", TP_FAMILIES)
def test_tp_families_match_attnc_layout(name, tp, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(families.config_dict(families.FAMILIES[name])))
    _check_against_cli(path, tp)


@needs_cli
@pytest.mark.parametrize("config,degrees", REAL, ids=[c for c, _ in REAL])
def test_real_configs_match_attnc_layout(config, degrees):
    for tp in degrees:
        _check_against_cli(CONFIG_DIR / config, tp)


def test_gated_replicated_rows_by_hand():
    # Hq 4, Hkv 1, Dqk = Dv = 2, gate interleaved with q: q_proj is per head
    # [q_h (2 rows) | g_h (2 rows)], 16 rows. tp 2: each rank has 2 query
    # heads and a replica of KV head 0.
    kind = dict(num_q_heads=4, num_kv_heads=1, qk_head_dim=2, v_head_dim=2,
                gate="interleaved")
    sources = {"q_proj": [f"q{i}" for i in range(16)],
               "k_proj": ["k0", "k1"], "v_proj": ["v0", "v1"]}
    rank1 = sharding.rank_shard(kind, 2, 1)
    assert rank1["kv_replicated"] and rank1["first_q_head"] == 2
    assert rank1["first_kv_head"] == 0
    # Local layout: [q2 g2 q3 g3 | k0 | v0], 4 + 4 + 4 + 2 + 2 = 12 rows.
    assert rank1["fused_width"] == 12
    assert sharding.gather_rows(rank1["copies_from_separate"], sources) == (
        [f"q{i}" for i in range(8, 16)] + ["k0", "k1", "v0", "v1"])
    rank0 = sharding.rank_shard(kind, 2, 0)
    assert sharding.gather_rows(rank0["copies_from_separate"], sources) == (
        [f"q{i}" for i in range(0, 8)] + ["k0", "k1", "v0", "v1"])
    # The unsharded fused tensor is q_proj | k_proj | v_proj here.
    fused = {"fused": sources["q_proj"] + sources["k_proj"] + sources["v_proj"]}
    assert sharding.gather_rows(rank1["copies_from_fused"], fused) == (
        sharding.gather_rows(rank1["copies_from_separate"], sources))
    # o_proj input: rank 1's heads 2 and 3 are columns [4, 8) of 8.
    assert sharding.o_proj_columns(kind, rank1) == (4, 8)
    assert sharding.q_head_range(rank1) == (2, 4)


def test_plain_gqa_rows_by_hand():
    # Hq 4, Hkv 2, Dqk 3, Dv 2, tp 2: rank 1 has q heads 2, 3 and KV head 1.
    kind = dict(num_q_heads=4, num_kv_heads=2, qk_head_dim=3, v_head_dim=2)
    sources = {"q_proj": list(range(12)), "k_proj": list(range(100, 106)),
               "v_proj": list(range(200, 204))}
    rank1 = sharding.rank_shard(kind, 2, 1)
    assert not rank1["kv_replicated"]
    assert sharding.gather_rows(rank1["copies_from_separate"], sources) == (
        list(range(6, 12)) + [103, 104, 105] + [202, 203])
    assert len(rank1["copies_from_separate"]) == 3  # one run per segment


@pytest.mark.parametrize("hq,hkv,tp", [(8, 2, 2), (4, 1, 2), (16, 1, 2), (16, 2, 2),
                                       (16, 2, 4), (16, 2, 8), (32, 8, 4), (32, 8, 16)])
def test_ranks_partition_heads(hq, hkv, tp):
    kind = dict(num_q_heads=hq, num_kv_heads=hkv, qk_head_dim=192, v_head_dim=128)
    group = hq // hkv
    heads, columns = [], []
    for rank in range(tp):
        shard = sharding.rank_shard(kind, tp, rank)
        start, stop = sharding.q_head_range(shard)
        heads.extend(range(start, stop))
        columns.extend(range(*sharding.o_proj_columns(kind, shard)))
        # Every local query head reads a KV head the rank holds, the one
        # the unsharded model pairs it with.
        local_group = shard["num_q_heads"] // shard["num_kv_heads"]
        for local in range(shard["num_q_heads"]):
            assert shard["first_kv_head"] + local // local_group == (start + local) // group
    assert heads == list(range(hq))
    assert columns == list(range(hq * 128))


@pytest.mark.parametrize("kind,tp,rank,field", [
    (dict(num_q_heads=6, num_kv_heads=2, qk_head_dim=8, v_head_dim=8), 4, 0, "tp"),
    (dict(num_q_heads=12, num_kv_heads=6, qk_head_dim=8, v_head_dim=8), 4, 0, "tp"),
    (dict(num_q_heads=12, num_kv_heads=3, qk_head_dim=8, v_head_dim=8), 4, 0, "tp"),
    (dict(num_q_heads=8, num_kv_heads=2, qk_head_dim=8, v_head_dim=8), 2, 2, "rank"),
    (dict(num_q_heads=8, num_kv_heads=3, qk_head_dim=8, v_head_dim=8), 1, 0, "num_kv_heads"),
    (dict(num_q_heads=8, num_kv_heads=2, qk_head_dim=8, v_head_dim=8, gate="odd"), 1, 0, "gate"),
])
def test_refusals_name_the_field(kind, tp, rank, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        sharding.rank_shard(kind, tp, rank)
