"""A mini paged-KV generation engine over a Hugging Face decoder model whose
attention runs in attnc kernels.

Everything but attention is the Hugging Face model's own modules
(embeddings, norms, MLPs / MoE, lm_head, the decoder layers' residual
wiring). Each layer's ``self_attn`` is replaced by :class:`AttncAttention`:
one matmul with the layer's q, k and v projection weights stacked in the
fused order attnc reads (``[q | k | v]``, gate layout none), attnc's
``Model.preprocess`` (q/k norm, rope, paged cache write) and
``Model.attention`` (paged, varlen rows), then the layer's ``o_proj``.

The scheduler batches requests continuously: every step takes one row for
each request that is decoding and fills the rest of a token budget with
prompt chunks (chunked prefill), all in one varlen batch. Steps made only of
decode rows run as CUDA graphs, one captured per batch-size bucket and
replayed with the batch's metadata copied into its static buffers.

Tensor parallelism (``tp > 1``): attention is split by heads as attnc's
layout library says (``sharding.py``). Each rank has its own attnc model
(``attnc.compile(config, tp=tp, rank=rank)``: kernels over its heads), its
rows of the q/k/v(/gate) projection (KV heads replicated where tp > Hkv),
its KV caches, and its column slice of ``o_proj``; the partial ``o_proj``
outputs are summed -- by ``all_reduce`` (``torch.distributed``, one process
per GPU) or, where one process runs every rank (``ranks=range(tp)``), in
the process. Everything else stays replicated. ``check_tp.py`` runs both.

Python and torch only; no part of vLLM or nano-vllm is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from . import sharding


# ---- requests and the block allocator ----------------------------------------

@dataclass
class Request:
    """A prompt to extend by `max_new_tokens` greedy tokens."""
    request_id: int
    prompt: List[int]
    max_new_tokens: int
    output: List[int] = field(default_factory=list)
    #: float32 logits [vocab] of every sampled position, in order.
    logits: List[torch.Tensor] = field(default_factory=list)
    #: Tokens of prompt + output whose k/v are in the cache.
    num_computed: int = 0
    blocks: List[int] = field(default_factory=list)
    #: Step index at which each output token was produced, and whether that
    #: step was a graph replay.
    produced_in_graph: List[bool] = field(default_factory=list)
    #: Teacher forcing: the tokens appended after each sampled row in place
    #: of its argmax (the logits are kept all the same); None: greedy.
    forced_output: Optional[List[int]] = None

    @property
    def tokens(self) -> List[int]:
        return self.prompt + self.output

    @property
    def finished(self) -> bool:
        return len(self.output) >= self.max_new_tokens


class BlockAllocator:
    """Free list of KV-cache blocks. Block 0 is reserved as the scratch
    block that a graph's padding rows write to and read from."""

    def __init__(self, num_blocks: int):
        self.free = list(range(num_blocks - 1, 0, -1))

    def allocate(self, count: int) -> List[int]:
        if count > len(self.free):
            raise RuntimeError(f"out of KV blocks: need {count}, {len(self.free)} free")
        return [self.free.pop() for _ in range(count)]

    def release(self, blocks: Sequence[int]) -> None:
        self.free.extend(reversed(list(blocks)))


# ---- one batch's metadata ----------------------------------------------------

@dataclass
class Batch:
    """Device tensors of one step, as the attnc kernels read them."""
    input_ids: torch.Tensor        # int64 [T]
    positions: torch.Tensor        # int64 [T]
    slot_mapping: torch.Tensor     # int64 [T]
    block_tables: torch.Tensor     # int32 [S, max_blocks]
    seq_lens: torch.Tensor         # int32 [S]
    query_start_loc: torch.Tensor  # int32 [S + 1]
    sample_rows: torch.Tensor      # int64 [R]: rows whose logits are kept
    num_kv_splits: Optional[Dict[str, int]] = None  # per layer kind (graphs)


# ---- attention through attnc ---------------------------------------------------

class EngineShard:
    """One tensor-parallel rank's attention state in this process: its attnc
    model (kernels over the rank's heads), its shard of each layer kind
    (``sharding.rank_shard``, checked against the kernels' ABI), the local
    layer-kind specs (the model's with the rank's head counts), its KV
    caches and its split-KV workspaces."""

    def __init__(self, model, *, tp: int, rank: int, layer_kinds: Sequence[str],
                 num_blocks: int, block_size: int, dtype, device, poison: bool):
        self.model = model
        self.tp = tp
        self.rank = rank
        specs = {k["name"]: k for k in model.config["layer_kinds"]}
        self.shards: Dict[str, dict] = {}
        self.kind_specs: Dict[str, dict] = {}
        for kind in sorted(set(layer_kinds)):
            spec = specs[kind]
            shard = sharding.rank_shard(spec, tp, rank)
            local = dict(spec, num_q_heads=shard["num_q_heads"],
                         num_kv_heads=shard["num_kv_heads"])
            self._check_abi(kind, local, shard)
            self.shards[kind] = shard
            self.kind_specs[kind] = local
        self.kv_caches: List[Tuple[torch.Tensor, torch.Tensor]] = []
        for kind in layer_kinds:
            spec = self.kind_specs[kind]
            k_cache = torch.empty(num_blocks, block_size, spec["num_kv_heads"],
                                  spec["qk_head_dim"], dtype=dtype, device=device)
            v_cache = torch.empty(num_blocks, block_size, spec["num_kv_heads"],
                                  spec["v_head_dim"], dtype=dtype, device=device)
            # NaN caches: a key read before it is written poisons its row.
            k_cache.fill_(float("nan") if poison else 0.0)
            v_cache.fill_(float("nan") if poison else 0.0)
            self.kv_caches.append((k_cache, v_cache))
        # One zeroed split-KV workspace per layer kind, for eager and graph
        # launches alike (launches on one stream run in order).
        self.workspaces: Dict[str, torch.Tensor] = {}
        for kind in model.layers:
            size = model.attention_workspace_size(kind)
            if size is not None:
                self.workspaces[kind] = torch.zeros(size, dtype=torch.float32, device=device)

    def fused_width(self, kind: str) -> int:
        """The fused projection width the kind's preprocess kernel takes
        (its ABI's qkv shape)."""
        return int(self._abi_shape(kind, "preprocess", "qkv")[1])

    def _abi_shape(self, kind: str, kernel: str, param: str):
        abi = self.model.kernel(kind, kernel).abi
        return next(p for p in abi["params"] if p["name"] == param)["shape"]

    def _check_abi(self, kind: str, local: dict, shard: dict) -> None:
        """The compiled kernels are the shard's: the layout library's local
        head counts and fused width (a model compiled for another tp fails
        here)."""
        q_out = self._abi_shape(kind, "preprocess", "q_out")
        k_cache = self._abi_shape(kind, "preprocess", "k_cache")
        got = (int(q_out[1]), int(k_cache[2]), self.fused_width(kind))
        want = (local["num_q_heads"], local["num_kv_heads"], shard["fused_width"])
        if got != want:
            raise ValueError(
                f"{kind}: the rank {self.rank} kernels take {got[0]} query heads, "
                f"{got[1]} KV heads, fused width {got[2]}; tp {self.tp} rank {self.rank} "
                f"of the layout is {want[0]}, {want[1]}, {want[2]} (compile with "
                f"attnc.compile(config, tp={self.tp}, rank={self.rank}))")


class _RankAttention:
    """One rank's share of a layer's attention: its rows of the fused
    q|k|v(|gate) weight (and bias), its sinks, its o_proj columns, the
    shard's caches and launch plans."""

    def __init__(self, owner: "AttncAttention", shard: EngineShard, hf_attention: nn.Module):
        self.shard = shard
        kind = owner.kind
        spec = shard.kind_specs[kind]
        layout = shard.shards[kind]
        self.num_q_heads = spec["num_q_heads"]
        self.has_gate = spec.get("gate", "none") != "none"
        tensors = {"q_proj": hf_attention.q_proj, "k_proj": hf_attention.k_proj,
                   "v_proj": hf_attention.v_proj}
        runs = sharding.row_runs(layout["copies_from_separate"],
                                 {n: m.weight.shape[0] for n, m in tensors.items()})
        # The rank's fused row, assembled by the layout's row copies: gate
        # layout none is q (Hq heads), k, v; interleaved is q_proj's own
        # per-head [q_h | gate_h] blocks, then k, v.
        weight = torch.cat([tensors[n].weight[a:b] for n, a, b in runs], dim=0)
        abi_width = shard.fused_width(kind)
        if weight.shape[0] != abi_width:
            raise ValueError(f"layer {owner.layer_index}: the rank {shard.rank} fused "
                             f"weight is {weight.shape[0]} rows, the {kind} preprocess "
                             f"kernel takes {abi_width}")
        self.qkv_weight = weight.detach().contiguous()
        if any(m.bias is not None for m in tensors.values()):
            biases = {n: (m.bias if m.bias is not None else
                          torch.zeros(m.weight.shape[0], dtype=weight.dtype, device=weight.device))
                      for n, m in tensors.items()}
            self.qkv_bias = torch.cat([biases[n][a:b] for n, a, b in runs]).detach().contiguous()
        else:
            self.qkv_bias = None
        q_heads = sharding.q_head_range(layout)
        self.sinks = None if owner.sinks is None else \
            owner.sinks[q_heads[0]:q_heads[1]].contiguous()
        if shard.tp > 1:
            start, stop = sharding.o_proj_columns(spec, layout)
            self.o_weight = owner.o_proj.weight[:, start:stop].detach().contiguous()
        else:
            self.o_weight = None  # the layer's own o_proj module, bias and all
        self.plans = None


class AttncAttention(nn.Module):
    """Stands in for a Hugging Face attention module: the same weights, the
    attention itself in attnc's kernels. Reads the step's metadata from the
    engine (``engine.batch``). Runs the ranks of ``engine.shards`` (one in
    a torch.distributed process, all of them when one process emulates
    tensor parallelism) and sums their o_proj outputs."""

    def __init__(self, engine: "MiniEngine", layer_index: int, hf_attention: nn.Module):
        super().__init__()
        self.engine = engine
        self.layer_index = layer_index
        model = engine.attnc_model
        self.kind = model.layer_kind(layer_index)
        spec = engine.kind_specs[self.kind]
        self.num_q_heads = spec["num_q_heads"]   # of the whole model
        self.qk_head_dim = spec["qk_head_dim"]
        self.v_head_dim = spec["v_head_dim"]
        if spec.get("gate", "none") not in ("none", "interleaved"):
            raise NotImplementedError(f"{self.kind}: gate layout {spec['gate']} (the mini "
                                      "engine reads q|k|v and q_proj's interleaved gate only)")
        self.o_proj = hf_attention.o_proj
        q_norm = getattr(hf_attention, "q_norm", None)
        k_norm = getattr(hf_attention, "k_norm", None)
        self.q_norm_weight = None if q_norm is None else q_norm.weight.detach().contiguous()
        self.k_norm_weight = None if k_norm is None else k_norm.weight.detach().contiguous()
        if (self.q_norm_weight is not None) != (spec["qk_norm"] != "none"):
            raise ValueError(f"layer {layer_index}: Hugging Face has q/k norm "
                             f"{q_norm is not None}, attnc read qk_norm {spec['qk_norm']}")
        if self.q_norm_weight is not None and engine.tp > 1 and \
                self.q_norm_weight.shape != (self.qk_head_dim,):
            # One weight for every head is the same on every rank; a row per
            # head would have to be sliced (no such model here).
            raise NotImplementedError(f"layer {layer_index}: q/k norm weight of shape "
                                      f"{tuple(self.q_norm_weight.shape)} under tensor "
                                      "parallelism")
        sinks = getattr(hf_attention, "sinks", None)
        self.sinks = None if sinks is None else sinks.detach().float().contiguous()
        if (self.sinks is not None) != bool(spec["sinks"]):
            raise ValueError(f"layer {layer_index}: Hugging Face has sinks "
                             f"{sinks is not None}, attnc read sinks {spec['sinks']}")
        self.ranks = [_RankAttention(self, shard, hf_attention) for shard in engine.shards]

    def _plans(self, part: _RankAttention):
        """The rank's launch plans for this layer (engine.launch == "plan"),
        made on first use: caches, norm weights, sinks and the workspace
        bound once."""
        if part.plans is None:
            model = part.shard.model
            k_cache, v_cache = part.shard.kv_caches[self.layer_index]
            norms = {}
            if self.q_norm_weight is not None:
                norms = dict(q_norm_weight=self.q_norm_weight,
                             k_norm_weight=self.k_norm_weight)
            pre = model.preprocess_plan(self.kind, k_cache=k_cache, v_cache=v_cache,
                                        **norms)
            att = model.attention_plan(self.kind, k_cache=k_cache, v_cache=v_cache,
                                       sinks=part.sinks,
                                       workspace=part.shard.workspaces.get(self.kind))
            part.plans = (pre, att)
        return part.plans

    def _attend(self, part: _RankAttention, x: torch.Tensor) -> torch.Tensor:
        """The rank's attention output [T, its Hq * Dv] for rows x."""
        engine = self.engine
        batch = engine.batch
        qkv = F.linear(x, part.qkv_weight, part.qkv_bias)
        k_cache, v_cache = part.shard.kv_caches[self.layer_index]
        num_tokens = x.shape[0]
        heads = part.num_q_heads
        q_out = torch.empty(num_tokens, heads, self.qk_head_dim, dtype=x.dtype, device=x.device)
        out = torch.empty(num_tokens, heads, self.v_head_dim, dtype=x.dtype, device=x.device)
        gate = None
        if part.has_gate:
            gate = torch.empty(num_tokens, heads, self.v_head_dim, dtype=x.dtype,
                               device=x.device)
        if engine.poison:
            # A kernel that writes nothing leaves NaN, and NaN reaches the logits.
            for tensor in (q_out, out, gate):
                if tensor is not None:
                    tensor.fill_(float("nan"))
        model = part.shard.model
        if engine.launch == "plan":
            pre, att = self._plans(part)
            pre.run(qkv, batch.slot_mapping, batch.positions, q_out=q_out,
                    **({"gate_out": gate} if gate is not None else {}))
            if att.takes_kv_splits:
                splits = (batch.num_kv_splits or {}).get(self.kind)
                att.plan(num_tokens, batch.seq_lens.shape[0], num_kv_splits=splits)
            att.run(q_out, batch.block_tables, batch.seq_lens, batch.query_start_loc,
                    out=out, **({"gate": gate} if gate is not None else {}))
            return out.reshape(num_tokens, heads * self.v_head_dim)
        extra = {}
        if self.q_norm_weight is not None:
            extra = dict(q_norm_weight=self.q_norm_weight, k_norm_weight=self.k_norm_weight)
        if gate is not None:
            extra["gate_out"] = gate
        model.preprocess(self.kind, qkv, positions=batch.positions,
                         slot_mapping=batch.slot_mapping, k_cache=k_cache,
                         v_cache=v_cache, q_out=q_out, **extra)
        extra = {}
        if part.sinks is not None:
            extra["sinks"] = part.sinks
        if gate is not None:
            extra["gate"] = gate
        workspace = part.shard.workspaces.get(self.kind)
        if workspace is not None:
            extra["workspace"] = workspace
            if batch.num_kv_splits is not None:
                extra["num_kv_splits"] = batch.num_kv_splits[self.kind]
        model.attention(self.kind, q_out, k_cache=k_cache, v_cache=v_cache,
                        block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                        query_start_loc=batch.query_start_loc, out=out, **extra)
        return out.reshape(num_tokens, heads * self.v_head_dim)

    def forward(self, hidden_states: torch.Tensor, *args, **kwargs):
        engine = self.engine
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        if engine.tp == 1:
            result = self.o_proj(self._attend(self.ranks[0], x))
        else:
            # Row-parallel o_proj: each rank multiplies its heads' outputs by
            # its columns of the weight; the partial sums add up (in rank
            # order here, by the all-reduce across processes), then the bias
            # once.
            result = None
            for part in self.ranks:
                partial = F.linear(self._attend(part, x), part.o_weight)
                result = partial if result is None else result + partial
            if engine.all_reduce is not None:
                engine.all_reduce(result)
            if self.o_proj.bias is not None:
                result = result + self.o_proj.bias
        return result.reshape(*shape[:-1], result.shape[-1]), None


# ---- the engine --------------------------------------------------------------

@dataclass
class StepRecord:
    num_prefill_rows: int
    num_decode_rows: int
    graph: bool


class MiniEngine:
    """Continuous batching with chunked prefill and CUDA-graph decode over a
    Hugging Face *ForCausalLM (bf16, on the GPU) and an attnc model compiled
    from the same config.

    Args:
        hf_model: the Hugging Face model; its ``self_attn`` modules are
            replaced in place.
        attnc_model: ``attnc.compile(hf_model.config, block_size=..., tp=tp,
            rank=r)``, or a sequence of them, one per rank of ``ranks``.
        block_size: tokens per cache block (the attnc model's).
        num_blocks: cache blocks per layer (block 0 is scratch).
        max_model_len: longest prompt + output, for the block tables' width.
        max_num_seqs: requests running at once.
        token_budget: query rows per step.
        graph_buckets: decode batch sizes captured as CUDA graphs (a decode
            step of n rows replays the smallest bucket >= n); empty: no graphs.
        poison: NaN-fill q_out / out before each launch, NaN-fill the caches.
        launch: ``"checked"`` (Model.preprocess / Model.attention every call)
            or ``"plan"`` (per-layer launch plans, the engine path).
        tp: tensor-parallel degree of the attention layers.
        ranks: the ranks this process runs (default ``[0]``): one in a
            ``torch.distributed`` process per GPU, or ``range(tp)`` where one
            process runs every rank one after the other and sums their
            o_proj outputs itself.
        all_reduce: sums a tensor over the processes in place
            (``torch.distributed.all_reduce``); required when ``ranks`` is
            not every rank. Called on each layer's o_proj output before the
            bias (tp > 1 only).
    """

    def __init__(self, hf_model, attnc_model, *, block_size: int = 16,
                 num_blocks: int = 512, max_model_len: int = 1024,
                 max_num_seqs: int = 8, token_budget: int = 64,
                 graph_buckets: Sequence[int] = (1, 2, 4, 8), poison: bool = True,
                 launch: str = "checked", tp: int = 1,
                 ranks: Optional[Sequence[int]] = None,
                 all_reduce: Optional[Callable[[torch.Tensor], object]] = None):
        self.model = hf_model
        models = list(attnc_model) if isinstance(attnc_model, (list, tuple)) else [attnc_model]
        ranks = [0] if ranks is None else list(ranks)
        if len(models) != len(ranks):
            raise ValueError(f"attnc_model: {len(models)} models for ranks {ranks}")
        if sorted(set(ranks)) != sorted(ranks) or any(not 0 <= r < tp for r in ranks):
            raise ValueError(f"ranks: must be distinct ranks in [0, {tp}) (got {ranks})")
        if sorted(ranks) != list(range(tp)) and all_reduce is None:
            raise ValueError(f"all_reduce: required when this process runs ranks {ranks} "
                             f"of {tp} (the others' o_proj outputs come from it)")
        self.tp = tp
        self.all_reduce = all_reduce if tp > 1 else None
        self.attnc_model = models[0]
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.token_budget = token_budget
        self.max_blocks_per_seq = math.ceil(max_model_len / block_size)
        self.graph_buckets = sorted(graph_buckets)
        if self.graph_buckets and self.graph_buckets[-1] < max_num_seqs:
            raise ValueError("the largest graph bucket must hold max_num_seqs rows")
        self.poison = poison
        if launch not in ("checked", "plan"):
            raise ValueError(f"launch must be 'checked' or 'plan', got {launch!r}")
        self.launch = launch
        self.device = next(hf_model.parameters()).device
        self.dtype = next(hf_model.parameters()).dtype
        #: The layer kinds of the whole model (all heads).
        self.kind_specs = {k["name"]: k for k in self.attnc_model.config["layer_kinds"]}
        self.allocator = BlockAllocator(num_blocks)
        self.batch: Optional[Batch] = None
        self.steps: List[StepRecord] = []

        layers = hf_model.model.layers
        layer_kinds = [self.attnc_model.layer_kind(i) for i in range(len(layers))]
        #: The ranks this process runs, in rank order of ``ranks``.
        self.shards = [EngineShard(model, tp=tp, rank=rank, layer_kinds=layer_kinds,
                                   num_blocks=num_blocks, block_size=block_size,
                                   dtype=self.dtype, device=self.device, poison=poison)
                       for model, rank in zip(models, ranks)]
        for index, layer in enumerate(layers):
            layer.self_attn = AttncAttention(self, index, layer.self_attn)
        self.final_softcap = getattr(hf_model.config, "final_logit_softcapping", None)
        self._graphs: Dict[int, Tuple[torch.cuda.CUDAGraph, Batch, torch.Tensor]] = {}

    @property
    def kv_caches(self) -> List[Tuple[torch.Tensor, torch.Tensor]]:
        """The first shard's (k_cache, v_cache) per layer."""
        return self.shards[0].kv_caches

    @property
    def workspaces(self) -> Dict[str, torch.Tensor]:
        """The first shard's split-KV workspace per layer kind."""
        return self.shards[0].workspaces

    def fused_width(self, kind: str) -> int:
        """The fused projection width the kind's preprocess kernel takes
        (its ABI's qkv shape; the first shard's)."""
        return self.shards[0].fused_width(kind)

    # ---- the forward pass ----

    def _forward(self, batch: Batch) -> torch.Tensor:
        """Logits (float32) of batch.sample_rows."""
        self.batch = batch
        model = self.model
        hidden = model.model.embed_tokens(batch.input_ids[None])
        positions = batch.positions[None]
        for layer in model.model.layers:
            hidden = layer(hidden, attention_mask=None, position_ids=positions,
                           position_embeddings=None)
            if isinstance(hidden, tuple):
                hidden = hidden[0]
        hidden = model.model.norm(hidden)[0]
        logits = model.lm_head(hidden.index_select(0, batch.sample_rows)).float()
        if self.final_softcap:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return logits

    # ---- scheduling ----

    def _schedule(self, running: List[Request]) -> List[Tuple[Request, int]]:
        """(request, rows) for this step: one row per decoding request, then
        prompt chunks while the token budget lasts."""
        budget = self.token_budget
        plan = []
        for request in running:
            if len(request.tokens) - request.num_computed == 1 and request.output:
                plan.append((request, 1))
                budget -= 1
        for request in running:
            remaining = len(request.tokens) - request.num_computed
            if budget <= 0:
                break
            if request.output and remaining == 1:
                continue
            rows = min(remaining, budget)
            plan.append((request, rows))
            budget -= rows
        return plan

    def _build_batch(self, plan: List[Tuple[Request, int]]) -> Tuple[Batch, List[Optional[int]]]:
        ids, positions, slots, tables, seq_lens, starts, samples = [], [], [], [], [], [0], []
        which = []
        for request, rows in plan:
            start = request.num_computed
            end = start + rows
            needed = math.ceil(end / self.block_size) - len(request.blocks)
            if needed > 0:
                request.blocks.extend(self.allocator.allocate(needed))
            tokens = request.tokens
            for position in range(start, end):
                ids.append(tokens[position])
                positions.append(position)
                block = request.blocks[position // self.block_size]
                slots.append(block * self.block_size + position % self.block_size)
            row = request.blocks + [0] * (self.max_blocks_per_seq - len(request.blocks))
            tables.append(row)
            seq_lens.append(end)
            starts.append(starts[-1] + rows)
            if end == len(tokens):
                samples.append(starts[-1] - 1)
                which.append(len(samples) - 1)
            else:
                which.append(None)
        device = self.device
        batch = Batch(
            input_ids=torch.tensor(ids, dtype=torch.int64, device=device),
            positions=torch.tensor(positions, dtype=torch.int64, device=device),
            slot_mapping=torch.tensor(slots, dtype=torch.int64, device=device),
            block_tables=torch.tensor(tables, dtype=torch.int32, device=device),
            seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
            query_start_loc=torch.tensor(starts, dtype=torch.int32, device=device),
            sample_rows=torch.tensor(samples, dtype=torch.int64, device=device))
        return batch, which

    # ---- CUDA graphs for decode steps ----

    def _bucket(self, rows: int) -> Optional[int]:
        for bucket in self.graph_buckets:
            if bucket >= rows:
                return bucket
        return None

    def _graph_for(self, bucket: int, batch: Batch):
        """The graph of `bucket` decode rows, captured on first use with the
        step's own data in its static buffers (so the warm-up runs compute
        this step, and writing its keys twice is harmless)."""
        entry = self._graphs.get(bucket)
        if entry is not None:
            return entry
        device = self.device
        static = Batch(
            input_ids=torch.zeros(bucket, dtype=torch.int64, device=device),
            positions=torch.zeros(bucket, dtype=torch.int64, device=device),
            slot_mapping=torch.zeros(bucket, dtype=torch.int64, device=device),
            block_tables=torch.zeros(bucket, self.max_blocks_per_seq, dtype=torch.int32, device=device),
            seq_lens=torch.ones(bucket, dtype=torch.int32, device=device),
            query_start_loc=torch.arange(bucket + 1, dtype=torch.int32, device=device),
            sample_rows=torch.arange(bucket, dtype=torch.int64, device=device),
            # A fixed split count per captured graph: the rule's choice for
            # `bucket` decode rows (it depends on the row and sequence counts
            # only, which the graph fixes).
            num_kv_splits={kind: self.attnc_model.attention_splits(kind, bucket, bucket)
                           for kind in self.workspaces})
        self._fill_static(static, batch)
        stream = torch.cuda.Stream(device=device)
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream):
            for _ in range(2):
                self._forward(static)
        torch.cuda.current_stream(device).wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = self._forward(static)
        entry = (graph, static, logits)
        self._graphs[bucket] = entry
        return entry

    def _fill_static(self, static: Batch, batch: Batch) -> None:
        """Copies a decode batch into a graph's buffers; rows past it are
        padding: token 0 at position 0 in the scratch block 0, one key."""
        rows = batch.input_ids.shape[0]
        static.input_ids.zero_()
        static.positions.zero_()
        static.slot_mapping.zero_()
        static.block_tables.zero_()
        static.seq_lens.fill_(1)
        static.input_ids[:rows].copy_(batch.input_ids)
        static.positions[:rows].copy_(batch.positions)
        static.slot_mapping[:rows].copy_(batch.slot_mapping)
        static.block_tables[:rows].copy_(batch.block_tables)
        static.seq_lens[:rows].copy_(batch.seq_lens)

    # ---- the loop ----

    def generate(self, requests: Sequence[Request]) -> List[Request]:
        """Runs every request to its max_new_tokens (greedy), admitting
        waiting ones as running ones finish."""
        waiting = list(requests)
        running: List[Request] = []
        while waiting or running:
            while waiting and len(running) < self.max_num_seqs:
                running.append(waiting.pop(0))
            plan = self._schedule(running)
            batch, which = self._build_batch(plan)
            decode_only = all(rows == 1 and request.output for request, rows in plan)
            bucket = self._bucket(len(plan)) if decode_only else None
            with torch.no_grad():
                if bucket is not None:
                    graph, static, static_logits = self._graph_for(bucket, batch)
                    self._fill_static(static, batch)
                    graph.replay()
                    logits = static_logits[:len(plan)]
                else:
                    logits = self._forward(batch)
            logits = logits.cpu()
            self.steps.append(StepRecord(
                num_prefill_rows=sum(rows for r, rows in plan if not (rows == 1 and r.output)),
                num_decode_rows=sum(1 for r, rows in plan if rows == 1 and r.output),
                graph=bucket is not None))
            for (request, rows), sample in zip(plan, which):
                request.num_computed += rows
                if sample is None:
                    continue
                row = logits[sample]
                request.logits.append(row)
                if request.forced_output is not None:
                    request.output.append(request.forced_output[len(request.output)])
                else:
                    request.output.append(int(row.argmax()))
                request.produced_in_graph.append(bucket is not None)
            for request in [r for r in running if r.finished]:
                running.remove(request)
                self.allocator.release(request.blocks)
                request.blocks = []
        return list(requests)
