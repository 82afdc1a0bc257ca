"""The q/k norm variants without a GPU: every case of the GPU suite compiles
(NVRTC, sm_90a) with the ABI its style and scope call for, each variant's
code is in the PTX exactly when the variant is (counted against the plain
RMSNorm kernel of the same shape), and the package checks the weights' and
biases' shapes and presence, naming the argument."""

import re
import sys
import time

import pytest

import attnc
from attnc_cpu_helpers import REPO, SIZES, FakeTensor, fake_args

sys.path.insert(0, str(REPO / "test" / "gpu"))
from attnc_norm_layers import NormCase, norm_cases  # noqa: E402

#: The fake driver resolves kernels named attnc_test_* only.
LAYER = "attnc_test_norms"


def expected_norm_params(case: NormCase):
    """name -> shape of the norm parameters the kernel must take, worked out
    from the case: [Dqk] (head), [H, Dqk] (head_weights), [H * Dqk]
    (projection), H = Hq for q and Hkv for k; biases as the weights."""
    shapes = {"head": lambda h: [case.dqk], "head_weights": lambda h: [h, case.dqk],
              "projection": lambda h: [h * case.dqk]}[case.scope]
    params = {}
    if case.style != "unweighted":
        params["q_norm_weight"] = shapes(case.hq)
        params["k_norm_weight"] = shapes(case.hkv)
    if case.bias:
        params["q_norm_bias"] = shapes(case.hq)
        params["k_norm_bias"] = shapes(case.hkv)
    return params


@pytest.mark.parametrize("case", norm_cases(), ids=lambda c: c.id())
def test_case_compiles_with_its_abi(context, case):
    start = time.perf_counter()
    model = attnc.compile_ir(case.ir(LAYER), context=context)
    elapsed = time.perf_counter() - start
    kernel = model.kernel(LAYER, "preprocess")
    got = {p["name"]: p["shape"] for p in kernel.abi["params"] if "norm" in p["name"]}
    assert got == expected_norm_params(case)
    for p in kernel.abi["params"]:
        if "norm" in p["name"]:
            assert p["dtype"] == "bf16" and not p.get("writes"), p
    # The time to a compiled kernel (pipeline + NVRTC; a disk hit when the
    # session cache has it), for the record: pytest -s prints it.
    print(f"{case.id()}: {elapsed * 1000:.0f} ms "
          f"({kernel.build_reports()[0]['outcome']})")


# ---- the PTX: a variant's code is there exactly when the variant is ----------------

BASE = dict(family="ptx", hq=8, hkv=2, dqk=64, dv=64)


def ptx_counts(context, **variant):
    case = NormCase(**BASE, **variant)
    model = attnc.compile_ir(case.ir(LAYER), context=context)  # owns the kernel's PTX
    ptx = model.kernel(LAYER, "preprocess").ptx()
    assert ".entry" in ptx
    return {name: len(re.findall(pattern, ptx)) for name, pattern in {
        "barriers": r"\bbar\.sync\b", "reductions": r"\bshfl\.sync\.bfly\b",
        "global_loads": r"\bld\.global\b", "subtractions": r"\bsub\.f32\b",
        "rsqrt": r"\brsqrt\.approx"}.items()}


@pytest.fixture(scope="module")
def rms(context):
    return ptx_counts(context, style="rms")


def test_layernorm_subtracts_the_mean(context, rms):
    """LayerNorm reduces twice per head (the mean, then the variance about
    it) and subtracts the mean; the RMS kernel does neither."""
    layer = ptx_counts(context, style="layernorm")
    assert layer["reductions"] == 2 * rms["reductions"] > 0
    assert layer["subtractions"] > rms["subtractions"]
    assert layer["global_loads"] == rms["global_loads"]
    assert layer["barriers"] == rms["barriers"] == 1


def test_bias_loads_only_with_a_bias(context):
    plain = ptx_counts(context, style="layernorm")
    biased = ptx_counts(context, style="layernorm", bias=True)
    assert biased["global_loads"] > plain["global_loads"]
    assert biased["reductions"] == plain["reductions"]


def test_unweighted_loads_no_weight(context, rms):
    unweighted = ptx_counts(context, style="unweighted")
    assert unweighted["global_loads"] < rms["global_loads"]
    assert unweighted["reductions"] == rms["reductions"]


def test_projection_prologue_only_with_projection_scope(context, rms):
    """The projection's statistics come from a block prologue: one more
    barrier (two more for LayerNorm's mean) and one rsqrt per token there;
    per-head weights alone add no barrier."""
    projection = ptx_counts(context, style="rms", scope="projection")
    assert projection["barriers"] == rms["barriers"] + 1
    assert projection["rsqrt"] == 1 and rms["rsqrt"] == 2  # q and k heads in place
    layer_projection = ptx_counts(context, style="layernorm", scope="projection")
    assert layer_projection["barriers"] == rms["barriers"] + 3
    head_weights = ptx_counts(context, style="rms", scope="head_weights")
    assert head_weights["barriers"] == rms["barriers"]


# ---- argument checks -----------------------------------------------------------------

@pytest.fixture(scope="module")
def projection_model(fake_context):
    case = NormCase("olmo2", 4, 2, 8, 8, "rms", "projection")
    return attnc.compile_ir(case.ir(LAYER), context=fake_context)


@pytest.fixture(scope="module")
def bias_model(fake_context):
    case = NormCase("cohere", 4, 2, 8, 8, "layernorm", "head_weights", bias=True)
    return attnc.compile_ir(case.ir(LAYER), context=fake_context)


def call(model, **override):
    args = fake_args(model.kernel(LAYER, "preprocess"), SIZES, **override)
    args = {k: v for k, v in args.items() if v is not None}
    qkv = args.pop("qkv")
    return model.preprocess(LAYER, qkv, **args)


def rule_of(model, argument, **override):
    with pytest.raises(attnc.ArgumentError) as info:
        call(model, **override)
    assert info.value.argument == argument, str(info.value)
    return info.value.rule


def test_fake_launch_with_every_norm_argument(projection_model, bias_model):
    call(projection_model)
    call(bias_model)


def test_projection_weight_shape(projection_model):
    # [Dqk] (a per-head weight) where the projection's [Hq * Dqk] is due.
    rule = rule_of(projection_model, "q_norm_weight",
                   q_norm_weight=FakeTensor([8], "<V2"))
    assert "[32]" in rule, rule
    rule = rule_of(projection_model, "k_norm_weight",
                   k_norm_weight=FakeTensor([32], "<V2"))
    assert "[16]" in rule, rule


def test_head_weights_shape(bias_model):
    rule = rule_of(bias_model, "q_norm_weight", q_norm_weight=FakeTensor([2, 8], "<V2"))
    assert "[4, 8]" in rule, rule
    rule = rule_of(bias_model, "k_norm_bias", k_norm_bias=FakeTensor([16], "<V2"))
    assert "[2, 8]" in rule, rule


def test_missing_bias_is_named(bias_model):
    rule = rule_of(bias_model, "q_norm_bias", q_norm_bias=None)
    assert "layernorm bias" in rule, rule


def test_bias_for_a_kernel_without_one(projection_model):
    rule = rule_of(projection_model, "k_norm_bias", k_norm_bias=FakeTensor([16], "<V2"))
    assert "no q/k layernorm bias" in rule, rule


def test_plan_checks_the_bias(bias_model):
    pytest.importorskip("torch")
    args = fake_args(bias_model.kernel(LAYER, "preprocess"), SIZES)
    with pytest.raises(attnc.ArgumentError) as info:
        bias_model.preprocess_plan(LAYER, k_cache=args["k_cache"], v_cache=args["v_cache"],
                                   q_norm_weight=args["q_norm_weight"],
                                   k_norm_weight=args["k_norm_weight"],
                                   k_norm_bias=args["k_norm_bias"])
    assert info.value.argument == "q_norm_bias", str(info.value)
