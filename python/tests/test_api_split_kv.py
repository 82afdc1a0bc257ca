"""The split-KV launch contract on the Python side, without a GPU: the split
rule (Model.attention_splits, attnc._launch.choose_kv_splits), checks of a
caller's num_kv_splits and workspace, the package's cached workspaces, the
ABI's hints and grid "plus", and that kernels without split-KV (the ABIs the
emitter writes today) launch as before.

Split-KV ABIs are made here from a compiled model's attention ABI (the
parameters the contract names: ..., output, workspace, num_tokens, num_seqs,
max_blocks_per_seq, num_kv_splits; grid x = ceil_div(num_tokens * P, BM) +
num_seqs, y constant, z = num_kv_splits; hints target_ctas, max_kv_splits).
Launches of those go to a spy in place of attnc_kernel_launch, since no
compiled kernel has that ABI yet; the runtime's geometry for "plus" is
tested in the C++ unit tests (KernelAbiTest)."""

import ctypes
import dataclasses

import pytest

import attnc
from attnc import _launch
from attnc._model import _ATTENTION_FEATURES
from attnc._launch import KernelPlan, SplitKv, choose_kv_splits, grid_dim, parse_hints
from attnc_cpu_helpers import LAYER, PLAIN, SIZES, FakeTensor, fake_args
from test_api_arguments import fake_state  # noqa: F401 - a fixture

W = 4096


def split_abi(base=None, *, P=8, BM=64, gy=2, T=264, M=64, workspace=W, hints=True):
    """A split-KV attention ABI: the pointer parameters of `base` (a compiled
    attention ABI, with or without split-KV; a minimal one when None) but its
    workspace, then a workspace of `workspace` floats (none when None) and
    the four i32 scalars, the split grid, and the hints."""
    if base is None:
        pointers = [{"name": n, "kind": "pointer", "dtype": "i32"} for n in
                    ("query", "k_cache", "v_cache", "block_tables", "seq_lens",
                     "query_start_loc", "output")]
        base = {"name": "attnc_test_split", "params": pointers, "block": [128, 1, 1],
                "grid": [1, 1, 1], "dynamic_shared_memory_bytes": 0}
    params = [p for p in base["params"]
              if p["kind"] == "pointer" and p["name"] != "workspace"]
    if workspace is not None:
        params.append({"name": "workspace", "kind": "pointer", "dtype": "f32",
                       "shape": [workspace]})
    params += [{"name": n, "kind": "i32"} for n in
               ("num_tokens", "num_seqs", "max_blocks_per_seq", "num_kv_splits")]
    abi = dict(base, params=params, grid=[
        {"value": "num_tokens", "multiplier": P, "divisor": BM, "plus": "num_seqs"},
        gy, {"value": "num_kv_splits", "multiplier": 1, "divisor": 1}])
    if hints:
        abi["hints"] = {"target_ctas": T, "max_kv_splits": M}
    else:
        abi.pop("hints", None)
    return abi


def plan_of(abi):
    """The plan Model makes for an attention ABI."""
    return KernelPlan(abi, features=_ATTENTION_FEATURES, outputs=("output",),
                      writable=("output", "workspace"), at_least=("workspace",))


# ---- the split rule ------------------------------------------------------------

def test_rule_decode_batches():
    """T=264, M=64, P=8, BM=64, gy=2: B8 decode has gx = 1 + 8 = 9 (base 18)
    of which max(1, 8) = 8 surely have rows: busy 16, floor(264 / 16) = 16
    splits (256 busy blocks, one wave); B64 has gx = 8 + 64 = 72 (base 144),
    busy max(8, 64) * 2 = 128: 2 splits."""
    plan = plan_of(split_abi())
    assert plan.split_kv.base({"num_tokens": 8, "num_seqs": 8}.get) == 18
    assert plan.split_kv.busy({"num_tokens": 8, "num_seqs": 8}.get) == 16
    assert choose_kv_splits(plan, {"num_tokens": 8, "num_seqs": 8}) == 16
    assert plan.split_kv.base({"num_tokens": 64, "num_seqs": 64}.get) == 144
    assert plan.split_kv.busy({"num_tokens": 64, "num_seqs": 64}.get) == 128
    assert choose_kv_splits(plan, {"num_tokens": 64, "num_seqs": 64}) == 2
    # B1: busy 2, floor(264 / 2) = 132 > M: M
    assert choose_kv_splits(plan, {"num_tokens": 1, "num_seqs": 1}) == 64
    # busy >= T: no split (prefill of 2048 rows: 256 tiles of rows, busy 512)
    assert choose_kv_splits(plan, {"num_tokens": 2048, "num_seqs": 1}) == 1
    # busy 262 < T, floor(264 / 262) = 1
    assert choose_kv_splits(plan, {"num_tokens": 8, "num_seqs": 131}) == 1
    # busy 100 (50 sequences): floor(264 / 100) = 2, where ceil would make a
    # second wave (300 > 264)
    assert choose_kv_splits(plan, {"num_tokens": 50, "num_seqs": 50}) == 2
    # nothing to do: 1
    assert choose_kv_splits(plan, {"num_tokens": 0, "num_seqs": 0}) == 1


def test_rule_reads_the_abi_not_constants():
    # P=16, BM=32, gy=4, T=132, M=8: B8 gx = ceil(128 / 32) + 8 = 12, busy
    # max(4, 8) * 4 = 32, floor(132 / 32) = 4
    plan = plan_of(split_abi(P=16, BM=32, gy=4, T=132, M=8))
    assert choose_kv_splits(plan, {"num_tokens": 8, "num_seqs": 8}) == 4
    # B1: busy max(1, 1) * 4 = 4, floor(132 / 4) = 33 -> M = 8
    assert choose_kv_splits(plan, {"num_tokens": 1, "num_seqs": 1}) == 8
    assert plan.split_kv.target_ctas == 132 and plan.split_kv.max_kv_splits == 8
    assert plan.split_kv.capacity == 264


def test_rule_never_exceeds_the_capacity():
    plan = plan_of(split_abi())
    split_kv = plan.split_kv
    for tokens in range(0, 300, 7):
        for seqs in range(0 if tokens == 0 else 1, min(tokens, 200) + 1, 5):
            values = {"num_tokens": tokens, "num_seqs": seqs}
            splits = choose_kv_splits(plan, values)
            base = split_kv.base(values.get)
            assert 1 <= splits <= 64
            assert splits == 1 or base * splits <= split_kv.capacity, (tokens, seqs)
            # what the rule picks passes the override checks too
            assert choose_kv_splits(plan, values, splits) == splits


def test_overrides():
    plan = plan_of(split_abi())
    b64 = {"num_tokens": 64, "num_seqs": 64}  # base 144, capacity 528
    assert choose_kv_splits(plan, b64, 3) == 3  # 432 <= 528
    assert choose_kv_splits(plan, b64, 1) == 1
    for value in (0, -1, 65):
        with pytest.raises(attnc.ArgumentError) as info:
            choose_kv_splits(plan, b64, value)
        assert info.value.argument == "num_kv_splits"
        assert info.value.rule.startswith(
            f"must be in [1, max_kv_splits] = [1, 64] (got {value}); None picks it "
            "by the split rule: 1 if busy >= target_ctas (264), else "
            "min(max_kv_splits (64), floor(target_ctas / busy)), busy = the CTAs "
            "per split that surely have rows"), info.value.rule
    with pytest.raises(attnc.ArgumentError) as info:
        choose_kv_splits(plan, b64, 4)  # 576 > 528
    assert info.value.argument == "num_kv_splits"
    assert info.value.rule.startswith(
        "4 splits of 144 CTAs (grid x * y) need 576 CTAs of workspace, more than "
        "its capacity 2 * target_ctas = 528: base * num_kv_splits must be <= 528 "
        "(at most 3 splits here)"), info.value.rule
    # one split never needs the partials: fine however big the grid
    big = {"num_tokens": 4096, "num_seqs": 4}
    assert choose_kv_splits(plan, big, 1) == 1
    for value in (True, 2.0, "2"):
        with pytest.raises(attnc.ArgumentError, match="expected None .automatic. or "
                           "an int"):
            choose_kv_splits(plan, b64, value)


def old_abi(base=None):
    """The attention ABI before split-KV: no workspace, no num_kv_splits, grid
    (num_tokens, constant, 1), no hints."""
    abi = split_abi(base, workspace=None, hints=False)
    abi["params"] = [p for p in abi["params"] if p["name"] != "num_kv_splits"]
    abi["grid"] = [{"value": "num_tokens", "multiplier": 1, "divisor": 1}, 2, 1]
    return abi


def test_kernel_without_split_kv_gets_one():
    plan = plan_of(old_abi())
    assert not plan.takes_kv_splits and plan.split_kv is None
    assert choose_kv_splits(plan, {"num_tokens": 8, "num_seqs": 8}) == 1
    with pytest.raises(attnc.ArgumentError) as info:
        choose_kv_splits(plan, {"num_tokens": 8, "num_seqs": 8}, 2)
    assert info.value.argument == "num_kv_splits"
    assert "has no split-KV" in info.value.rule


# ---- hints and grid rules --------------------------------------------------------

def test_hints_parsing():
    assert parse_hints({"name": "k"}) == {}
    assert parse_hints({"name": "k", "hints": {}}) == {}
    assert parse_hints(split_abi()) == {"target_ctas": 264, "max_kv_splits": 64}
    assert plan_of(split_abi()).hints == {"target_ctas": 264, "max_kv_splits": 64}
    bad = [({"hints": [264]}, "hints", "must be an object"),
           ({"hints": {"target_ctas": 2.5}}, "hints.target_ctas", "must be an integer"),
           ({"hints": {"target_ctas": True}}, "hints.target_ctas", "must be an integer"),
           ({"hints": {"target-ctas": 1}}, "hints", "is not an identifier")]
    for extra, argument, rule in bad:
        with pytest.raises(attnc.ArgumentError) as info:
            parse_hints(dict({"name": "k"}, **extra))
        assert info.value.argument == argument and rule in info.value.rule, info.value


def test_split_kernel_without_hints():
    plan = plan_of(split_abi(hints=False))
    assert plan.takes_kv_splits
    with pytest.raises(attnc.ArgumentError) as info:
        plan.split_kv
    assert info.value.argument == "num_kv_splits"
    assert info.value.rule == ("kernel attnc_test_split takes num_kv_splits, but its "
                               "ABI has no hint target_ctas / max_kv_splits to "
                               "choose it with")
    with pytest.raises(attnc.ArgumentError):
        SplitKv(split_abi(), {"target_ctas": 0, "max_kv_splits": 4})


def test_grid_dim():
    rule = {"value": "num_tokens", "multiplier": 8, "divisor": 64, "plus": "num_seqs"}
    assert grid_dim(rule, {"num_tokens": 8, "num_seqs": 8}.get) == 9
    assert grid_dim(rule, {"num_tokens": 65, "num_seqs": 2}.get) == 11
    assert grid_dim({"value": "n"}, {"n": 5}.get) == 5  # factors default to 1
    assert grid_dim(7, {}.get) == 7
    with pytest.raises(attnc.ArgumentError) as info:
        grid_dim(rule, {"num_tokens": 8}.get)
    assert info.value.argument == "num_seqs"
    with pytest.raises(attnc.ArgumentError, match="is negative"):
        grid_dim(rule, {"num_tokens": 8, "num_seqs": -1}.get)


# ---- Model.attention with a split-KV ABI (spied launches) ----------------------------

@pytest.fixture
def split_model(fake_context):
    """A model (its own, so the session's cached ones stay as compiled) whose
    attention kernel has the split-KV ABI."""
    return with_abi(attnc.compile(PLAIN, context=fake_context), split_abi)


def with_abi(model, make_abi):
    """Gives `model`'s attention kernel the ABI make_abi(its ABI), and the
    plan for it; returns the model."""
    kernel, _ = model._plan(LAYER, "attention")
    abi = make_abi(kernel.abi)
    model._plans[(LAYER, "attention")] = (dataclasses.replace(kernel, abi=abi), plan_of(abi))
    return model


@pytest.fixture
def plain_model(compiled):
    return compiled(PLAIN, fake=True)


@pytest.fixture
def launches(monkeypatch, fake_context):
    """Replaces attnc_kernel_launch, as the fake-driver context's models call
    it, with a recorder: each launch's argument addresses and stream."""
    lib = fake_context._lib  # not _library.library(): other tests reload it
    seen = []

    def spy(kernel, stream, args, num_args, scalars, num_scalars):
        # The argument values are copied now: the buffers behind the
        # addresses belong to the launch and are gone once it returns.
        seen.append({"stream": stream.value or 0, "num_args": num_args,
                     "args": [ctypes.string_at(args[i], 8) for i in range(num_args)]})
        return 0

    monkeypatch.setattr(lib, "attnc_kernel_launch", spy)
    return seen


def values_of(model, launch):
    params = model.kernel(LAYER, "attention").abi["params"]
    assert launch["num_args"] == len(params)
    values = {}
    for param, raw in zip(params, launch["args"]):
        kind = {"pointer": ctypes.c_void_p, "i64": ctypes.c_int64}.get(param["kind"],
                                                                      ctypes.c_int32)
        values[param["name"]] = kind.from_buffer_copy(raw[:ctypes.sizeof(kind)]).value
    return values


def call(model, **override):
    args = fake_args(model.kernel(LAYER, "attention"), SIZES)
    args["out"] = args.pop("output")
    args.pop("workspace", None)
    args.update(override)
    query = args.pop("query")
    return model.attention(LAYER, query, **args)


def test_attention_binds_the_rule(split_model, launches):
    # SIZES: 7 tokens, 3 sequences: gx = ceil(56 / 64) + 3 = 4 (base 8),
    # busy max(1, 3) * 2 = 6, min(64, floor(264 / 6) = 44) = 44
    assert split_model.attention_splits(LAYER, 7, 3) == 44
    workspace = FakeTensor((W,), "<f4")
    call(split_model, workspace=workspace, stream=5)
    values = values_of(split_model, launches[-1])
    assert values["num_kv_splits"] == 44
    assert values["workspace"] == workspace.ptr
    assert (values["num_tokens"], values["num_seqs"], values["max_blocks_per_seq"]) == \
        (7, 3, 4)
    assert launches[-1]["stream"] == 5
    call(split_model, workspace=workspace, num_kv_splits=5)
    assert values_of(split_model, launches[-1])["num_kv_splits"] == 5
    assert split_model.attention_splits(LAYER, 7, 3, num_kv_splits=5) == 5
    assert split_model.attention_splits(LAYER, 64, 64) == 2
    assert split_model.attention_workspace_size(LAYER) == W


@pytest.mark.parametrize("value, start", [
    (0, "must be in [1, max_kv_splits] = [1, 64] (got 0)"),
    (-1, "must be in [1, max_kv_splits] = [1, 64] (got -1)"),
    (65, "must be in [1, max_kv_splits] = [1, 64] (got 65)"),
    (67, "must be in [1, max_kv_splits]"),
    (1.5, "expected None (automatic) or an int, got float"),
])
def test_attention_rejects_bad_split_counts(split_model, launches, value, start):
    with pytest.raises(attnc.ArgumentError) as info:
        call(split_model, workspace=FakeTensor((W,), "<f4"), num_kv_splits=value)
    assert info.value.argument == "num_kv_splits"
    assert info.value.rule.startswith(start), info.value.rule
    assert not launches


def test_attention_rejects_splits_over_the_capacity(split_model, launches):
    # 64 tokens in 64 sequences: base 144; 4 splits need 576 > 528
    sizes = dict(SIZES, num_tokens=64, num_seqs=64, num_seqs_plus_one=65)
    args = fake_args(split_model.kernel(LAYER, "attention"), sizes)
    args["out"] = args.pop("output")
    query = args.pop("query")
    with pytest.raises(attnc.ArgumentError) as info:
        split_model.attention(LAYER, query, num_kv_splits=4, **args)
    assert info.value.argument == "num_kv_splits"
    assert "capacity 2 * target_ctas = 528" in info.value.rule
    split_model.attention(LAYER, query, num_kv_splits=3, **args)
    assert values_of(split_model, launches[-1])["num_kv_splits"] == 3
    split_model.attention(LAYER, query, **args)
    assert values_of(split_model, launches[-1])["num_kv_splits"] == 2


@pytest.mark.parametrize("tensor, rule", [
    (FakeTensor((W,), "<f2"), "dtype is f16 (torch.float16), expected f32 (torch.float32)"),
    (FakeTensor((W - 1,), "<f4"), f"expected 1 dim of at least {W} elements ([{W}]), "
     f"got shape [{W - 1}]"),
    (FakeTensor((2, W), "<f4"), f"expected 1 dim of at least {W} elements ([{W}]), "
     f"got shape [2, {W}]"),
    (FakeTensor((W,), "<f4", strides=(8,)), "must be C-contiguous"),
    (FakeTensor((W,), "<f4", ptr=(1 << 40) + 4), "data pointer 0x10000000004 is not "
     "16-byte aligned"),
    (FakeTensor((W,), "<f4", readonly=True), "is read-only, but the kernel writes it"),
])
def test_workspace_checks(split_model, launches, tensor, rule):
    with pytest.raises(attnc.ArgumentError) as info:
        call(split_model, workspace=tensor)
    assert info.value.argument == "workspace"
    assert info.value.rule.startswith(rule), info.value.rule
    assert not launches


def test_larger_workspace_is_accepted(split_model, launches):
    workspace = FakeTensor((W * 3,), "<f4")
    call(split_model, workspace=workspace)
    assert values_of(split_model, launches[-1])["workspace"] == workspace.ptr


def test_package_workspace_per_stream(split_model, launches, monkeypatch):
    """workspace=None: made (zero-filled) once per (device, stream), then
    reused."""
    made = []

    def zeroed(param, shape, device, handle):
        made.append((tuple(shape), param["dtype"], handle))
        return FakeTensor(shape, "<f4")

    monkeypatch.setattr(_launch, "zeroed_workspace", zeroed)
    call(split_model, stream=5)
    first = values_of(split_model, launches[-1])["workspace"]
    call(split_model, stream=5, num_kv_splits=2)
    assert values_of(split_model, launches[-1])["workspace"] == first
    call(split_model, stream=6)
    second = values_of(split_model, launches[-1])["workspace"]
    assert second != first
    assert made == [((W,), "f32", 5), ((W,), "f32", 6)]
    call(split_model, stream=6)
    assert values_of(split_model, launches[-1])["workspace"] == second
    assert len(made) == 2


def test_package_workspaces_are_bounded(split_model, launches, monkeypatch):
    """The package keeps the _MAX_WORKSPACES most recently used workspaces:
    a stream used again is a hit, the least recently used goes first."""
    from attnc import _model
    made = []

    def zeroed(param, shape, device, handle):
        made.append(handle)
        return FakeTensor(shape, "<f4")

    monkeypatch.setattr(_launch, "zeroed_workspace", zeroed)
    limit = _model._MAX_WORKSPACES
    for stream in range(1, limit + 1):
        call(split_model, stream=stream)
    call(split_model, stream=1)          # a hit; stream 2 is now the oldest
    assert made == list(range(1, limit + 1))
    call(split_model, stream=limit + 1)  # evicts stream 2
    assert len(split_model._workspaces) == limit
    call(split_model, stream=1)
    assert made == list(range(1, limit + 2))
    call(split_model, stream=2)          # made again
    assert made == list(range(1, limit + 2)) + [2]


def test_package_workspace_needs_torch(split_model, launches):
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed: the workspace would be allocated")
    except ImportError:
        pass
    with pytest.raises(attnc.ArgumentError) as info:
        call(split_model)
    assert info.value.argument == "workspace"
    assert info.value.rule.startswith("not given, and allocating it needs torch")
    assert "zero-filled f32 (torch.float32) tensor of shape [4096]" in info.value.rule


def test_split_abi_without_hints_is_named(split_model, launches):
    with_abi(split_model, lambda abi: split_abi(abi, hints=False))
    with pytest.raises(attnc.ArgumentError) as info:
        call(split_model, workspace=FakeTensor((W,), "<f4"))
    assert info.value.argument == "num_kv_splits"
    assert "has no hint target_ctas / max_kv_splits" in info.value.rule


def test_splits_without_a_workspace_param(split_model, launches):
    """num_kv_splits alone (no workspace parameter) is bound as well."""
    with_abi(split_model, lambda abi: split_abi(abi, workspace=None))
    call(split_model)
    assert values_of(split_model, launches[-1])["num_kv_splits"] == 44  # SIZES: busy 6, floor(264 / 6)
    assert split_model.attention_workspace_size(LAYER) is None
    with pytest.raises(attnc.ArgumentError) as info:
        call(split_model, workspace=FakeTensor((W,), "<f4"))
    assert info.value.argument == "workspace"
    assert info.value.rule == "this model's kernel has no split-KV workspace"


# ---- kernels without split-KV ------------------------------------------------------

@pytest.fixture
def old_model(split_model):
    """A model whose attention kernel has the ABI from before split-KV."""
    return with_abi(split_model, old_abi)


def test_old_abi_launches_as_before(old_model, launches):
    _, plan = old_model._plan(LAYER, "attention")
    assert not plan.takes_kv_splits and plan.hints == {}
    call(old_model, stream=3)
    values = values_of(old_model, launches[-1])
    assert values == {"query": values["query"], **{
        name: values[name] for name in ("k_cache", "v_cache", "block_tables",
                                        "seq_lens", "query_start_loc", "output")},
        "num_tokens": 7, "num_seqs": 3, "max_blocks_per_seq": 4}
    assert old_model.attention_splits(LAYER, 8, 8) == 1
    assert old_model.attention_workspace_size(LAYER) is None
    with pytest.raises(attnc.ArgumentError) as info:
        call(old_model, num_kv_splits=2)
    assert info.value.argument == "num_kv_splits"
    assert info.value.rule == ("this model's kernel has no split-KV "
                               "(attnc_test_layer__attention takes no num_kv_splits); "
                               "leave it None")
    with pytest.raises(attnc.ArgumentError) as info:
        call(old_model, workspace=FakeTensor((W,), "<f4"))
    assert info.value.argument == "workspace"
    assert info.value.rule == "this model's kernel has no split-KV workspace"
    with pytest.raises(attnc.ArgumentError):
        old_model.attention_splits(LAYER, 8, 8, num_kv_splits=2)


def test_compiled_kernel_through_the_fake_driver(compiled, fake_state):
    """No spy: the runtime itself launches the kernel the emitter wrote, with
    or without split-KV (a workspace passed when it has one), and the grid is
    the one the ABI's rule gives (plus included)."""
    model = compiled(PLAIN, fake=True)
    abi = model.kernel(LAYER, "attention").abi
    _, plan = model._plan(LAYER, "attention")
    before = fake_state.launches
    override = {}
    size = model.attention_workspace_size(LAYER)
    if size is not None:
        override["workspace"] = FakeTensor((size,), "<f4")
    call(model, stream=11, **override)
    assert fake_state.launches == before + 1 and fake_state.stream == 11
    values = dict(SIZES, num_kv_splits=model.attention_splits(LAYER, 7, 3))
    expected = [grid_dim(rule, values.get, d) for d, rule in enumerate(abi["grid"])]
    assert list(fake_state.grid) == expected
    if plan.takes_kv_splits:
        assert fake_state.grid[2] == values["num_kv_splits"] > 1
