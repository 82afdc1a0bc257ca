"""Tensor parallelism in the mini engine (examples/mini_engine/check_tp.py),
on the four models of issue 16: llama (8/2, tp <= Hkv), gemma3_1b (4/1:
the KV head replicated), mimo_v2_flash (192/128; a 16/1 kind replicated,
a 16/2 kind split, sinks sliced), qwen3_next (16/2 heads of 256 with the
per-head interleaved output gate).

* Single process, one GPU: TP=1, then both ranks of TP=2 one after the
  other in one engine (each its own attnc shard model and KV cache, the
  o_proj partial outputs summed in place of the all-reduce), teacher-forced
  with TP=1's tokens over the prefill and 32 decode steps (decode steps as
  CUDA graphs, in both launch modes); and a control with the ranks' o_proj
  columns swapped, which must be far off.
* torch.distributed (NCCL) through torchrun, one process per GPU: world
  size 1 (the TP=1 engine under torch.distributed; the report says whether
  it equals plain TP=1 bit for bit) and world size 2 (needs two GPUs: "skipped: needs two
  GPUs" otherwise), each rank its shard, all-reduce after o_proj; rank 0
  compares with TP=1, and the ranks' logits must be equal.

Logits within check.LOGIT_TOLERANCE / ROW_TOLERANCE x rms of TP=1's,
greedy argmaxes equal to TP=1's tokens up to the first difference, which
must be a near-tie. The summaries are printed (pytest -s).
"""

import json
import os
import subprocess
import sys

import pytest

# The repository root, examples/ on sys.path, and the transformers check:
# test_mini_engine's.
from test_mini_engine import REPO, needs_transformers

try:
    import torch
    GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
except ImportError:
    GPUS = 0

FAMILIES = ["llama", "gemma3_1b", "mimo_v2_flash", "qwen3_next"]
#: Kinds whose KV heads each rank holds a replica of, at tp 2.
REPLICATED = {"llama": [], "gemma3_1b": ["full_attention", "sliding_attention"],
              "mimo_v2_flash": ["full_attention"], "qwen3_next": []}
#: Prefill + 32 decode steps for each of the 4 requests.
ROWS = 4 * 33


def _assert_report(report, tp):
    from mini_engine import check
    family = report["family"] if isinstance(report, dict) else report.family
    data = report if isinstance(report, dict) else report.__dict__
    assert data["tp"] == tp
    assert data["rows"] + data["nan_rows"] == ROWS
    assert data["nan_rows"] == 0, f"{family}: {data['nan_rows']} non-finite logit rows"
    if tp == 2:
        assert data["kv_replicated"] == REPLICATED[family]
    assert data["max_error"] <= check.LOGIT_TOLERANCE, (
        f"{family}: TP={tp} logits off TP=1's by {data['max_error']:.4f} x rms at "
        f"{data['worst']} (tolerance {check.LOGIT_TOLERANCE})")
    assert data["row_error"] <= check.ROW_TOLERANCE, (
        f"{family}: a row's rms error is {data['row_error']:.4f} x rms "
        f"(tolerance {check.ROW_TOLERANCE})")
    for g in data["greedy"]:
        g = g if isinstance(g, dict) else g.__dict__
        if g["divergence"] is not None:
            assert g["margin"] < check.NEAR_TIE, (
                f"{family}: request {g['request_id']} argmax differs from TP=1 at step "
                f"{g['divergence']}, where TP=1's margin {g['margin']:.4f} x rms is no "
                f"near-tie (< {check.NEAR_TIE})")


@needs_transformers
@pytest.mark.parametrize("launch", ["checked", "plan"])
@pytest.mark.parametrize("family", FAMILIES)
def test_tp2_in_one_process(family, launch, attnc_context):
    from mini_engine import check, check_tp
    report = check_tp.run_single_process(family, tp=2, device="cuda", context=attnc_context,
                                         launch=launch, control=(launch == "checked"))
    print("\n" + report.summary())
    assert report.graph_steps > 0, "no decode step was a CUDA graph replay"
    _assert_report(report, 2)
    if report.control_error is not None:
        assert report.control_error > 2 * check.LOGIT_TOLERANCE, (
            f"{family}: swapping the ranks' o_proj columns moves the logits only "
            f"{report.control_error:.4f} x rms: the check would not see a slicing bug")


def _torchrun(world: int, family: str, tmp_path):
    """check_tp under torchrun with `world` processes on one family: the
    exit code, output and rank 0's report."""
    out = tmp_path / "reports.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python"), str(REPO / "examples")]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={world}", "-m", "mini_engine.check_tp",
               "--json-out", str(out), family]
    run = subprocess.run(command, cwd=REPO / "examples", env=env, capture_output=True,
                         text=True, timeout=900)
    print("\n" + run.stdout[-4000:])
    reports = json.loads(out.read_text()) if out.is_file() else []
    report = next((r for r in reports if r["family"] == family), None)
    return run.returncode, run.stdout, run.stderr, report


@needs_transformers
@pytest.mark.parametrize("world", [1, 2])
@pytest.mark.parametrize("family", FAMILIES)
def test_tp_torch_distributed(family, world, tmp_path):
    if world > GPUS:
        pytest.skip("skipped: needs two GPUs")
    code, stdout, stderr, report = _torchrun(world, family, tmp_path)
    assert report is not None, (f"{family}: torchrun exited {code} without a report:\n"
                                f"{stdout[-3000:]}\n{stderr[-6000:]}")
    assert report["mode"] == "distributed"
    assert report["ranks_agree"], f"{family}: the ranks' logits differ"
    _assert_report(report, world)
    assert code == 0, f"{family}: torchrun exited {code}:\n{stderr[-3000:]}"
