"""Runs the mini engine on one family and compares it with Hugging Face.

* Teacher-forced logits: every logit row the engine produced (the last
  prompt position, then each decode step) against the Hugging Face float32
  eager model run over the same tokens (the engine's own sequence, so the
  prefixes are equal by construction), measured relative to the logit
  scale of that row (its RMS).
* Free-running greedy: the engine's tokens against ``generate(do_sample=
  False)`` of the float32 model, compared up to the first divergence, where
  the Hugging Face top-2 margin must be a near-tie.

``python -m mini_engine.check FAMILY...`` (from ``examples/``) prints the
results; ``--torch-kernels`` runs attention in torch (no GPU needed).
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import time
from dataclasses import dataclass, field
from typing import List, Optional

import torch

from .engine import MiniEngine, Request
from . import families as fam

#: Logit error bounds, relative to the RMS of the reference row. The engine
#: runs bf16 activations over the same bf16 weights as the float32
#: reference, so the difference is activation rounding alone: each rounding
#: to bf16 moves a value by at most u = 2^-9 relative, and a couple of
#: layers (norm, q|k|v projection, rope, attention with its bf16 softmax
#: weights, o_proj, residual, norm, MLP, final norm, lm_head) put a few dozen
#: such roundings behind every logit. They add up like a random walk: the
#: row's RMS error is a few u of the logit scale (ROW_TOLERANCE = 2^-5 = 16
#: u is the ceiling), and the largest of the 512 logits x ~180 rows sits
#: 4-5 standard deviations out (LOGIT_TOLERANCE = 2^-3 for any single
#: logit). Hugging Face's own bf16 eager model stays at or below half of each
#: (hf_bf16_* in the report). A wrong rope angle, a missed window edge, a
#: lost sink or a key read from the wrong slot moves logits by a sizeable
#: part of their scale (the window control in the GPU test shows one).
LOGIT_TOLERANCE = 2.0 ** -3
ROW_TOLERANCE = 2.0 ** -5

#: Two logits each within LOGIT_TOLERANCE * rms of the truth can swap order
#: only when they were closer than twice that: a top-2 margin below this
#: (relative to the row's RMS) is a near-tie, where greedy tokens may differ
#: without a defect. Above it they must agree.
NEAR_TIE = 2 * LOGIT_TOLERANCE

PROMPT_LENGTHS = (7, 23, 40, 61, 96, 130, 177, 250, 301)
MAX_NEW_TOKENS = 24


@dataclass
class GreedyResult:
    request_id: int
    matched: int                 # leading tokens equal to Hugging Face's
    total: int
    divergence: Optional[int]    # first differing index, None if none
    margin: Optional[float]      # Hugging Face's top-2 margin / rms there
    first_near_tie: Optional[int]  # first step with a near-tie margin


@dataclass
class FamilyReport:
    family: str
    max_error: float             # max over rows of max|engine - hf| / rms
    hf_bf16_error: float         # the same for Hugging Face's own bf16 model
    row_error: float             # max over rows of rms(engine - hf) / rms
    hf_bf16_row_error: float
    worst_row: str
    rows_checked: int
    greedy: List[GreedyResult]
    steps: int
    graph_steps: int
    mixed_steps: int
    seconds: float
    kinds: List[str] = field(default_factory=list)
    nan_rows: int = 0
    graph_rows: int = 0          # logit rows produced by graph replays
    eager_rows: int = 0
    #: max error x rms against a reference without the sliding window (the
    #: negative control; None for models without one)
    window_control_error: Optional[float] = None

    def summary(self) -> str:
        matched = sum(g.matched for g in self.greedy)
        total = sum(g.total for g in self.greedy)
        first = [g for g in self.greedy if g.divergence is not None]
        div = ", ".join(f"req{g.request_id}@{g.divergence} (margin {g.margin:.4f})"
                        for g in first) or "none"
        return (f"{self.family}: kinds {'/'.join(self.kinds)}; max logit error "
                f"{self.max_error:.4f} x rms (tolerance {LOGIT_TOLERANCE:.4f}; HF bf16 "
                f"{self.hf_bf16_error:.4f}), row rms error {self.row_error:.4f} (tolerance "
                f"{ROW_TOLERANCE:.4f}; HF bf16 {self.hf_bf16_row_error:.4f}) over "
                f"{self.rows_checked} rows, worst {self.worst_row}; "
                f"greedy {matched}/{total} tokens match HF generate, divergences: {div} "
                f"(near-tie < {NEAR_TIE:.3f} x rms); {self.steps} steps "
                f"({self.mixed_steps} mixed prefill+decode, {self.graph_steps} graph "
                f"replays, {self.graph_rows} of the rows)"
                + (f"; without the window the error would be {self.window_control_error:.3f} x rms"
                   if self.window_control_error is not None else "")
                + f"; {self.seconds:.1f} s")


def make_requests(vocab: int, seed: int, lengths=PROMPT_LENGTHS,
                  max_new_tokens: int = MAX_NEW_TOKENS) -> List[Request]:
    generator = torch.Generator().manual_seed(seed)
    requests = []
    for index, length in enumerate(lengths):
        prompt = torch.randint(1, vocab, (length,), generator=generator).tolist()
        # Different output lengths too, so requests finish at different steps.
        requests.append(Request(index, prompt, max_new_tokens - (index % 3) * 4))
    return requests


def _rms(row: torch.Tensor) -> float:
    return float(row.float().pow(2).mean().sqrt())


def run_family(name: str, *, device: str = "cuda", torch_kernels: bool = False,
               seed: int = 0, context=None, block_size: int = 16,
               graphs: bool = True, window_control: bool = False,
               launch: str = "checked") -> FamilyReport:
    import attnc
    start = time.time()
    family = fam.FAMILIES[name]
    reference = fam.build_reference(family, seed=seed).to(device)
    config = reference.config
    attnc_model = attnc.compile(config, dtype="bf16", block_size=block_size,
                                context=context)
    for key, value in family.expect.items():
        got = [k.get(key) for k in attnc_model.config["layer_kinds"]]
        assert any((abs(g - value) < 1e-6 if isinstance(value, float) else g == value)
                   for g in got), f"{name}: attnc read {key}={got}, expected {value}"
    engine_model = copy.deepcopy(reference).to(torch.bfloat16)
    if torch_kernels:
        from .torch_kernels import TorchKernels, hf_rotary
        kernels = TorchKernels(attnc_model, hf_rotary(engine_model))
    else:
        kernels = attnc_model
    requests = make_requests(config.vocab_size, seed + 2)
    max_len = max(len(r.prompt) + r.max_new_tokens for r in requests)
    engine = MiniEngine(engine_model, kernels, block_size=block_size,
                        num_blocks=8 * math.ceil(max_len / block_size) + 1,
                        max_model_len=max_len, max_num_seqs=8, token_budget=64,
                        graph_buckets=(1, 2, 4, 8) if graphs else (),
                        launch="checked" if torch_kernels else launch)
    engine.generate(requests)

    # Teacher-forced: Hugging Face float32 (and bf16, for scale) over each
    # request's full sequence, logits at the positions the engine sampled.
    hf_bf16 = copy.deepcopy(reference).to(torch.bfloat16)
    max_error, hf_error, rows, nan_rows, worst = 0.0, 0.0, 0, 0, ""
    row_error, hf_row_error = 0.0, 0.0
    greedy = []
    with torch.no_grad():
        for request in requests:
            tokens = torch.tensor(request.tokens, device=device)[None]
            first = len(request.prompt) - 1
            span = slice(first, first + len(request.output))
            ref = reference(tokens).logits[0, span].float().cpu()
            low = hf_bf16(tokens).logits[0, span].float().cpu()
            mine = torch.stack(request.logits)
            for step in range(len(request.output)):
                scale = _rms(ref[step])
                if not bool(torch.isfinite(mine[step]).all()):
                    nan_rows += 1
                    max_error = float("inf")
                    worst = f"req{request.request_id} step {step} (non-finite)"
                    continue
                error = float((mine[step] - ref[step]).abs().max()) / scale
                if error > max_error:
                    max_error = error
                    worst = (f"req{request.request_id} step {step} "
                             f"({'graph' if request.produced_in_graph[step] else 'eager'})")
                hf_error = max(hf_error, float((low[step] - ref[step]).abs().max()) / scale)
                row_error = max(row_error, _rms(mine[step] - ref[step]) / scale)
                hf_row_error = max(hf_row_error, _rms(low[step] - ref[step]) / scale)
                rows += 1
            # Free-running greedy against generate().
            prompt = torch.tensor(request.prompt, device=device)[None]
            out = reference.generate(prompt, max_new_tokens=request.max_new_tokens,
                                     do_sample=False, output_logits=True,
                                     return_dict_in_generate=True)
            hf_tokens = out.sequences[0, len(request.prompt):].tolist()
            hf_logits = torch.stack(out.logits, dim=1)[0].float().cpu()
            matched, divergence, margin, near_tie = 0, None, None, None
            for step, (a, b) in enumerate(zip(request.output, hf_tokens)):
                top = hf_logits[step].topk(2).values
                step_margin = float(top[0] - top[1]) / _rms(hf_logits[step])
                if near_tie is None and step_margin < NEAR_TIE:
                    near_tie = step
                if a != b:
                    divergence, margin = step, step_margin
                    break
                matched += 1
            greedy.append(GreedyResult(request.request_id, matched, len(hf_tokens),
                                       divergence, margin, near_tie))
        control = None
        if window_control and getattr(config, "sliding_window", None) and \
                any(k.get("sliding_window") for k in attnc_model.config["layer_kinds"]):
            saved = config.sliding_window
            config.sliding_window = 1 << 20  # the masks are built from it
            try:
                control = 0.0
                for request in requests:
                    tokens = torch.tensor(request.tokens, device=device)[None]
                    first = len(request.prompt) - 1
                    span = slice(first, first + len(request.output))
                    wide = reference(tokens).logits[0, span].float().cpu()
                    mine = torch.stack(request.logits)
                    for step in range(len(request.output)):
                        control = max(control, float((mine[step] - wide[step]).abs().max())
                                      / _rms(wide[step]))
            finally:
                config.sliding_window = saved
    steps = engine.steps
    graph_rows = sum(sum(r.produced_in_graph) for r in requests)
    return FamilyReport(
        family=name, max_error=max_error, hf_bf16_error=hf_error, worst_row=worst,
        row_error=row_error, hf_bf16_row_error=hf_row_error,
        rows_checked=rows, greedy=greedy, steps=len(steps),
        graph_steps=sum(s.graph for s in steps),
        mixed_steps=sum(1 for s in steps if s.num_prefill_rows and s.num_decode_rows),
        seconds=time.time() - start, kinds=list(attnc_model.layers), nan_rows=nan_rows,
        graph_rows=graph_rows, eager_rows=rows + nan_rows - graph_rows,
        window_control_error=control)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", default=list(fam.FAMILIES))
    parser.add_argument("--torch-kernels", action="store_true",
                        help="attention in torch (the kernel contract), no GPU needed")
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    failed = 0
    for name in args.families:
        report = run_family(name, device=device, torch_kernels=args.torch_kernels,
                            graphs=device == "cuda", window_control=True)
        print(report.summary(), flush=True)
        bad = [g for g in report.greedy if g.divergence is not None and g.margin >= NEAR_TIE]
        if report.max_error > LOGIT_TOLERANCE or report.row_error > ROW_TOLERANCE or bad:
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
