"""Hugging Face's own attention modules against attnc (test_hf_families.py).

For one family: the small config (hf_family_configs.py) builds the
transformers base model (eager attention, float32, random weights); a few
sequences of different lengths run through it as prefill and then a few
decode steps over its own cache, one sequence at a time. Hooks on every
attention module record what its projections produced (q/k/v/gate, or the
fused projection, or the MLA latents and their up-projection) and what
entered its output projection: the attention output, after the gate.

attnc gets the same projections: per layer, the rows of every sequence in
one varlen batch (prefill), then one row per sequence (each decode step),
in the fused QKV(G) row as `attnc layout --json` lays it out, through
preprocess (norm, rope, cache write into a paged cache) and attention over
that cache. Its output must match the module's within bf16 tolerance.

Two backends run the attnc side:
* "kernels" (the default on a GPU): attnc.compile + Model.preprocess /
  Model.attention, bf16 activations and cache; outputs and caches poisoned
  with NaN first.
* "reference" (ATTNC_HF_CHECK_BACKEND=reference; runs on the CPU): the
  kernel contract (python/README.md) in float32 from the configuration
  attnc read (Model.config), over the same fused row and paged cache, so
  that the glue and attnc's reading of each family's config are checked
  without a GPU.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

import attnc_gpu_reference as ref

REPO = Path(__file__).resolve().parents[2]

#: Prompt lengths of the sequences (one shorter than a page, one over two
#: pages, one past the small sliding windows), then DECODE_STEPS tokens each.
PROMPT_LENGTHS = (5, 19, 41)
DECODE_STEPS = 2
BLOCK_SIZE = 16

#: The error bound, relative to the rms of the module's output (one layer,
#: one batch): bf16 activations and cache carry 8 significant bits (2^-9
#: relative rounding of q, k, v, the softmax weights and the output); with
#: O(1) logits an output element moves by a few of those. A wrong
#: convention (rope pairs, norm style, scale, window, gate) moves it by
#: O(1) x rms. An element also may move by a fraction of its own size
#: (max_relative): the bf16 roundings of q and k change every logit by about
#: 2^-8 of its size, so a row whose softmax is peaked on large logits moves
#: its large outputs by up to a few 2^-8 of themselves (seen on the H200:
#: qwen3_next, an element of 5.2 x rms off by 1.2 % of itself, while the
#: relative L2 error was 3.5e-3). The reference backend computes in float32
#: against the module's float32: agreement to float32 rounding, far tighter.
BOUNDS = {
    "kernels": dict(rel_l2=1.5e-2, max_over_rms=6e-2, max_relative=2.0 ** -6),
    "reference": dict(rel_l2=1e-4, max_over_rms=1e-3, max_relative=1e-4),
}


def backend_name() -> str:
    name = os.environ.get("ATTNC_HF_CHECK_BACKEND", "")
    if name:
        if name not in BOUNDS:
            raise ValueError(f"ATTNC_HF_CHECK_BACKEND: {name!r} is not one of {sorted(BOUNDS)}")
        return name
    return "kernels" if torch.cuda.is_available() else "reference"


# ---- the Hugging Face side ---------------------------------------------------------

def hf_config(config: Dict[str, Any]):
    """The transformers config object of a config.json dict."""
    from transformers import AutoConfig
    data = dict(config)
    model_type = data.pop("model_type")
    for key in ("torch_dtype", "dtype", "architectures"):
        data.pop(key, None)
    return AutoConfig.for_model(model_type, **data)


def _randomise(model, generator: torch.Generator) -> None:
    """Weights that make O(1) activations: every linear map N(0, 1/fan_in)
    (so projections of N(0, 1) hidden states are O(1), logits too), biases
    N(0, 0.1^2), norm weights around their identity (1 for x * w, 0 for
    x * (1 + w)) with noise 0.2, sinks N(0, 1)."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                fan_in = module.weight.shape[1]
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator)
                                    / math.sqrt(fan_in))
                if module.bias is not None:
                    module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)
        for name, param in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if "norm" in name.lower() and leaf in ("weight", "bias"):
                if leaf == "bias":
                    param.copy_(torch.randn(param.shape, generator=generator) * 0.1)
                    continue
                centre = 0.0 if bool((param == 0).all()) else 1.0
                param.copy_(centre + torch.randn(param.shape, generator=generator) * 0.2)
            elif leaf in ("sinks", "attention_sink_bias"):
                param.copy_(torch.randn(param.shape, generator=generator))


def build_hf_model(config: Dict[str, Any], seed: int, device: str):
    """The family's base model (no LM head): eager attention, float32,
    random weights from `seed`."""
    from transformers import AutoModel
    cfg = hf_config(config)
    torch.manual_seed(seed)
    model = AutoModel.from_config(cfg, attn_implementation="eager", dtype=torch.float32)
    if hasattr(model.config, "_experts_implementation"):
        model.config._experts_implementation = "eager"
    _randomise(model, torch.Generator().manual_seed(seed + 1))
    return model.to(device).eval()


ATTENTION_NAMES = ("self_attn", "attention", "attn", "self_attention")
OUTPUT_NAMES = ("o_proj", "dense", "out_proj")
#: Modules in an attention slot that are not softmax attention (Kimi's
#: KDA, MiniMax's lightning attention) have these in their class names.
NOT_SOFTMAX_ATTENTION = re.compile(r"Delta|Lightning|Mamba|ShortConv")


def attention_modules(model) -> Dict[int, torch.nn.Module]:
    """Attention index -> softmax attention module, in layer order (linear
    attention, mamba and conv layers are left out). A layer with several
    attention blocks (LongCat-Flash: a ModuleList of two) counts one index
    per block; otherwise the index is the decoder layer's."""
    layers = None
    for holder in (model, getattr(model, "model", None)):
        for name in ("layers", "h"):
            layers = getattr(holder, name, None) if holder is not None else None
            if layers is not None:
                break
        if layers is not None:
            break
    if layers is None:
        raise AssertionError(f"{type(model).__name__}: no decoder layers (.layers or .h)")
    found = {}
    index = 0
    for layer in layers:
        blocks = []
        for name in ATTENTION_NAMES:
            module = getattr(layer, name, None)
            if module is None:
                continue
            blocks = list(module) if isinstance(module, torch.nn.ModuleList) else [module]
            break
        if len(blocks) <= 1:
            for module in blocks:
                if (any(hasattr(module, o) for o in OUTPUT_NAMES)
                        and not NOT_SOFTMAX_ATTENTION.search(type(module).__name__)):
                    found[index] = module
            index += 1
            continue
        for module in blocks:
            found[index] = module
            index += 1
    return found


@dataclass
class Call:
    """One forward call of the model: the rows of one sequence."""
    sequence: int
    positions: List[int]
    #: layer -> {child linear name: output [rows, width]}, "<out>": the
    #: output projection's input [rows, width]
    layers: Dict[int, Dict[str, torch.Tensor]] = field(default_factory=dict)


class Recorder:
    """Forward hooks on each attention module's linear children (outputs)
    and its output projection (input)."""

    def __init__(self, modules: Dict[int, torch.nn.Module]):
        self.current: Optional[Call] = None
        self.handles = []
        for index, module in modules.items():
            out_name = next(o for o in OUTPUT_NAMES if hasattr(module, o))
            for name, child in module.named_children():
                if name == out_name:
                    self.handles.append(child.register_forward_pre_hook(
                        self._input_hook(index, "<out>")))
                elif isinstance(child, torch.nn.Linear):
                    self.handles.append(child.register_forward_hook(
                        self._output_hook(index, name)))

    def _store(self, index, name, tensor):
        # batch 1: [rows, width] (MLA's kv_b_proj output covers the cache)
        rows = tensor.detach().float()
        self.current.layers.setdefault(index, {})[name] = rows.reshape(-1, rows.shape[-1])

    def _output_hook(self, index, name):
        def hook(_module, _inputs, output):
            self._store(index, name, output)
        return hook

    def _input_hook(self, index, name):
        def hook(_module, inputs):
            self._store(index, name, inputs[0])
        return hook

    def close(self):
        for handle in self.handles:
            handle.remove()


#: Models that need token ids (Gemma 4 recovers per-layer inputs from them);
#: the others get random N(0, 1) embeddings.
TOKEN_INPUTS = {"gemma4_text"}


def run_hf(model, hidden_size: int, seed: int, device: str,
           prompt_lengths: Sequence[int] = PROMPT_LENGTHS,
           decode_steps: int = DECODE_STEPS) -> Tuple[List[Call], List[List[Call]]]:
    """Prefill each sequence alone, then decode `decode_steps` tokens each
    over the model's own cache. Returns (prefill calls, decode calls per
    step)."""
    generator = torch.Generator().manual_seed(seed + 2)
    recorder = Recorder(attention_modules(model))
    prefill: List[Call] = []
    decode: List[List[Call]] = [[] for _ in range(decode_steps)]
    try:
        with torch.no_grad():
            for s, length in enumerate(prompt_lengths):
                if model.config.model_type in TOKEN_INPUTS:
                    tokens = torch.randint(0, model.config.vocab_size, (1, length + decode_steps),
                                           generator=generator).to(device)
                    inputs = lambda a, b: dict(input_ids=tokens[:, a:b])  # noqa: E731
                else:
                    embeds = torch.randn(1, length + decode_steps, hidden_size,
                                         generator=generator).to(device)
                    inputs = lambda a, b: dict(inputs_embeds=embeds[:, a:b])  # noqa: E731
                recorder.current = Call(s, list(range(length)))
                out = model(**inputs(0, length), use_cache=True)
                prefill.append(recorder.current)
                cache = out.past_key_values
                for step in range(decode_steps):
                    position = length + step
                    recorder.current = Call(s, [position])
                    # Positions given, not derived from the cache: a hybrid
                    # model's cache may count its first layer's tokens, and
                    # that layer may be linear attention with none (MiniMax).
                    where = torch.tensor([[position]], device=device)
                    extra = dict(position_ids=where)
                    if "cache_position" in inspect.signature(model.forward).parameters:
                        extra["cache_position"] = where[0]
                    out = model(**inputs(position, position + 1),
                                past_key_values=cache, use_cache=True, **extra)
                    cache = out.past_key_values
                    decode[step].append(recorder.current)
    finally:
        recorder.close()
    return prefill, decode


# ---- projections -> per-head q, k, v, gate ----------------------------------------------

@dataclass
class Heads:
    q: torch.Tensor                 # [T, Hq, Dqk]
    k: torch.Tensor                 # [T, Hkv, Dqk]
    v: torch.Tensor                 # [T, Hkv, Dv]
    gate: Optional[torch.Tensor]    # [T, Hq, Dv] (before the sigmoid), or None
    out: torch.Tensor               # [T, Hq, Dv]: what entered the output projection


def _width_error(name, tensor, expected, what):
    return AssertionError(f"{name}: Hugging Face's projection is {tuple(tensor.shape)}, "
                          f"attnc's {what} needs width {expected}")


def split_heads(captured: Dict[str, torch.Tensor], kind: Dict[str, Any], rows: int) -> Heads:
    """The module's projections as attnc's segments, per head. `kind` is
    the layer kind as attnc read it (head counts and dims)."""
    hq, hkv = kind["num_q_heads"], kind["num_kv_heads"]
    dqk, dv = kind["qk_head_dim"], kind["v_head_dim"]
    out = captured["<out>"][-rows:]
    if out.shape[-1] != hq * dv:
        raise _width_error("attention output", out, hq * dv, f"Hq * Dv = {hq} * {dv}")
    out = out.reshape(rows, hq, dv)
    gate = None
    if "kv_a_proj_with_mqa" in captured:          # MLA, decompressed
        q = captured["q_b_proj"] if "q_b_proj" in captured else captured["q_proj"]
        latent = captured["kv_a_proj_with_mqa"][-rows:]
        expanded = captured["kv_b_proj"][-rows:]
        rope_dim = dqk - (expanded.shape[-1] // hq - dv)
        nope = dqk - rope_dim
        kv = expanded.reshape(rows, hq, nope + dv)
        k_rot = latent[:, -rope_dim:]
        k = torch.cat([kv[..., :nope], k_rot[:, None, :].expand(rows, hq, rope_dim)], dim=-1)
        v = kv[..., nope:]
        q = q[-rows:].reshape(rows, hq, dqk)
        return Heads(q=q, k=k, v=v, gate=None, out=out)
    if "qkv_proj" in captured:                    # Phi-3: [q | k | v]
        fused = captured["qkv_proj"][-rows:]
        q, k, v = fused.split([hq * dqk, hkv * dqk, hkv * dv], dim=-1)
    elif "query_key_value" in captured:
        # per KV head [q x group, k, v]: GPT-NeoX and Persimmon (group 1:
        # per head [q k v]), Falcon (new decoder architecture: groups;
        # multi-query: [q x Hq | k | v])
        group = hq // hkv
        fused = captured["query_key_value"][-rows:].reshape(rows, hkv, group + 2, dqk)
        q, k, v = fused[:, :, :group], fused[:, :, group], fused[:, :, group + 1]
    else:
        q, k, v = (captured[n][-rows:] for n in ("q_proj", "k_proj", "v_proj"))
    if q.shape[-1] == hq * (dqk + dv) and kind.get("gate") == "interleaved":
        # Qwen3-Next / Qwen3.5: q_proj is per head [q_h | gate_h]
        both = q.reshape(rows, hq, dqk + dv)
        q, gate = both[..., :dqk], both[..., dqk:]
    for name in ("gate_proj", "g_proj"):
        if name in captured:
            gate = captured[name][-rows:]
            gate = gate.reshape(rows, hq, -1)
    if q.numel() != rows * hq * dqk:
        raise _width_error("q", q, hq * dqk, f"Hq * Dqk = {hq} * {dqk}")
    if k.numel() != rows * hkv * dqk:
        raise _width_error("k", k, hkv * dqk, f"Hkv * Dqk = {hkv} * {dqk}")
    if v.numel() != rows * hkv * dv:
        raise _width_error("v", v, hkv * dv, f"Hkv * Dv = {hkv} * {dv}")
    return Heads(q=q.reshape(rows, hq, dqk), k=k.reshape(rows, hkv, dqk),
                 v=v.reshape(rows, hkv, dv), gate=gate, out=out)


NORM_NAMES = {"q": ("q_norm", "query_layernorm", "q_layernorm"),
              "k": ("k_norm", "key_layernorm", "k_layernorm")}


def norm_parameters(module, which: str) -> Dict[str, torch.Tensor]:
    """The q (k) norm's weight (and bias) of an attention module, as
    Hugging Face stores them."""
    for name in NORM_NAMES[which]:
        norm = getattr(module, name, None)
        if norm is None:
            continue
        found = {}
        per_head = getattr(norm, "norms", None)   # StableLM: one LayerNorm per head
        for leaf in ("weight", "bias"):
            if per_head is not None:
                values = [getattr(n, leaf, None) for n in per_head]
                if all(isinstance(v, torch.Tensor) for v in values):
                    found[leaf] = torch.stack([v.detach().float() for v in values])
                continue
            value = getattr(norm, leaf, None)
            if isinstance(value, torch.Tensor):
                found[leaf] = value.detach().float()
        return found
    return {}


def sinks_of(module) -> Optional[torch.Tensor]:
    for name in ("sinks", "attention_sink_bias"):
        value = getattr(module, name, None)
        if isinstance(value, torch.Tensor):
            return value.detach().float()
    return None


# ---- the fused row ---------------------------------------------------------------------

def cli_path() -> Path:
    override = os.environ.get("ATTNC_CLI")
    return Path(override) if override else REPO / "build" / "bin" / "attnc"


def layout_of(config: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """`attnc layout --json` of a config dict: kind name -> its entry."""
    cli = cli_path()
    if not cli.is_file():
        raise AssertionError(f"the attnc CLI is not at {cli} (build it, or carry build/bin "
                             "to the GPU machine, or set ATTNC_CLI): the fused row's layout "
                             "comes from `attnc layout --json`")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config))
        run = subprocess.run([str(cli), "layout", str(path), "--json"],
                             capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise AssertionError(f"attnc layout failed ({run.returncode}): {run.stderr.strip()}")
    return {kind["name"]: kind for kind in json.loads(run.stdout)["layer_kinds"]}


def fused_rows(heads: Heads, layout_kind: Dict[str, Any]) -> torch.Tensor:
    """[T, fused_width]: each segment's heads at offset + h * head_stride,
    as the layout says."""
    rows = heads.q.shape[0]
    out = torch.full((rows, layout_kind["fused_width"]), float("nan"), dtype=torch.float32,
                     device=heads.q.device)
    source = {"q": heads.q, "k": heads.k, "v": heads.v, "gate": heads.gate}
    for segment in layout_kind["segments"]:
        tensor = source[segment["segment"]]
        if tensor is None:
            raise AssertionError(f"attnc's layout has a {segment['segment']} segment, "
                                 "but the Hugging Face module has no such projection")
        if tensor.shape[1] != segment["num_heads"] or tensor.shape[2] != segment["head_size"]:
            raise AssertionError(f"segment {segment['segment']}: the module gives "
                                 f"{tuple(tensor.shape[1:])} per token, attnc's layout says "
                                 f"{segment['num_heads']} heads of {segment['head_size']}")
        for h in range(segment["num_heads"]):
            begin = segment["offset"] + h * segment["head_stride"]
            out[:, begin:begin + segment["head_size"]] = tensor[:, h]
    if heads.gate is not None and not any(s["segment"] == "gate" for s in layout_kind["segments"]):
        raise AssertionError("the Hugging Face module gates its output, attnc's layout has no gate")
    if bool(torch.isnan(out).any()):
        raise AssertionError("attnc's layout leaves columns of the fused row unset")
    return out


# ---- batches and the paged cache ---------------------------------------------------------

@dataclass
class Batch:
    rows: torch.Tensor          # [T, W] float32 fused rows
    positions: torch.Tensor     # [T] int64
    slots: torch.Tensor         # [T] int64
    seq_lens: torch.Tensor      # [S] int32
    query_start_loc: torch.Tensor  # [S + 1] int32
    expected: torch.Tensor      # [T, Hq, Dv]: the module's attention output
    sequence_ids: List[int]     # [S]: each batch sequence's row of the block tables


class PagedCache:
    """Block tables for the sequences (whole blocks in a shuffled order)."""

    def __init__(self, total_lengths: Sequence[int], generator: torch.Generator, device):
        blocks = [-(-n // BLOCK_SIZE) for n in total_lengths]
        self.num_blocks = sum(blocks) + 1
        order = torch.randperm(sum(blocks), generator=generator)
        self.tables = torch.full((len(blocks), max(blocks)), self.num_blocks - 1,
                                 dtype=torch.int32)
        used = 0
        for s, n in enumerate(blocks):
            self.tables[s, :n] = order[used:used + n].int()
            used += n
        self.tables = self.tables.to(device)

    def slots(self, sequence: int, positions: Sequence[int]) -> List[int]:
        table = self.tables[sequence].cpu()
        return [int(table[p // BLOCK_SIZE]) * BLOCK_SIZE + p % BLOCK_SIZE for p in positions]


def batches(calls_per_batch: List[List[Call]], layer: int, kind: Dict[str, Any],
            layout_kind: Dict[str, Any], cache: PagedCache, device) -> List[Batch]:
    out = []
    for calls in calls_per_batch:
        rows, positions, slots, seq_lens, starts, expected = [], [], [], [], [0], []
        for call in calls:
            captured = call.layers.get(layer)
            if captured is None:
                raise AssertionError(f"layer {layer}: attnc has attention here, the Hugging "
                                     "Face model does not run an attention module there")
            heads = split_heads(captured, kind, len(call.positions))
            rows.append(fused_rows(heads, layout_kind))
            expected.append(heads.out)
            positions += call.positions
            slots += cache.slots(call.sequence, call.positions)
            seq_lens.append(call.positions[-1] + 1)
            starts.append(starts[-1] + len(call.positions))
        out.append(Batch(
            rows=torch.cat(rows).to(device),
            positions=torch.tensor(positions, dtype=torch.int64, device=device),
            slots=torch.tensor(slots, dtype=torch.int64, device=device),
            seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
            query_start_loc=torch.tensor(starts, dtype=torch.int32, device=device),
            expected=torch.cat(expected).to(device),
            sequence_ids=[call.sequence for call in calls]))
    return out


# ---- the attnc side -----------------------------------------------------------------------

#: Layer-kind keys of attnc's spec that the reference backend implements.
#: A key it does not know (a feature added later) fails the case instead
#: of being ignored.
REFERENCE_KEYS = {"name", "layers", "num_q_heads", "num_kv_heads", "qk_head_dim",
                  "v_head_dim", "gate", "qk_norm", "qk_norm_scope", "qk_norm_bias",
                  "norm_eps", "norm_before_rope", "rope", "sliding_window", "sinks",
                  "softmax_scale", "logit_softcap", "value_scale", "query_temperature",
                  "attention_chunk"}
SCALING_KINDS = {"none", "linear", "llama3", "yarn", "longrope"}


def qk_norm(x, kind: Dict[str, Any], params: Dict[str, torch.Tensor]):
    """The q/k norm of the spec on x [T, H, D] (float32): style rms, gemma
    (1 + w), unweighted, layernorm (+ bias); over each head, or over the
    whole projection (scope "projection"); the weight [D], [H, D] (scope
    "head_weights") or [H * D]."""
    style, scope = kind["qk_norm"], kind.get("qk_norm_scope", "head")
    eps = kind["norm_eps"]
    tokens, heads, dim = x.shape
    y = x.reshape(tokens, heads * dim) if scope == "projection" else x
    if style == "layernorm":
        centred = y - y.mean(-1, keepdim=True)
        y = centred * torch.rsqrt(centred.pow(2).mean(-1, keepdim=True) + eps)
    elif style in ("rms", "gemma", "unweighted"):
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)
    else:
        raise AssertionError(f"reference backend: q/k norm {style!r}")
    y = y.reshape(tokens, heads, dim)
    if style != "unweighted":
        w = params.get("weight")
        if w is None:
            raise AssertionError(f"attnc reads a {style} q/k norm with a weight, the "
                                 "Hugging Face module has none")
        w = w.reshape(-1, dim) if w.numel() != dim else w
        y = y * ((1.0 + w) if style == "gemma" else w)
        if kind.get("qk_norm_bias"):
            b = params.get("bias")
            if b is None:
                raise AssertionError("attnc reads a q/k norm bias, the module has none")
            y = y + (b.reshape(-1, dim) if b.numel() != dim else b)
    return y


def rope_cos_sin(positions: torch.Tensor, rope: Dict[str, Any], device):
    """cos, sin [T, rotary_dim / 2] (float32, angles in float64) of the
    spec's rope: attnc_gpu_reference's tables, plus longrope (per position:
    short factors below original_max_position, long ones from there)."""
    scaling = dict(rope.get("scaling") or {})
    kind = scaling.get("kind", "none")
    if kind not in SCALING_KINDS:
        raise AssertionError(f"reference backend: rope scaling {kind!r}")
    rotary_dim, theta = rope["rotary_dim"], rope.get("theta", 10000.0)
    if kind != "longrope":
        given = {k: v for k, v in scaling.items() if k in ref.DEFAULT_SCALING}
        return ref.rope_cos_sin(positions.cpu().numpy(), rotary_dim, theta, given, device=device)
    base = 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
    original = float(scaling["original_max_position"])
    factor = float(scaling.get("factor", 1.0))
    attention_factor = float(scaling.get("attention_factor") or 0.0)
    if attention_factor == 0.0:
        attention_factor = (math.sqrt(1 + math.log(factor) / math.log(original))
                            if factor > 1.0 else 1.0)
    pos = positions.cpu().numpy().astype(np.float64)
    short = base / np.asarray(scaling["short_factor"], dtype=np.float64)
    long = base / np.asarray(scaling["long_factor"], dtype=np.float64)
    inv = np.where((pos < original)[:, None], short[None, :], long[None, :])
    angles = pos[:, None] * inv
    cos = torch.from_numpy(np.cos(angles) * attention_factor).float().to(device)
    sin = torch.from_numpy(np.sin(angles) * attention_factor).float().to(device)
    return cos, sin


def _segments(rows: torch.Tensor, layout_kind: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """Each segment of the fused rows as [T, heads, head_size]."""
    out = {}
    for segment in layout_kind["segments"]:
        columns = (segment["offset"] + np.arange(segment["num_heads"])[:, None]
                   * segment["head_stride"] + np.arange(segment["head_size"])[None, :])
        out[segment["segment"]] = rows[:, torch.from_numpy(columns).to(rows.device)]
    return out


class ReferenceLayer:
    """attnc's kernel contract in float32 over a paged float32 cache."""

    def __init__(self, kind: Dict[str, Any], layout_kind: Dict[str, Any], module,
                 cache: PagedCache, device):
        unknown = set(kind) - REFERENCE_KEYS
        if unknown:
            raise AssertionError(f"reference backend: attnc's spec has keys it does not "
                                 f"implement: {sorted(unknown)}")
        self.kind = kind
        self.layout_kind = layout_kind
        if kind["gate"] in ("none", "qkvg", "interleaved"):
            # attnc_gpu_reference's own derivation of the layout agrees
            width = ref.fused_columns(kind["num_q_heads"], kind["num_kv_heads"],
                                      kind["qk_head_dim"], kind["v_head_dim"], kind["gate"])[4]
            assert width == layout_kind["fused_width"], (width, layout_kind["fused_width"])
        self.cache = cache
        hkv, dqk, dv = kind["num_kv_heads"], kind["qk_head_dim"], kind["v_head_dim"]
        self.k_cache = torch.full((cache.num_blocks, BLOCK_SIZE, hkv, dqk), float("nan"),
                                  device=device)
        self.v_cache = torch.full((cache.num_blocks, BLOCK_SIZE, hkv, dv), float("nan"),
                                  device=device)
        self.norms = {}
        if kind["qk_norm"] != "none":
            self.norms = {which: {k: v.to(device) for k, v in
                                  norm_parameters(module, which).items()}
                          for which in ("q", "k")}
        self.sinks = sinks_of(module).to(device) if kind.get("sinks") else None

    def preprocess(self, batch: Batch):
        """(q [T, Hq, Dqk], gate or None); k and v written to the cache."""
        kind = self.kind
        parts = _segments(batch.rows, self.layout_kind)
        q, k, v, gate = parts["q"], parts["k"], parts["v"], parts.get("gate")
        rope = kind["rope"]
        steps = ["norm", "rope"] if kind.get("norm_before_rope", True) else ["rope", "norm"]
        for step in steps:
            if step == "norm" and kind["qk_norm"] != "none":
                q = qk_norm(q, kind, self.norms["q"])
                k = qk_norm(k, kind, self.norms["k"])
            elif step == "rope" and rope["style"] != "none":
                cos, sin = rope_cos_sin(batch.positions, rope, batch.rows.device)
                args = (rope["style"], rope.get("rotary_offset", 0), rope["rotary_dim"])
                q = ref.apply_rope(q, cos, sin, *args)
                k = ref.apply_rope(k, cos, sin, *args)
        temperature = kind.get("query_temperature") or {}
        if temperature.get("floor_scale", 0):
            pos = batch.positions.double()
            factor = torch.log(torch.floor((pos + 1) / temperature["floor_scale"]) + 1) \
                * temperature["scale"] + 1
            q = q * factor.float()[:, None, None]
        blocks, offsets = batch.slots // BLOCK_SIZE, batch.slots % BLOCK_SIZE
        self.k_cache[blocks, offsets] = k
        self.v_cache[blocks, offsets] = v
        return q, gate

    def run(self, batch: Batch) -> torch.Tensor:
        kind = self.kind
        q, gate = self.preprocess(batch)
        queries, keys, values = [], [], []
        starts = batch.query_start_loc.tolist()
        for s, seq_len in enumerate(batch.seq_lens.tolist()):
            queries.append(q[starts[s]:starts[s + 1]])
            key_positions = torch.arange(seq_len, device=batch.rows.device)
            table = self.cache.tables[batch.sequence_ids[s]]
            b = table[key_positions // BLOCK_SIZE].long()
            o = key_positions % BLOCK_SIZE
            keys.append(self.k_cache[b, o])
            values.append(self.v_cache[b, o])
        out = ref.attention_reference(
            queries, keys, values, softmax_scale=kind["softmax_scale"],
            sliding_window=kind.get("sliding_window", 0),
            attention_chunk=kind.get("attention_chunk", 0), sinks=self.sinks,
            logit_softcap=kind.get("logit_softcap", 0.0),
            value_scale=kind.get("value_scale", 1.0))
        if gate is not None:
            # [T, Hq, Dv], or one value per head ("head_scalar": [T, Hq, 1])
            out = out * torch.sigmoid(gate)
        return out


class KernelLayer:
    """attnc's kernels: bf16 rows, bf16 paged cache poisoned with NaN."""

    def __init__(self, model, kind: Dict[str, Any], module, cache: PagedCache, device):
        self.model = model
        self.name = kind["name"]
        self.kind = kind
        self.cache = cache
        hkv, dqk, dv = kind["num_kv_heads"], kind["qk_head_dim"], kind["v_head_dim"]
        self.k_cache = torch.full((cache.num_blocks, BLOCK_SIZE, hkv, dqk), float("nan"),
                                  dtype=torch.bfloat16, device=device)
        self.v_cache = torch.full((cache.num_blocks, BLOCK_SIZE, hkv, dv), float("nan"),
                                  dtype=torch.bfloat16, device=device)
        pre = model.kernel(self.name, "preprocess")
        att = model.kernel(self.name, "attention")
        self.pre_params = {p["name"]: p for p in pre.abi["params"]}
        self.att_params = {p["name"]: p for p in att.abi["params"]}
        self.extra_pre: Dict[str, torch.Tensor] = {}
        for which in ("q", "k"):
            params = norm_parameters(module, which)
            for leaf in ("weight", "bias"):
                name = f"{which}_norm_{leaf}"
                if name in self.pre_params:
                    if leaf not in params:
                        raise AssertionError(f"attnc's preprocess takes {name}, the Hugging "
                                             "Face module has no such parameter")
                    self.extra_pre[name] = params[leaf].to(
                        device=device, dtype=_dtype(self.pre_params[name]))
        self.extra_att: Dict[str, torch.Tensor] = {}
        if "sinks" in self.att_params:
            sinks = sinks_of(module)
            if sinks is None:
                raise AssertionError("attnc's attention takes sinks, the module has none")
            self.extra_att["sinks"] = sinks.to(device=device,
                                               dtype=_dtype(self.att_params["sinks"]))

    def run(self, batch: Batch) -> torch.Tensor:
        kind = self.kind
        rows = batch.rows.to(torch.bfloat16)
        tokens = rows.shape[0]
        q_out = torch.full((tokens, kind["num_q_heads"], kind["qk_head_dim"]), float("nan"),
                           dtype=torch.bfloat16, device=rows.device)
        args = dict(slot_mapping=batch.slots, k_cache=self.k_cache, v_cache=self.v_cache,
                    q_out=q_out, **self.extra_pre)
        if "positions" in self.pre_params:
            args["positions"] = batch.positions
        result = self.model.preprocess(self.name, rows, **args)
        # the gate's shape is the kernel's (per element, or one per head)
        gate = result[1] if isinstance(result, tuple) else None
        out = torch.full((tokens, kind["num_q_heads"], kind["v_head_dim"]), float("nan"),
                         dtype=torch.bfloat16, device=rows.device)
        tables = self.cache.tables[batch.sequence_ids]
        att = dict(k_cache=self.k_cache, v_cache=self.v_cache, block_tables=tables.contiguous(),
                   seq_lens=batch.seq_lens, query_start_loc=batch.query_start_loc, out=out,
                   **self.extra_att)
        if gate is not None:
            att["gate"] = gate
        self.model.attention(self.name, q_out, **att)
        return out.float()


def _dtype(param: Dict[str, Any]):
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "fp32": torch.float32, "fp16": torch.float16}[param["dtype"]]


# ---- comparison ----------------------------------------------------------------------------

def compare(name: str, actual: torch.Tensor, expected: torch.Tensor, backend: str,
            element_factor: float = 1.0) -> float:
    """Fails on any NaN/Inf, on a relative L2 error over the bound, or an
    element off by more than max_over_rms x rms(expected) + max_relative x
    |its expected value| (both times element_factor, >= 1, which a caller
    sets for a case it documents). Returns the largest |error| / rms."""
    assert element_factor >= 1.0, element_factor
    bound = dict(BOUNDS[backend])
    bound["max_over_rms"] *= element_factor
    bound["max_relative"] *= element_factor
    assert actual.shape == expected.shape, (name, tuple(actual.shape), tuple(expected.shape))
    ref.assert_finite(name, actual)
    ref.assert_finite(f"{name} (Hugging Face)", expected)
    a, e = actual.double(), expected.double()
    rms = float(e.pow(2).mean().sqrt())
    assert rms > 0, f"{name}: Hugging Face's output is all zeros"
    diff = (a - e).abs()
    rel = float(diff.norm() / e.norm())
    worst = float(diff.max()) / rms
    # how far each element is past its bound (> 0: over)
    excess = diff - (bound["max_over_rms"] * rms + bound["max_relative"] * e.abs())
    if rel >= bound["rel_l2"] or bool((excess > 0).any()):
        index = tuple(int(i) for i in (excess == excess.max()).nonzero()[0])
        raise AssertionError(
            f"{name}: relative L2 error {rel:.2e} (bound {bound['rel_l2']:.0e}), "
            f"an element off by more than {bound['max_over_rms']:.0e} x rms + "
            f"{bound['max_relative']:.1e} x |itself| (largest error {worst:.2e} x rms); "
            f"worst at "
            f"[token, head, dim] {index}: attnc {float(a[index]):.5f}, Hugging Face "
            f"{float(e[index]):.5f} (rms {rms:.4f})")
    return worst
