"""Model.varlen_attention and Model.latent_gather without a GPU: kernels from
hand-written IR (attnc.compile_ir, NVRTC), their ABI, launches through the
project's fake CUDA driver (tensors faked through __cuda_array_interface__),
and the argument errors, each naming the argument and the rule."""

import ctypes

import pytest

import attnc
from attnc import _launch
from attnc_cpu_helpers import FAKE_DRIVER, FakeTensor, TYPESTR, fake_args

# The fake driver resolves kernels named attnc_test_*: the layer is named so.
LAYER = "attnc_test_mla"
HEADS, QK, V, R_P = 16, 192, 128, 576

IR = f"""
func.func @{LAYER}(%q: tensor<?x{HEADS}x{QK}xbf16>, %k: tensor<?x{HEADS}x{QK}xbf16>,
    %v: tensor<?x{HEADS}x{V}xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
    %cache: tensor<?x64x{R_P}xf8E4M3FN>, %s: tensor<f32>, %tables: tensor<?x?xi32>)
    -> (tensor<?x{HEADS}x{V}xbf16>, tensor<?x{R_P}xbf16>) {{
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {{softmax_scale = 0.1352 : f64}}
      : tensor<?x{HEADS}x{QK}xbf16>, tensor<?x{HEADS}x{QK}xbf16>, tensor<?x{HEADS}x{V}xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{HEADS}x{V}xbf16>
  %rows = attn.latent_gather %cache, %tables, %cu_k scale %s
      : tensor<?x64x{R_P}xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32>
        -> tensor<?x{R_P}xbf16>
  return %o, %rows : tensor<?x{HEADS}x{V}xbf16>, tensor<?x{R_P}xbf16>
}}
"""

# A bf16 latent cache of 16-token pages and a non-causal GQA attention (4
# query heads per KV head, 64/64).
IR_BF16 = f"""
func.func @{LAYER}(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>,
    %v: tensor<?x2x64xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
    %cache: tensor<?x16x{R_P}xf16>, %tables: tensor<?x?xi32>)
    -> (tensor<?x8x64xf16>, tensor<?x{R_P}xf16>) {{
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {{softmax_scale = 0.125 : f64, causal = false}}
      : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>
  %rows = attn.latent_gather %cache, %tables, %cu_k
      : tensor<?x16x{R_P}xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x{R_P}xf16>
  return %o, %rows : tensor<?x8x64xf16>, tensor<?x{R_P}xf16>
}}
"""

SIZES = {"num_tokens": 7, "num_kv_tokens": 11, "num_seqs": 3, "num_seqs_plus_one": 4,
         "num_blocks": 5, "max_blocks_per_seq": 4}

#: sm_90a's warp-specialised varlen kernel: tensor maps over key and value
#: after the views' strides (the runtime encodes them; callers pass NULL).
VARLEN_PARAMS = ["query", "key", "value", "query_token_stride", "query_head_stride",
                 "key_token_stride", "key_head_stride", "value_token_stride",
                 "value_head_stride", "key_map", "value_map", "cu_seqlens_q",
                 "cu_seqlens_k", "output", "workspace", "num_tokens", "num_seqs",
                 "num_kv_splits"]


class FakeState(ctypes.Structure):
    """FakeCudaState (test/unittests/Runtime/FakeCuda.h)."""

    _fields_ = [("init_calls", ctypes.c_int), ("modules_loaded", ctypes.c_int),
                ("modules_unloaded", ctypes.c_int), ("last_module_size", ctypes.c_size_t),
                ("launches", ctypes.c_int), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_memory_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("params", ctypes.c_void_p),
                ("max_dynamic_shared_memory_set", ctypes.c_int),
                ("major", ctypes.c_int), ("minor", ctypes.c_int),
                ("has_context", ctypes.c_bool)]


@pytest.fixture(scope="module")
def mla(fake_context):
    return attnc.compile_ir(IR, context=fake_context)


@pytest.fixture(scope="module")
def mla_bf16(fake_context):
    return attnc.compile_ir(IR_BF16, context=fake_context)


@pytest.fixture
def fake_state(fake_context):
    library = ctypes.CDLL(str(FAKE_DRIVER))
    library.attnc_fake_cuda_state.restype = ctypes.POINTER(FakeState)
    return library.attnc_fake_cuda_state().contents


def varlen_args(model, **override):
    args = fake_args(model.kernel(LAYER, "varlen_attention"), SIZES)
    args["out"] = args.pop("output")
    args.update(override)
    return args


def call_varlen(model, **override):
    args = varlen_args(model, **override)
    return model.varlen_attention(LAYER, args.pop("query"), args.pop("key"),
                                  args.pop("value"), **args)


def gather_args(model, **override):
    args = fake_args(model.kernel(LAYER, "latent_gather"), SIZES)
    args["out"] = args.pop("output")
    args.update(override)
    return args


def call_gather(model, **override):
    return model.latent_gather(LAYER, **gather_args(model, **override))


def error_of(function, model, **override):
    """The rule of the ArgumentError a call raises; checks that it names the
    one overridden argument."""
    with pytest.raises(attnc.ArgumentError) as info:
        function(model, **override)
    names = [k for k in override if k != "stream"]
    if len(names) == 1:
        assert info.value.argument == names[0], str(info.value)
    return info.value.rule


def strided(shape, typestr, itemsize, strides):
    """A fake view with the given element strides."""
    return FakeTensor(shape, typestr, strides=tuple(s * itemsize for s in strides))


# ---- the kernels and their ABI ----------------------------------------------------

def test_kernels_and_abi(mla):
    kinds = {k.kind: k for k in mla.kernels}
    assert set(kinds) == {"varlen_attention", "latent_gather"}
    varlen = kinds["varlen_attention"]
    assert varlen.name == f"{LAYER}__varlen_attention"
    assert varlen.params == VARLEN_PARAMS
    abi = {p["name"]: p for p in varlen.abi["params"]}
    assert abi["query"]["shape"] == ["num_tokens", HEADS, QK]
    assert abi["key"]["shape"] == ["num_kv_tokens", HEADS, QK]
    assert abi["value"]["shape"] == ["num_kv_tokens", HEADS, V]
    for name in ("query", "key", "value"):
        assert abi[name]["strides"] == [f"{name}_token_stride", f"{name}_head_stride", 1]
    assert "strides" not in abi["output"]  # the output is contiguous
    x, y, z = varlen.abi["grid"]
    # 16/16 heads: gqa_pack 1, one row per (token, head) pack, 128-row tiles
    assert x == {"value": "num_tokens", "multiplier": 1, "divisor": 128, "plus": "num_seqs"}
    assert y == HEADS and z["value"] == "num_kv_splits"
    # 192/128 bf16 on sm_90a: the warp-specialised form (a producer and two
    # consumer warpgroups, 2 stages of 128 keys, no split-KV), its tensor
    # maps boxes of 128 rows x 64 values of one head, 128-byte swizzled,
    # over [num_kv_tokens, heads, dim] (the launch scalar).
    assert "mma=wgmma_ws" in varlen.source
    assert "attnc::varlen_attention_ws<Config>(" in varlen.source
    assert varlen.abi["block"] == [384, 1, 1]
    assert varlen.abi["hints"]["max_kv_splits"] == 1
    assert varlen.abi["launch_scalars"] == ["num_kv_tokens"]
    for name, tensor in (("key_map", "key"), ("value_map", "value")):
        assert abi[name] == {"name": name, "kind": "tensor_map", "tensor": tensor,
                             "box": [128, 1, 64], "swizzle": 128}

    gather = kinds["latent_gather"]
    assert gather.params == ["latent_cache", "latent_cache_block_stride",
                             "latent_cache_token_stride", "block_tables", "cu_seqlens",
                             "cache_scale", "output", "num_tokens", "num_seqs",
                             "max_blocks_per_seq"]
    abi = {p["name"]: p for p in gather.abi["params"]}
    assert abi["latent_cache"]["dtype"] == "fp8_e4m3"
    assert abi["latent_cache"]["strides"] == ["latent_cache_block_stride",
                                              "latent_cache_token_stride", 1]
    assert abi["output"]["dtype"] == "bf16" and abi["output"]["shape"] == ["num_tokens", R_P]
    assert gather.abi["block"] == [256, 1, 1]
    assert gather.abi["grid"][0] == {"value": "num_tokens", "multiplier": 1, "divisor": 8}
    assert "static constexpr bool kFp8 = true;" in gather.source


def test_bf16_cache_and_gqa(mla_bf16):
    kinds = {k.kind: k for k in mla_bf16.kernels}
    gather = kinds["latent_gather"]
    assert "cache_scale" not in gather.params  # absent feature, absent argument
    assert "static constexpr bool kFp8 = false;" in gather.source
    assert "static constexpr int kBlockSize = 16;" in gather.source
    varlen = kinds["varlen_attention"]
    # group 4: the pack takes the whole group; grid y is the 2 KV heads
    x, y, _ = varlen.abi["grid"]
    assert x["multiplier"] == 4 and y == 2
    assert "static constexpr bool kCausal = false;" in varlen.source
    # 64/64 f16 takes wgmma too (pads of 64, v 64)
    assert "using act_t = __half;" in varlen.source


# ---- launches through the fake driver ---------------------------------------------

def test_varlen_launch_with_views(mla, fake_state, monkeypatch):
    """Strided key and value views: their strides reach the kernel's i64
    parameters; the grid is the ABI's rule for the batch."""
    lib = mla._lib  # the library the model launches through
    seen = {}
    real = lib.attnc_kernel_launch
    params = mla.kernel(LAYER, "varlen_attention").abi["params"]

    def spy(kernel, stream, args, num_args, scalars, num_scalars):
        values = {}
        for i, param in enumerate(params):
            if param["kind"] == "i64":
                values[param["name"]] = ctypes.c_int64.from_address(args[i]).value
            elif param["kind"] == "i32":
                values[param["name"]] = ctypes.c_int32.from_address(args[i]).value
        seen.update(values)
        return real(kernel, stream, args, num_args, scalars, num_scalars)

    monkeypatch.setattr(lib, "attnc_kernel_launch", spy)
    tk = SIZES["num_kv_tokens"]
    # k = [k_nope | k_pe] per head inside a wider per-token row, v the second
    # half of kv_b_proj's [tokens, H, 128 + 128] output.
    key = strided((tk, HEADS, QK), TYPESTR["bf16"], 2, (HEADS * 256, 256, 1))
    value = strided((tk, HEADS, V), TYPESTR["bf16"], 2, (HEADS * 256, 256, 1))
    out = call_varlen(mla, key=key, value=value, stream=7)
    assert out is not None
    assert seen["key_token_stride"] == HEADS * 256 and seen["key_head_stride"] == 256
    assert seen["value_token_stride"] == HEADS * 256 and seen["value_head_stride"] == 256
    assert seen["query_token_stride"] == HEADS * QK and seen["query_head_stride"] == QK
    assert seen["num_tokens"] == 7 and seen["num_seqs"] == 3
    abi = mla.kernel(LAYER, "varlen_attention").abi
    values = dict(SIZES, num_kv_splits=seen["num_kv_splits"])
    assert list(fake_state.grid) == [_launch.grid_dim(rule, values.get)
                                      for rule in abi["grid"]]
    assert fake_state.shared_memory_bytes == abi["dynamic_shared_memory_bytes"]
    assert fake_state.stream == 7
    # 7 rows of 3 sequences are far from a wave, but the warp-specialised
    # form does not split (max_kv_splits 1): the rule gives 1
    assert seen["num_kv_splits"] == 1


def test_varlen_explicit_splits(mla):
    call_varlen(mla, num_kv_splits=1)
    rule = error_of(call_varlen, mla, num_kv_splits=2)
    assert "max_kv_splits" in rule and "[1, 1]" in rule


def test_gather_launch(mla, fake_state):
    before = fake_state.launches
    call_gather(mla, stream=5)
    assert fake_state.launches == before + 1
    # ceil(7 rows / 8 rows a block)
    assert list(fake_state.grid) == [1, 1, 1]
    assert list(fake_state.block) == [256, 1, 1]


# ---- argument errors ----------------------------------------------------------------

def test_varlen_argument_errors(mla):
    tk = SIZES["num_kv_tokens"]
    # the head dim of a view must be contiguous
    bad = strided((tk, HEADS, QK), TYPESTR["bf16"], 2, (HEADS * QK * 2, QK * 2, 2))
    assert "innermost dim must be contiguous" in error_of(call_varlen, mla, key=bad)
    # a token stride that is not a multiple of 16 bytes
    bad = strided((tk, HEADS, V), TYPESTR["bf16"], 2, (HEADS * V + 4, V, 1))
    assert "16 bytes" in error_of(call_varlen, mla, value=bad)
    # key and value rows must agree (num_kv_tokens)
    bad = FakeTensor((tk + 1, HEADS, V), TYPESTR["bf16"])
    assert "num_kv_tokens" in error_of(call_varlen, mla, value=bad)
    # the two cumulative counts describe the same sequences
    bad = FakeTensor((SIZES["num_seqs_plus_one"] + 1,), TYPESTR["i32"])
    assert "num_seqs_plus_one" in error_of(call_varlen, mla, cu_seqlens_k=bad)
    # int32 only
    bad = FakeTensor((SIZES["num_seqs_plus_one"],), TYPESTR["i64"])
    error_of(call_varlen, mla, cu_seqlens_q=bad)
    # the output has the query's rows and v_head_dim, and is named `out`
    bad = FakeTensor((7, HEADS, QK), TYPESTR["bf16"])
    assert "128" in error_of(call_varlen, mla, out=bad)
    # a head count other than the kernel's
    bad = FakeTensor((7, HEADS // 2, QK), TYPESTR["bf16"])
    error_of(call_varlen, mla, query=bad)


def test_gather_argument_errors(mla, mla_bf16):
    # fp8 cache: cache_scale is required
    rule = error_of(call_gather, mla, cache_scale=None)
    assert "fp8" in rule or "required" in rule or "missing" in rule
    # bf16 cache: cache_scale is a feature the kernel lacks
    scale = FakeTensor((), TYPESTR["f32"])
    with pytest.raises(attnc.ArgumentError) as info:
        mla_bf16.latent_gather(LAYER, **gather_args(
            mla_bf16, cache_scale=scale, out=FakeTensor((7, R_P), TYPESTR["f16"])))
    assert info.value.argument == "cache_scale"
    # the row width is the cache's
    bad = FakeTensor((7, R_P - 8), TYPESTR["bf16"])
    assert str(R_P) in error_of(call_gather, mla, out=bad)
    # an output of another dtype
    bad = FakeTensor((7, R_P), TYPESTR["f32"])
    error_of(call_gather, mla, out=bad)
    # without out, the row count is on the device: torch tensors only
    rule = error_of(call_gather, mla, out=None)
    assert "cu_seqlens[-1]" in rule


# ---- IR the kernels do not take -------------------------------------------------------

def test_varlen_refuses_the_cuda_core_form(context):
    """v_head_dim 512 would take the CUDA-core form, which reads pages only."""
    ir = IR.replace(f"x{V}xbf16", "x512xbf16")
    with pytest.raises(attnc.ConfigError) as info:
        attnc.compile_ir(ir, context=context)
    assert "varlen_attention has the tensor-core form only" in str(info.value)
