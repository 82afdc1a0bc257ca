"""The mini engine (examples/mini_engine) against Hugging Face, per family.

For each family a small decoder model is built from its bundled config.json
(transformers' from_config, fixed seed, bf16-representable random weights);
the engine runs it in bf16 with attention in attnc's kernels: 9 requests of
different prompt lengths (7..301 tokens, past every sliding window), batched
continuously with chunked prefill (64 rows a step, prefill chunks and decode
rows in one varlen batch), decode-only steps replayed as CUDA graphs,
q_out/out and the KV caches poisoned with NaN.

* Teacher-forced: each logit row the engine sampled is within
  LOGIT_TOLERANCE x rms (each logit) and ROW_TOLERANCE x rms (the row's
  rms error) of Hugging Face's float32 eager model on the same
  tokens (examples/mini_engine/check.py says why that bound); NaN fails.
* Greedy: the engine's tokens equal generate(do_sample=False) of the
  float32 model up to the first divergence, and the divergence is at a
  near-tie (top-2 margin < NEAR_TIE x rms). The divergences and margins
  are printed (pytest -s).
* A negative control per sliding-window family: against a reference whose
  window is removed, the same logits are far outside the tolerance (the
  prompts do cross the window, and the bound sees it).
"""

import sys
from pathlib import Path

import pytest

# Not `from conftest import REPO`: run together with python/tests (as
# run_on_device.sh does), "conftest" is that folder's module.
REPO = Path(__file__).resolve().parent.parent.parent

if str(REPO / "examples") not in sys.path:
    sys.path.insert(0, str(REPO / "examples"))

try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False

FAMILIES = ["llama", "qwen3", "gpt_oss", "gemma3", "mimo_v2_flash", "gemma3_1b", "qwen3_next"]

needs_transformers = pytest.mark.skipif(not HAVE_TRANSFORMERS,
                                        reason="skipped: no transformers")


@needs_transformers
@pytest.mark.parametrize("launch", ["checked", "plan"])
@pytest.mark.parametrize("family", FAMILIES)
def test_mini_engine_matches_hugging_face(family, launch, attnc_context):
    """launch: the checked path (Model.preprocess / attention) or the engine
    path (per-layer launch plans, captured in the decode graphs)."""
    from mini_engine import check
    report = check.run_family(family, device="cuda", context=attnc_context,
                              window_control=(launch == "checked"), launch=launch)
    print("\n" + report.summary())
    for g in report.greedy:
        print(f"  request {g.request_id}: {g.matched}/{g.total} greedy tokens match"
              + (f", first divergence at {g.divergence}, HF top-2 margin "
                 f"{g.margin:.4f} x rms" if g.divergence is not None else "")
              + (f", first near-tie at {g.first_near_tie}"
                 if g.first_near_tie is not None else ""))
    # The engine did what the test claims to exercise.
    assert len(report.greedy) >= 8
    assert report.mixed_steps > 0, "no step mixed prefill chunks and decode rows"
    assert report.graph_steps > 0, "no decode step was a CUDA graph replay"
    assert report.graph_rows > 0 and report.eager_rows > 0
    assert report.nan_rows == 0, f"{report.nan_rows} logit rows are not finite"
    expected_rows = sum(g.total for g in report.greedy)
    assert report.rows_checked == expected_rows
    assert report.max_error <= check.LOGIT_TOLERANCE, (
        f"{family}: logits off by {report.max_error:.4f} x rms at {report.worst_row} "
        f"(tolerance {check.LOGIT_TOLERANCE})")
    assert report.row_error <= check.ROW_TOLERANCE, (
        f"{family}: a logit row's rms error is {report.row_error:.4f} x rms "
        f"(tolerance {check.ROW_TOLERANCE})")
    for g in report.greedy:
        if g.divergence is not None:
            assert g.margin < check.NEAR_TIE, (
                f"{family}: request {g.request_id} diverges from generate() at token "
                f"{g.divergence}, where HF's top-2 margin {g.margin:.4f} x rms is no "
                f"near-tie (< {check.NEAR_TIE})")
    if report.window_control_error is not None:
        assert report.window_control_error > 2 * check.LOGIT_TOLERANCE, (
            f"{family}: without the sliding window the reference moves only "
            f"{report.window_control_error:.4f} x rms: the prompts do not test it")
