"""Each family config of test/model/configs/hf, read by transformers' own config
class and by attnc: the layer types, head dims, KV heads, rotary dims, rope
bases and windows must agree. Needs transformers (no torch: config classes
only); skipped where it is not installed or does not know a model type.

transformers' config class is the ground truth the family table was written
from (docs/config-import.md); this checks the table against it for every
config, where the unit tests check hand-derived values.

Known, documented differences are excluded: MiniMax's attn_type_list (attnc
reads it; transformers ignores it and its default would make the released
checkpoint's lightning layers softmax), EXAONE 4's "LLLG" string pattern
(transformers' default rule cannot take a string; attnc reads it as the
docstring says), and Hunyuan's NTK alpha (transformers keeps rope_theta and
moves the base at run time; attnc folds it into theta).
"""
import json
import subprocess
import warnings

import pytest

from attnc_cpu_helpers import REPO

transformers = pytest.importorskip("transformers", reason="transformers not installed")

# The family table follows transformers 5.24 (the reference it was read
# from); older releases differ on purpose-built points (5.17: MiMo's window
# is sliding_window, not sliding_window_size + 1; no legacy layer-type names;
# MiniMax-M2's rotary_dim ignored), so they are not the ground truth.
_VERSION = tuple(int(part) for part in transformers.__version__.split(".")[:2]
                 if part.isdigit())
if _VERSION < (5, 24):
    pytest.skip(f"transformers {transformers.__version__}: the family table follows 5.24",
                allow_module_level=True)

CONFIGS = sorted((REPO / "test" / "model" / "configs" / "hf").glob("*.json"))
ATTNC = REPO / "build" / "bin" / "attnc"


def attnc_spec(path):
    run = subprocess.run([str(ATTNC), "import", str(path), "--emit=spec"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip()
    return json.loads(run.stdout), None


def hf_text_config(raw):
    data = {k: v for k, v in raw.items() if not k.startswith("_")}
    model_type = data.pop("model_type")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            config = transformers.AutoConfig.for_model(model_type, **data)
        except ValueError as error:
            if "Unrecognized model" in str(error):
                pytest.skip(f"transformers {transformers.__version__} has no {model_type}")
            raise
    return config.get_text_config()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_attnc_agrees_with_the_transformers_config_class(path):
    if not ATTNC.exists():
        pytest.skip(f"{ATTNC} not built")
    raw = json.loads(path.read_text())
    spec, refusal = attnc_spec(path)
    if spec is None:
        assert "is not supported" in refusal, refusal
        pytest.skip(f"attnc refuses: {refusal}")
    model_type = raw.get("text_config", raw).get("model_type", raw["model_type"])
    if model_type == "exaone4" and isinstance(raw.get("sliding_window_pattern"), str):
        pytest.skip("transformers' default rule cannot take the L/G string")
    text = hf_text_config(raw)
    n = spec["num_layers"]
    slots = ["skip"] * n
    for kind in spec["layer_kinds"]:
        for layer in kind["layers"]:
            slots[layer] = ("sliding" if kind["name"].startswith("sliding") else
                            "chunked" if kind["name"].startswith("chunked") else "full")

    layer_types = getattr(text, "layer_types", None)
    if layer_types is not None and model_type != "minimax":
        theirs = ["sliding" if t == "sliding_attention" else
                  "chunked" if t == "chunked_attention" else
                  "full" if t == "full_attention" else "skip" for t in layer_types]
        assert theirs == slots
    sliding_window = getattr(text, "sliding_window", None)
    for kind in spec["layer_kinds"]:
        if kind["name"].startswith("sliding"):
            assert kind["sliding_window"] == sliding_window

    mla = getattr(text, "qk_nope_head_dim", None) is not None
    rope_parameters = getattr(text, "rope_parameters", None) or {}
    for kind in spec["layer_kinds"]:
        base = kind["name"].removesuffix("_nope")
        if not mla and model_type != "mimo_v2_flash":
            head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
            assert kind["qk_head_dim"] == head_dim
            kv_heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
            if model_type == "falcon":
                kv_heads = (text.num_kv_heads if text.new_decoder_architecture
                            or not text.multi_query else 1)
            assert kind["num_kv_heads"] == kv_heads
        rope = kind["rope"]
        if rope["style"] == "none":
            continue
        params = rope_parameters.get(base, rope_parameters)
        if "rope_theta" in params and not model_type.startswith("hunyuan"):
            assert rope["theta"] == pytest.approx(params["rope_theta"], rel=1e-9)
        factor = params.get("partial_rotary_factor",
                            getattr(text, "partial_rotary_factor", None)) or 1.0
        if not mla and model_type != "minimax":
            assert rope["rotary_dim"] == int(kind["qk_head_dim"] * factor)
        rope_type = params.get("rope_type", "default")
        if rope_type != "default" and not model_type.startswith("hunyuan"):
            assert rope["scaling"]["kind"] == rope_type


#: The MLA families attnc imports as latent kinds, and whether their
#: attention rotates with apply_rotary_pos_emb_interleave (gptj pairs in,
#: halves out) -- read from the transformers 5.24 modeling code: DeepSeek-V3,
#: GLM-4.x-Flash and Mistral 4 when config.rope_interleave, LongCat always,
#: DeepSeek-V2 never (its complex product rotates the pairs in place).
_LATENT = {"deepseek_v3": "rope_interleave", "kimi_k2": "rope_interleave",
           "glm4_moe_lite": "rope_interleave", "mistral4": "rope_interleave",
           "longcat_flash": True, "deepseek_v2": False}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_mla_latent_kinds_agree_with_the_config_class(path):
    if not ATTNC.exists():
        pytest.skip(f"{ATTNC} not built")
    raw = json.loads(path.read_text())
    spec, refusal = attnc_spec(path)
    if spec is None:
        pytest.skip(f"attnc refuses: {refusal}")
    model_type = raw.get("text_config", raw).get("model_type", raw["model_type"])
    latent = [kind for kind in spec["layer_kinds"] if "mla" in kind]
    if model_type not in _LATENT:
        assert not latent, f"{model_type} is not an MLA latent family"
        return
    if model_type == "kimi_k2":
        raw = dict(raw, model_type="deepseek_v3")  # transformers has no kimi_k2
    text = hf_text_config(raw)
    assert latent and len(latent) == len(spec["layer_kinds"])
    rule = _LATENT[model_type]
    deinterleave = getattr(text, rule) if isinstance(rule, str) else rule
    for kind in latent:
        assert kind["mla"]["kv_lora_rank"] == text.kv_lora_rank
        assert kind["rope"]["rotary_dim"] == text.qk_rope_head_dim
        assert kind["rope"]["rotary_offset"] == text.qk_nope_head_dim
        assert kind["qk_head_dim"] == text.qk_nope_head_dim + text.qk_rope_head_dim
        assert kind["v_head_dim"] == text.v_head_dim
        assert kind["num_q_heads"] == kind["num_kv_heads"] == text.num_attention_heads
        assert kind["mla"]["rope_deinterleave"] == bool(deinterleave)
        assert kind["rope"]["style"] == ("gptj" if deinterleave or model_type == "deepseek_v2"
                                         else "neox")
        expected_scale = ((text.hidden_size / text.kv_lora_rank) ** 0.5
                          if model_type == "longcat_flash" else 1.0)
        assert kind["mla"]["latent_scale"] == pytest.approx(expected_scale, rel=1e-12)
