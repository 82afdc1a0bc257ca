"""The paged caches as strided views of an engine's own allocation (issue
19, "Engine cache layouts"): the ABI's strides, the checks of
_launch.check_strides and the stride parameters a launch passes, with
tensors faked through __cuda_array_interface__ and the fake CUDA driver
(no GPU)."""

import ctypes

import pytest

import attnc
from attnc import _launch
from attnc._tensors import TensorArg
from attnc_cpu_helpers import CACHE_STRIDES, LAYER, SIZES, FakeTensor, fake_args

BLOCKS, BLOCK_SIZE = 5, 16
BASE = 1 << 40  # a 16-byte aligned invented pointer


def view(shape, strides, *, offset=0, typestr="<V2", itemsize=2):
    """A fake tensor of `shape` with element `strides`, `offset` elements
    into the allocation at BASE."""
    return FakeTensor(shape, typestr, ptr=BASE + offset * itemsize,
                      strides=tuple(s * itemsize for s in strides))


def vllm_layout(heads, dim, **kw):
    """K and V of one [num_blocks, 2, block_size, heads, dim] tensor: t[:, 0]
    and t[:, 1] (vLLM's FlashAttention backend)."""
    shape = (BLOCKS, BLOCK_SIZE, heads, dim)
    strides = (2 * BLOCK_SIZE * heads * dim, heads * dim, dim, 1)
    return (view(shape, strides, **kw),
            view(shape, strides, offset=BLOCK_SIZE * heads * dim, **kw))


def packed_layout(heads, dqk, dv):
    """K and V packed per token, [num_blocks, block_size, heads, dqk + dv]:
    t[..., :dqk] and t[..., dqk:]."""
    width = dqk + dv
    strides = (BLOCK_SIZE * heads * width, heads * width, width, 1)
    return (view((BLOCKS, BLOCK_SIZE, heads, dqk), strides),
            view((BLOCKS, BLOCK_SIZE, heads, dv), strides, offset=dqk))


def hnd_layout(heads, dqk, dv):
    """FlashInfer's HND pages [num_blocks, heads, block_size, dim] passed as
    .transpose(1, 2) views (two allocations)."""
    def one(dim, ptr_offset):
        strides = (heads * BLOCK_SIZE * dim, dim, BLOCK_SIZE * dim, 1)
        return view((BLOCKS, BLOCK_SIZE, heads, dim), strides, offset=ptr_offset)
    return one(dqk, 0), one(dv, 1 << 20)


def stride_values(k, v):
    """The six stride parameters a launch must pass for views k and v."""
    values = {}
    for name, tensor in (("k_cache", k), ("v_cache", v)):
        byte_strides = tensor.__cuda_array_interface__["strides"]
        for dim, stride in zip(("block", "token", "head"), byte_strides):
            values[f"{name}_{dim}_stride"] = stride // 2
    return values


def scalars_of(model, kind, **override):
    """The scalar parameters prepare_launch derives for `kind` with the fake
    arguments (and `override`)."""
    _, plan = model._plan(LAYER, kind)
    given = fake_args(model.kernel(LAYER, kind), SIZES, **override)
    derive = None
    if plan.takes_kv_splits:
        derive = lambda b: _launch.bind_kv_splits(plan, b)  # noqa: E731
    _, scalars, _, _ = _launch.prepare_launch(plan, given, derive=derive)
    return scalars


def call(model, kind, **override):
    args = fake_args(model.kernel(LAYER, kind), SIZES, **override)
    if kind == "preprocess":
        return model.preprocess(LAYER, args.pop("qkv"), **args)
    args["out"] = args.pop("output")
    return model.attention(LAYER, args.pop("query"), **args)


def error_of(model, kind, name, **override):
    with pytest.raises(attnc.ArgumentError) as info:
        call(model, kind, **override)
    assert info.value.argument == name, str(info.value)
    return info.value.rule


# ---- the ABI -----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["preprocess", "attention"])
def test_abi_strides_and_parameters(gated, kind):
    """Both kernels take the six i64 strides right after v_cache, and the
    caches' ABI strides name them, innermost 1."""
    abi = gated.kernel(LAYER, kind).abi
    names = [p["name"] for p in abi["params"]]
    at = names.index("v_cache") + 1
    assert names[at:at + 6] == CACHE_STRIDES
    assert all(p["kind"] == "i64" for p in abi["params"][at:at + 6])
    for cache in ("k_cache", "v_cache"):
        param = next(p for p in abi["params"] if p["name"] == cache)
        assert param["strides"] == [f"{cache}_block_stride", f"{cache}_token_stride",
                                    f"{cache}_head_stride", 1]
    # no other tensor takes strides: they must be C-contiguous
    assert [p["name"] for p in abi["params"] if "strides" in p] == ["k_cache", "v_cache"]


# ---- accepted layouts ----------------------------------------------------------

@pytest.mark.parametrize("kind", ["preprocess", "attention"])
@pytest.mark.parametrize("layout", ["contiguous", "vllm", "packed", "hnd"])
def test_layout_strides_become_parameters(gated, plain, kind, layout):
    if layout == "vllm":
        model = plain  # one allocation of K and V needs qk_head_dim == v_head_dim
        k, v = vllm_layout(8, 64)
    else:
        model = gated
        if layout == "packed":
            k, v = packed_layout(2, 192, 128)
        elif layout == "hnd":
            k, v = hnd_layout(2, 192, 128)
        else:
            k = view((BLOCKS, BLOCK_SIZE, 2, 192), (BLOCK_SIZE * 384, 384, 192, 1))
            v = view((BLOCKS, BLOCK_SIZE, 2, 128), (BLOCK_SIZE * 256, 256, 128, 1),
                     offset=1 << 20)
    scalars = scalars_of(model, kind, k_cache=k, v_cache=v)
    assert {n: scalars[n] for n in CACHE_STRIDES} == stride_values(k, v)


def test_vllm_layout_with_a_wider_allocation(gated):
    """192/128 in a [num_blocks, 2, block_size, heads, 192] allocation: V is
    t[:, 1, ..., :128], rows 192 apart (a head stride beyond the row)."""
    k, v = vllm_layout(2, 192)
    v_cai = v.__cuda_array_interface__
    v = FakeTensor((BLOCKS, BLOCK_SIZE, 2, 128), "<V2", ptr=v_cai["data"][0],
                   strides=v_cai["strides"])
    scalars = scalars_of(gated, "attention", k_cache=k, v_cache=v)
    assert scalars["v_cache_head_stride"] == 192
    assert scalars["v_cache_block_stride"] == 2 * BLOCK_SIZE * 2 * 192


def test_strided_launch_passes_the_strides(plain, monkeypatch):
    """What reaches cuLaunchKernel: the views' pointers and their strides as
    int64 at the ABI's indices."""
    lib = plain._lib  # the model's library (other tests may load another)
    seen = []
    real = lib.attnc_kernel_launch

    def spy(kernel, stream, args, num_args, scalars, num_scalars):
        # values copied now: the buffers behind the addresses are the launch's
        seen.append([ctypes.string_at(args[i], 8) for i in range(num_args)])
        return real(kernel, stream, args, num_args, scalars, num_scalars)

    monkeypatch.setattr(lib, "attnc_kernel_launch", spy)
    k, v = vllm_layout(8, 64)
    for kind in ("preprocess", "attention"):
        call(plain, kind, k_cache=k, v_cache=v)
        params = plain.kernel(LAYER, kind).abi["params"]
        addresses = dict(zip((p["name"] for p in params), seen[-1]))
        assert ctypes.c_void_p.from_buffer_copy(addresses["k_cache"]).value == BASE
        assert ctypes.c_void_p.from_buffer_copy(addresses["v_cache"]).value == \
            BASE + BLOCK_SIZE * 8 * 64 * 2
        got = {n: ctypes.c_int64.from_buffer_copy(addresses[n]).value for n in CACHE_STRIDES}
        assert got == stride_values(k, v)
    assert len(seen) == 2


def test_fp8_views_count_strides_in_elements(fp8):
    """An fp8 cache's strides are in (one-byte) elements; 16-byte multiples
    in bytes."""
    shape = (BLOCKS, BLOCK_SIZE, 8, 64)
    strides = (2 * BLOCK_SIZE * 8 * 64, 8 * 64, 64, 1)
    k = view(shape, strides, typestr="|V1", itemsize=1)
    v = view(shape, strides, offset=BLOCK_SIZE * 8 * 64, typestr="|V1", itemsize=1)
    scalars = scalars_of(fp8, "attention", k_cache=k, v_cache=v)
    assert scalars["k_cache_block_stride"] == 2 * BLOCK_SIZE * 8 * 64
    assert scalars["v_cache_token_stride"] == 8 * 64
    # 8 fp8 elements are 8 bytes: not a multiple of 16
    odd = view(shape, (BLOCK_SIZE * 8 * 72, 8 * 72, 72, 1), typestr="|V1", itemsize=1)
    odd_rule = error_of(fp8, "attention", "v_cache", v_cache=odd)
    assert "stride of dim 2 (v_cache_head_stride) is 72 elements = 72 bytes, not a " \
        "multiple of 16 bytes" in odd_rule


def test_size_one_dims_are_not_checked(plain):
    """One block: its stride never moves the address; any is accepted and
    the symbol gets the contiguous stride."""
    sizes = dict(SIZES, num_blocks=1)
    shape = (1, BLOCK_SIZE, 8, 64)
    k = view(shape, (3, 8 * 64, 64, 1))
    args = fake_args(plain.kernel(LAYER, "attention"), sizes, k_cache=k)
    _, plan = plain._plan(LAYER, "attention")
    derive = (lambda b: _launch.bind_kv_splits(plan, b)) if plan.takes_kv_splits else None
    _, scalars, _, _ = _launch.prepare_launch(plan, args, derive=derive)
    assert scalars["k_cache_block_stride"] == BLOCK_SIZE * 8 * 64


# ---- rejected views --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["preprocess", "attention"])
def test_innermost_dim_must_be_contiguous(gated, kind):
    # [num_blocks, block_size, heads, dim] seen through a transposed last pair
    strides = (BLOCK_SIZE * 2 * 192, 2 * 192, 1, 2)
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), strides)
    assert error_of(gated, kind, "k_cache", k_cache=k) == (
        "the innermost dim must be contiguous (stride 1): got strides "
        "[6144, 384, 1, 2] (in elements) for shape [5, 16, 2, 192]")


@pytest.mark.parametrize("kind", ["preprocess", "attention"])
def test_strides_must_be_16_byte_multiples(gated, kind):
    # token stride 2 * 196 elements = 784 bytes (49 x 16): fine; head stride
    # 196 elements = 392 bytes: not a multiple of 16
    strides = (BLOCK_SIZE * 2 * 196, 2 * 196, 196, 1)
    v = view((BLOCKS, BLOCK_SIZE, 2, 128), strides)
    assert error_of(gated, kind, "v_cache", v_cache=v) == (
        "stride of dim 2 (v_cache_head_stride) is 196 elements = 392 bytes, not a "
        "multiple of 16 bytes (the kernels copy rows in 16-byte pieces): got strides "
        "[6272, 392, 196, 1] (in elements) for shape [5, 16, 2, 128]")
    # the same misalignment on the block stride
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), (BLOCK_SIZE * 384 + 4, 384, 192, 1))
    assert "stride of dim 0 (k_cache_block_stride) is 6148 elements = 12296 bytes" in \
        error_of(gated, kind, "k_cache", k_cache=k)


def test_strides_must_be_positive(gated):
    # a broadcast block dim (stride 0) would alias every block
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), (0, 384, 192, 1))
    assert error_of(gated, "preprocess", "k_cache", k_cache=k).startswith(
        "stride of dim 0 (k_cache_block_stride) must be positive: got strides "
        "[0, 384, 192, 1]")
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), (6144, -384, 192, 1))
    assert "must be positive" in error_of(gated, "attention", "k_cache", k_cache=k)


def test_strides_must_fit_32_bits(gated):
    # the kernels hold strides in 32 bits: a block stride of 2^31 elements
    # (a 4 GiB block) is refused by name
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), (2**31, 384, 192, 1))
    assert "stride of dim 0 (k_cache_block_stride) is 2147483648 elements, more " \
        "than the kernels' 32-bit strides hold" in \
        error_of(gated, "attention", "k_cache", k_cache=k)


def test_misaligned_view_pointer(gated):
    # K of a per-token packing whose K part starts 4 elements (8 bytes) in:
    # the strides are fine, the pointer is not
    strides = (BLOCK_SIZE * 2 * 336, 2 * 336, 336, 1)
    k = view((BLOCKS, BLOCK_SIZE, 2, 192), strides, offset=4)
    assert error_of(gated, "attention", "k_cache", k_cache=k).startswith(
        f"data pointer {BASE + 8:#x} is not 16-byte aligned")


def test_other_tensors_stay_contiguous(gated):
    """Only the caches take strides: a strided query is still refused."""
    q = view((7, 16, 192), (192, 7 * 192, 1))
    with pytest.raises(attnc.ArgumentError) as info:
        gated.attention(LAYER, q, **{k: v for k, v in fake_args(
            gated.kernel(LAYER, "attention"), SIZES).items() if k not in ("query", "output")})
    assert info.value.argument == "query"
    assert info.value.rule.startswith("must be C-contiguous")


def test_stride_granule():
    """Rows of whole 16-byte chunks need 16-byte strides; other rows (head
    dims such as 2 or 3, copied element by element) the largest power of two
    of their bytes, so their contiguous caches stay accepted."""
    def granule(dim, dtype="bf16"):
        arg = TensorArg(name="k_cache", obj=None, ptr=0, shape=(1, 16, 1, dim),
                        strides=None, dtype=dtype, device=None)
        return _launch.stride_granule({"dtype": dtype}, arg)
    assert granule(128) == 16 and granule(192) == 16 and granule(8) == 16
    assert granule(3) == 2 and granule(2) == 4 and granule(12) == 8
    assert granule(64, "fp8_e4m3") == 16 and granule(4, "fp8_e4m3") == 4
    assert granule(3, "fp8_e4m3") == 1
