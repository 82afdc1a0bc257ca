"""The Python API on a GPU: streams, tensor interop (torch, CuPy through
__cuda_array_interface__, DLPack), argument errors with real tensors, and
preprocess -> attention end to end against the references."""

import pytest

import attnc
from attnc_gpu_cases import LAYER, NORM_EPS, PreprocessCase, rope_parameters
from attnc_gpu_reference import (assert_close, attention_reference, fp8_quantize,
                                 fused_columns, paged_sequences, preprocess_reference,
                                 torch, torch_dtype)
from test_preprocess import make_inputs

SMALL = PreprocessCase((128, 128), (16, 2), "rms", "neox", "qkvg", "bf16", "same", 300, 16)


def _seeded(seed=0):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return g


def _preprocess_args(models, case=SMALL, seed=0):
    model = models.get(case.compile_key)
    (dqk, dv), (_, hkv) = case.dims, case.heads
    qkv, positions, slots, num_blocks, weights = make_inputs(case, _seeded(seed))
    dtype = torch_dtype(case.dtype)
    k_cache = torch.zeros(num_blocks, case.block_size, hkv, dqk, dtype=dtype, device="cuda")
    v_cache = torch.zeros(num_blocks, case.block_size, hkv, dv, dtype=dtype, device="cuda")
    return model, qkv, dict(positions=positions, slot_mapping=slots, k_cache=k_cache,
                            v_cache=v_cache, **weights)


def test_side_stream(models):
    """stream= a torch.cuda.Stream; and stream=None inside `with
    torch.cuda.stream(s)` uses s (torch's current stream)."""
    model, qkv, kwargs = _preprocess_args(models)
    q_ref, g_ref = model.preprocess(LAYER, qkv, **kwargs)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        q1, g1 = model.preprocess(LAYER, qkv, **kwargs)           # current = side
    q2, g2 = model.preprocess(LAYER, qkv, stream=side, **kwargs)
    q3, g3 = model.preprocess(LAYER, qkv, stream=side.cuda_stream, **kwargs)
    side.synchronize()
    for q, g in ((q1, g1), (q2, g2), (q3, g3)):
        assert torch.equal(q, q_ref) and torch.equal(g, g_ref)


def test_torch_errors_name_the_argument(models):
    model, qkv, kwargs = _preprocess_args(models)
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv.cpu(), **kwargs)
    assert info.value.argument == "qkv" and info.value.rule == \
        "must be on a CUDA device, got cpu"
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv.t().contiguous().t(), **kwargs)
    assert info.value.argument == "qkv" and "C-contiguous" in info.value.rule
    misaligned = torch.empty(qkv.numel() + 1, dtype=qkv.dtype, device="cuda")[1:]
    misaligned = misaligned.view(qkv.shape)
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, misaligned, **kwargs)
    assert info.value.argument == "qkv" and "16-byte aligned" in info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv, **dict(kwargs, slot_mapping=kwargs["slot_mapping"].int()))
    assert info.value.rule == "dtype is i32 (torch.int32), expected i64 (torch.int64)"
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv, **dict(kwargs, k_scale=torch.tensor(1.0, device="cuda")))
    assert info.value.rule == "this model's kernel has no fp8 cache"
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv.half(), **kwargs)
    assert info.value.argument == "qkv" and info.value.rule.startswith("dtype is f16")


@pytest.mark.skipif(torch is None or torch.cuda.device_count() < 2,
                    reason="needs two GPUs")
def test_tensors_on_two_devices(models):
    model, qkv, kwargs = _preprocess_args(models)
    with pytest.raises(attnc.ArgumentError) as info:
        model.preprocess(LAYER, qkv, **dict(kwargs, k_cache=kwargs["k_cache"].to("cuda:1")))
    assert info.value.argument == "k_cache" and "cuda:1" in info.value.rule


def test_cupy_and_dlpack(models):
    """Index tensors through __cuda_array_interface__ (CuPy) and through an
    object that offers only __dlpack__: results match the torch ones."""
    model, qkv, kwargs = _preprocess_args(models)
    q_ref, g_ref = model.preprocess(LAYER, qkv, **kwargs)

    class OnlyDlpack:
        def __init__(self, tensor):
            self._tensor = tensor

        def __dlpack__(self, stream=None, **_):
            return self._tensor.__dlpack__(stream=stream) if stream is not None \
                else self._tensor.__dlpack__()

        def __dlpack_device__(self):
            return self._tensor.__dlpack_device__()

    q, g = model.preprocess(LAYER, OnlyDlpack(qkv), **dict(
        kwargs, positions=OnlyDlpack(kwargs["positions"])))
    torch.cuda.synchronize()
    assert torch.equal(q, q_ref) and torch.equal(g, g_ref)

    cupy = pytest.importorskip("cupy")
    slots = cupy.asarray(kwargs["slot_mapping"])  # zero-copy through DLPack
    positions = cupy.asarray(kwargs["positions"])
    q_out = cupy.full((qkv.shape[0], 16, 128), cupy.nan, dtype=cupy.float16)
    q, g = model.preprocess(LAYER, qkv, **dict(kwargs, slot_mapping=slots,
                                               positions=positions))
    torch.cuda.synchronize()
    assert torch.equal(q, q_ref)
    with pytest.raises(attnc.ArgumentError) as info:  # CuPy has no bf16: f16 is wrong
        model.preprocess(LAYER, qkv, q_out=q_out, **kwargs)
    assert info.value.argument == "q_out" and "expected bf16" in info.value.rule


def test_zero_tokens(models):
    model, qkv, kwargs = _preprocess_args(models)
    empty = dict(kwargs, positions=kwargs["positions"][:0],
                 slot_mapping=kwargs["slot_mapping"][:0])
    q, g = model.preprocess(LAYER, qkv[:0], **empty)
    torch.cuda.synchronize()
    assert q.shape == (0, 16, 128) and g.shape == (0, 16, 128)


# ---- end to end: preprocess writes the cache, attention reads it -------------------

END_TO_END = [
    # Qwen3-Next-like: gemma norm, partial rope, interleaved gate
    PreprocessCase((256, 256), (16, 2), "gemma", "partial", "interleaved", "bf16", "same",
                   0, 16),
    # MLA-like with an fp8 cache, fp16 activations, 64-token pages
    PreprocessCase((192, 128), (32, 4), "none", "mla", "none", "fp16", "fp8", 0, 64),
    # tiny odd dims with q/k norm and gptj rope
    PreprocessCase((2, 3), (8, 1), "rms", "gptj", "qkvg", "bf16", "same", 0, 16),
]


@pytest.mark.parametrize("case", END_TO_END, ids=lambda c: c.id())
def test_preprocess_then_attention(models, case):
    """Every sequence's tokens go through preprocess (positions 0..len-1,
    slots from its block table), then attention runs on the last q_len rows
    of each: checks that the two kernels agree on the cache layout and that
    q_out is the attention's query."""
    g = _seeded(7)
    model = models.get(case.compile_key)
    (dqk, dv), (hq, hkv) = case.dims, case.heads
    dtype = torch_dtype(case.dtype)
    sequences = [(1, 300), (40, 97), (1, 1), (130, 130)]
    _, _, _, _, width = fused_columns(hq, hkv, dqk, dv, case.gate)
    block_size = case.block_size
    tables, positions, slots, num_blocks = paged_sequences(
        [kv for _, kv in sequences], block_size, g)
    total = positions.numel()
    qkv = torch.randn(total, width, device="cuda", generator=g).to(dtype)
    weights = {}
    if case.norm != "none":
        weights = {n: (1.0 + 0.1 * torch.randn(dqk, device="cuda", generator=g)).to(dtype)
                   for n in ("q_norm_weight", "k_norm_weight")}
    cache_dtype = case.cache_dtype
    k_cache = torch.zeros(num_blocks, block_size, hkv, dqk, dtype=torch_dtype(cache_dtype),
                          device="cuda")
    v_cache = torch.zeros(num_blocks, block_size, hkv, dv, dtype=torch_dtype(cache_dtype),
                          device="cuda")
    scales = {}
    if case.cache == "fp8":
        scales = dict(k_scale=torch.tensor(0.05, device="cuda"),
                      v_scale=torch.tensor(0.05, device="cuda"))
    result = model.preprocess(LAYER, qkv, positions=positions, slot_mapping=slots,
                              k_cache=k_cache, v_cache=v_cache, **weights, **scales)
    q_out, gate_out = result if case.gate != "none" else (result, None)

    # attention over the last q_len rows of each sequence
    starts = torch.tensor([0] + [kv for _, kv in sequences], device="cuda").cumsum(0)
    rows = torch.cat([torch.arange(int(starts[s + 1]) - q, int(starts[s + 1]), device="cuda")
                      for s, (q, _) in enumerate(sequences)])
    q_lens = torch.tensor([q for q, _ in sequences], dtype=torch.int32, device="cuda")
    qsl = torch.zeros(len(sequences) + 1, dtype=torch.int32, device="cuda")
    qsl[1:] = q_lens.cumsum(0)
    seq_lens = torch.tensor([kv for _, kv in sequences], dtype=torch.int32, device="cuda")
    gate = gate_out[rows].contiguous() if gate_out is not None else None
    out = model.attention(LAYER, q_out[rows].contiguous(), k_cache=k_cache, v_cache=v_cache,
                          block_tables=tables, seq_lens=seq_lens, query_start_loc=qsl,
                          gate=gate, **scales)
    torch.cuda.synchronize()

    rope = rope_parameters(case.rope, dqk)
    style, rotary_dim, offset, theta, scaling = rope
    ref = preprocess_reference(
        qkv, hq=hq, hkv=hkv, dqk=dqk, dv=dv, gate=case.gate, norm=case.norm,
        norm_eps=NORM_EPS, q_norm_weight=weights.get("q_norm_weight"),
        k_norm_weight=weights.get("k_norm_weight"), rope=style, rotary_dim=rotary_dim,
        rotary_offset=offset, theta=theta, scaling=scaling, positions=positions)
    # what the kernels store: q in the activation dtype, k/v in the cache's
    q_ref = ref.q.to(dtype).float()
    if case.cache == "fp8":
        k_ref = fp8_quantize(ref.k, 0.05).float() * 0.05
        v_ref = fp8_quantize(ref.v, 0.05).float() * 0.05
    else:
        k_ref, v_ref = ref.k.to(dtype).float(), ref.v.to(dtype).float()
    queries, keys, values = [], [], []
    for s, (q, kv) in enumerate(sequences):
        begin, end = int(starts[s]), int(starts[s + 1])
        queries.append(q_ref[end - q:end])
        keys.append(k_ref[begin:end])
        values.append(v_ref[begin:end])
    gate_ref = ref.gate.to(dtype)[rows] if ref.gate is not None else None
    expected = attention_reference(queries, keys, values, softmax_scale=dqk ** -0.5,
                                   gate=gate_ref, with_magnitude=True)
    assert_close("out", out, expected, case.dtype)


_VARLEN_IR = """
func.func @layer(%q: tensor<?x8x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                 %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>, tensor<?xi32>
      -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
"""


def test_context_collected_during_a_graph_capture(tmp_path):
    """A context whose modules are loaded, garbage-collected while a stream
    captures a CUDA graph (an engine's capture, Python's collector at any
    time): its modules unload without invalidating the capture (the relaxed
    capture mode around cuModuleUnload), and the graph replays the same
    output as the plain launch."""
    import gc
    import warnings

    g = _seeded(7)
    tokens = 300
    q = torch.randn(tokens, 8, 64, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(tokens, 2, 64, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(tokens, 2, 64, device="cuda", dtype=torch.bfloat16, generator=g)
    cu = torch.tensor([0, 100, tokens], device="cuda", dtype=torch.int32)
    doomed_context = attnc.Context(cache_dir=str(tmp_path / "doomed"))
    # (another scale: another kernel, so that no module is shared)
    doomed = attnc.compile_ir(_VARLEN_IR.replace("0.125", "0.1"), context=doomed_context)
    doomed.varlen_attention("layer", q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu)  # loads its module
    live = attnc.compile_ir(_VARLEN_IR, context=attnc.Context(cache_dir=str(tmp_path / "live")))
    out = torch.full((tokens, 8, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    live.varlen_attention("layer", q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, out=out)
    torch.cuda.synchronize()
    expected = out.clone()
    assert torch.isfinite(expected).all()
    out.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.cuda.graph(graph):
            live.varlen_attention("layer", q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, out=out)
            del doomed, doomed_context
            gc.collect()
    assert not [w for w in caught if "unload" in str(w.message)], [str(w.message) for w in caught]
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, expected)
