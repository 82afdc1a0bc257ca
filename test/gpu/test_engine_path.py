"""The engine path on a GPU: launch plans (Model.preprocess_plan /
attention_plan) and the torch ops (torch.ops.attnc.*), each bit-exact
against the checked path (Model.preprocess / Model.attention) on the same
fresh inputs with poisoned outputs, eager, on a second stream, captured in a
CUDA graph and replayed, and (the ops) under torch.compile(fullgraph=True);
per-call argument errors name the argument."""

import pytest

import attnc
from attnc_gpu_cases import LAYER, PreprocessCase
from attnc_gpu_reference import fused_columns, paged_sequences, torch, torch_dtype

CASES = [
    # output gate (per-head interleaved), gemma norm, partial rope
    PreprocessCase((256, 256), (16, 2), "gemma", "partial", "interleaved", "bf16", "same",
                   0, 16),
    # qk != v, fp8 cache with scales, fp16 activations, 64-token pages
    PreprocessCase((192, 128), (32, 4), "none", "mla", "none", "fp16", "fp8", 0, 64),
    # q/k norm, full rope, no gate: the qwen3 shape family
    PreprocessCase((128, 128), (32, 8), "rms", "neox", "none", "bf16", "same", 0, 16),
]

SEQUENCES = [(1, 300), (5, 97), (1, 1), (64, 130), (1, 2049)]  # (query rows, keys)


def _batch(model, case, seed):
    """Inputs of one step: preprocess over every key of every sequence, then
    attention over the last rows of each. Returns (static, pre, att)."""
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    _, _, _, _, width = fused_columns(hq, hkv, dqk, dv, case.gate)
    bs = case.block_size
    tables, positions, slots, num_blocks = paged_sequences([kv for _, kv in SEQUENCES], bs, g)
    qkv = torch.randn(positions.numel(), width, device="cuda", generator=g).to(dtype)
    cache_dtype = torch_dtype(case.cache_dtype)
    static = dict(k_cache=torch.zeros(num_blocks, bs, hkv, dqk, dtype=cache_dtype,
                                      device="cuda"),
                  v_cache=torch.zeros(num_blocks, bs, hkv, dv, dtype=cache_dtype,
                                      device="cuda"))
    weights = {}
    if case.norm != "none":
        weights = {n: (1.0 + 0.1 * torch.randn(dqk, device="cuda", generator=g)).to(dtype)
                   for n in ("q_norm_weight", "k_norm_weight")}
    scales = {}
    if case.cache == "fp8":
        scales = dict(k_scale=torch.tensor(0.05, device="cuda"),
                      v_scale=torch.tensor(0.05, device="cuda"))
    q_lens = torch.tensor([q for q, _ in SEQUENCES], dtype=torch.int32, device="cuda")
    qsl = torch.zeros(len(SEQUENCES) + 1, dtype=torch.int32, device="cuda")
    qsl[1:] = q_lens.cumsum(0)
    seq_lens = torch.tensor([kv for _, kv in SEQUENCES], dtype=torch.int32, device="cuda")
    starts = torch.tensor([0] + [kv for _, kv in SEQUENCES], device="cuda").cumsum(0)
    rows = torch.cat([torch.arange(int(starts[s + 1]) - q, int(starts[s + 1]), device="cuda")
                      for s, (q, _) in enumerate(SEQUENCES)])
    pre = dict(qkv=qkv, slot_mapping=slots, positions=positions if case.rope != "none"
               else None, weights=weights, scales=scales)
    att = dict(block_tables=tables, seq_lens=seq_lens, query_start_loc=qsl, rows=rows)
    return static, pre, att


def _zero(static):
    """Empties the plan's caches (between runs that rewrite them)."""
    static["k_cache"].zero_()
    static["v_cache"].zero_()


def _poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def _checked(model, case, static, pre, att):
    """The checked path's results: (q_out, gate_out, out, k_cache, v_cache)."""
    k_cache, v_cache = static["k_cache"].clone(), static["v_cache"].clone()
    result = model.preprocess(LAYER, pre["qkv"], slot_mapping=pre["slot_mapping"],
                              positions=pre["positions"], k_cache=k_cache, v_cache=v_cache,
                              **pre["weights"], **pre["scales"])
    q_out, gate_out = result if case.gate != "none" else (result, None)
    rows = att["rows"]
    gate = gate_out[rows].contiguous() if gate_out is not None else None
    # The attention kernel (kind "attention"), which attention_plan runs: on
    # sm_90a the rule would take the prefill kernel for some of these batches.
    kind = {"kind": "attention"} if model.has_prefill_attention(LAYER) else {}
    out = model.attention(LAYER, q_out[rows].contiguous(), k_cache=k_cache, v_cache=v_cache,
                          block_tables=att["block_tables"], seq_lens=att["seq_lens"],
                          query_start_loc=att["query_start_loc"], gate=gate, **pre["scales"],
                          **kind)
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()
    return q_out, gate_out, out, k_cache, v_cache


class _Step:
    """Preallocated step buffers (poisoned) the engine path writes into."""

    def __init__(self, case, pre, att):
        (dqk, dv), (hq, _) = case.dims, case.heads
        dtype = torch_dtype(case.dtype)
        T, R = pre["qkv"].shape[0], att["rows"].numel()
        self.q_out = _poisoned((T, hq, dqk), dtype)
        self.gate_out = _poisoned((T, hq, dv), dtype) if case.gate != "none" else None
        self.query = _poisoned((R, hq, dqk), dtype)
        self.gate = _poisoned((R, hq, dv), dtype) if case.gate != "none" else None
        self.out = _poisoned((R, hq, dv), dtype)


def _assert_same(case, got, want):
    q_out, gate_out, out, k_cache, v_cache = want
    step, kc, vc = got
    assert torch.equal(step.q_out, q_out)
    if gate_out is not None:
        assert torch.equal(step.gate_out, gate_out)
    assert torch.equal(kc.view(torch.uint8), k_cache.view(torch.uint8))
    assert torch.equal(vc.view(torch.uint8), v_cache.view(torch.uint8))
    assert torch.equal(step.out, out)


def _plan_step(pre_plan, att_plan, pre, att, step, stream=None):
    rows = att["rows"]
    pre_plan.run(pre["qkv"], pre["slot_mapping"], pre["positions"], q_out=step.q_out,
                 gate_out=step.gate_out, stream=stream)
    step.query.copy_(step.q_out[rows])
    if step.gate is not None:
        step.gate.copy_(step.gate_out[rows])
    att_plan.run(step.query, att["block_tables"], att["seq_lens"], att["query_start_loc"],
                 out=step.out, gate=step.gate, stream=stream)


def _make_plans(model, static, pre):
    pre_plan = model.preprocess_plan(LAYER, k_cache=static["k_cache"],
                                     v_cache=static["v_cache"], **pre["weights"],
                                     **pre["scales"])
    att_plan = model.attention_plan(LAYER, k_cache=static["k_cache"],
                                    v_cache=static["v_cache"], **pre["scales"])
    return pre_plan, att_plan


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id())
def test_plan_matches_checked_path(models, case):
    """plan.run: eager, on a side stream, and a CUDA graph of the step
    replayed on fresh inputs copied into the captured buffers."""
    model = models.get(case.compile_key)
    static, pre, att = _batch(model, case, seed=1)
    want = _checked(model, case, static, pre, att)
    pre_plan, att_plan = _make_plans(model, static, pre)
    splits = att_plan.plan(att["rows"].numel(), len(SEQUENCES))
    assert splits == model.attention_splits(LAYER, att["rows"].numel(), len(SEQUENCES))

    step = _Step(case, pre, att)
    _plan_step(pre_plan, att_plan, pre, att, step)
    torch.cuda.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want)

    # a second stream
    _zero(static)
    step = _Step(case, pre, att)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        _plan_step(pre_plan, att_plan, pre, att, step)
    side.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want)

    # captured once, replayed on the inputs of another seed
    static2, pre2, att2 = _batch(model, case, seed=2)
    want2 = _checked(model, case, static2, pre2, att2)
    _zero(static)
    step = _Step(case, pre, att)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        _plan_step(pre_plan, att_plan, pre, att, step)
    torch.cuda.synchronize()
    _zero(static)
    pre["qkv"].copy_(pre2["qkv"])
    for name in ("q_norm_weight", "k_norm_weight"):
        if name in pre["weights"]:
            pre["weights"][name].copy_(pre2["weights"][name])
    for name in ("slot_mapping",):
        pre[name].copy_(pre2[name])
    for name in ("block_tables", "seq_lens", "query_start_loc"):
        att[name].copy_(att2[name])
    step.out.fill_(float("nan"))
    step.q_out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want2)


def test_plan_run_errors_name_the_argument(models):
    case = CASES[2]
    model = models.get(case.compile_key)
    static, pre, att = _batch(model, case, seed=3)
    pre_plan, att_plan = _make_plans(model, static, pre)
    step = _Step(case, pre, att)
    args = (pre["qkv"], pre["slot_mapping"], pre["positions"])
    with pytest.raises(attnc.ArgumentError) as info:
        pre_plan.run(pre["qkv"].half(), *args[1:], q_out=step.q_out)
    assert info.value.argument == "qkv" and info.value.rule.startswith("dtype is f16")
    with pytest.raises(attnc.ArgumentError) as info:
        pre_plan.run(*args, q_out=step.q_out[:-1])
    assert info.value.argument == "q_out" and "num_tokens" in info.value.rule
    misaligned = torch.empty(step.query.numel() + 1, dtype=step.query.dtype,
                             device="cuda")[1:].view(step.query.shape)
    with pytest.raises(attnc.ArgumentError) as info:
        att_plan.run(misaligned, att["block_tables"], att["seq_lens"],
                     att["query_start_loc"], out=step.out)
    assert info.value.argument == "query" and "16-byte aligned" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        att_plan.run(step.query, att["block_tables"], att["seq_lens"][:-1],
                     att["query_start_loc"], out=step.out)
    assert info.value.argument == "seq_lens" and "num_seqs" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        att_plan.run(step.query, att["block_tables"].t().contiguous().t(),
                     att["seq_lens"], att["query_start_loc"], out=step.out)
    assert info.value.argument == "block_tables" and "C-contiguous" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        model.attention_plan(LAYER, k_cache=static["k_cache"][:, :, :, :64],
                             v_cache=static["v_cache"])
    assert info.value.argument == "k_cache"


def _load_ops():
    import attnc.torch_ops as ops
    try:
        backend = ops.load("auto")
    except Exception as error:  # noqa: BLE001
        pytest.fail(f"torch ops did not load: {error}")
    return ops, backend


def _op_step(ops, model, case, static, pre, att, step):
    pb, ab = ops.binding(model, LAYER, "preprocess"), ops.binding(model, LAYER, "attention")
    ws = _op_step.workspaces.setdefault(id(model), ops.workspace(model, LAYER))
    w, s = pre["weights"], pre["scales"]

    def run(qkv, slot_mapping, positions, block_tables, seq_lens, qsl, rows):
        torch.ops.attnc.preprocess(pb, qkv, slot_mapping, static["k_cache"],
                                   static["v_cache"], positions, w.get("q_norm_weight"),
                                   w.get("k_norm_weight"), s.get("k_scale"),
                                   s.get("v_scale"), step.q_out, step.gate_out)
        step.query.copy_(step.q_out[rows])
        if step.gate is not None:
            step.gate.copy_(step.gate_out[rows])
        torch.ops.attnc.attention(ab, step.query, static["k_cache"], static["v_cache"],
                                  block_tables, seq_lens, qsl, None, s.get("k_scale"),
                                  s.get("v_scale"), step.gate, step.out, ws, 0)
    return run


_op_step.workspaces = {}


@pytest.mark.parametrize("case", CASES[:2], ids=lambda c: c.id())
def test_torch_ops_match_checked_path(models, case):
    """torch.ops.attnc.*: eager, torch.compile(fullgraph=True), and CUDA
    graph capture + replay, each bit-exact against the checked path."""
    ops, backend = _load_ops()
    print(f"torch ops backend: {backend}")
    model = models.get(case.compile_key)
    static, pre, att = _batch(model, case, seed=4)
    want = _checked(model, case, static, pre, att)
    inputs = (pre["qkv"], pre["slot_mapping"], pre["positions"], att["block_tables"],
              att["seq_lens"], att["query_start_loc"], att["rows"])

    def fresh():
        """Zeroed caches, a poisoned step and the ops' step function on it."""
        _zero(static)
        step = _Step(case, pre, att)
        return step, _op_step(ops, model, case, static, pre, att, step)

    step, run = fresh()
    run(*inputs)
    torch.cuda.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want)

    step, run = fresh()
    compiled = torch.compile(run, fullgraph=True, dynamic=False)
    compiled(*inputs)
    torch.cuda.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want)

    step, run = fresh()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        run(*inputs)
    torch.cuda.synchronize()
    _zero(static)
    step.out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _assert_same(case, (step, static["k_cache"], static["v_cache"]), want)


def test_torch_op_errors_name_the_argument(models):
    ops, backend = _load_ops()
    case = CASES[2]
    model = models.get(case.compile_key)
    static, pre, att = _batch(model, case, seed=5)
    step = _Step(case, pre, att)
    pb = ops.binding(model, LAYER, "preprocess")
    w = pre["weights"]
    expected = ValueError if backend == "cpp" else attnc.ArgumentError
    with pytest.raises(expected, match="qkv"):
        torch.ops.attnc.preprocess(pb, pre["qkv"].half(), pre["slot_mapping"],
                                   static["k_cache"], static["v_cache"], pre["positions"],
                                   w["q_norm_weight"], w["k_norm_weight"], None, None,
                                   step.q_out, None)
    with pytest.raises(expected, match="k_scale"):
        torch.ops.attnc.preprocess(pb, pre["qkv"], pre["slot_mapping"],
                                   static["k_cache"], static["v_cache"], pre["positions"],
                                   w["q_norm_weight"], w["k_norm_weight"],
                                   torch.tensor(1.0, device="cuda"), None, step.q_out, None)
    assert torch.isnan(step.q_out).all()  # nothing launched
