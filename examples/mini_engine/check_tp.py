"""Tensor parallelism in the mini engine: the logits of a tp-way sharded
run against the TP=1 run of the same weights.

Both runs are the mini engine in bf16 over the same Hugging Face model
(mini_engine.families: bf16-representable random weights from a fixed
seed) and the same requests (prompts of 7..301 tokens, chunked prefill,
then DECODE_STEPS decode steps each). TP=1 runs greedy; the sharded run is
teacher-forced with TP=1's tokens (``Request.forced_output``), so both see
the same sequences and batches:

* Logits: every sampled row (the prompt's last position, then each decode
  step) within LOGIT_TOLERANCE x rms (each logit) and ROW_TOLERANCE x rms
  (the row's rms error) of the TP=1 row, rms being the TP=1 row's; NaN
  fails. (check.py derives the bounds for bf16 against float32; the two
  runs here differ by less: the same kernels on fewer heads, and the
  o_proj output rounded to bf16 per rank before the sum.)
* Greedy: the sharded run's argmax equals TP=1's token at every step up
  to the first difference, where TP=1's top-2 margin must be a near-tie
  (< NEAR_TIE x rms). Teacher-forced argmaxes are exactly what free-running
  greedy would produce up to its first divergence (the same prefix gives
  the same batch), so this is the free-running greedy comparison.
* Control (single process): the same run with the ranks' o_proj column
  slices swapped -- a slicing bug -- is far outside the logit bound.

Two ways to run the sharded side:

* one process, one GPU (``--single-process``): every rank's attnc model,
  weights and KV cache in one engine, the ranks run one after another and
  their o_proj outputs are summed in place of the all-reduce. It checks
  the sharding arithmetic; it needs no NCCL.
* ``torch.distributed`` (``torchrun --nproc-per-node N -m
  mini_engine.check_tp``): one process per GPU, NCCL, tp = the world size;
  rank 0 runs TP=1 too. World size 1 is the TP=1 engine under
  torch.distributed (its logits must equal plain TP=1's exactly).

From ``examples/`` with ``PYTHONPATH=../python``::

    python -m mini_engine.check_tp --single-process [FAMILY...]
    torchrun --nproc-per-node 2 -m mini_engine.check_tp [FAMILY...]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Callable, List, Optional, Sequence

import torch

from . import families as fam
from .check import LOGIT_TOLERANCE, NEAR_TIE, ROW_TOLERANCE
from .engine import MiniEngine, Request

#: The models of issue 16: GQA with tp <= Hkv (Llama, 8/2), one KV head
#: replicated on every rank (Gemma 3 1B, 4/1), 192/128 head dims with a
#: replicated (16/1) and a split (16/2) kind plus sinks (MiMo-V2-Flash),
#: and the per-head interleaved output gate (Qwen3-Next, 16/2).
TP_FAMILIES = ["llama", "gemma3_1b", "mimo_v2_flash", "qwen3_next"]

PROMPT_LENGTHS = (7, 40, 130, 301)
#: Decode steps after the prefill's own token.
DECODE_STEPS = 32


@dataclass
class GreedyCompare:
    request_id: int
    matched: int                  # leading steps whose argmax is TP=1's token
    total: int
    divergence: Optional[int]     # first step that differs, None if none
    margin: Optional[float]       # TP=1's top-2 margin / rms there
    first_near_tie: Optional[int]


@dataclass
class TpReport:
    family: str
    tp: int
    mode: str                     # "single-process" | "distributed"
    kinds: List[str]
    kv_replicated: List[str]      # kinds whose KV heads are replicated
    rows: int
    nan_rows: int
    max_error: float              # max |tp - tp1| / rms(tp1) over rows
    row_error: float              # max rms(tp - tp1) / rms(tp1)
    worst: str
    exact: bool                   # every logit bit-equal to TP=1's
    greedy: List[GreedyCompare]
    steps: int
    graph_steps: int
    seconds: float
    #: single-process: the error with the ranks' o_proj columns swapped
    control_error: Optional[float] = None
    #: distributed: every rank's logits equal rank 0's
    ranks_agree: Optional[bool] = None
    notes: List[str] = field(default_factory=list)

    def failures(self) -> List[str]:
        """What breaks the check (empty: it passed)."""
        bad = []
        if self.nan_rows:
            bad.append(f"{self.nan_rows} non-finite logit rows")
        if self.max_error > LOGIT_TOLERANCE:
            bad.append(f"logit error {self.max_error:.4f} x rms > {LOGIT_TOLERANCE} at {self.worst}")
        if self.row_error > ROW_TOLERANCE:
            bad.append(f"row rms error {self.row_error:.4f} > {ROW_TOLERANCE}")
        for g in self.greedy:
            if g.divergence is not None and not g.margin < NEAR_TIE:
                bad.append(f"request {g.request_id} diverges at step {g.divergence} with "
                           f"TP=1 margin {g.margin:.4f} x rms (no near-tie)")
        if self.control_error is not None and not self.control_error > 2 * LOGIT_TOLERANCE:
            bad.append(f"control: swapped o_proj columns move the logits only "
                       f"{self.control_error:.4f} x rms")
        if self.ranks_agree is False:
            bad.append("the ranks' logits differ")
        return bad

    def summary(self) -> str:
        matched = sum(g.matched for g in self.greedy)
        total = sum(g.total for g in self.greedy)
        div = ", ".join(f"req{g.request_id}@{g.divergence} (margin {g.margin:.4f})"
                        for g in self.greedy if g.divergence is not None) or "none"
        ties = ", ".join(f"req{g.request_id}@{g.first_near_tie}"
                         for g in self.greedy if g.first_near_tie is not None) or "none"
        text = (f"{self.family} tp={self.tp} ({self.mode}): kinds {'/'.join(self.kinds)} "
                f"(KV replicated: {'/'.join(self.kv_replicated) or 'none'}); {self.rows} rows "
                f"vs TP=1: max logit error {self.max_error:.4f} x rms (tolerance "
                f"{LOGIT_TOLERANCE}), row rms error {self.row_error:.4f} (tolerance "
                f"{ROW_TOLERANCE}), worst {self.worst}, bit-equal {self.exact}; greedy "
                f"{matched}/{total} steps match TP=1, divergences: {div}; first near-ties: "
                f"{ties}; {self.steps} steps ({self.graph_steps} graph replays)")
        if self.control_error is not None:
            text += f"; control (o_proj columns swapped) {self.control_error:.3f} x rms"
        if self.ranks_agree is not None:
            text += f"; ranks agree: {self.ranks_agree}"
        text += f"; {self.seconds:.1f} s"
        return text


def _rms(row: torch.Tensor) -> float:
    return float(row.float().pow(2).mean().sqrt())


def _requests(vocab: int, seed: int) -> List[Request]:
    """One request per PROMPT_LENGTHS entry: random tokens, the prefill's
    token and DECODE_STEPS more."""
    generator = torch.Generator().manual_seed(seed)
    return [Request(index, torch.randint(1, vocab, (length,), generator=generator).tolist(),
                    DECODE_STEPS + 1)
            for index, length in enumerate(PROMPT_LENGTHS)]


def _check_expect(name: str, model) -> None:
    """attnc read the family's attention features (as check.py checks)."""
    kinds = model.config["layer_kinds"]
    for key, value in fam.FAMILIES[name].expect.items():
        got = [k.get(key) for k in kinds]
        assert any((abs(g - value) < 1e-6 if isinstance(value, float) else g == value)
                   for g in got), f"{name}: attnc read {key}={got}, expected {value}"


def _forced(requests: Sequence[Request]) -> List[Request]:
    """Fresh requests with the same prompts and lengths, teacher-forced
    with the given run's tokens."""
    return [Request(r.request_id, list(r.prompt), r.max_new_tokens,
                    forced_output=list(r.output)) for r in requests]


def _run(reference, attnc_models, requests: List[Request], *, device, tp: int = 1,
         ranks=None, all_reduce: Optional[Callable] = None, graphs: bool,
         launch: str, block_size: int, prepare: Optional[Callable] = None) -> MiniEngine:
    """One engine over a bf16 copy of `reference` on `device`, run over
    `requests` (filled in place). `prepare(engine)` may alter it first."""
    model = copy.deepcopy(reference).to(device).to(torch.bfloat16)
    max_len = max(len(r.prompt) + r.max_new_tokens for r in requests)
    engine = MiniEngine(model, attnc_models, block_size=block_size,
                        num_blocks=len(requests) * math.ceil(max_len / block_size) + 1,
                        max_model_len=max_len, max_num_seqs=8, token_budget=64,
                        graph_buckets=(1, 2, 4, 8) if graphs else (), launch=launch,
                        tp=tp, ranks=ranks, all_reduce=all_reduce)
    if prepare is not None:
        prepare(engine)
    engine.generate(requests)
    return engine


def _swap_o_proj_columns(engine: MiniEngine) -> None:
    """The control's defect: rank 0 multiplies by rank 1's o_proj columns
    and rank 1 by rank 0's."""
    for layer in engine.model.model.layers:
        parts = layer.self_attn.ranks
        parts[0].o_weight, parts[1].o_weight = parts[1].o_weight, parts[0].o_weight


def _max_error(base: Sequence[Request], other: Sequence[Request]) -> float:
    worst = 0.0
    for a, b in zip(base, other):
        for x, y in zip(a.logits, b.logits):
            worst = max(worst, float((y - x).abs().max()) / _rms(x))
    return worst


def compare(family: str, tp: int, mode: str, base: Sequence[Request],
            sharded: Sequence[Request], engine: MiniEngine, seconds: float) -> TpReport:
    """The report of `sharded` (teacher-forced) against `base` (TP=1)."""
    rows = nan_rows = 0
    max_error = row_error = 0.0
    worst = ""
    exact = True
    greedy = []
    for a, b in zip(base, sharded):
        if len(b.logits) != len(a.logits):
            raise AssertionError(f"request {a.request_id}: {len(b.logits)} rows, TP=1 "
                                 f"has {len(a.logits)}")
        matched, divergence, margin, near_tie = 0, None, None, None
        for step, (x, y) in enumerate(zip(a.logits, b.logits)):
            scale = _rms(x)
            top = x.topk(2).values
            step_margin = float(top[0] - top[1]) / scale
            if near_tie is None and step_margin < NEAR_TIE:
                near_tie = step
            if not bool(torch.isfinite(y).all()):
                nan_rows += 1
                exact = False
                worst = f"req{a.request_id} step {step} (non-finite)"
                if divergence is None:
                    divergence, margin = step, step_margin
                continue
            exact = exact and bool(torch.equal(x, y))
            error = float((y - x).abs().max()) / scale
            if error > max_error:
                max_error, worst = error, f"req{a.request_id} step {step}"
            row_error = max(row_error, _rms(y - x) / scale)
            rows += 1
            if divergence is None:
                if int(y.argmax()) != a.output[step]:
                    divergence, margin = step, step_margin
                else:
                    matched += 1
        greedy.append(GreedyCompare(a.request_id, matched, len(a.logits), divergence,
                                    margin, near_tie))
    shards = engine.shards[0].shards
    return TpReport(
        family=family, tp=tp, mode=mode, kinds=sorted(shards),
        kv_replicated=sorted(k for k, s in shards.items() if s["kv_replicated"]),
        rows=rows, nan_rows=nan_rows, max_error=max_error if not nan_rows else float("inf"),
        row_error=row_error, worst=worst, exact=exact, greedy=greedy,
        steps=len(engine.steps), graph_steps=sum(s.graph for s in engine.steps),
        seconds=seconds)


def _compile(config, context, tp: int = 1, rank: int = 0, block_size: int = 16):
    import attnc
    return attnc.compile(config, dtype="bf16", block_size=block_size, tp=tp, rank=rank,
                         context=context)


def run_single_process(name: str, *, tp: int = 2, device: str = "cuda", seed: int = 0,
                       context=None, graphs: bool = True, launch: str = "checked",
                       block_size: int = 16, control: bool = True,
                       torch_kernels: bool = False) -> TpReport:
    """TP=1, then every rank of tp in one process (sum in place of the
    all-reduce), teacher-forced; then the control. `torch_kernels` runs
    attention in torch_kernels.py (CPU; the kernels are not checked)."""
    start = time.time()
    family = fam.FAMILIES[name]
    reference = fam.build_reference(family, seed=seed)
    config = reference.config

    def kernels(model):
        _check_expect(name, model)
        if not torch_kernels:
            return model
        from .torch_kernels import TorchKernels, hf_rotary
        return TorchKernels(model, hf_rotary(reference))

    base = _requests(config.vocab_size, seed + 2)
    _run(reference, kernels(_compile(config, context, block_size=block_size)), base,
         device=device, graphs=graphs, launch=launch, block_size=block_size)
    shards = [kernels(_compile(config, context, tp, r, block_size)) for r in range(tp)]
    sharded = _forced(base)
    engine = _run(reference, shards, sharded, device=device, tp=tp, ranks=range(tp),
                  graphs=graphs, launch=launch, block_size=block_size)
    report = compare(name, tp, "single-process", base, sharded, engine, 0.0)
    if control and tp >= 2:
        swapped = _forced(base)
        _run(reference, shards, swapped, device=device, tp=tp, ranks=range(tp),
             graphs=False, launch=launch, block_size=block_size,
             prepare=_swap_o_proj_columns)
        report.control_error = _max_error(base, swapped)
    report.seconds = time.time() - start
    return report


def _checksum(model) -> float:
    """A float64 sum over every parameter (equal weights on every rank)."""
    return float(sum(p.detach().double().sum() for p in model.parameters()))


def run_distributed(names: Sequence[str], *, seed: int = 0, graphs: bool = False,
                    launch: str = "checked", block_size: int = 16,
                    torch_kernels: bool = False) -> List[TpReport]:
    """Under torchrun: tp = the world size, this process's rank; rank 0 also
    runs TP=1 and compares. Returns the reports on rank 0 ([] elsewhere).
    NCCL, one GPU per process; `torch_kernels`: gloo on the CPU, attention
    in torch_kernels.py (checks the engine's distributed wiring only)."""
    import torch.distributed as dist
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch_kernels:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timedelta(minutes=30))
    else:
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device, timeout=timedelta(minutes=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    import attnc
    context = attnc.Context(cache_dir=os.environ.get("ATTNC_CACHE_DIR") or None)

    def kernels(model, reference):
        if not torch_kernels:
            return model
        from .torch_kernels import TorchKernels, hf_rotary
        return TorchKernels(model, hf_rotary(reference))
    reports = []
    try:
        for name in names:
            start = time.time()
            reference = fam.build_reference(fam.FAMILIES[name], seed=seed)
            config = reference.config
            sums = [None] * world
            dist.all_gather_object(sums, _checksum(reference))
            if len(set(sums)) != 1:
                raise RuntimeError(f"{name}: the ranks built different weights: {sums}")
            base = _requests(config.vocab_size, seed + 2)
            # Every rank compiles its shard before rank 0 runs TP=1 (the
            # others wait in the broadcast meanwhile).
            model = _compile(config, context, world, rank, block_size)
            if rank == 0:
                single = _compile(config, context, block_size=block_size)
                _check_expect(name, single)
                _run(reference, kernels(single, reference), base,
                     device=device, graphs=graphs, launch=launch, block_size=block_size)
            tokens = [[r.output for r in base]]
            dist.broadcast_object_list(tokens, src=0)
            for request, output in zip(base, tokens[0]):
                request.output = list(output)
            sharded = _forced(base)
            engine = _run(reference, kernels(model, reference), sharded, device=device,
                          tp=world, ranks=[rank],
                          all_reduce=dist.all_reduce, graphs=graphs, launch=launch,
                          block_size=block_size)
            mine = torch.cat([torch.stack(r.logits) for r in sharded])
            gathered = [None] * world
            dist.all_gather_object(gathered, mine)
            if rank == 0:
                report = compare(name, world, "distributed", base, sharded, engine,
                                 time.time() - start)
                report.ranks_agree = all(torch.equal(mine, g) for g in gathered)
                reports.append(report)
                print(report.summary(), flush=True)
            dist.barrier()
    finally:
        dist.destroy_process_group()
    return reports


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", default=TP_FAMILIES)
    parser.add_argument("--single-process", action="store_true",
                        help="every rank in this process on one device (no NCCL)")
    parser.add_argument("--tp", type=int, default=2, help="ranks (--single-process)")
    parser.add_argument("--graphs", action="store_true",
                        help="decode steps as CUDA graphs (distributed; single-process "
                             "always captures them)")
    parser.add_argument("--launch", choices=("checked", "plan"), default="checked")
    parser.add_argument("--torch-kernels", action="store_true",
                        help="attention in torch on the CPU (distributed: gloo); checks the "
                             "engine's wiring, not attnc's kernels")
    parser.add_argument("--json-out", help="write the reports here (rank 0)")
    args = parser.parse_args(argv)
    for name in args.families:
        if name not in fam.FAMILIES:
            parser.error(f"unknown family {name!r} (one of {', '.join(fam.FAMILIES)})")
    if args.single_process:
        device = "cuda" if torch.cuda.is_available() and not args.torch_kernels else "cpu"
        reports = []
        for name in args.families:
            report = run_single_process(name, tp=args.tp, device=device,
                                        graphs=device == "cuda", launch=args.launch,
                                        torch_kernels=args.torch_kernels)
            print(report.summary(), flush=True)
            reports.append(report)
    else:
        reports = run_distributed(args.families, graphs=args.graphs, launch=args.launch,
                                  torch_kernels=args.torch_kernels)
        if int(os.environ.get("RANK", "0")) != 0:
            return 0
    failed = 0
    for report in reports:
        for failure in report.failures():
            print(f"FAIL {report.family} tp={report.tp}: {failure}", flush=True)
            failed += 1
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump([asdict(r) for r in reports], out, indent=1)
    print(f"{len(reports) - len({r.family for r in reports if r.failures()})} passed, "
          f"{len({r.family for r in reports if r.failures()})} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
