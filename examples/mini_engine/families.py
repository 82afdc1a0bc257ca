"""Small decoder models built from the bundled real config.json files.

Each family starts from a file in ``examples/configs`` and shrinks what does
not shape attention (layers, hidden size, MLP width, vocabulary, experts)
while it keeps what does: head dims, the GQA ratio, q/k norm and its style,
rope (theta, scaling, partial rotary), sinks, sliding windows, softmax and
value scaling. Every family keeps one layer of each attention kind it has.

``build_reference`` makes the Hugging Face model with
``AutoModelForCausalLM.from_config`` from a fixed seed, gives the parameters
Hugging Face initialises to constants (norm weights, biases, sinks) random
values too, and rounds every parameter to bf16, so that a float32 copy and a
bf16 copy hold the same weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
#: Configs only the mini engine uses (kept out of examples/configs, whose
#: every file the compiler tests import).
ENGINE_CONFIG_DIR = Path(__file__).resolve().parent / "configs"


@dataclass(frozen=True)
class Family:
    name: str
    config_file: str
    #: Keys set over the file's (or its text_config's) values.
    overrides: Dict[str, Any]
    #: Attention features the shrunk model must still have (checked against
    #: what attnc read from the config).
    expect: Dict[str, Any] = field(default_factory=dict)


# Shrinks shared by all families: none of these changes the attention shape.
# MoE layers route every token to all of their (few) experts: top-k of a
# shrunk expert count would make routing a discrete choice that bf16
# rounding flips (Hugging Face's own bf16 model then differs from its
# float32 one by half the logit scale), which would hide attention errors.
_SMALL = dict(hidden_size=256, intermediate_size=512, vocab_size=512,
              num_hidden_layers=2, initializer_range=0.02)

FAMILIES: Dict[str, Family] = {
    # Llama 3.1: GQA 32/8 -> 8/2, head_dim 128, llama3 rope scaling.
    "llama": Family("llama", "llama-3.1-8b-instruct.json", dict(
        _SMALL, num_attention_heads=8, num_key_value_heads=2, head_dim=128)),
    # Qwen3: GQA 32/8 -> 8/2, head_dim 128, per-head RMSNorm on q and k.
    "qwen3": Family("qwen3", "qwen3-8b.json", dict(
        _SMALL, num_attention_heads=8, num_key_value_heads=2, head_dim=128,
        max_window_layers=2), expect={"qk_norm": "rms"}),
    # gpt-oss: GQA 64/8 -> 16/2, head_dim 64, sinks on every layer, sliding
    # window 128 on even layers, YaRN (factor 32), attention bias, MoE.
    "gpt_oss": Family("gpt_oss", "gpt-oss-20b.json", dict(
        _SMALL, num_attention_heads=16, num_key_value_heads=2, head_dim=64,
        intermediate_size=128, num_local_experts=4, num_experts_per_tok=4,
        layer_types=["sliding_attention", "full_attention"]),
        expect={"sinks": True, "sliding_window": 128}),
    # Gemma 3: GQA 32/16 -> 4/2, head_dim 128, (1 + w) q/k norm, scale
    # query_pre_attn_scalar^-0.5 (168), local layers with window 1024 -> 64
    # (the prompts are a few hundred tokens) and their own rope base, global
    # layers with linear scaling 8.
    "gemma3": Family("gemma3", "gemma-3-27b-it.json", dict(
        _SMALL, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
        sliding_window=64, layer_types=["sliding_attention", "full_attention"]),
        expect={"qk_norm": "gemma", "softmax_scale": 168 ** -0.5,
                "sliding_window": 64}),
    # MiMo-V2-Flash: 192/128 head dims, partial rotary (0.334 -> 64 dims),
    # full layers GQA 64/4 -> 16/1, sliding layers 64/8 -> 16/2 with sinks
    # and window 129 (sliding_window_size 128 + the query), value scale 0.707,
    # per-kind rope bases, one MoE layer.
    # transformers' class reads layer_types and doubles the kv heads of its
    # sliding layers; the checkpoint's own keys (hybrid_layer_pattern,
    # swa_*) are given to match.
    "mimo_v2_flash": Family("mimo_v2_flash", "mimo-v2-flash.json", dict(
        _SMALL, num_attention_heads=16, num_key_value_heads=1,
        swa_num_attention_heads=16, swa_num_key_value_heads=2,
        hybrid_layer_pattern=[0, 1], layer_types=["full_attention", "sliding_attention"],
        mlp_layer_types=["dense", "sparse"], n_routed_experts=4,
        num_experts_per_tok=4, moe_intermediate_size=128, rms_norm_eps=1e-5,
        rope_parameters={
            "full_attention": {"rope_type": "default", "rope_theta": 5_000_000.0,
                               "partial_rotary_factor": 0.334},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0,
                                  "partial_rotary_factor": 0.334}}),
        expect={"qk_head_dim": 192, "v_head_dim": 128, "value_scale": 0.707}),
    # Gemma 3 1B: 4 query heads and ONE KV head of 256 (tensor parallelism
    # replicates it), scale 256^-0.5, window 512 -> 64 on sliding layers,
    # no rope scaling.
    "gemma3_1b": Family("gemma3_1b", "gemma-3-1b-it.json", dict(
        _SMALL, sliding_window=64, layer_types=["sliding_attention", "full_attention"]),
        expect={"qk_norm": "gemma", "softmax_scale": 256 ** -0.5, "num_kv_heads": 1,
                "sliding_window": 64}),
    # Qwen3-Next: 16/2 heads of 256, q_proj emitting q and the output gate
    # per head (gate layout interleaved), (1 + w) q/k norm, partial rotary
    # 0.25. Every layer full attention (the checkpoint's Gated DeltaNet
    # layers are not attention) and dense MLPs (mlp_only_layers).
    "qwen3_next": Family("qwen3_next", "qwen3-next-80b-a3b.json", dict(
        _SMALL, num_attention_heads=16, num_key_value_heads=2, head_dim=256,
        full_attention_interval=1, layer_types=["full_attention", "full_attention"],
        mlp_only_layers=[0, 1]),
        expect={"gate": "interleaved", "qk_norm": "gemma", "qk_head_dim": 256}),
}


def config_dict(family: Family) -> Dict[str, Any]:
    """The family's shrunk Hugging Face config as a dict (a text model's:
    Gemma 3's text_config with its model_type)."""
    path = ENGINE_CONFIG_DIR / family.config_file
    if not path.is_file():
        path = CONFIG_DIR / family.config_file
    raw = json.loads(path.read_text())
    data = {k: v for k, v in raw.items() if not k.startswith("_")}
    text = data.pop("text_config", None)
    if text is not None:
        outer_dtype = data.get("torch_dtype")
        data = dict(text)
        if outer_dtype is not None:
            data.setdefault("torch_dtype", outer_dtype)
    data.pop("architectures", None)
    data.pop("quantization_config", None)
    data.update(family.overrides)
    return data


def hf_config(family: Family):
    """The transformers config object of the shrunk model."""
    from transformers import AutoConfig
    data = config_dict(family)
    model_type = data.pop("model_type")
    data.pop("torch_dtype", None)
    return AutoConfig.for_model(model_type, **data)


def _randomise_constants(model, generator) -> None:
    """Random values for the parameters Hugging Face initialises to
    constants, so that q/k norm weights, biases and sinks are exercised."""
    import torch
    for name, param in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        if "norm" in name and leaf == "weight":
            # Around the identity of either norm style: 1 for x * w,
            # 0 for Gemma's x * (1 + w).
            centre = 0.0 if bool((param == 0).all()) else 1.0
            noise = torch.randn(param.shape, generator=generator) * 0.2
            param.data.copy_(centre + noise)
        elif leaf == "sinks":
            param.data.copy_(torch.randn(param.shape, generator=generator))
        elif leaf.endswith("bias") and "e_score" not in leaf:
            param.data.copy_(torch.randn(param.shape, generator=generator) * 0.02)


def build_reference(family: Family, seed: int = 0):
    """The Hugging Face model (float32, eager attention, on the CPU) with
    bf16-representable random weights."""
    import torch
    from transformers import AutoModelForCausalLM
    config = hf_config(family)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(
        config, attn_implementation="eager", dtype=torch.float32)
    # MoE experts: the gather + batched matmul form (no host sync, so a
    # decode step can be captured as a CUDA graph).
    model.config._experts_implementation = "batched_mm"
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        _randomise_constants(model, generator)
        for param in model.parameters():
            param.data.copy_(param.data.to(torch.bfloat16).to(torch.float32))
    model.eval()
    # Greedy generate to a fixed length: no end token, no sampling defaults.
    gen = model.generation_config
    gen.eos_token_id = None
    gen.pad_token_id = 0
    gen.do_sample = False
    return model


def attention_layers(model) -> List[Any]:
    """The decoder layers of a *ForCausalLM."""
    return list(model.model.layers)
