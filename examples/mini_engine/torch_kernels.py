"""The attnc kernel contract (python/README.md, "Kernel contract") in plain
torch, for running the mini engine without a GPU: a stand-in for an
``attnc.Model`` that keeps the compiled model's metadata (config, layer
kinds, kernel ABIs, split rule) and computes ``preprocess`` and
``attention`` with torch ops on any device.

It checks the engine's wiring (fused layout, block tables, slots, varlen
rows, the scheduler) on the CPU; the kernels themselves are checked by the
GPU suite. Rope comes from the Hugging Face model's own rotary embedding,
so this is no reference for attnc's rope.
"""

from __future__ import annotations

from typing import Callable

import torch


class TorchKernels:
    """Wraps a compiled ``attnc.Model``; ``rotary(positions, kind)`` gives
    (cos, sin) of shape [T, rotary_dim] (neox halves, attention factor in)."""

    def __init__(self, model, rotary: Callable[[torch.Tensor, str], tuple]):
        self._model = model
        self._rotary = rotary
        self.config = model.config
        self.layers = model.layers
        self._specs = {}
        for kind in model.config["layer_kinds"]:
            # The head counts the kernels take (a tensor-parallel shard's own).
            local = dict(kind)
            if kind["name"] in model.layers:
                abi = {p["name"]: p for p in model.kernel(kind["name"], "preprocess").abi["params"]}
                local["num_q_heads"] = int(abi["q_out"]["shape"][1])
                local["num_kv_heads"] = int(abi["k_cache"]["shape"][2])
            self._specs[kind["name"]] = local

    def __getattr__(self, name):  # layer_kind, kernel, attention_splits, ...
        return getattr(self._model, name)

    def preprocess(self, kind, qkv, *, positions, slot_mapping, k_cache, v_cache,
                   q_norm_weight=None, k_norm_weight=None, q_out=None, gate_out=None):
        s = self._specs[kind]
        hq, hkv, dqk, dv = s["num_q_heads"], s["num_kv_heads"], s["qk_head_dim"], s["v_head_dim"]
        t = qkv.shape[0]
        x = qkv.float()
        gate = s.get("gate", "none")
        if gate not in ("none", "interleaved"):
            raise NotImplementedError(f"{kind}: gate layout {gate}")
        q_block = hq * (dqk + dv) if gate == "interleaved" else hq * dqk
        if gate == "interleaved":  # per head [q_h | gate_h]
            both = x[:, :q_block].reshape(t, hq, dqk + dv)
            q, g = both[..., :dqk], both[..., dqk:]
        else:
            q = x[:, :q_block].reshape(t, hq, dqk)
        k = x[:, q_block:q_block + hkv * dqk].reshape(t, hkv, dqk)
        v = x[:, q_block + hkv * dqk:].reshape(t, hkv, dv)
        if s["qk_norm"] != "none":
            eps = s["norm_eps"]

            def norm(y, w):
                y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)
                w = w.float()
                return y * (1 + w) if s["qk_norm"] == "gemma" else y * w
            q, k = norm(q, q_norm_weight), norm(k, k_norm_weight)
        rope = s["rope"]
        if rope.get("style", "none") != "none" and rope.get("rotary_dim", 0):
            cos, sin = self._rotary(positions, kind)
            cos, sin = cos.float()[:, None, :], sin.float()[:, None, :]
            lo, rd = rope.get("rotary_offset", 0), rope["rotary_dim"]
            if cos.shape[-1] == rd // 2:  # gpt-oss gives one half
                cos, sin = torch.cat([cos, cos], dim=-1), torch.cat([sin, sin], dim=-1)

            def rotate(y):
                part = y[..., lo:lo + rd]
                a, b = part[..., :rd // 2], part[..., rd // 2:]
                turned = torch.cat([-b, a], dim=-1)
                return torch.cat([y[..., :lo], part * cos + turned * sin, y[..., lo + rd:]], dim=-1)
            q, k = rotate(q), rotate(k)
        keep = slot_mapping >= 0
        k_cache.view(-1, hkv, dqk)[slot_mapping[keep]] = k[keep].to(k_cache.dtype)
        v_cache.view(-1, hkv, dv)[slot_mapping[keep]] = v[keep].to(v_cache.dtype)
        q_out.copy_(q.to(q_out.dtype))
        if gate == "interleaved":
            gate_out.copy_(g.to(gate_out.dtype))
            return q_out, gate_out
        return q_out

    def attention(self, kind, query, *, k_cache, v_cache, block_tables, seq_lens,
                  query_start_loc, sinks=None, out=None, workspace=None,
                  num_kv_splits=None, gate=None):
        s = self._specs[kind]
        hq, hkv, dqk, dv = s["num_q_heads"], s["num_kv_heads"], s["qk_head_dim"], s["v_head_dim"]
        block = k_cache.shape[1]
        window = s.get("sliding_window") or 0
        starts = query_start_loc.tolist()
        for seq, length in enumerate(seq_lens.tolist()):
            rows = slice(starts[seq], starts[seq + 1])
            q_len = starts[seq + 1] - starts[seq]
            if q_len == 0:
                continue
            keys = torch.arange(length, device=query.device)
            slots = block_tables[seq].long()[keys // block] * block + keys % block
            k = k_cache.view(-1, hkv, dqk)[slots].float()
            v = v_cache.view(-1, hkv, dv)[slots].float()
            group = hq // hkv
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
            q = query[rows].float()
            logits = torch.einsum("qhd,khd->hqk", q, k) * s["softmax_scale"]
            cap = s.get("logit_softcap") or 0.0
            if cap:
                logits = cap * torch.tanh(logits / cap)
            at = length - q_len + torch.arange(q_len, device=query.device)
            visible = keys[None, :] <= at[:, None]
            if window:
                visible &= keys[None, :] > at[:, None] - window
            logits = logits.masked_fill(~visible[None], float("-inf"))
            if sinks is not None:
                sink = sinks.float()[:, None, None].expand(hq, q_len, 1)
                weights = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)[..., :-1]
            else:
                weights = torch.softmax(logits, dim=-1)
            result = torch.einsum("hqk,khd->qhd", weights, v) * s.get("value_scale", 1.0)
            if gate is not None:  # the output gate: sigmoid(g) per value
                result = result * torch.sigmoid(gate[rows].float())
            out[rows] = result.to(out.dtype)
        return out


def hf_rotary(hf_model) -> Callable[[torch.Tensor, str], tuple]:
    """(cos, sin) [T, rotary_dim] per layer kind from the Hugging Face
    model's rotary embedding (one per kind where the model has several)."""
    inner = hf_model.model
    dtype = next(hf_model.parameters()).dtype

    def rotary(positions: torch.Tensor, kind: str):
        probe = torch.zeros(1, dtype=torch.float32, device=positions.device)
        ids = positions[None]
        local = getattr(inner, "rotary_emb_local", None)
        if local is not None and kind == "sliding_attention":
            cos, sin = local(probe, ids)
        else:
            try:
                cos, sin = inner.rotary_emb(probe, ids, kind)
            except TypeError:
                cos, sin = inner.rotary_emb(probe, ids)
        return cos[0], sin[0]
    del dtype
    return rotary
