"""Every model configuration of the GPU suite (test/gpu) compiles here,
through the pipeline, the CUDA emitter and NVRTC, so a generated source that
NVRTC rejects fails on a machine without a GPU too."""
import concurrent.futures
import json
import os
import sys

import attnc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test", "gpu"))
from attnc_gpu_cases import attention_cases, preprocess_cases  # noqa: E402


def test_every_gpu_suite_configuration_compiles(context):
    keys = sorted({case.compile_key for case in preprocess_cases()}
                  | {case.compile_key for case in attention_cases()})
    assert len(keys) > 50  # the suite's matrix, not an empty list

    def build(key):
        spec_json, options = key
        return attnc.compile(json.loads(spec_json), context=context, **dict(options))

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        futures = {pool.submit(build, key): key for key in keys}
        for future in concurrent.futures.as_completed(futures):
            try:
                model = future.result()
                assert {k.kind for k in model.kernels} == {"preprocess", "attention"}
            except Exception as error:  # noqa: BLE001 - collected, reported below
                failures.append(f"{futures[future][0][:200]} {futures[future][1]}: "
                                f"{str(error)[:2000]}")
    assert not failures, "\n\n".join(failures)
