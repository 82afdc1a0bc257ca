"""The paged attention's warp-specialised prefill kernel (kind
prefill_attention, sm_90a) in the package: which layers have it, the rule
that picks it for a batch, and launches through the fake CUDA driver (no
GPU): the prefill kernel for prefill-heavy batches, the decode-capable
attention kernel otherwise."""

import ctypes

import pytest

import attnc
from attnc import _launch
from attnc_cpu_helpers import FAKE_DRIVER, LAYER, SIZES, check_prefill_attention, fake_args
from test_api_arguments import FakeState


@pytest.fixture
def fake_state(fake_context):
    library = ctypes.CDLL(str(FAKE_DRIVER))
    library.attnc_fake_cuda_state.restype = ctypes.POINTER(FakeState)
    return library.attnc_fake_cuda_state().contents


def batch(model, num_tokens, num_seqs, kind="attention"):
    """Fake tensors of a batch of `num_tokens` query rows in `num_seqs`
    sequences for `kind`'s parameters (the two kernels take the same)."""
    sizes = dict(SIZES, num_tokens=num_tokens, num_seqs=num_seqs,
                 num_seqs_plus_one=num_seqs + 1)
    args = fake_args(model.kernel(LAYER, kind), sizes)
    args["out"] = args.pop("output")
    # (without torch the package cannot make its own workspace; the
    # attention kernel's serves both: the prefill kernel's is one float,
    # never read)
    return args


def launch(model, num_tokens, num_seqs, **keywords):
    args = batch(model, num_tokens, num_seqs)
    query = args.pop("query")
    return model.attention(LAYER, query, **args, **keywords)


def test_which_layers_have_it(gated, plain, fp8):
    # GATED: 16/2 heads, 192/128, bf16 pages of 16 (sinks, window, gate);
    # PLAIN: 8/8, 64/64: both take it; an fp8 cache keeps the wgmma form.
    assert check_prefill_attention(gated, LAYER) is not None
    assert check_prefill_attention(plain, LAYER) is not None
    assert check_prefill_attention(fp8, LAYER) is None
    assert not fp8.has_prefill_attention(LAYER)
    with pytest.raises(attnc.NotFoundError):
        fp8.kernel(LAYER, "prefill_attention")


def test_the_rule(gated, plain, fp8):
    # GATED packs the 8 query heads of a KV group into a tile's rows:
    # prefill when num_tokens * 8 >= 64 * num_seqs.
    assert gated.kernel(LAYER, "prefill_attention").abi["hints"]["gqa_pack"] == 8
    assert gated.attention_kind(LAYER, 24, 3) == "prefill_attention"
    assert gated.attention_kind(LAYER, 23, 3) == "attention"
    assert gated.attention_kind(LAYER, 7, 3) == "attention"      # decode-like
    assert gated.attention_kind(LAYER, 8192, 1) == "prefill_attention"
    assert gated.attention_kind(LAYER, 0, 0) == "attention"
    # PLAIN: one query head a KV head (pack 1): 64 rows a sequence.
    assert plain.attention_kind(LAYER, 128, 2) == "prefill_attention"
    assert plain.attention_kind(LAYER, 127, 2) == "attention"
    # no prefill kernel: always the attention kernel
    assert fp8.attention_kind(LAYER, 8192, 1) == "attention"
    for bad in (-1, 1.5, True):
        with pytest.raises(attnc.ArgumentError) as error:
            gated.attention_kind(LAYER, bad, 1)
        assert error.value.argument == "num_tokens"


def test_prefill_heavy_batches_launch_the_prefill_kernel(gated, fake_state):
    prefill = gated.kernel(LAYER, "prefill_attention").abi
    decode = gated.kernel(LAYER, "attention").abi
    assert gated._workspace_size(LAYER, "prefill_attention") == 1
    assert gated.attention_workspace_size(LAYER) > 1
    assert prefill["block"] == [384, 1, 1] and decode["block"] != prefill["block"]
    before = fake_state.launches
    out = launch(gated, 24, 3, stream=5)
    assert fake_state.launches == before + 1
    assert list(fake_state.block) == prefill["block"]
    assert fake_state.shared_memory_bytes == prefill["dynamic_shared_memory_bytes"]
    values = dict(SIZES, num_tokens=24, num_seqs=3, num_kv_splits=1)
    assert list(fake_state.grid) == [_launch.grid_dim(rule, values.get)
                                      for rule in prefill["grid"]]
    assert out is not None
    # a decode-heavy batch: the decode-capable kernel, with its split rule
    launch(gated, 7, 3)
    assert list(fake_state.block) == decode["block"]
    assert fake_state.shared_memory_bytes == decode["dynamic_shared_memory_bytes"]


def test_kind_and_splits_choose_the_kernel(gated, fp8, fake_state):
    decode = gated.kernel(LAYER, "attention").abi
    prefill = gated.kernel(LAYER, "prefill_attention").abi
    launch(gated, 24, 3, kind="attention")
    assert list(fake_state.block) == decode["block"]
    launch(gated, 7, 3, kind="prefill_attention")
    assert list(fake_state.block) == prefill["block"]
    # explicit splits above 1: the split-KV kernel; 1: the rule
    launch(gated, 24, 3, num_kv_splits=2)
    assert list(fake_state.block) == decode["block"]
    launch(gated, 24, 3, num_kv_splits=1)
    assert list(fake_state.block) == prefill["block"]
    with pytest.raises(attnc.ArgumentError) as error:
        launch(gated, 24, 3, kind="prefill_attention", num_kv_splits=2)
    assert error.value.argument == "num_kv_splits"
    with pytest.raises(attnc.ArgumentError) as error:
        launch(gated, 24, 3, kind="decode")
    assert error.value.argument == "kind"
    with pytest.raises(attnc.NotFoundError):
        args = batch(fp8, 24, 3)
        fp8.attention(LAYER, args.pop("query"), kind="prefill_attention", **args)
