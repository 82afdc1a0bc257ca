"""Launch plans of MLA's latent_attention, varlen_attention and latent_gather
kernels without a GPU: plans made in the fake-driver context, with torch
replaced by a stub (the few torch calls a plan makes: the CUDA device
guard, the current stream) and tensors that are FakeTensors (invented
pointers, __cuda_array_interface__) with the torch.Tensor methods a run reads
(dtype, shape, stride, data_ptr, ...).

Each launch goes through a spy in front of the C entry point
(attnc_launch_plan_run for plans, attnc_kernel_launch for the checked path)
that copies every argument's 8 bytes at launch time, then calls the real one,
so the fake driver records the grid. Checked: a plan's run passes the same
argument bytes as Model.<method> on the same tensors; the values are the
pointers, the symbols and the strides derived here from the tensors; the
split count follows plan.plan(); and a wrong tensor raises the checked path's
error (argument and rule), with nothing launched."""

import contextlib
import ctypes
import types

import pytest

import attnc
from attnc import _plan
from attnc_cpu_helpers import FAKE_DRIVER, FakeTensor, TYPESTR

LAYER = "attnc_test_mla"  # the fake driver resolves attnc_test_* kernels
H, R, P = 16, 512, 64
QK, V = 192, 128
PAGE = 64
STREAM = 0x5150

IR = f"""
func.func @{LAYER}(%q: tensor<?x{H}x{R + P}xbf16>, %cache: tensor<?x{PAGE}x{R + P}x{{cache}}>,
    %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>,
    %qv: tensor<?x{H}x{QK}xbf16>, %k: tensor<?x{H}x{QK}xbf16>, %v: tensor<?x{H}x{V}xbf16>,
    %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>{{scale_arg}})
    -> (tensor<?x{H}x{R}xbf16>, tensor<?x{H}x{V}xbf16>, tensor<?x{R + P}xbf16>) {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {{kv_lora_rank = {R}, softmax_scale = 0.1352 : f64}}
      : tensor<?x{H}x{R + P}xbf16>, tensor<?x{PAGE}x{R + P}xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{H}x{R}xbf16>
  %ov = attn.varlen_attention %qv, %k, %v, %cu_q, %cu_k {{softmax_scale = 0.1352 : f64}}
      : tensor<?x{H}x{QK}xbf16>, tensor<?x{H}x{QK}xbf16>, tensor<?x{H}x{V}xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x{H}x{V}xbf16>
  %rows = attn.latent_gather %gcache, %tables, %cu_k{{scale}}
      : tensor<?x{PAGE}x{R + P}x{{cache}}>, tensor<?x?xi32>, tensor<?xi32>{{scale_type}}
        -> tensor<?x{R + P}xbf16>
  return %o, %ov, %rows : tensor<?x{H}x{R}xbf16>, tensor<?x{H}x{V}xbf16>, tensor<?x{R + P}xbf16>
}}
"""


def layer_ir(fp8: bool) -> str:
    """The three kernels in one layer; with fp8, latent_gather reads an fp8
    cache with a scale (latent_attention keeps a bf16 cache: its fp8 form
    is not compiled yet)."""
    text = IR.replace("{cache}", "f8E4M3FN" if fp8 else "bf16")
    if fp8:
        text = text.replace("{scale_arg}", ", %gcache: tensor<?x64x576xf8E4M3FN>, "
                            "%s: tensor<f32>")
        text = text.replace("{scale}", " scale %s").replace("{scale_type}",
                                                           " scale tensor<f32>")
        # latent_attention's cache stays bf16.
        text = text.replace(f"%cache: tensor<?x{PAGE}x{R + P}xf8E4M3FN>",
                            f"%cache: tensor<?x{PAGE}x{R + P}xbf16>")
    else:
        text = text.replace("{scale_arg}", "").replace("{scale}", "")
        text = text.replace("{scale_type}", "").replace("%gcache", "%cache")
    return text


@pytest.fixture(scope="module")
def models(fake_context):
    return {fp8: attnc.compile_ir(layer_ir(fp8), context=fake_context)
            for fp8 in (False, True)}


@pytest.fixture
def bf16(models):
    return models[False]


# ---- torch stand-ins ------------------------------------------------------------

class StubDtype:
    def __init__(self, abi):
        self.abi = abi

    def __repr__(self):
        return f"stub.{self.abi}"


DTYPES = {abi: StubDtype(abi) for abi in TYPESTR}
ITEMSIZE = {"bf16": 2, "fp8_e4m3": 1, "f32": 4, "i32": 4, "i64": 8}


def contiguous(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return list(reversed(strides))


class Tensor(FakeTensor):
    """A FakeTensor with the torch.Tensor methods a plan's run reads;
    `strides` in elements (None: contiguous), `device` its ordinal."""

    def __init__(self, shape, abi, *, strides=None, ptr=None, device=0):
        size = ITEMSIZE[abi]
        super().__init__(shape, TYPESTR[abi], ptr=ptr,
                         strides=None if strides is None else
                         tuple(s * size for s in strides))
        if device != 0:  # the CAI form carries no device: only torch's does
            self.__cuda_array_interface__ = dict(self.__cuda_array_interface__)
        self.abi, self.shape, self.device = abi, tuple(shape), device
        self._strides = list(strides) if strides is not None else contiguous(shape)
        self.dtype = DTYPES[abi]

    def stride(self):
        return tuple(self._strides)

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return self.device

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_contiguous(self):
        if self.numel() == 0:
            return True
        return all(d == 1 or s == c for d, s, c in
                   zip(self.shape, self._strides, contiguous(self.shape)))


def view(base_shape, shape, abi, *, offset=0, base=None):
    """A view of `shape` into a contiguous allocation of `base_shape` (a
    new one, or the tensor `base`), `offset` elements in."""
    base = base or Tensor(base_shape, abi)
    strides = contiguous(base_shape)
    return Tensor(shape, abi, strides=strides, ptr=base.ptr + offset * ITEMSIZE[abi])


@pytest.fixture
def stub_torch(monkeypatch):
    """The plans' torch: a device guard, init and the current stream."""
    cuda = types.SimpleNamespace(
        device=lambda device: contextlib.nullcontext(), init=lambda: None,
        current_stream=lambda device=None: types.SimpleNamespace(cuda_stream=STREAM),
        current_device=lambda: 0)
    stub = types.SimpleNamespace(cuda=cuda, _C=types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda device: STREAM))
    monkeypatch.setattr(_plan, "import_torch", lambda: stub)
    monkeypatch.setattr(_plan, "torch_dtype", DTYPES.__getitem__)
    return stub


class FakeState(ctypes.Structure):
    """The head of FakeCudaState (test/unittests/Runtime/FakeCuda.h)."""

    _fields_ = [("init_calls", ctypes.c_int), ("modules_loaded", ctypes.c_int),
                ("modules_unloaded", ctypes.c_int), ("last_module_size", ctypes.c_size_t),
                ("launches", ctypes.c_int), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_memory_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p)]


class Launches(list):
    """The launches seen; `params`: how many parameters a plan's run passes
    (set when the plan is made)."""

    params = 0


@pytest.fixture
def launches(monkeypatch, bf16, stub_torch):
    """Every launch of the plans (made after this fixture) and of the checked
    path: {"path", "args": each parameter's 8 bytes as an int, copied at
    launch time, "launched", "grid", "stream"}; the real entry point runs
    after the copy. Set `launches.params` to the plan's parameter count."""
    lib = bf16._lib
    driver = ctypes.CDLL(str(FAKE_DRIVER))  # the same handle the runtime opened
    driver.attnc_fake_cuda_state.restype = ctypes.POINTER(FakeState)
    state = driver.attnc_fake_cuda_state().contents
    real_plan, real_launch = lib.attnc_launch_plan_run, lib.attnc_kernel_launch
    seen = Launches()

    def record(path, num_params, args, call):
        array = ctypes.cast(args, ctypes.POINTER(ctypes.c_void_p))
        # (None at a NULL argument: a tensor map's, which the runtime fills)
        values = [None if not array[i] else int.from_bytes(ctypes.string_at(array[i], 8), "little")
                  for i in range(num_params)]
        before = state.launches
        status = call()
        seen.append({"path": path, "args": values, "launched": state.launches - before,
                     "grid": list(state.grid), "stream": state.stream})
        return status

    def plan_run(plan, stream, args, scalars):
        return record("plan", seen.params, args,
                      lambda: real_plan(plan, stream, args, scalars))

    def kernel_launch(kernel, stream, args, num_args, scalars, num_scalars):
        return record("checked", num_args, args, lambda: real_launch(
            kernel, stream, args, num_args, scalars, num_scalars))

    monkeypatch.setattr(lib, "attnc_launch_plan_run", plan_run)
    monkeypatch.setattr(lib, "attnc_kernel_launch", kernel_launch)
    return seen


def i32_of(value):
    """An i32 parameter's 8-byte slot as the kernel reads it (low half)."""
    return value & 0xFFFFFFFF


# ---- latent_attention -------------------------------------------------------------

class Decode:
    """One decode step's tensors: `seqs` sequences of `rows` query rows each."""

    def __init__(self, seqs=3, rows=1, blocks=5, max_blocks=4, cache_width=R + P):
        tokens = seqs * rows
        self.tokens, self.seqs, self.max_blocks = tokens, seqs, max_blocks
        self.cache = (Tensor((blocks, PAGE, R + P), "bf16") if cache_width == R + P
                      else view((blocks, PAGE, cache_width), (blocks, PAGE, R + P), "bf16"))
        self.cache_width = cache_width
        self.query = Tensor((tokens, H, R + P), "bf16")
        self.block_tables = Tensor((seqs, max_blocks), "i32")
        self.seq_lens = Tensor((seqs,), "i32")
        self.query_start_loc = Tensor((seqs + 1,), "i32")
        self.out = Tensor((tokens, H, R), "bf16")

    def step(self):
        return (self.query, self.block_tables, self.seq_lens, self.query_start_loc)


def decode_plan(model, d, launches, **kwargs):
    workspace = Tensor((model.latent_attention_workspace_size(LAYER),), "f32")
    plan = model.latent_attention_plan(LAYER, latent_cache=d.cache, workspace=workspace,
                                       **kwargs)
    launches.params = len(plan._kplan.params)
    return plan, workspace


@pytest.mark.parametrize("seqs,rows,width", [(3, 1, R + P), (1, 1, 640), (8, 2, R + P)])
def test_latent_attention_plan_launch(bf16, launches, seqs, rows, width):
    d = Decode(seqs=seqs, rows=rows, cache_width=width)
    plan, workspace = decode_plan(bf16, d, launches)
    assert plan.run(*d.step(), out=d.out) is d.out
    bf16.latent_attention(LAYER, d.query, latent_cache=d.cache,
                          block_tables=d.block_tables, seq_lens=d.seq_lens,
                          query_start_loc=d.query_start_loc, out=d.out,
                          workspace=workspace, stream=STREAM)
    assert [s["path"] for s in launches] == ["plan", "checked"]
    ran, checked = launches
    assert ran["args"] == checked["args"]
    assert ran["launched"] == 1 and ran["stream"] == STREAM

    # The values, derived from the tensors: rule splits for this batch
    # (busy = max(ceil(T*H/64), B) CTAs of 132, at most 32 splits).
    busy = max(-(-d.tokens * H // 64), d.seqs)
    splits = 1 if busy >= 132 else min(32, 132 // busy)
    names = plan._kplan.param_names
    want = {"query": d.query.ptr, "latent_cache": d.cache.ptr,
            "latent_cache_block_stride": PAGE * width, "latent_cache_token_stride": width,
            "block_tables": d.block_tables.ptr, "seq_lens": d.seq_lens.ptr,
            "query_start_loc": d.query_start_loc.ptr, "output": d.out.ptr,
            "workspace": workspace.ptr, "num_tokens": d.tokens, "num_seqs": d.seqs,
            "max_blocks_per_seq": d.max_blocks, "num_kv_splits": splits,
            "latent_cache_map": None}  # NULL: the runtime encodes the tensor map
    assert set(names) == set(want)
    kinds = {p["name"]: p["kind"] for p in plan._kplan.params}
    got = {n: (i32_of(v) if kinds[n] == "i32" else v) for n, v in zip(names, ran["args"])}
    assert got == want
    assert ran["grid"] == [-(-d.tokens * H // 64) + d.seqs, 1, splits]


def test_latent_attention_plan_fixes_the_split_count(bf16, launches):
    d = Decode(seqs=3)
    plan, _ = decode_plan(bf16, d, launches)
    assert plan.takes_kv_splits
    assert plan.plan(d.tokens, d.seqs, num_kv_splits=5) == 5
    plan.run(*d.step(), out=d.out)
    assert launches[-1]["grid"][2] == 5
    assert launches[-1]["args"][-1] & 0xFFFFFFFF == 5
    # Another batch shape, never planned: the rule (busy 4 -> 132 // 4, capped 32).
    e = Decode(seqs=4)
    e.cache = d.cache
    plan.run(*e.step(), out=e.out)
    assert launches[-1]["grid"][2] == 32
    with pytest.raises(attnc.ArgumentError) as info:
        plan.plan(1, 1, num_kv_splits=33)
    assert info.value.argument == "num_kv_splits"


def test_latent_attention_plan_makes_no_workspace_copy(bf16, launches):
    d = Decode()
    plan, workspace = decode_plan(bf16, d, launches)
    assert plan.workspace is workspace


def checked_error(call):
    with pytest.raises(attnc.ArgumentError) as info:
        call()
    return info.value.argument, info.value.rule


@pytest.mark.parametrize("mutate,argument,rule_part", [
    (lambda d: setattr(d, "query", Tensor((3, H, R + P), "f32")), "query", "dtype"),
    (lambda d: setattr(d, "query", Tensor((3, H + 1, R + P), "bf16")), "query", "dim 1"),
    (lambda d: setattr(d, "out", Tensor((2, H, R), "bf16")), "out", "num_tokens"),
    (lambda d: setattr(d, "out", Tensor((3, H, R), "bf16", ptr=(1 << 40) + 8)), "out",
     "16-byte aligned"),
    (lambda d: setattr(d, "out", Tensor((3, H, R), "bf16", strides=(R, 3 * R, 1))), "out",
     "C-contiguous"),
    (lambda d: setattr(d, "seq_lens", Tensor((2,), "i32")), "seq_lens", "num_seqs"),
    (lambda d: setattr(d, "query_start_loc", Tensor((3,), "i32")), "query_start_loc",
     "num_seqs"),
    (lambda d: setattr(d, "block_tables", Tensor((3, 4), "i64")), "block_tables", "dtype"),
])
def test_latent_attention_plan_errors_are_the_checked_paths(bf16, launches, mutate,
                                                            argument, rule_part):
    d = Decode(seqs=3)
    plan, workspace = decode_plan(bf16, d, launches)
    mutate(d)
    got = checked_error(lambda: plan.run(*d.step(), out=d.out))
    want = checked_error(lambda: bf16.latent_attention(
        LAYER, d.query, latent_cache=d.cache, block_tables=d.block_tables,
        seq_lens=d.seq_lens, query_start_loc=d.query_start_loc, out=d.out,
        workspace=workspace, stream=STREAM))
    assert got == want
    assert got[0] == argument and rule_part in got[1], got
    assert launches == []


def test_latent_attention_plan_device(bf16, launches):
    d = Decode()
    plan, _ = decode_plan(bf16, d, launches)
    d.out = Tensor((3, H, R), "bf16", device=1)
    argument, rule = checked_error(lambda: plan.run(*d.step(), out=d.out))
    assert argument == "out" and "cuda:0" in rule, rule
    assert launches == []


def test_latent_attention_plan_checks_its_tensors_once(bf16, launches):
    d = Decode()
    # A cache whose rows are not contiguous, and one of the wrong page size.
    bad = Tensor((5, PAGE, R + P), "bf16", strides=(PAGE * (R + P), R + P, 2))
    argument, rule = checked_error(lambda: bf16.latent_attention_plan(
        LAYER, latent_cache=bad))
    assert argument == "latent_cache" and "stride 1" in rule, rule
    argument, rule = checked_error(lambda: bf16.latent_attention_plan(
        LAYER, latent_cache=Tensor((5, 16, R + P), "bf16")))
    assert argument == "latent_cache" and "64" in rule, rule
    argument, rule = checked_error(lambda: bf16.latent_attention_plan(
        LAYER, latent_cache=d.cache, cache_scale=Tensor((), "f32")))
    assert argument == "cache_scale", rule
    argument, rule = checked_error(lambda: bf16.latent_attention_plan(
        LAYER, latent_cache=d.cache, workspace=Tensor((100,), "f32")))
    assert argument == "workspace" and "at least" in rule, rule
    assert launches == []


# ---- varlen_attention --------------------------------------------------------------

class Prefill:
    """Query rows and ragged K/V: key = [k_nope | k_pe] of a wider buffer and
    value the second half of kv_b_proj's output, as MLA prefill passes them."""

    def __init__(self, tokens=7, kv_tokens=11, seqs=3):
        self.tokens, self.kv_tokens, self.seqs = tokens, kv_tokens, seqs
        self.query = Tensor((tokens, H, QK), "bf16")
        # kv = [k_nope 128 | v 128] per head; k_pe copied beside: a key view
        # of a [Tk, H, 256] buffer and a value view at offset 128.
        kv = Tensor((kv_tokens, H, 256), "bf16")
        self.key = view(kv.shape, (kv_tokens, H, QK), "bf16", base=kv)
        self.value = view(kv.shape, (kv_tokens, H, V), "bf16", offset=128, base=kv)
        self.cu_q = Tensor((seqs + 1,), "i32")
        self.cu_k = Tensor((seqs + 1,), "i32")
        self.out = Tensor((tokens, H, V), "bf16")

    def step(self):
        return (self.query, self.key, self.value, self.cu_q, self.cu_k)


def prefill_plan(model, launches):
    workspace = Tensor((model.varlen_attention_workspace_size(LAYER),), "f32")
    plan = model.varlen_attention_plan(LAYER, workspace=workspace)
    launches.params = len(plan._kplan.params)
    return plan, workspace


@pytest.mark.parametrize("tokens,kv_tokens,seqs", [(7, 11, 3), (1, 1, 1), (0, 5, 1)])
def test_varlen_attention_plan_launch(bf16, launches, tokens, kv_tokens, seqs):
    p = Prefill(tokens, kv_tokens, seqs)
    plan, workspace = prefill_plan(bf16, launches)
    assert plan.run(*p.step(), out=p.out) is p.out
    bf16.varlen_attention(LAYER, *p.step()[:3], cu_seqlens_q=p.cu_q, cu_seqlens_k=p.cu_k,
                          out=p.out, workspace=workspace, stream=STREAM)
    ran, checked = launches
    assert ran["args"] == checked["args"]
    names = plan._kplan.param_names
    kinds = {q["name"]: q["kind"] for q in plan._kplan.params}
    got = {n: (i32_of(v) if kinds[n] == "i32" else v) for n, v in zip(names, ran["args"])}
    # Size-1 and empty dims take the contiguous stride (as the checked path).
    assert got["query_token_stride"] == H * QK
    assert got["query_head_stride"] == QK
    assert got["key_token_stride"] == (H * 256 if kv_tokens > 1 else H * QK)
    assert got["key_head_stride"] == 256
    assert got["value_token_stride"] == (H * 256 if kv_tokens > 1 else H * V)
    assert got["value_head_stride"] == 256
    assert got["value"] == got["key"] + 128 * 2
    assert (got["num_tokens"], got["num_seqs"]) == (tokens, seqs)
    assert got["workspace"] == workspace.ptr and got["output"] == p.out.ptr
    # The rule: busy = max(ceil(T / 128), B) x 16 heads of 264 CTAs, at most
    # the kernel's max_kv_splits: 1 for sm_90a's warp-specialised form (no
    # split-KV), 64 for the mma.sync tiles.
    hints = bf16.kernel(LAYER, "varlen_attention").abi["hints"]
    assert hints["target_ctas"] == 264
    assert hints["max_kv_splits"] == (1 if "mma=wgmma_ws" in
                                      bf16.kernel(LAYER, "varlen_attention").source else 64)
    busy = max(-(-tokens // 128), seqs) * H
    assert got["num_kv_splits"] == (1 if busy >= 264 else min(hints["max_kv_splits"], 264 // busy))
    # One spare block per sequence: even 0 query rows launch.
    assert ran["launched"] == 1
    assert ran["grid"] == [-(-tokens // 128) + seqs, H, got["num_kv_splits"]]


@pytest.mark.parametrize("what,argument,rule_part", [
    # The head dim not contiguous.
    ("key_head_dim", "key", "stride 1"),
    # A token stride of 196 bf16 = 392 bytes: not a multiple of 16.
    ("value_granule", "value", "multiple of 16 bytes"),
    # cu_seqlens_k of another batch size.
    ("cu_k", "cu_seqlens_k", "num_seqs"),
    # A contiguous output is required.
    ("out", "out", "C-contiguous"),
])
def test_varlen_attention_plan_errors_are_the_checked_paths(bf16, launches, what,
                                                            argument, rule_part):
    p = Prefill()
    plan, workspace = prefill_plan(bf16, launches)
    if what == "key_head_dim":
        p.key = Tensor((11, H, QK), "bf16", strides=(H * QK * 2, QK * 2, 2))
    elif what == "value_granule":
        p.value = view((11, H, 196), (11, H, V), "bf16")
    elif what == "cu_k":
        p.cu_k = Tensor((5,), "i32")
    else:
        p.out = Tensor((7, H, V), "bf16", strides=(V, 7 * V, 1))
    got = checked_error(lambda: plan.run(*p.step(), out=p.out))
    want = checked_error(lambda: bf16.varlen_attention(
        LAYER, *p.step()[:3], cu_seqlens_q=p.cu_q, cu_seqlens_k=p.cu_k, out=p.out,
        workspace=workspace, stream=STREAM))
    assert got == want
    assert got[0] == argument and rule_part in got[1], got
    assert launches == []


# ---- latent_gather -----------------------------------------------------------------

def test_latent_gather_plan_launch(models, launches, monkeypatch):
    model = models[True]  # fp8 cache with a scale
    lib = model._lib
    assert lib is models[False]._lib  # the spy is on the shared library
    cache = view((5, PAGE, 640), (5, PAGE, R + P), "fp8_e4m3")
    scale = Tensor((), "f32")
    plan = model.latent_gather_plan(LAYER, latent_cache=cache, cache_scale=scale)
    launches.params = len(plan._kplan.params)
    tables, cu = Tensor((3, 4), "i32"), Tensor((4,), "i32")
    out = Tensor((20, R + P), "bf16")
    assert plan.run(tables, cu, out=out) is out
    model.latent_gather(LAYER, latent_cache=cache, block_tables=tables, cu_seqlens=cu,
                        cache_scale=scale, out=out, stream=STREAM)
    ran, checked = launches
    assert ran["args"] == checked["args"]
    names = plan._kplan.param_names
    kinds = {q["name"]: q["kind"] for q in plan._kplan.params}
    got = {n: (i32_of(v) if kinds[n] == "i32" else v) for n, v in zip(names, ran["args"])}
    assert got == {"latent_cache": cache.ptr, "latent_cache_block_stride": PAGE * 640,
                   "latent_cache_token_stride": 640, "block_tables": tables.ptr,
                   "cu_seqlens": cu.ptr, "cache_scale": scale.ptr, "output": out.ptr,
                   "num_tokens": 20, "num_seqs": 3, "max_blocks_per_seq": 4}
    assert ran["grid"] == [-(-20 // 8), 1, 1] and ran["launched"] == 1

    with pytest.raises(attnc.ArgumentError) as info:
        model.latent_gather_plan(LAYER, latent_cache=cache)
    assert info.value.argument == "cache_scale" and "missing" in info.value.rule
    got = checked_error(lambda: plan.run(tables, cu, out=Tensor((20, R + P), "fp8_e4m3")))
    want = checked_error(lambda: model.latent_gather(
        LAYER, latent_cache=cache, block_tables=tables, cu_seqlens=cu, cache_scale=scale,
        out=Tensor((20, R + P), "fp8_e4m3"), stream=STREAM))
    assert got == want and got[0] == "out" and "dtype" in got[1], got
    got = checked_error(lambda: plan.run(tables, Tensor((3,), "i32"), out=out))
    assert got[0] == "cu_seqlens" and "num_seqs" in got[1], got
    assert len(launches) == 2


def test_latent_gather_plan_without_fp8_takes_no_scale(bf16, stub_torch):
    cache = Tensor((5, PAGE, R + P), "bf16")
    with pytest.raises(attnc.ArgumentError) as info:
        bf16.latent_gather_plan(LAYER, latent_cache=cache, cache_scale=Tensor((), "f32"))
    assert info.value.argument == "cache_scale"


# ---- mla_preprocess ----------------------------------------------------------------

PRE_LAYER = "attnc_test_mla_pre"


def preprocess_ir(fp8: bool) -> str:
    cache = f"tensor<?x{PAGE}x{R + P}x{'f8E4M3FN' if fp8 else 'bf16'}>"
    scale, scale_type = (" scale %s", " scale tensor<f32>") if fp8 else ("", "")
    return f"""
func.func @{PRE_LAYER}(%kv_a: tensor<?x{R + P}xbf16>, %q_pe: tensor<?x{H}x{P}xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<{R}xbf16>,
    %cache: {cache}{", %s: tensor<f32>" if fp8 else ""})
    -> (tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, {cache}) {{
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache{scale}
      {{num_heads = {H}, kv_lora_rank = {R}, rope_head_dim = {P}, norm_eps = 1.0e-6 : f64,
        rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}}
      : tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, tensor<?xi64>, tensor<?xi64>,
        tensor<{R}xbf16> into {cache}{scale_type}
  return %lat, %qr, %c : tensor<?x{R + P}xbf16>, tensor<?x{H}x{P}xbf16>, {cache}
}}
"""


@pytest.fixture(scope="module")
def pre_models(fake_context):
    return {fp8: attnc.compile_ir(preprocess_ir(fp8), context=fake_context)
            for fp8 in (False, True)}


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("tokens", [5, 1])
def test_mla_preprocess_plan_launch(pre_models, launches, fp8, tokens):
    """The engine's views: kv_a rows of a wider projection output, written in
    place (latent_out is kv_a); q_rope the rope part of q [T, H, 192], its
    output the rope part of the absorbed query [T, H, 576]."""
    model = pre_models[fp8]
    cache_dtype = "fp8_e4m3" if fp8 else "bf16"
    cache = view((6, PAGE, 640), (6, PAGE, R + P), cache_dtype)
    weight = Tensor((R,), "bf16")
    scale = Tensor((), "f32") if fp8 else None
    plan = model.mla_preprocess_plan(PRE_LAYER, kv_norm_weight=weight, latent_cache=cache,
                                     cache_scale=scale)
    launches.params = len(plan._kplan.params)
    kv_a = view((tokens, 2112), (tokens, R + P), "bf16", offset=1536)
    q = Tensor((tokens, H, 192), "bf16")
    q_rope = view(q.shape, (tokens, H, P), "bf16", offset=128, base=q)
    q_abs = Tensor((tokens, H, R + P), "bf16")
    q_rope_out = view(q_abs.shape, (tokens, H, P), "bf16", offset=R, base=q_abs)
    slots, positions = Tensor((tokens,), "i64"), Tensor((tokens,), "i64")
    assert plan.run(kv_a, q_rope, slots, positions, latent_out=kv_a,
                    q_rope_out=q_rope_out) == (kv_a, q_rope_out)
    model.mla_preprocess(PRE_LAYER, kv_a, q_rope, slot_mapping=slots, positions=positions,
                         kv_norm_weight=weight, latent_cache=cache, cache_scale=scale,
                         latent_out=kv_a, q_rope_out=q_rope_out, stream=STREAM)
    ran, checked = launches
    assert ran["args"] == checked["args"]
    names = plan._kplan.param_names
    kinds = {q["name"]: q["kind"] for q in plan._kplan.params}
    got = {n: (i32_of(v) if kinds[n] == "i32" else v) for n, v in zip(names, ran["args"])}
    # Dims of size 1 (one token) take the contiguous strides.
    row = 2112 if tokens > 1 else R + P
    want = {"kv_a": kv_a.ptr, "q_rope": q_rope.ptr, "slot_mapping": slots.ptr,
            "positions": positions.ptr, "kv_norm_weight": weight.ptr,
            "latent_cache": cache.ptr, "latent_out": kv_a.ptr, "q_rope_out": q_rope_out.ptr,
            "kv_a_row_stride": row, "latent_out_row_stride": row,
            "q_rope_token_stride": H * 192 if tokens > 1 else H * P,
            "q_rope_head_stride": 192,
            "q_rope_out_token_stride": H * (R + P) if tokens > 1 else H * P,
            "q_rope_out_head_stride": R + P,
            "latent_cache_block_stride": PAGE * 640, "latent_cache_token_stride": 640,
            "num_tokens": tokens}
    if fp8:
        want["cache_scale"] = scale.ptr
    assert got == want
    assert q_rope.ptr == q.ptr + 128 * 2 and q_rope_out.ptr == q_abs.ptr + R * 2
    # tokens_per_block x token_steps tokens a block (the schedule's, in the ABI)
    rule = plan._kplan.abi["grid"][0]
    assert rule["value"] == "num_tokens"
    blocks = -(-tokens * rule.get("multiplier", 1) // rule.get("divisor", 1))
    assert ran["launched"] == 1 and ran["grid"] == [blocks, 1, 1]


@pytest.mark.parametrize("what,argument,rule_part", [
    ("q_rope_head_dim", "q_rope", "stride 1"),
    ("kv_a_rows", "kv_a", "multiple of 16 bytes"),
    ("positions", "positions", "num_tokens"),
    ("latent_out", "latent_out", "dtype"),
])
def test_mla_preprocess_plan_errors_are_the_checked_paths(pre_models, launches, what,
                                                          argument, rule_part):
    model = pre_models[False]
    cache, weight = Tensor((6, PAGE, R + P), "bf16"), Tensor((R,), "bf16")
    plan = model.mla_preprocess_plan(PRE_LAYER, kv_norm_weight=weight, latent_cache=cache)
    launches.params = len(plan._kplan.params)
    step = {"kv_a": Tensor((5, R + P), "bf16"), "q_rope": Tensor((5, H, P), "bf16"),
            "slot_mapping": Tensor((5,), "i64"), "positions": Tensor((5,), "i64"),
            "latent_out": Tensor((5, R + P), "bf16"), "q_rope_out": Tensor((5, H, P), "bf16")}
    if what == "q_rope_head_dim":
        step["q_rope"] = Tensor((5, H, P), "bf16", strides=(H * P * 2, P * 2, 2))
    elif what == "kv_a_rows":
        step["kv_a"] = view((5, R + P + 4), (5, R + P), "bf16")  # 1160-byte rows
    elif what == "positions":
        step["positions"] = Tensor((4,), "i64")
    else:
        step["latent_out"] = Tensor((5, R + P), "f32")
    got = checked_error(lambda: plan.run(
        step["kv_a"], step["q_rope"], step["slot_mapping"], step["positions"],
        latent_out=step["latent_out"], q_rope_out=step["q_rope_out"]))
    want = checked_error(lambda: model.mla_preprocess(
        PRE_LAYER, step["kv_a"], step["q_rope"], slot_mapping=step["slot_mapping"],
        positions=step["positions"], kv_norm_weight=weight, latent_cache=cache,
        latent_out=step["latent_out"], q_rope_out=step["q_rope_out"], stream=STREAM))
    assert got == want
    assert got[0] == argument and rule_part in got[1], got
    assert launches == []


def test_mla_preprocess_plan_checks_its_tensors_once(pre_models, stub_torch):
    model = pre_models[True]
    cache, weight = Tensor((6, PAGE, R + P), "fp8_e4m3"), Tensor((R,), "bf16")
    argument, rule = checked_error(lambda: model.mla_preprocess_plan(
        PRE_LAYER, kv_norm_weight=weight, latent_cache=cache))
    assert argument == "cache_scale" and "missing" in rule, rule
    argument, rule = checked_error(lambda: model.mla_preprocess_plan(
        PRE_LAYER, kv_norm_weight=Tensor((R + 1,), "bf16"), latent_cache=cache,
        cache_scale=Tensor((), "f32")))
    assert argument == "kv_norm_weight" and str(R) in rule, rule
