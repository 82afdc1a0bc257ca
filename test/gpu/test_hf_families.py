"""Hugging Face's own attention modules against attnc, one case per family
(issue 18). See hf_family_check.py for the method and hf_family_configs.py
for the configs.

On a GPU the attnc kernels run (bf16); with ATTNC_HF_CHECK_BACKEND=reference
the kernel contract's float32 reference runs in their place, on the CPU
(conftest lets these cases run without a GPU then). A family that
transformers lacks is skipped ("transformers X has no <model_type>"); one
that attnc refuses is skipped with attnc's message, which must name a field
and a rule ("field: rule") and must not be the unknown-model-type refusal.
"""

import concurrent.futures
import copy
import importlib
import os
import re
import zlib

import pytest

from hf_family_configs import FAMILIES

pytestmark = pytest.mark.hf_reference_on_cpu


def _transformers_or_skip(model_type: str):
    try:
        transformers = importlib.import_module("transformers")
    except ImportError:
        pytest.skip("skipped: transformers is not installed")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    if model_type not in CONFIG_MAPPING_NAMES:
        pytest.skip(f"skipped: transformers {transformers.__version__} has no {model_type}")
    return transformers


#: Families attnc imports as MLA latent kinds (latent cache, absorbed
#: decode, decompressed prefill): test/gpu/test_mla_hf.py checks them
#: against Hugging Face's attention through the four MLA kernels; the
#: paged preprocess/attention path below has no kernels for them.
MLA_LATENT_FAMILIES = {"deepseek_v2", "deepseek_v3", "kimi_k2", "glm4_moe_lite",
                       "mistral4", "longcat_flash"}


def _skip_if_latent(model_type: str):
    if FAMILIES[model_type]["model_type"] in MLA_LATENT_FAMILIES:
        pytest.skip(f"skipped: {model_type} imports as an MLA latent kind; "
                    "test/gpu/test_mla_hf.py checks it against Hugging Face")


#: A refusal names what it refuses: "field: rule".
_NAMED_REFUSAL = re.compile(r"^[A-Za-z_][\w.\[\]]*: \S")


_OPTIONS = dict(dtype="bf16", kv_dtype="bf16", block_size=16)


@pytest.fixture(scope="module")
def compiled(request, tmp_path_factory):
    """model_type -> attnc Model (or the exception compiling raised), for
    every collected case, compiled in parallel (the compiler is
    thread-safe; ctypes releases the GIL)."""
    import attnc
    cache_dir = os.environ.get("ATTNC_CACHE_DIR") or str(tmp_path_factory.mktemp("attnc-cache"))
    context = attnc.Context(cache_dir=cache_dir)
    wanted = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is not request.module:
            continue
        if "model_type" in params:
            wanted.add(params["model_type"])
        if "control" in params:
            wanted.add(NEGATIVE_CONTROLS[params["control"]][0])
    wanted = sorted(m for m in wanted if FAMILIES[m]["model_type"] not in MLA_LATENT_FAMILIES)

    def build(model_type):
        try:
            return attnc.compile(FAMILIES[model_type], context=context, **_OPTIONS)
        except Exception as error:  # noqa: BLE001 - reported by the case
            return error

    workers = max(1, min(len(wanted), os.cpu_count() or 1, 16))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(zip(wanted, pool.map(build, wanted)))


def _model_or_skip(compiled, model_type):
    import attnc
    result = compiled[model_type]
    if isinstance(result, attnc.ConfigError):
        message = str(getattr(result, "message", "") or result).strip()
        assert "unknown model type" not in message, (
            f"attnc does not know this family: {message}")
        assert _NAMED_REFUSAL.match(message), (
            f"attnc's refusal does not name a field and rule: {message!r}")
        pytest.skip(f"skipped: attnc refuses: {message}")
    if isinstance(result, Exception):
        raise result
    return result


def _check(model_type, compiled, backend, mutate=None):
    """Runs one family's case; returns the largest error / rms of each
    batch compared. `mutate(kind)` (reference backend only) changes attnc's
    layer kind before the reference runs it."""
    import torch
    import hf_family_check as check
    config = FAMILIES[model_type]
    _skip_if_latent(model_type)
    _transformers_or_skip(config["model_type"])
    device = "cuda" if backend == "kernels" else "cpu"
    model = _model_or_skip(compiled, model_type)
    spec = model.config
    layout = check.layout_of(config)
    seed = zlib.crc32(model_type.encode())

    hf_model = check.build_hf_model(config, seed, device)
    modules = check.attention_modules(hf_model)
    attnc_layers = sorted(layer for kind in spec["layer_kinds"] for layer in kind["layers"])
    assert attnc_layers == sorted(modules), (
        f"layers with attention: attnc {attnc_layers}, Hugging Face {sorted(modules)}")
    prefill, decode = check.run_hf(hf_model, hf_model.config.hidden_size, seed, device)

    totals = [length + check.DECODE_STEPS for length in check.PROMPT_LENGTHS]
    generator = torch.Generator().manual_seed(seed + 3)
    checked = []
    for kind in spec["layer_kinds"]:
        for layer in kind["layers"]:
            cache = check.PagedCache(totals, generator, device)
            if backend == "kernels":
                runner = check.KernelLayer(model, kind, modules[layer], cache, device)
            else:
                used = copy.deepcopy(kind)
                if mutate is not None:
                    mutate(used)
                runner = check.ReferenceLayer(used, layout[kind["name"]], modules[layer], cache,
                                              device)
            batches = check.batches([prefill] + decode, layer, kind, layout[kind["name"]],
                                    cache, device)
            for step, batch in enumerate(batches):
                what = "prefill" if step == 0 else f"decode step {step}"
                name = f"{model_type} layer {layer} ({kind['name']}), {what}"
                checked.append(check.compare(name, runner.run(batch), batch.expected, backend))
    assert checked, "no attention layer was compared"
    return checked


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_hf_family(model_type, compiled, record_property):
    import hf_family_check as check
    checked = _check(model_type, compiled, check.backend_name())
    record_property("batches_compared", len(checked))
    record_property("max_error_over_rms", max(checked))


def _set(*path_and_value):
    *path, key, value = path_and_value

    def mutate(kind):
        target = kind
        for step in path:
            target = target[step]
        target[key] = value
    return mutate


#: One wrong convention each, on attnc's side: the check must see it.
NEGATIVE_CONTROLS = {
    "llama: gptj pairs instead of neox": ("llama", _set("rope", "style", "gptj")),
    "gemma3_text: x*w instead of x*(1+w)": ("gemma3_text", _set("qk_norm", "rms")),
    "gpt_oss: no sliding window": ("gpt_oss", _set("sliding_window", 0)),
    "gpt_oss: yarn truncated": ("gpt_oss", _set("rope", "scaling", "truncate", True)),
    "qwen3_next: full rotary": ("qwen3_next", _set("rope", "rotary_dim", 256)),
    "mimo_v2_flash: no value scale": ("mimo_v2_flash", _set("value_scale", 1.0)),
    # DeepSeek's mscale^2 on the softmax scale: the MLA families are latent
    # kinds now (test_mla_hf.py); bailing_hybrid keeps the decompressed
    # path, so its scale is the control.
    "bailing_hybrid: softmax scale halved": ("bailing_hybrid",
                                             _set("softmax_scale", 0.5 * 192 ** -0.5)),
}


@pytest.mark.parametrize("control", sorted(NEGATIVE_CONTROLS))
def test_hf_family_negative_control(control, compiled):
    """The reference backend with one convention changed must fail the
    family's check (the check cannot pass whatever attnc reads)."""
    import hf_family_check as check
    if check.backend_name() != "reference":
        pytest.skip("skipped: negative controls change the reference backend's layer kind "
                    "(ATTNC_HF_CHECK_BACKEND=reference)")
    model_type, mutate = NEGATIVE_CONTROLS[control]
    with pytest.raises(AssertionError, match="relative L2 error"):
        _check(model_type, compiled, "reference", mutate)
