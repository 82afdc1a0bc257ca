"""Which checkpoint rows and columns one tensor-parallel rank of the mini
engine loads (plain Python, no torch).

attnc's layout library (``plan/Layout.h``: ``computeFusedLayout``,
``computeRankShard``) is the source of truth for the fused QKV(G) layout
and the per-rank shards; the Python package exposes it only through the
compiled kernels' ABI, the CLI prints it (``attnc layout CONFIG --tp N
[--rank R] --json``). This module restates the same rule so that the
engine can slice weights without the CLI at run time, and its output is
the CLI's JSON entry, field for field (python/tests/
test_mini_engine_sharding.py checks it against ``attnc layout --json``
for every rank of the shapes the TP check runs, and the engine checks the
local head counts and fused width against the compiled shard's ABI).

The rule (the layout library's):

* tp divides Hq; each rank holds Hq / tp consecutive query heads, rank r
  from head r * Hq / tp.
* tp <= Hkv: tp divides Hkv, rank r holds Hkv / tp KV heads from head
  r * Hkv / tp. tp > Hkv: Hkv divides tp, every rank holds one KV head,
  rank r the head r * Hkv / tp (the KV head of its query heads): each KV
  head is replicated on tp / Hkv consecutive ranks.
* The rank's fused row is the layout of its local shape; ``copies`` say
  which rows of q_proj / k_proj / v_proj (/ g_proj) -- or of the unsharded
  fused tensor -- fill it, sorted by destination row, adjacent runs merged.

The attention output of the rank is ``[T, Hq / tp, Dv]``: its heads are the
columns ``[first_q_head * Dv, (first_q_head + Hq / tp) * Dv)`` of
``o_proj``'s input, so ``o_proj`` is row-parallel (each rank multiplies by
its column slice of the weight and the partial outputs are summed).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple

GATES = ("none", "qkvg", "interleaved", "head_scalar")
FORMS = ("separate", "fused")


def _positive(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{field}: must be an int (got {value!r})")
    if value < 1:
        raise ValueError(f"{field}: must be >= 1 (got {value})")
    return value


def head_shape(kind: Mapping[str, Any]) -> Dict[str, Any]:
    """The head shape of a layer kind in attnc spec form (``Model.config[
    "layer_kinds"][i]``, or an ``attnc layout --json`` kind): Hq, Hkv, Dqk,
    Dv and the gate layout, checked as the layout library checks them."""
    shape = {name: _positive(name, kind[name])
             for name in ("num_q_heads", "num_kv_heads", "qk_head_dim", "v_head_dim")}
    gate = kind.get("gate", kind.get("gate_layout", "none"))
    if gate not in GATES:
        raise ValueError(f"gate: unknown gate layout {gate!r} (one of {', '.join(GATES)})")
    if shape["num_q_heads"] % shape["num_kv_heads"]:
        raise ValueError(f"num_kv_heads: must divide num_q_heads "
                         f"({shape['num_q_heads']} % {shape['num_kv_heads']} != 0)")
    shape["gate"] = gate
    return shape


def _q_pitch(shape: Mapping[str, Any]) -> int:
    """Columns a query head takes in q_proj / the fused q block: Dqk, or
    Dqk + Dv when the gate is interleaved with q."""
    if shape["gate"] == "interleaved":
        return shape["qk_head_dim"] + shape["v_head_dim"]
    return shape["qk_head_dim"]


def _segment(name: str, offset: int, heads: int, size: int, stride: int) -> Dict[str, int]:
    return {"segment": name, "offset": offset, "num_heads": heads,
            "head_size": size, "head_stride": stride, "size": heads * size}


def fused_layout(shape: Mapping[str, Any]) -> Tuple[int, List[Dict[str, int]]]:
    """(fused width, segments) of a head shape, segments in the CLI's form
    and order: q, k, v, then the gate if any."""
    hq, hkv = shape["num_q_heads"], shape["num_kv_heads"]
    dqk, dv = shape["qk_head_dim"], shape["v_head_dim"]
    pitch = _q_pitch(shape)
    q = _segment("q", 0, hq, dqk, pitch)
    k = _segment("k", hq * pitch, hkv, dqk, dqk)
    v = _segment("v", k["offset"] + k["size"], hkv, dv, dv)
    width = v["offset"] + v["size"]
    segments = [q, k, v]
    gate = shape["gate"]
    if gate == "qkvg":
        segments.append(_segment("gate", width, hq, dv, dv))
        width += hq * dv
    elif gate == "interleaved":
        # Gate head h follows q head h inside the q block (already counted).
        segments.append(_segment("gate", dqk, hq, dv, pitch))
    elif gate == "head_scalar":
        segments.append(_segment("gate", width, hq, 1, 1))
        width += hq
    return width, segments


def _source_of_head(shape, global_segments, segment: str, head: int,
                    form: str) -> Tuple[str, int]:
    """(checkpoint tensor, first row) of global head `head` of `segment`."""
    if form == "fused":
        seg = next(s for s in global_segments if s["segment"] == segment)
        return "fused", seg["offset"] + head * seg["head_stride"]
    dqk, dv = shape["qk_head_dim"], shape["v_head_dim"]
    if segment == "q":
        return "q_proj", head * _q_pitch(shape)
    if segment == "k":
        return "k_proj", head * dqk
    if segment == "v":
        return "v_proj", head * dv
    if shape["gate"] == "interleaved":
        return "q_proj", head * _q_pitch(shape) + dqk
    if shape["gate"] == "head_scalar":
        return "g_proj", head
    return "g_proj", head * dv


def _copies(shape, local_segments, first_q: int, first_kv: int, form: str):
    _, global_segments = fused_layout(shape)
    per_head = []
    for seg in local_segments:
        first = first_kv if seg["segment"] in ("k", "v") else first_q
        for h in range(seg["num_heads"]):
            source, row = _source_of_head(shape, global_segments, seg["segment"],
                                          first + h, form)
            per_head.append({"segment": seg["segment"], "source": source,
                             "source_row": row,
                             "dest_row": seg["offset"] + h * seg["head_stride"],
                             "rows": seg["head_size"]})
    per_head.sort(key=lambda c: c["dest_row"])
    merged: List[Dict[str, Any]] = []
    for copy in per_head:
        last = merged[-1] if merged else None
        if (last is not None and last["segment"] == copy["segment"]
                and last["source"] == copy["source"]
                and last["dest_row"] + last["rows"] == copy["dest_row"]
                and last["source_row"] + last["rows"] == copy["source_row"]):
            last["rows"] += copy["rows"]
        else:
            merged.append(dict(copy))
    return merged


def rank_shard(kind: Mapping[str, Any], tp: int, rank: int) -> Dict[str, Any]:
    """Rank `rank`'s shard of a layer kind at tensor-parallel degree `tp`,
    as ``attnc layout --tp TP --json`` prints it under
    ``layer_kinds[i].tensor_parallel.ranks[j]`` (rank, kv_replicated,
    first_q_head, first_kv_head, num_q_heads, num_kv_heads, fused_width,
    segments, copies_from_separate, copies_from_fused).

    Raises ValueError naming ``tp`` or ``rank`` where the layout library
    refuses the split."""
    shape = head_shape(kind)
    tp = _positive("tp", tp)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < tp:
        raise ValueError(f"rank: must be in [0, tp) (got {rank!r}, tp = {tp})")
    hq, hkv = shape["num_q_heads"], shape["num_kv_heads"]
    if hq % tp:
        raise ValueError(f"tp: must divide num_q_heads ({hq} % {tp} != 0)")
    replicated = tp > hkv
    if replicated and tp % hkv:
        raise ValueError(f"tp: must be a multiple of num_kv_heads when larger than "
                         f"it ({tp} % {hkv} != 0)")
    if not replicated and hkv % tp:
        raise ValueError(f"tp: must divide num_kv_heads ({hkv} % {tp} != 0)")
    local = dict(shape, num_q_heads=hq // tp, num_kv_heads=1 if replicated else hkv // tp)
    width, segments = fused_layout(local)
    first_q = rank * local["num_q_heads"]
    first_kv = rank * hkv // tp if replicated else rank * local["num_kv_heads"]
    return {"rank": rank, "kv_replicated": replicated,
            "first_q_head": first_q, "first_kv_head": first_kv,
            "num_q_heads": local["num_q_heads"], "num_kv_heads": local["num_kv_heads"],
            "fused_width": width, "segments": segments,
            "copies_from_separate": _copies(shape, segments, first_q, first_kv, "separate"),
            "copies_from_fused": _copies(shape, segments, first_q, first_kv, "fused")}


def o_proj_columns(kind: Mapping[str, Any], shard: Mapping[str, Any]) -> Tuple[int, int]:
    """[start, stop) of o_proj's input columns that rank `shard` multiplies:
    its query heads' Dv outputs."""
    dv = head_shape(kind)["v_head_dim"]
    start = shard["first_q_head"] * dv
    return start, start + shard["num_q_heads"] * dv


def q_head_range(shard: Mapping[str, Any]) -> Tuple[int, int]:
    """[start, stop) of the global query heads the rank holds (per-head
    parameters such as sinks are sliced by it)."""
    return shard["first_q_head"], shard["first_q_head"] + shard["num_q_heads"]


def row_runs(copies, lengths: Mapping[str, int]) -> List[Tuple[str, int, int]]:
    """(source tensor, first row, stop row) of each copy in destination
    order, checked: the copies cover [0, width) once, in order, and read
    rows each source has (``lengths[name]``: its row count)."""
    runs: List[Tuple[str, int, int]] = []
    filled = 0
    for copy in copies:
        if copy["dest_row"] != filled:
            raise ValueError(f"copies: row {copy['dest_row']} follows row {filled}")
        stop = copy["source_row"] + copy["rows"]
        if copy["source"] not in lengths:
            raise ValueError(f"copies: no source tensor {copy['source']!r}")
        if stop > lengths[copy["source"]]:
            raise ValueError(f"copies: {copy['source']} has {lengths[copy['source']]} rows, "
                             f"a copy reads up to {stop}")
        runs.append((copy["source"], copy["source_row"], stop))
        filled += copy["rows"]
    return runs


def gather_rows(copies, sources: Mapping[str, List[Any]]) -> List[Any]:
    """The rank's fused rows from per-tensor row lists (``sources[name]``:
    the rows of q_proj, k_proj, ... in order): the copies applied to plain
    lists, as the engine applies them to weight tensors (``torch.cat`` of
    the same runs)."""
    rows: List[Any] = []
    for source, start, stop in row_runs(copies, {k: len(v) for k, v in sources.items()}):
        rows.extend(sources[source][start:stop])
    return rows
