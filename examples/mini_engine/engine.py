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

Python and torch only; no part of vLLM or nano-vllm is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn


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

class AttncAttention(nn.Module):
    """Stands in for a Hugging Face attention module: the same weights, the
    attention itself in attnc's kernels. Reads the step's metadata from the
    engine (``engine.batch``)."""

    def __init__(self, engine: "MiniEngine", layer_index: int, hf_attention: nn.Module):
        super().__init__()
        self.engine = engine
        self.layer_index = layer_index
        model = engine.attnc_model
        self.kind = model.layer_kind(layer_index)
        spec = engine.kind_specs[self.kind]
        self.num_q_heads = spec["num_q_heads"]
        self.num_kv_heads = spec["num_kv_heads"]
        self.qk_head_dim = spec["qk_head_dim"]
        self.v_head_dim = spec["v_head_dim"]
        if spec.get("gate", "none") != "none":
            raise NotImplementedError(f"{self.kind}: gate layout {spec['gate']} "
                                      "(the mini engine stacks q|k|v only)")
        projections = [hf_attention.q_proj, hf_attention.k_proj, hf_attention.v_proj]
        weight = torch.cat([p.weight for p in projections], dim=0)
        # The fused row attnc's preprocess reads: gate layout none is
        # q (Hq heads), k (Hkv heads), v (Hkv heads) with no padding; the
        # kernel's ABI says how wide it must be.
        abi_width = engine.fused_width(self.kind)
        if weight.shape[0] != abi_width:
            raise ValueError(f"layer {layer_index}: stacked q|k|v is {weight.shape[0]} "
                             f"rows, the {self.kind} preprocess kernel takes {abi_width}")
        self.register_buffer("qkv_weight", weight.detach().contiguous(), persistent=False)
        biases = [p.bias for p in projections]
        if any(b is not None for b in biases):
            bias = torch.cat([b if b is not None else torch.zeros(p.weight.shape[0], dtype=weight.dtype,
                                                                  device=weight.device)
                              for b, p in zip(biases, projections)])
            self.register_buffer("qkv_bias", bias.detach().contiguous(), persistent=False)
        else:
            self.qkv_bias = None
        self.o_proj = hf_attention.o_proj
        self._plan_pair = None
        q_norm = getattr(hf_attention, "q_norm", None)
        k_norm = getattr(hf_attention, "k_norm", None)
        self.q_norm_weight = None if q_norm is None else q_norm.weight.detach().contiguous()
        self.k_norm_weight = None if k_norm is None else k_norm.weight.detach().contiguous()
        if (self.q_norm_weight is not None) != (spec["qk_norm"] != "none"):
            raise ValueError(f"layer {layer_index}: Hugging Face has q/k norm "
                             f"{q_norm is not None}, attnc read qk_norm {spec['qk_norm']}")
        sinks = getattr(hf_attention, "sinks", None)
        self.sinks = None if sinks is None else sinks.detach().float().contiguous()
        if (self.sinks is not None) != bool(spec["sinks"]):
            raise ValueError(f"layer {layer_index}: Hugging Face has sinks "
                             f"{sinks is not None}, attnc read sinks {spec['sinks']}")

    def _plans(self):
        """The layer's launch plans (engine.launch == "plan"), made on first
        use: caches, norm weights, sinks and the workspace bound once."""
        if self._plan_pair is None:
            engine = self.engine
            model = engine.attnc_model
            k_cache, v_cache = engine.kv_caches[self.layer_index]
            norms = {}
            if self.q_norm_weight is not None:
                norms = dict(q_norm_weight=self.q_norm_weight,
                             k_norm_weight=self.k_norm_weight)
            pre = model.preprocess_plan(self.kind, k_cache=k_cache, v_cache=v_cache,
                                        **norms)
            att = model.attention_plan(self.kind, k_cache=k_cache, v_cache=v_cache,
                                       sinks=self.sinks,
                                       workspace=engine.workspaces.get(self.kind))
            self._plan_pair = (pre, att)
        return self._plan_pair

    def forward(self, hidden_states: torch.Tensor, *args, **kwargs):
        engine = self.engine
        batch = engine.batch
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        qkv = F.linear(x, self.qkv_weight, self.qkv_bias)
        k_cache, v_cache = engine.kv_caches[self.layer_index]
        num_tokens = x.shape[0]
        q_out = torch.empty(num_tokens, self.num_q_heads, self.qk_head_dim,
                            dtype=x.dtype, device=x.device)
        out = torch.empty(num_tokens, self.num_q_heads, self.v_head_dim,
                          dtype=x.dtype, device=x.device)
        if engine.poison:
            # A kernel that writes nothing leaves NaN, and NaN reaches the logits.
            q_out.fill_(float("nan"))
            out.fill_(float("nan"))
        model = engine.attnc_model
        if engine.launch == "plan":
            pre, att = self._plans()
            pre.run(qkv, batch.slot_mapping, batch.positions, q_out=q_out)
            if att.takes_kv_splits:
                splits = (batch.num_kv_splits or {}).get(self.kind)
                att.plan(num_tokens, batch.seq_lens.shape[0], num_kv_splits=splits)
            att.run(q_out, batch.block_tables, batch.seq_lens, batch.query_start_loc,
                    out=out)
            result = self.o_proj(out.reshape(num_tokens, self.num_q_heads * self.v_head_dim))
            return result.reshape(*shape[:-1], result.shape[-1]), None
        norms = {}
        if self.q_norm_weight is not None:
            norms = dict(q_norm_weight=self.q_norm_weight, k_norm_weight=self.k_norm_weight)
        model.preprocess(self.kind, qkv, positions=batch.positions,
                         slot_mapping=batch.slot_mapping, k_cache=k_cache,
                         v_cache=v_cache, q_out=q_out, **norms)
        extra = {}
        if self.sinks is not None:
            extra["sinks"] = self.sinks
        workspace = engine.workspaces.get(self.kind)
        if workspace is not None:
            extra["workspace"] = workspace
            if batch.num_kv_splits is not None:
                extra["num_kv_splits"] = batch.num_kv_splits[self.kind]
        model.attention(self.kind, q_out, k_cache=k_cache, v_cache=v_cache,
                        block_tables=batch.block_tables, seq_lens=batch.seq_lens,
                        query_start_loc=batch.query_start_loc, out=out, **extra)
        result = self.o_proj(out.reshape(num_tokens, self.num_q_heads * self.v_head_dim))
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
        attnc_model: ``attnc.compile(hf_model.config, block_size=...)``.
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
    """

    def __init__(self, hf_model, attnc_model, *, block_size: int = 16,
                 num_blocks: int = 512, max_model_len: int = 1024,
                 max_num_seqs: int = 8, token_budget: int = 64,
                 graph_buckets: Sequence[int] = (1, 2, 4, 8), poison: bool = True,
                 launch: str = "checked"):
        self.model = hf_model
        self.attnc_model = attnc_model
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
        self.kind_specs = {k["name"]: k for k in attnc_model.config["layer_kinds"]}
        self.allocator = BlockAllocator(num_blocks)
        self.batch: Optional[Batch] = None
        self.steps: List[StepRecord] = []

        layers = hf_model.model.layers
        self.kv_caches: List[Tuple[torch.Tensor, torch.Tensor]] = []
        for index, layer in enumerate(layers):
            kind = attnc_model.layer_kind(index)
            spec = self.kind_specs[kind]
            k_cache = torch.empty(num_blocks, block_size, spec["num_kv_heads"],
                                  spec["qk_head_dim"], dtype=self.dtype, device=self.device)
            v_cache = torch.empty(num_blocks, block_size, spec["num_kv_heads"],
                                  spec["v_head_dim"], dtype=self.dtype, device=self.device)
            # NaN caches: a key read before it is written poisons its row.
            k_cache.fill_(float("nan") if poison else 0.0)
            v_cache.fill_(float("nan") if poison else 0.0)
            self.kv_caches.append((k_cache, v_cache))
        # One zeroed split-KV workspace per layer kind, for eager and graph
        # launches alike (launches on one stream run in order).
        self.workspaces: Dict[str, torch.Tensor] = {}
        for kind in attnc_model.layers:
            size = attnc_model.attention_workspace_size(kind)
            if size is not None:
                self.workspaces[kind] = torch.zeros(size, dtype=torch.float32, device=self.device)
        for index, layer in enumerate(layers):
            layer.self_attn = AttncAttention(self, index, layer.self_attn)
        self.final_softcap = getattr(hf_model.config, "final_logit_softcapping", None)
        self._graphs: Dict[int, Tuple[torch.cuda.CUDAGraph, Batch, torch.Tensor]] = {}

    def fused_width(self, kind: str) -> int:
        """The fused projection width the kind's preprocess kernel takes
        (its ABI's qkv shape)."""
        kernel = self.attnc_model.kernel(kind, "preprocess")
        qkv = next(p for p in kernel.abi["params"] if p["name"] == "qkv")
        return int(qkv["shape"][1])

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
                request.output.append(int(row.argmax()))
                request.produced_in_graph.append(bucket is not None)
            for request in [r for r in running if r.finished]:
                running.remove(request)
                self.allocator.release(request.blocks)
                request.blocks = []
        return list(requests)
