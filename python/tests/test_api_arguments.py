"""Argument checking and launching, with tensors faked through
__cuda_array_interface__ (invented pointers) and the project's fake CUDA
driver, so no GPU is needed. Every error names the argument and the rule."""

import ctypes

import pytest

import attnc
from attnc import _launch, _library
from attnc._streams import resolve_stream
from attnc_cpu_helpers import (FAKE_DRIVER, FAKE_DRIVER_NO_DEVICE, LAYER, PLAIN, SIZES,
                               FakeTensor, fake_args)



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


@pytest.fixture
def fake_state(fake_context):
    library = ctypes.CDLL(str(FAKE_DRIVER))  # the same handle the runtime opened
    library.attnc_fake_cuda_state.restype = ctypes.POINTER(FakeState)
    return library.attnc_fake_cuda_state().contents


def pre_args(model, **override):
    return fake_args(model.kernel(LAYER, "preprocess"), SIZES, **override)


def att_args(model, **override):
    args = fake_args(model.kernel(LAYER, "attention"), SIZES, **override)
    out = args.pop("output")
    args.setdefault("out", out)
    return args


def call_pre(model, **override):
    args = pre_args(model, **override)
    qkv = args.pop("qkv")
    return model.preprocess(LAYER, qkv, **args)


def call_att(model, **override):
    args = att_args(model, **override)
    query = args.pop("query")
    return model.attention(LAYER, query, **args)


def error_of(function, model, **override):
    """The rule of the ArgumentError a call raises; checks that the error
    names the one overridden argument (when exactly one is)."""
    with pytest.raises(attnc.ArgumentError) as info:
        function(model, **override)
    names = [k for k in override if k != "stream"]
    if len(names) == 1:
        assert info.value.argument == names[0], str(info.value)
    assert str(info.value) == f"invalid_argument: {info.value.argument}: {info.value.rule}"
    return info.value.rule


# ---- launches through the fake driver -------------------------------------------

def test_preprocess_launch(gated, fake_state):
    before = fake_state.launches
    args = pre_args(gated)
    qkv = args.pop("qkv")
    q_out, gate_out = gated.preprocess(LAYER, qkv, stream=1234, **args)
    assert q_out is args["q_out"] and gate_out is args["gate_out"]
    assert fake_state.launches == before + 1
    abi = gated.kernel(LAYER, "preprocess").abi
    rule = abi["grid"][0]
    assert rule["value"] == "num_tokens"
    assert fake_state.grid[0] == -(-7 * rule["multiplier"] // rule["divisor"])
    assert list(fake_state.block) == abi["block"]
    assert fake_state.stream == 1234


def test_attention_launch(gated, fake_state):
    args = att_args(gated)
    query = args.pop("query")
    out = gated.attention(LAYER, query, stream=99, **args)
    assert out is args["out"]
    abi = gated.kernel(LAYER, "attention").abi
    assert fake_state.shared_memory_bytes == abi["dynamic_shared_memory_bytes"]
    # the ABI's grid rule: x is num_tokens, or, with split-KV,
    # ceil_div(num_tokens * P, BM) + num_seqs; z is num_kv_splits
    values = dict(SIZES, num_kv_splits=gated.attention_splits(LAYER, 7, 3))
    assert list(fake_state.grid) == [_launch.grid_dim(rule, values.get)
                                      for rule in abi["grid"]]
    assert fake_state.stream == 99


def test_parameters_are_marshalled_by_name(gated, monkeypatch):
    """The launch's args array holds each tensor's pointer at its ABI index and
    the derived scalars as int32."""
    lib = _library.library()
    seen = {}
    real = lib.attnc_kernel_launch

    def spy(kernel, stream, args, num_args, scalars, num_scalars):
        values = []
        for i, param in enumerate(gated.kernel(LAYER, "attention").abi["params"]):
            if param["kind"] == "tensor_map":
                values.append(args[i])  # NULL: the launch encodes the map
            elif param["kind"] == "pointer":
                values.append(ctypes.c_void_p.from_address(args[i]).value)
            elif param["kind"] == "i64":
                values.append(ctypes.c_int64.from_address(args[i]).value)
            else:
                values.append(ctypes.c_int32.from_address(args[i]).value)
        seen["values"], seen["num_args"] = values, num_args
        return real(kernel, stream, args, num_args, scalars, num_scalars)

    monkeypatch.setattr(lib, "attnc_kernel_launch", spy)
    args = att_args(gated)
    query = args.pop("query")
    gated.attention(LAYER, query, **args)
    params = gated.kernel(LAYER, "attention").abi["params"]
    by_name = dict(args, query=query, output=args["out"])
    scalars = dict(SIZES, num_kv_splits=gated.attention_splits(LAYER, 7, 3))
    # the caches' strides (contiguous fakes): block, token and head strides
    for cache in ("k_cache", "v_cache"):
        _, block_size, heads, dim = by_name[cache].__cuda_array_interface__["shape"]
        scalars.update({f"{cache}_block_stride": block_size * heads * dim,
                        f"{cache}_token_stride": heads * dim,
                        f"{cache}_head_stride": dim})
    # a tensor map's slot is NULL (the runtime encodes the map from the
    # tensor, its strides and the num_blocks launch scalar)
    expected = [None if p["kind"] == "tensor_map"
                else by_name[p["name"]].ptr if p["kind"] == "pointer" else scalars[p["name"]]
                for p in params]
    assert seen["values"] == expected
    assert seen["num_args"] == len(params)


def test_scalars_come_from_the_tensors(gated):
    _, plan = gated._plan(LAYER, "attention")
    given = att_args(gated)
    given["output"] = given.pop("out")
    # the caches' strides too: k [5, 16, 2, 192] and v [5, 16, 2, 128]
    expected = {"num_tokens": 7, "num_seqs": 3, "max_blocks_per_seq": 4,
                "k_cache_block_stride": 16 * 2 * 192, "k_cache_token_stride": 2 * 192,
                "k_cache_head_stride": 192, "v_cache_block_stride": 16 * 2 * 128,
                "v_cache_token_stride": 2 * 128, "v_cache_head_stride": 128}
    if plan.takes_kv_splits:
        # no tensor carries num_kv_splits: the caller binds it (Model.attention
        # by the split rule)
        with pytest.raises(attnc.ArgumentError) as info:
            _launch.prepare_launch(plan, given)
        assert info.value.argument == "num_kv_splits"
        args, scalars, launch_scalars, device = _launch.prepare_launch(
            plan, given, derive=lambda b: _launch.bind_kv_splits(plan, b))
        expected["num_kv_splits"] = gated.attention_splits(LAYER, 7, 3)
    else:
        args, scalars, launch_scalars, device = _launch.prepare_launch(plan, given)
    assert scalars == expected
    assert device is None  # __cuda_array_interface__ carries no device


def test_zero_tokens(plain, fake_state):
    """An empty batch (null pointers are fine for empty tensors) launches
    nothing and succeeds."""
    before = fake_state.launches
    sizes = dict(SIZES, num_tokens=0)
    args = fake_args(plain.kernel(LAYER, "preprocess"), sizes)
    for name in ("qkv", "slot_mapping", "q_out"):
        shape = args[name].__cuda_array_interface__["shape"]
        args[name] = FakeTensor(shape, args[name].__cuda_array_interface__["typestr"], ptr=0)
    qkv = args.pop("qkv")
    plain.preprocess(LAYER, qkv, **args)
    assert fake_state.launches == before


def test_layer_by_unknown_name(plain):
    with pytest.raises(attnc.ArgumentError, match="layer: no layer kind 'nope'"):
        plain.preprocess("nope", None, slot_mapping=None, k_cache=None, v_cache=None)
    with pytest.raises(attnc.ArgumentError, match="layer: expected a layer kind"):
        plain.attention(1.5, None, k_cache=None, v_cache=None, block_tables=None,
                        seq_lens=None, query_start_loc=None)


# ---- features: present must be passed, absent must not ------------------------

@pytest.mark.parametrize("name, feature", [
    ("q_norm_weight", "q/k norm"), ("k_norm_weight", "q/k norm"),
    ("positions", "rope"), ("gate_out", "output gate"), ("k_scale", "fp8 cache"),
])
def test_preprocess_feature_absent(plain, name, feature):
    message = error_of(call_pre, plain, **{name: FakeTensor((64,), "<V2")})
    assert message.startswith(f"this model's kernel has no {feature}")


def test_exact_message_for_missing_norm(plain):
    message = error_of(call_pre, plain, q_norm_weight=FakeTensor((64,), "<V2"))
    assert message == "this model's kernel has no q/k norm"


@pytest.mark.parametrize("name", ["positions", "q_norm_weight", "k_norm_weight"])
def test_preprocess_feature_missing(gated, name):
    message = error_of(call_pre, gated, **{name: None})
    assert message.startswith("missing: this model's kernel has")
    assert name in message


def test_outputs_are_allocated_only_with_torch(gated):
    try:
        import torch
        usable = torch.cuda.is_available()
    except ImportError:
        usable = False
    if not usable:
        for name in ("gate_out", "q_out"):
            assert error_of(call_pre, gated, **{name: None}) == \
                "not given, and allocating it needs torch (pip install torch), or pass it"
        return
    q_out, gate_out = call_pre(gated, gate_out=None)  # allocated on the current device
    assert isinstance(gate_out, torch.Tensor)
    assert tuple(gate_out.shape) == (7, 16, 128) and gate_out.dtype == torch.bfloat16


@pytest.mark.parametrize("name, feature", [("sinks", "attention sinks"),
                                           ("gate", "output gate"),
                                           ("v_scale", "fp8 cache")])
def test_attention_feature_absent(plain, name, feature):
    message = error_of(call_att, plain, **{name: FakeTensor((8,), "<f4")})
    assert message.startswith(f"this model's kernel has no {feature}")


@pytest.mark.parametrize("name", ["sinks", "gate"])
def test_attention_feature_missing(gated, name):
    with pytest.raises(attnc.ArgumentError) as info:
        call_att(gated, **{name: None})
    assert info.value.argument == name
    assert info.value.rule.startswith("missing: this model's kernel has")


def test_fp8_scales(fp8, fake_state):
    before = fake_state.launches
    call_pre(fp8)
    call_att(fp8)
    assert fake_state.launches == before + 2
    for call in (call_pre, call_att):
        with pytest.raises(attnc.ArgumentError) as info:
            call(fp8, k_scale=None)
        assert info.value.argument == "k_scale"
    # shape [] or [1]
    call_pre(fp8, v_scale=FakeTensor((1,), "<f4"))
    assert error_of(call_pre, fp8, v_scale=FakeTensor((2,), "<f4")) == \
        "must be a scalar tensor (shape [] or [1]), got shape [2]"
    assert error_of(call_pre, fp8, k_scale=FakeTensor((), "<f2")).startswith(
        "dtype is f16 (torch.float16), expected f32 (torch.float32)")
    # an fp8 cache given as raw bytes, or a bf16 cache given to an fp8 kernel
    assert "expected fp8_e4m3" in error_of(call_pre, fp8,
                                           k_cache=FakeTensor((5, 16, 8, 64), "<V2"))


# ---- shapes, symbols, dtypes, layout ------------------------------------------

def test_shape_rules(gated):
    width = gated.kernel(LAYER, "preprocess").abi["params"][0]["shape"][1]
    assert error_of(call_pre, gated, qkv=FakeTensor((7, width + 1), "<V2")) == \
        f"shape [7, {width + 1}] does not match [num_tokens, {width}]: dim 1 is " \
        f"{width + 1}, expected {width}"
    assert error_of(call_pre, gated, qkv=FakeTensor((7,), "<V2")) == \
        f"expected 2 dims [num_tokens, {width}], got 1 dims [7]"
    assert error_of(call_pre, gated, slot_mapping=FakeTensor((8,), "<i8")) == \
        "shape [8] does not match [num_tokens]: dim 0 is 8, but num_tokens is 7 " \
        "(from qkv dim 0)"
    assert error_of(call_pre, gated, v_cache=FakeTensor((6, 16, 2, 128), "<V2")) == \
        "shape [6, 16, 2, 128] does not match [num_blocks, 16, 2, 128]: dim 0 is 6, " \
        "but num_blocks is 5 (from k_cache dim 0)"
    assert "dim 1 is 64, expected 16" in error_of(
        call_pre, gated, k_cache=FakeTensor((5, 64, 2, 192), "<V2"))


def test_attention_symbols(gated):
    assert error_of(call_att, gated, seq_lens=FakeTensor((2,), "<i4")) == \
        "shape [2] does not match [num_seqs]: dim 0 is 2, but num_seqs is 3 " \
        "(from block_tables dim 0)"
    message = error_of(call_att, gated, query_start_loc=FakeTensor((3,), "<i4"))
    assert message.startswith("shape [3] does not match [num_seqs_plus_one]: dim 0 "
                              "is 3, but num_seqs_plus_one is 4")
    with pytest.raises(attnc.ArgumentError) as info:
        call_att(gated, out=FakeTensor((7, 16, 64), "<V2"))
    assert info.value.argument == "out"  # the Python name, not the kernel's "output"
    assert "dim 2 is 64, expected 128" in info.value.rule


@pytest.mark.parametrize("name, typestr, got, expected", [
    ("qkv", "<f2", "f16 (torch.float16)", "bf16 (torch.bfloat16)"),
    ("slot_mapping", "<i4", "i32 (torch.int32)", "i64 (torch.int64)"),
    ("positions", "<f4", "f32 (torch.float32)", "i64 (torch.int64)"),
])
def test_dtype_rules(gated, name, typestr, got, expected):
    shape = pre_args(gated)[name].__cuda_array_interface__["shape"]
    assert error_of(call_pre, gated, **{name: FakeTensor(shape, typestr)}) == \
        f"dtype is {got}, expected {expected}"


def test_rows_without_sequences(gated):
    empty = dict(block_tables=FakeTensor((0, 4), "<i4"), seq_lens=FakeTensor((0,), "<i4"),
                 query_start_loc=FakeTensor((1,), "<i4"))
    with pytest.raises(attnc.ArgumentError) as info:
        call_att(gated, **empty)
    assert info.value.argument == "seq_lens"
    assert info.value.rule == "no sequences (num_seqs is 0), but there are 7 query rows"


def test_block_tables_must_be_int32(gated):
    assert error_of(call_att, gated, block_tables=FakeTensor((3, 4), "<i8")) == \
        "dtype is i64 (torch.int64), expected i32 (torch.int32)"


def test_contiguity(gated):
    # q_out [7, 16, 192] with the first two dims transposed (byte strides)
    strides = (192 * 2, 7 * 192 * 2, 2)
    message = error_of(call_pre, gated, q_out=FakeTensor((7, 16, 192), "<V2",
                                                         strides=strides))
    assert message == ("must be C-contiguous: strides [192, 1344, 1] (in elements) "
                       "for shape [7, 16, 192], expected [3072, 192, 1] (call "
                       ".contiguous())")
    # explicit C strides, and any stride on a size-1 dim, are fine
    call_pre(gated, q_out=FakeTensor((7, 16, 192), "<V2", strides=(6144, 384, 2)))
    call_att(gated, seq_lens=FakeTensor((3,), "<i4", strides=(4,)))
    one = dict(SIZES, num_tokens=1)
    args = fake_args(gated.kernel(LAYER, "preprocess"), one)
    args["q_out"] = FakeTensor((1, 16, 192), "<V2", strides=(12345 * 2, 384, 2))
    qkv = args.pop("qkv")
    gated.preprocess(LAYER, qkv, **args)


def test_alignment(gated):
    message = error_of(call_pre, gated, k_norm_weight=FakeTensor((192,), "<V2",
                                                                ptr=(1 << 40) + 8))
    assert message.startswith("data pointer 0x10000000008 is not 16-byte aligned")


def test_read_only_outputs_and_caches(gated):
    for name in ("q_out", "k_cache"):
        shape = pre_args(gated)[name].__cuda_array_interface__["shape"]
        assert error_of(call_pre, gated, **{name: FakeTensor(shape, "<V2", readonly=True)}) \
            == "is read-only, but the kernel writes it"
    # inputs may be read-only
    call_pre(gated, qkv=FakeTensor((7, pre_args(gated)["qkv"].__cuda_array_interface__[
        "shape"][1]), "<V2", readonly=True))


def test_interface_errors(gated):
    class NoDevice:
        pass

    assert error_of(call_pre, gated, qkv=[1, 2, 3]).startswith(
        "expected a CUDA tensor (torch.Tensor, an object with "
        "__cuda_array_interface__ or __dlpack__), got list")
    assert error_of(call_pre, gated, qkv=NoDevice()).endswith("got NoDevice")
    big_endian = FakeTensor((7,), ">i8")
    assert error_of(call_pre, gated, slot_mapping=big_endian) == \
        "typestr '>i8' is not a little-endian type"
    assert error_of(call_pre, gated, slot_mapping=FakeTensor((7,), "<c8")) == \
        "unsupported typestr '<c8'"
    masked = FakeTensor((7,), "<i8")
    masked.__cuda_array_interface__["mask"] = object()
    assert error_of(call_pre, gated, slot_mapping=masked).startswith("masked arrays")
    future = FakeTensor((7,), "<i8", version=9)
    assert "version 9" in error_of(call_pre, gated, slot_mapping=future)
    odd = FakeTensor((7,), "<i8", strides=(12,))
    assert "not multiples of the element size 8" in error_of(call_pre, gated,
                                                             slot_mapping=odd)
    v2 = FakeTensor((7,), "<i8", version=2)
    call_pre(gated, slot_mapping=v2)


def test_dlpack_without_torch(gated):
    class OnlyDlpack:
        def __dlpack__(self, stream=None):
            raise RuntimeError("should not be called without torch")

        def __dlpack_device__(self):
            return (2, 0)

    try:
        import torch  # noqa: F401
    except ImportError:
        message = error_of(call_pre, gated, positions=OnlyDlpack())
        assert message.startswith("OnlyDlpack offers only __dlpack__, and converting "
                                  "it needs torch")
    else:
        message = error_of(call_pre, gated, positions=OnlyDlpack())
        assert message.startswith("__dlpack__ conversion failed")


# ---- streams ----------------------------------------------------------------

def test_stream_forms(gated, fake_state):
    class CudaPythonStream:
        def __cuda_stream__(self):
            return (0, 4242)

    class HasCudaStream:
        cuda_stream = 77

    for stream, handle in ((CudaPythonStream(), 4242), (HasCudaStream(), 77), (5, 5),
                           (0, None)):
        call_pre(gated, stream=stream)
        assert fake_state.stream == handle
    with pytest.raises(attnc.ArgumentError, match="stream: expected None"):
        call_pre(gated, stream="default")
    with pytest.raises(attnc.ArgumentError, match="stream: handle must be >= 0"):
        call_pre(gated, stream=-1)


def test_default_stream_without_torch():
    import sys
    if "torch" in sys.modules:
        pytest.skip("torch is imported: the default is its current stream")
    assert resolve_stream(None, None) == 0


# ---- no driver --------------------------------------------------------------------

def test_launch_without_a_driver(cache_dir, tmp_path):
    context = attnc.Context(cache_dir=cache_dir,
                            cuda_driver_library=tmp_path / "libcuda.so.1")
    model = attnc.compile(PLAIN, context=context)
    with pytest.raises(attnc.NoDriverError) as info:
        call_pre(model)
    assert info.value.status == "no_driver"
    assert "libcuda" in info.value.message or "driver" in info.value.message.lower()


def test_launch_on_this_machine(context):
    """With the machine's own driver: NoDriverError where there is none (CI),
    a CUDA error for the invented pointers never happens because nothing
    launches with them there."""
    model = attnc.compile(PLAIN, context=context)
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        with pytest.raises(attnc.NoDriverError):
            call_pre(model)
    else:
        pytest.skip("this machine has a CUDA driver; fake pointers must not launch")


def test_driver_without_a_device(cache_dir):
    if not FAKE_DRIVER_NO_DEVICE.is_file():
        pytest.skip("fake no-device driver not built")
    context = attnc.Context(cache_dir=cache_dir, cuda_driver_library=FAKE_DRIVER_NO_DEVICE)
    model = attnc.compile(PLAIN, context=context)
    with pytest.raises((attnc.NoDriverError, attnc.CudaError)):
        call_pre(model)
