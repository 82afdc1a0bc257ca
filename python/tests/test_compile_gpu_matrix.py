"""The GPU suite's model configurations (test/gpu) compile here, through the
pipeline, the CUDA emitter and NVRTC, so a generated source that NVRTC
rejects fails on a machine without a GPU too: a covering subset by default,
all of them with ATTNC_TEST_FULL_MATRIX=1."""
import concurrent.futures
import json
import os
import sys

import attnc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test", "gpu"))
from attnc_cpu_helpers import check_prefill_attention  # noqa: E402
from attnc_gpu_cases import attention_cases, preprocess_cases  # noqa: E402


def feature_tags(key) -> set:
    """What a compile key exercises in the generated code: each option value,
    and per layer kind its head dims, GQA group, gate, norm, rope form,
    sliding window, sinks, softcap, value and softmax scales, chunked
    attention and the query temperature."""
    spec, options = json.loads(key[0]), dict(key[1])
    tags = {("option", name, str(value)) for name, value in options.items()}
    for kind in spec["layer_kinds"]:
        rope = kind.get("rope") or {}
        tags |= {("dims", kind["qk_head_dim"], kind["v_head_dim"]),
                 ("group", kind["num_q_heads"] // kind["num_kv_heads"]),
                 ("gate", kind["gate"]), ("norm", kind["qk_norm"]),
                 ("rope", rope.get("style", "none"),
                  (rope.get("scaling") or {}).get("kind", "none"),
                  rope.get("rotary_dim") == kind["qk_head_dim"]),
                 ("sliding", kind["sliding_window"] > 0), ("sinks", kind["sinks"]),
                 ("softcap", kind["logit_softcap"] > 0),
                 ("value_scale", kind["value_scale"] != 1.0),
                 ("softmax_scale", "softmax_scale" in kind),
                 ("attention_chunk", kind.get("attention_chunk", 0) > 0),
                 ("query_temperature", "query_temperature" in kind)}
    return tags


def covering_subset(keys: list) -> list:
    """A few keys that together exercise every feature tag of `keys` (greedy
    set cover, deterministic for a given matrix)."""
    need = set().union(*map(feature_tags, keys))
    chosen = []
    while need:
        best = max(keys, key=lambda key: len(feature_tags(key) & need))
        chosen.append(best)
        need -= feature_tags(best)
    return chosen


def test_gpu_suite_configurations_compile(context):
    """By default the covering subset (about 12 of 90+ configurations, every
    feature tag at least once); ATTNC_TEST_FULL_MATRIX=1 compiles all of them.
    The GPU suite itself compiles every configuration on the device."""
    keys = sorted({case.compile_key for case in preprocess_cases()}
                  | {case.compile_key for case in attention_cases()})
    assert len(keys) > 50  # the suite's matrix, not an empty list
    if os.environ.get("ATTNC_TEST_FULL_MATRIX") != "1":
        subset = covering_subset(keys)
        assert set().union(*map(feature_tags, subset)) == \
            set().union(*map(feature_tags, keys))
        keys = subset

    def build(key):
        spec_json, options = key
        return attnc.compile(json.loads(spec_json), context=context, **dict(options))

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        futures = {pool.submit(build, key): key for key in keys}
        for future in concurrent.futures.as_completed(futures):
            try:
                model = future.result()
                # sm_90a: the prefill kernel where the shape takes it.
                prefill = [check_prefill_attention(model, layer) for layer in model.layers]
                expected = {"preprocess", "attention"}
                if any(kernel is not None for kernel in prefill):
                    expected.add("prefill_attention")
                assert {k.kind for k in model.kernels} == expected
            except Exception as error:  # noqa: BLE001 - collected, reported below
                failures.append(f"{futures[future][0][:200]} {futures[future][1]}: "
                                f"{str(error)[:2000]}")
    assert not failures, "\n\n".join(failures)
