"""Negative controls: the suite's checks must reject a kernel that gets
things slightly wrong. Each test runs a real kernel, then shows that a small
error (in the reference, or in what the kernel is given) makes the check
fail, so that passing the suite means something."""

import pytest

from attnc_gpu_cases import AttentionCase, PreprocessCase
from attnc_gpu_reference import assert_close, torch
from test_attention import run_case
from test_preprocess import check_cache, reference_for, run_preprocess

PRE = PreprocessCase((128, 128), (8, 1), "rms", "neox", "none", "bf16", "same", 300, 16)
PRE_FP8 = PreprocessCase((192, 128), (16, 2), "none", "mla", "none", "bf16", "fp8", 300, 16)
ATT = AttentionCase((128, 128), (16, 2), "bf16", "same", 16, 128, True, False, "mixed")


def _generator(seed=3):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return g


@pytest.mark.parametrize("case", [PRE, PRE_FP8], ids=lambda c: c.id())
def test_position_off_by_one_is_caught(models, case):
    run = run_preprocess(models, case, _generator())
    ref = reference_for(case, run)
    assert_close("q_out", run["q_out"], ref.q, case.dtype)  # the real thing passes
    run["positions"] = run["positions"] + 1
    wrong = reference_for(case, run)
    with pytest.raises(AssertionError):
        assert_close("q_out", run["q_out"], wrong.q, case.dtype)
    with pytest.raises(AssertionError):
        check_cache("k_cache", run["k_cache"], case.heads[1], case.dims[0], run["slots"],
                    wrong.k, case)


def test_stray_cache_write_is_caught(models):
    run = run_preprocess(models, PRE, _generator())
    ref = reference_for(PRE, run)
    slots = run["slots"]
    check_cache("v_cache", run["v_cache"], 1, 128, slots, ref.v, PRE)
    # pretend one written token was padding: its row must then be poison
    written = (slots >= 0).nonzero().flatten()
    claimed = slots.clone()
    claimed[written[0]] = -1
    with pytest.raises(AssertionError, match="rows that no token maps to were written"):
        check_cache("v_cache", run["v_cache"], 1, 128, claimed, ref.v, PRE)


def test_norm_weight_mixup_is_caught(models):
    run = run_preprocess(models, PRE, _generator())
    weights = run["weights"]
    weights["q_norm_weight"], weights["k_norm_weight"] = (weights["k_norm_weight"],
                                                          weights["q_norm_weight"])
    wrong = reference_for(PRE, run)
    with pytest.raises(AssertionError):
        assert_close("q_out", run["q_out"], wrong.q, PRE.dtype)


def test_window_off_by_one_is_caught(models):
    model, out, expected = run_case(models, ATT, _generator())
    assert_close("out", out, expected, ATT.dtype)
    _, out, wrong = run_case(models, ATT, _generator(),
                             reference_overrides=dict(sliding_window=ATT.window + 1))
    with pytest.raises(AssertionError):
        assert_close("out", out, wrong, ATT.dtype)


def test_missing_sink_is_caught(models):
    _, out, wrong = run_case(models, ATT, _generator(), reference_overrides=dict(sinks=None))
    with pytest.raises(AssertionError):
        assert_close("out", out, wrong, ATT.dtype)


def test_reading_past_seq_len_is_caught(models):
    """A kernel told one key more than was written reads a poisoned (NaN)
    slot. The check must fail: on NaN, or on the wrong row the kernel makes
    of it (its final `l > 0 ? acc / l : 0` turns a NaN softmax state into a
    row of zeros, seen on the H200)."""
    def one_more_key(batch):
        batch.seq_lens[0] += 1

    _, out, expected = run_case(models, ATT, _generator(), before_launch=one_more_key)
    with pytest.raises(AssertionError):
        assert_close("out", out, expected, ATT.dtype)
    row = out[0].float()  # the first sequence is a decode row: query row 0
    assert bool(torch.isnan(row).any()) or not torch.allclose(row, expected.out[0], atol=1e-2)
