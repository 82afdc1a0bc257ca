"""The JIT's latency paths through the package (CPU: NVRTC and the fake
driver): tiered compilation, the in-process memo, the disk model index, and
the kernel order of concurrent compiles.

PLAIN (64/64 bf16) takes the wgmma attention form on sm_90a, so with
``tiered=True`` and a cold cache its attention kernel starts in the baseline
(mma.sync) form; its preprocess kernel has one form.
"""

import ctypes
import json
import re
import warnings

import pytest

import attnc
from attnc import _library
from attnc_cpu_helpers import FAKE_DRIVER, LAYER, PLAIN, SIZES, fake_args, spec

ATTENTION = f"{LAYER}__attention"
PREPROCESS = f"{LAYER}__preprocess"


def wgmma_of(kernel):
    """The kWgmma member the emitter printed into the kernel's Config."""
    match = re.search(r"kWgmma = (true|false)", kernel.source)
    assert match, kernel.source[:2000]
    return match.group(1) == "true"


def launch_attention(model):
    args = fake_args(model.kernel(LAYER, "attention"), SIZES)
    out = args.pop("output")
    query = args.pop("query")
    model.attention(LAYER, query, out=out, **args)


@pytest.fixture
def fresh_fake_context(tmp_path):
    if not FAKE_DRIVER.is_file():
        pytest.skip(f"fake CUDA driver not built ({FAKE_DRIVER})")
    return attnc.Context(cache_dir=tmp_path, cuda_driver_library=FAKE_DRIVER)


def test_tiered_compile_serves_the_baseline_then_swaps_at_a_launch(fresh_fake_context):
    model = attnc.compile(PLAIN, context=fresh_fake_context, tiered=True)
    attention = model.kernel(LAYER, "attention")
    # A cold cache: the attention kernel starts in its baseline form, whose
    # source is the mma.sync one; the preprocess kernel has one tier.
    assert attention.tier == "baseline"
    assert not wgmma_of(attention)
    assert model.kernel(LAYER, "preprocess").tier == "optimised"
    assert model.wait_optimised() is model
    # Finished, but no launch boundary yet.
    assert attention.tier == "baseline"
    launch_attention(model)
    assert attention.tier == "optimised"
    report = attention.build_reports()[0]
    assert report["outcome"] == "compiled"
    # The optimised set is the wgmma form: compiled alone, it is a cache hit
    # with the same key.
    off = attnc.compile(PLAIN, context=fresh_fake_context, tiered=False)
    assert wgmma_of(off.kernel(LAYER, "attention"))
    assert off.kernel(LAYER, "attention").build_reports()[0]["cache_key"] == \
        report["cache_key"]


def test_tiering_off_and_baseline_only(fresh_fake_context):
    off = attnc.compile(PLAIN, context=fresh_fake_context, tiered=False)
    baseline = attnc.compile(PLAIN, context=fresh_fake_context, tiered="baseline")
    assert wgmma_of(off.kernel(LAYER, "attention"))
    assert not wgmma_of(baseline.kernel(LAYER, "attention"))
    # Neither has a second tier.
    for model in (off, baseline):
        assert set(model.tiers.values()) == {"optimised"}
        model.wait_optimised()
    # The baseline schedule is the optimised one without wgmma.
    schedules = {m: next(k["schedule"] for k in m.manifest["kernels"]
                         if k["name"] == ATTENTION) for m in (off, baseline)}
    assert 'mma = "wgmma"' in schedules[off]
    assert schedules[baseline] == schedules[off].replace(', mma = "wgmma"', "")
    # An optimised binary already cached needs no baseline tier.
    tiered = attnc.compile(PLAIN, context=attnc.Context(
        cache_dir=fresh_fake_context.cache_dir), tiered=True)
    assert set(tiered.tiers.values()) == {"optimised"}
    assert wgmma_of(tiered.kernel(LAYER, "attention"))


def test_bad_tiered_value_is_a_config_error(context):
    for value in (2, "yes", None):
        with pytest.raises(attnc.ConfigError, match="tiered"):
            attnc.compile(PLAIN, context=context, tiered=value)


def compile_c(context, text, **fields):
    """attnc_model_compile_config through ctypes: the model handle."""
    lib = context._lib
    options = _library.ModelOptions()
    lib.attnc_model_options_initialize(ctypes.byref(options))
    for name, value in fields.items():
        setattr(options, name, value)
    handle = ctypes.c_void_p()
    lib.check(lib.attnc_model_compile_config(ctypes.c_void_p(context.handle),
                                             text.encode(), ctypes.byref(options),
                                             ctypes.byref(handle)))
    return handle


def test_memo_returns_the_compiled_model(tmp_path):
    context = attnc.Context(cache_dir=tmp_path)
    text = json.dumps(PLAIN)
    first = compile_c(context, text, tiering=2)
    again = compile_c(context, text, tiering=2)
    lib = context._lib
    try:
        # The C memo: another handle over the same kernel sets.
        assert first.value != again.value
        for i in range(lib.attnc_model_kernel_count(first)):
            assert lib.attnc_model_kernel_set(first, i) == \
                lib.attnc_model_kernel_set(again, i)
        # Every option is in the key: another block size compiles anew.
        other = compile_c(context, text, tiering=2, block_size=32)
        assert lib.attnc_model_kernel_set(other, 0) != lib.attnc_model_kernel_set(first, 0)
        lib.attnc_model_destroy(other)
        # So is every byte of the text.
        spaced = compile_c(context, text + " ", tiering=2)
        assert lib.attnc_model_kernel_set(spaced, 0) != lib.attnc_model_kernel_set(first, 0)
        lib.attnc_model_destroy(spaced)
    finally:
        lib.attnc_model_destroy(first)
        lib.attnc_model_destroy(again)
    # The package's memo: a new Model (its own handle and mutable state)
    # over the same kernel sets; it outlives the Model it was made from.
    def sets(model):
        return [k._set for k in model.kernels]

    model = attnc.compile(PLAIN, context=context, tiered=False)
    first_sets = sets(model)
    again = attnc.compile(PLAIN, context=context, tiered=False)
    assert again is not model and again.handle != model.handle
    assert sets(again) == first_sets
    assert again._workspaces is not model._workspaces
    del model
    import gc
    gc.collect()
    assert sets(attnc.compile(PLAIN, context=context, tiered=False)) == first_sets
    assert again.kernel(LAYER, "attention").build_reports()[0]["cache_key"]
    assert sets(attnc.compile(PLAIN, context=context, tiered=False, block_size=32)) != \
        first_sets
    # A context with the cache disabled remembers nothing.
    uncached = attnc.Context(cache_dir=tmp_path, disable_cache=True)
    assert sets(attnc.compile(PLAIN, context=uncached, tiered=False)) != \
        sets(attnc.compile(PLAIN, context=uncached, tiered=False))


def test_disk_index_answers_a_new_context_and_repairs_a_corrupt_entry(tmp_path):
    cold = attnc.compile(PLAIN, context=attnc.Context(cache_dir=tmp_path), tiered=False)
    entries = list((tmp_path / "models").glob("*.idx"))
    assert len(entries) == 1
    # A new context (as a new process would) gets the same kernels from disk.
    warm = attnc.compile(PLAIN, context=attnc.Context(cache_dir=tmp_path), tiered=False)
    assert [k.name for k in warm.kernels] == [k.name for k in cold.kernels]
    for w, c in zip(warm.kernels, cold.kernels):
        assert w.build_reports()[0]["outcome"] == "disk_hit"
        assert w.source == c.source and w.abi == c.abi and w.cubin() == c.cubin()
    assert [k["schedule"] for k in warm.manifest["kernels"]] == \
        [k["schedule"] for k in cold.manifest["kernels"]]
    assert warm.config == cold.config
    # A corrupt entry: reported, removed, the model compiled again (its
    # binaries from the kernel cache) and the entry written afresh.
    entries[0].write_bytes(b"ATTNCKCE" + b"\0" * 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = attnc.compile(PLAIN, context=attnc.Context(cache_dir=tmp_path), tiered=False)
    assert any("corrupt entry" in str(w.message) and entries[0].name in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert [k.source for k in again.kernels] == [k.source for k in cold.kernels]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        attnc.compile(PLAIN, context=attnc.Context(cache_dir=tmp_path), tiered=False)
    assert not caught, [str(w.message) for w in caught]
    # The baseline-only compile is another entry.
    attnc.compile(PLAIN, context=attnc.Context(cache_dir=tmp_path), tiered="baseline")
    assert len(list((tmp_path / "models").glob("*.idx"))) == 2


def test_concurrent_compiles_keep_the_pipeline_order(tmp_path):
    two = spec(LAYER, hq=8, hkv=8, dqk=64, dv=64, gate="none", norm="none", rope="none",
               extra_kinds=["attnc_test_second"])
    model = attnc.compile(two, context=attnc.Context(cache_dir=tmp_path, disable_cache=True),
                          tiered=False)
    names = [k.name for k in model.kernels]
    assert names == sorted(names, key=lambda n: (model.layers.index(n.split("__")[0]),
                                                 n.split("__")[1] != "preprocess"))
    # Per layer: preprocess, attention and (64/64 bf16 on sm_90a) the
    # prefill kernel, in the pipeline's order.
    assert [n.split("__")[1] for n in names] == \
        ["preprocess", "attention", "prefill_attention"] * 2


def test_bad_tiering_option_names_the_field(context):
    with pytest.raises(attnc.AttncError, match=r"options\.tiering.*attnc_tiering_t"):
        compile_c(context, json.dumps(PLAIN), tiering=7)
