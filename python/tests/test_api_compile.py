"""Compiling configurations (needs NVRTC, no GPU): every bundled config,
the config forms, options, model metadata, errors, and bundles."""

import json
import re
import shutil
import subprocess
import threading
from types import SimpleNamespace

import pytest

import attnc
from attnc_cpu_helpers import (CACHE_STRIDES, CONFIG_DIR, REPO, attention_cache_maps,
                               check_attention_trailing, check_prefill_attention, spec)

CONFIGS = sorted(CONFIG_DIR.glob("*.json"))
ATTNC_CLI = REPO / "build" / "bin" / "attnc"

PREPROCESS_PARAMS = ["qkv", "slot_mapping", "k_cache", "v_cache"] + CACHE_STRIDES


def attention_params(kernel):
    """An attention kernel's leading parameters: the caches, their strides,
    the TMA K/V tensor maps where it takes them, the batch's tables."""
    return (["query", "k_cache", "v_cache"] + CACHE_STRIDES + attention_cache_maps(kernel)
            + ["block_tables", "seq_lens", "query_start_loc"])


def _layout(path):
    """`attnc layout --json` of a config: kind name -> layout entry."""
    if not ATTNC_CLI.is_file():
        return None
    out = subprocess.run([str(ATTNC_CLI), "layout", str(path), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return {kind["name"]: kind for kind in json.loads(out)["layer_kinds"]}


def _shape(kernel, name):
    return next(p for p in kernel.abi["params"] if p["name"] == name).get("shape")


def _dtype(kernel, name):
    return next(p for p in kernel.abi["params"] if p["name"] == name).get("dtype")


def test_bundled_configs_exist():
    assert len(CONFIGS) >= 10
    assert (CONFIG_DIR / "default.json") in CONFIGS


#: Bundled configs whose layer kinds are MLA latent kinds (four MLA kernels a
#: kind, not a preprocess and a paged attention): left to the MLA tests.
MLA_CONFIGS = {"deepseek-v3", "kimi-k2-instruct"}


@pytest.mark.parametrize("stem", sorted(MLA_CONFIGS))
def test_compile_bundled_mla_config(stem, compiled):
    """A latent kind compiles to its four kernels, named by kind, each an
    sm_90a cubin whose ABI names the latent cache."""
    model = compiled(str(CONFIG_DIR / f"{stem}.json"))
    assert len(model.kernels) == 4 * len(model.layers)
    for layer in model.layers:
        for kind, first in (("mla_preprocess", "kv_a"), ("latent_attention", "query"),
                            ("varlen_attention", "query"), ("latent_gather", "latent_cache")):
            kernel = model.kernel(layer, kind)
            assert (kernel.name, kernel.kind) == (f"{layer}__{kind}", kind)
            assert kernel.params[0] == first
            assert kernel.cubin()[:4] == b"\x7fELF"
        cache = {p["name"]: p for p in model.kernel(layer, "latent_attention").abi["params"]}
        assert cache["latent_cache"]["shape"][1:] == [64, 576]
        assert cache["output"]["shape"][2] == 512


@pytest.mark.parametrize("path", [p for p in CONFIGS if p.stem not in MLA_CONFIGS],
                         ids=lambda p: p.stem)
def test_compile_bundled_config(path, compiled):
    model = compiled(str(path))
    assert model.layers, "a model has at least one layer kind"
    # A preprocess and an attention kernel a layer kind, and on sm_90a the
    # warp-specialised prefill kernel where the layer's shape takes it.
    prefill = {layer: check_prefill_attention(model, layer) for layer in model.layers}
    assert len(model.kernels) == 2 * len(model.layers) + sum(
        kernel is not None for kernel in prefill.values())
    layout = _layout(path)
    if layout is not None:
        assert sorted(model.layers) == sorted(layout)
    for layer in model.layers:
        pre = model.kernel(layer, "preprocess")
        att = model.kernel(layer, "attention")
        assert (pre.name, pre.kind, pre.layer) == (f"{layer}__preprocess", "preprocess", layer)
        assert (att.name, att.kind, att.layer) == (f"{layer}__attention", "attention", layer)
        checked = [(pre, PREPROCESS_PARAMS, ["num_tokens"]),
                   (att, attention_params(att), check_attention_trailing(att))]
        if prefill[layer] is not None:
            checked.append((prefill[layer], prefill[layer].params[:11],
                            check_attention_trailing(prefill[layer])))
        for kernel, leading, trailing in checked:
            assert kernel.abi["name"] == kernel.name
            assert kernel.params[:len(leading)] == leading
            assert kernel.params[-len(trailing):] == trailing
            assert f"{kernel.name}(" in kernel.source
            assert 'extern "C" __global__' in kernel.source
            reports = kernel.build_reports()
            assert [r["arch"] for r in reports] == ["sm_90a"]
            assert reports[0]["outcome"] in ("compiled", "disk_hit", "memory_hit")
            assert len(reports[0]["cache_key"]) == 64
            assert kernel.cubin()[:4] == b"\x7fELF"
        assert "q_out" in pre.params
        assert "output" in att.params
        if layout is not None:
            kind = layout[layer]
            assert _shape(pre, "qkv") == ["num_tokens", kind["fused_width"]]
            assert _shape(pre, "q_out") == ["num_tokens", kind["num_q_heads"],
                                            kind["qk_head_dim"]]
            assert _shape(att, "output") == ["num_tokens", kind["num_q_heads"],
                                             kind["v_head_dim"]]
            assert ("gate_out" in pre.params) == (kind["gate_layout"] != "none")
            assert ("gate" in att.params) == (kind["gate_layout"] != "none")


def test_model_metadata(compiled):
    model = compiled(spec("attnc_test_meta", hq=8, hkv=2, dqk=192, dv=128,
                          gate="qkvg", norm="gemma", rope="gptj", rotary_dim=64,
                          sinks=True, window=128, extra_kinds=["attnc_test_other"]))
    assert model.layers == ["attnc_test_meta", "attnc_test_other"]
    assert isinstance(model.manifest, dict) and model.manifest
    kinds = {k["name"]: k for k in model.config["layer_kinds"]}
    assert kinds["attnc_test_meta"]["num_q_heads"] == 8
    assert kinds["attnc_test_meta"]["sliding_window"] == 128
    assert "attnc_test_meta" in repr(model)
    pre = model.kernel("attnc_test_meta", "preprocess")
    assert pre.params == (["qkv", "slot_mapping", "k_cache", "v_cache"] + CACHE_STRIDES
                          + ["positions", "q_norm_weight", "k_norm_weight", "q_out",
                             "gate_out", "num_tokens"])
    assert _shape(pre, "qkv") == ["num_tokens", 8 * 192 + 2 * 192 + 2 * 128 + 8 * 128]
    assert _shape(pre, "k_cache") == ["num_blocks", 16, 2, 192]
    assert _shape(pre, "v_cache") == ["num_blocks", 16, 2, 128]
    assert _dtype(pre, "slot_mapping") == "i64"
    assert _dtype(pre, "positions") == "i64"
    att = model.kernel("attnc_test_meta", "attention")
    # 192/128 bf16 with 16-token pages on sm_90a: the wgmma form, the
    # cp.async gather (TMA K/V takes pages of 64 or more)
    assert attention_cache_maps(att) == []
    assert att.params == (["query", "k_cache", "v_cache"] + CACHE_STRIDES
                          + ["block_tables", "seq_lens", "query_start_loc", "sinks", "gate"]
                          + check_attention_trailing(att))
    assert _shape(att, "sinks") == [8]
    assert _shape(att, "query_start_loc") == ["num_seqs_plus_one"]
    assert _dtype(att, "block_tables") == "i32"
    with pytest.raises(attnc.ArgumentError, match="no layer kind 'nope'"):
        model.kernel("nope", "attention")


def test_layer_index_lookup(compiled):
    model = compiled(spec("attnc_test_a", extra_kinds=["attnc_test_b"]))
    config = model.manifest.get("config")
    if not (isinstance(config, dict) and "layer_kinds" in config):
        pytest.skip("the manifest carries no layer_kinds to map layer indices")
    assert model.layer_kind(0) == "attnc_test_a"
    assert model.layer_kind(1) == "attnc_test_b"
    with pytest.raises(attnc.ArgumentError, match="layer 7 belongs to no layer kind"):
        model.layer_kind(7)


def test_options(compiled):
    base = spec("attnc_test_opts", hq=16, hkv=4, dqk=128, dv=128)
    fp8 = compiled(base, kv_dtype="fp8")
    pre = fp8.kernel("attnc_test_opts", "preprocess")
    assert _dtype(pre, "k_cache") == "fp8_e4m3" and _dtype(pre, "qkv") == "bf16"
    assert "k_scale" in pre.params and "v_scale" in pre.params
    assert _shape(pre, "k_scale") == []
    att = fp8.kernel("attnc_test_opts", "attention")
    assert "k_scale" in att.params and _dtype(att, "v_cache") == "fp8_e4m3"

    half = compiled(base, dtype="fp16")
    pre = half.kernel("attnc_test_opts", "preprocess")
    assert _dtype(pre, "qkv") == "f16" and _dtype(pre, "k_cache") == "f16"
    assert "k_scale" not in pre.params

    fp16_fp8 = compiled(base, dtype="fp16", kv_dtype="fp8")
    pre = fp16_fp8.kernel("attnc_test_opts", "preprocess")
    assert _dtype(pre, "qkv") == "f16" and _dtype(pre, "k_cache") == "fp8_e4m3"

    paged = compiled(base, block_size=64)
    assert _shape(paged.kernel("attnc_test_opts", "preprocess"), "k_cache")[1] == 64

    sharded = compiled(base, tp=4, rank=1)
    pre = sharded.kernel("attnc_test_opts", "preprocess")
    assert _shape(pre, "q_out") == ["num_tokens", 4, 128]
    assert _shape(pre, "k_cache") == ["num_blocks", 16, 1, 128]


class _TorchLikeDtype:
    def __str__(self):
        return "torch.float8_e4m3fn"


def test_dtype_spellings(compiled):
    base = spec("attnc_test_spell")
    a = compiled(base, kv_dtype="fp8")
    b = attnc.compile(base, context=a.context, kv_dtype=_TorchLikeDtype(),
                      dtype="bfloat16")
    assert [k.source for k in a.kernels] == [k.source for k in b.kernels]


def test_config_forms(compiled):
    path = CONFIG_DIR / "qwen3-8b.json"
    data = json.loads(path.read_text())
    from_path = compiled(str(path))
    expected = [(k.name, k.source) for k in from_path.kernels]
    assert [(k.name, k.source) for k in compiled(path).kernels] == expected  # PathLike
    assert [(k.name, k.source) for k in compiled(data).kernels] == expected

    class HFConfig:  # transformers-style: to_dict()
        def __init__(self, d):
            self._d = d

        def to_dict(self):
            return dict(self._d)

    ctx = from_path.context
    model = attnc.compile(HFConfig(data), context=ctx)
    assert [(k.name, k.source) for k in model.kernels] == expected
    model = attnc.compile(SimpleNamespace(**data), context=ctx)  # vars()
    assert [(k.name, k.source) for k in model.kernels] == expected


def test_nested_config_object(compiled):
    """Gemma 3 keeps its attention config in text_config; an object whose
    text_config is itself an object is serialised recursively."""
    path = CONFIG_DIR / "gemma-3-27b-it.json"
    data = json.loads(path.read_text())
    nested = SimpleNamespace(**dict(data, text_config=SimpleNamespace(**data["text_config"])))
    model = attnc.compile(nested, context=compiled(str(path)).context)
    assert [k.source for k in model.kernels] == [k.source for k in compiled(str(path)).kernels]


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s["layer_kinds"][0].update(num_kv_heads=3), "num_kv_heads"),
    (lambda s: s["layer_kinds"][0]["rope"].update(rotary_dim=63), "rotary_dim"),
    (lambda s: s["layer_kinds"][0].update(qk_norm="layer"), "qk_norm"),
    (lambda s: s["layer_kinds"][0].update(colour="blue"), "colour"),
    (lambda s: s.pop("num_layers"), "num_layers"),
])
def test_config_errors_name_the_field(context, mutate, field):
    config = spec("attnc_test_bad")
    mutate(config)
    with pytest.raises(attnc.ConfigError) as info:
        attnc.compile(config, context=context)
    assert info.value.status == "invalid_argument"
    assert field in info.value.message


def test_not_json(tmp_path, context):
    path = tmp_path / "config.json"
    path.write_text("{ not json")
    with pytest.raises(attnc.ConfigError):
        attnc.compile(path, context=context)


@pytest.mark.parametrize("kwargs, text", [
    (dict(tp=0), "tp: must be >= 1"),
    (dict(rank=-1), "rank: must be >= 0"),
    (dict(block_size=0), "block_size: must be >= 1"),
    (dict(tp=1.5), "tp: must be an int"),
    (dict(dtype="fp32"), "dtype: unknown dtype 'fp32'"),
    (dict(kv_dtype="int4"), "kv_dtype: unknown dtype 'int4'"),
])
def test_option_errors(context, kwargs, text):
    with pytest.raises(attnc.ConfigError, match=text):
        attnc.compile(spec("attnc_test_opt_err"), context=context, **kwargs)


@pytest.mark.parametrize("options, field", [
    (dict(tp=3), "tp"),
    (dict(tp=2, rank=2), "rank"),
    # a bf16/fp16 cache must have the activation dtype (fp8 may go with either)
    (dict(dtype="fp16", kv_dtype="bf16"), "kv[-_]dtype"),
])
def test_option_rejected_by_the_compiler(context, options, field):
    with pytest.raises(attnc.ConfigError) as info:
        attnc.compile(spec("attnc_test_reject", hq=16, hkv=2), context=context, **options)
    assert re.search(field, info.value.message), info.value.message


def test_projection_norm_refuses_tensor_parallel(context):
    # OLMo 2 normalises q (k) over all heads at once: no rank can compute it
    # from its share of the heads.
    olmo = REPO / "test" / "model" / "configs" / "hf" / "olmo2.json"
    with pytest.raises(attnc.ConfigError) as info:
        attnc.compile(olmo, context=context, tp=2, rank=0)
    assert info.value.message.startswith("tp: layer kind full_attention: "), info.value.message
    assert 'qk_norm_scope "projection"' in info.value.message


def test_config_argument_errors(context, tmp_path):
    with pytest.raises(attnc.ConfigError, match="is not a file"):
        attnc.compile(str(tmp_path / "missing.json"), context=context)
    with pytest.raises(attnc.ConfigError, match="is not a file"):
        attnc.compile('{"attnc_spec": 1}', context=context)  # JSON text is not a path
    with pytest.raises(attnc.ConfigError, match="expected a path"):
        attnc.compile(42, context=context)
    with pytest.raises(attnc.ConfigError, match="cache_dir"):
        attnc.compile(spec(), context=context, cache_dir=tmp_path)


def test_default_context_and_cache_dir(tmp_path):
    model = attnc.compile(spec("attnc_test_default_ctx"), cache_dir=tmp_path / "cache")
    assert model.context.cache_dir == tmp_path / "cache"
    again = attnc.compile(spec("attnc_test_default_ctx"), cache_dir=tmp_path / "cache")
    assert again.context is model.context
    # The context's memo: a new Model over the same kernel sets, nothing
    # compiled again.
    assert again is not model and again.handle != model.handle
    assert [k._set for k in again.kernels] == [k._set for k in model.kernels]
    assert any((tmp_path / "cache").rglob("*")), "the disk cache was written"


def test_concurrent_compiles(context):
    config = spec("attnc_test_threads", hq=8, hkv=8, dqk=64, dv=64)
    results, errors = [], []

    def work():
        try:
            results.append(attnc.compile(config, context=context))
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    sources = {tuple(k.source for k in m.kernels) for m in results}
    assert len(results) == 4 and len(sources) == 1


def test_nvrtc_version(context):
    major, minor = context.nvrtc_version()
    assert major >= 12


# ---- bundles -----------------------------------------------------------------

def test_bundle_round_trip(compiled, context, tmp_path):
    model = compiled(str(CONFIG_DIR / "default.json"))
    directory = model.save(tmp_path / "bundle")
    assert (directory / "manifest.json").is_file()
    loaded = attnc.load(directory, context=context)
    assert loaded.layers == model.layers
    assert [(k.name, k.kind, k.layer) for k in loaded.kernels] == \
        [(k.name, k.kind, k.layer) for k in model.kernels]
    assert [k.abi for k in loaded.kernels] == [k.abi for k in model.kernels]
    assert [k.source for k in loaded.kernels] == [k.source for k in model.kernels]
    assert [k.cubin() for k in loaded.kernels] == [k.cubin() for k in model.kernels]
    for kernel in loaded.kernels:
        assert kernel.build_reports()[0]["outcome"] == "bundle"
    # A copy elsewhere loads too (the bundle is self-contained).
    copy = shutil.copytree(directory, tmp_path / "copy")
    assert attnc.load(copy, context=context).layers == model.layers


def test_load_errors(context, tmp_path):
    with pytest.raises(attnc.AttncError) as info:
        attnc.load(tmp_path / "missing", context=context)
    assert info.value.status in ("io_error", "not_found")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{ not json")
    with pytest.raises(attnc.AttncError) as info:
        attnc.load(broken, context=context)
    assert info.value.status in ("corrupt", "invalid_argument", "io_error")
