"""Tiered compilation on a GPU (attnc-c/Compiler.h): the baseline and the
optimised attention kernels of one model agree on the same inputs, and a
tiered model swaps from one to the other at a launch boundary, never inside
a CUDA-graph capture, with launch plans keeping the kernel they were made
with.

The cases take the wgmma form on sm_90a (16-bit caches, head dims padded to
64 and v <= 128), so their baseline (mma.sync) and optimised (wgmma) forms
differ; SEQUENCES (from test_engine_path) mix decode rows and prefill rows
of up to 64 queries over up to 2049 keys, so both tile kinds run. The two
forms accumulate in fp32 in a different order: they are compared within the
bf16/fp16 tolerances of attnc_gpu_reference.assert_close, not bitwise; one
kernel against itself (graph replay against eager) is bitwise.
"""

import ctypes

import pytest

import attnc
from attnc_gpu_cases import LAYER, PreprocessCase
from attnc_gpu_reference import assert_close, torch
from test_engine_path import _batch, _checked, _make_plans, _plan_step, _Step, _zero

CASES = [
    # the qwen3 family: q/k norm, full rope, 32/8 heads
    PreprocessCase((128, 128), (32, 8), "rms", "neox", "none", "bf16", "same", 0, 16),
    # 192/128 with a per-head output gate, fp16, 64-token pages
    PreprocessCase((192, 128), (16, 2), "gemma", "partial", "interleaved", "fp16", "same",
                   0, 64),
    # 64/64 without norm or rope
    PreprocessCase((64, 64), (8, 8), "none", "none", "none", "bf16", "same", 0, 16),
]


def _compile(case, tiered, cache_dir):
    return attnc.compile(case.spec(), dtype=case.dtype, kv_dtype=case.kv_dtype,
                         block_size=case.block_size, tiered=tiered,
                         context=attnc.Context(cache_dir=cache_dir))


def _wgmma(model):
    return "kWgmma = true" in model.kernel(LAYER, "attention").source


def _empty_launch(model, kernel, stream):
    """attnc_kernel_launch of `kernel` with every value 0: an empty grid, so
    nothing runs, but the call is a launch boundary on `stream`."""
    lib = model._lib
    handle = ctypes.c_void_p(kernel._handle)
    zeros = [ctypes.c_int64(0) for _ in range(lib.attnc_kernel_param_count(handle))]
    args = (ctypes.c_void_p * max(len(zeros), 1))(*[ctypes.addressof(z) for z in zeros])
    count = lib.attnc_kernel_launch_scalar_count(handle)
    scalars = (ctypes.c_int64 * max(count, 1))()
    lib.check(lib.attnc_kernel_launch(handle, ctypes.c_void_p(stream.cuda_stream), args,
                                      len(zeros), scalars, count))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_baseline_and_optimised_tiers_agree(case, tmp_path):
    optimised = _compile(case, False, tmp_path)
    baseline = _compile(case, "baseline", tmp_path)
    assert _wgmma(optimised) and not _wgmma(baseline)
    static, pre, att = _batch(optimised, case, seed=1)
    want = _checked(optimised, case, static, pre, att)
    got = _checked(baseline, case, static, pre, att)
    # The preprocess kernel is the same in both: bit-exact.
    assert torch.equal(got[0], want[0])
    assert torch.equal(got[3].view(torch.uint8), want[3].view(torch.uint8))
    assert_close("attention baseline vs optimised", got[2], want[2].float(), case.dtype)


@pytest.mark.parametrize("case", CASES[:1], ids=lambda c: c.id())
def test_tiered_model_swaps_outside_a_capture(case, tmp_path):
    """Cold cache: the attention kernel starts on the baseline. Its result is
    captured in a graph after the optimised tier is ready; the capture does
    not swap and the replay runs the baseline (bitwise its eager result); an
    eager launch after it swaps; a plan made before keeps the baseline, one
    made after uses the optimised kernel."""
    model = _compile(case, True, tmp_path)
    attention = model.kernel(LAYER, "attention")
    assert attention.tier == "baseline"
    static, pre, att = _batch(model, case, seed=1)
    baseline_result = _checked(model, case, static, pre, att)
    pre_plan, att_plan = _make_plans(model, static, pre)  # baseline plans
    model.wait_optimised()
    assert attention.tier == "baseline"  # ready, no launch boundary yet

    # Capture the plans (made before) and a checked launch: no swap.
    _zero(static)
    step = _Step(case, pre, att)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        _plan_step(pre_plan, att_plan, pre, att, step)
        # A launch boundary on the capturing stream (cuStreamIsCapturing
        # says so on the real driver): no swap.
        _empty_launch(model, attention, side)
        assert attention.tier == "baseline"
    assert attention.tier == "baseline"
    _zero(static)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(step.out, baseline_result[2])

    # A launch boundary outside the capture takes the optimised tier.
    _empty_launch(model, attention, side)
    assert attention.tier == "optimised"
    optimised_result = _checked(model, case, static, pre, att)
    assert_close("tiered: optimised vs baseline", optimised_result[2],
                 baseline_result[2].float(), case.dtype)
    # The graph still replays the baseline kernel.
    _zero(static)
    step.out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(step.out, baseline_result[2])
    # Plans: the old one keeps the baseline, a new one runs the optimised.
    _zero(static)
    old = _Step(case, pre, att)
    _plan_step(pre_plan, att_plan, pre, att, old)
    torch.cuda.synchronize()
    assert torch.equal(old.out, baseline_result[2])
    _, new_att_plan = _make_plans(model, static, pre)
    _zero(static)
    new = _Step(case, pre, att)
    _plan_step(pre_plan, new_att_plan, pre, att, new)
    torch.cuda.synchronize()
    assert torch.equal(new.out, optimised_result[2])
