"""Helpers shared by the CPU tests (imported by name: pytest puts this folder
on sys.path)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONFIG_DIR = REPO / "examples" / "configs"
FAKE_DRIVER = REPO / "build" / "lib" / "libattnc-fake-cuda.so"
FAKE_DRIVER_NO_DEVICE = REPO / "build" / "lib" / "libattnc-fake-cuda-nodevice.so"


#: The caches' stride parameters (i64, in elements), right after k_cache and
#: v_cache in both kernels; the ABI strides of a cache name its three.
CACHE_STRIDES = ["k_cache_block_stride", "k_cache_token_stride", "k_cache_head_stride",
                 "v_cache_block_stride", "v_cache_token_stride", "v_cache_head_stride"]

def attention_cache_maps(kernel):
    """The tensor maps an attention kernel takes after its caches' strides:
    k_cache_map and v_cache_map where its schedule is the wgmma form
    (printed `mma=wgmma` in the source's header) over pages of 64 or more
    tokens with rows of whole 16-byte chunks (head dims multiples of 8), else
    none. Asserts each map's spec (boxes of one page's rows, at most 64, x 64
    values of one KV head, 128-byte swizzle) and the num_blocks launch
    scalar the maps' outer dim needs. Returns the list of their names."""
    abi = {p["name"]: p for p in kernel.abi["params"]}
    _, block_size, _, dqk = abi["k_cache"]["shape"]
    dv = abi["v_cache"]["shape"][3]
    tma = ("mma=wgmma" in kernel.source and block_size >= 64
           and dqk % 8 == 0 and dv % 8 == 0)
    maps = [p["name"] for p in kernel.abi["params"] if p["kind"] == "tensor_map"]
    if not tma:
        assert maps == [], maps
        return []
    assert maps == ["k_cache_map", "v_cache_map"], maps
    for cache in ("k_cache", "v_cache"):
        spec = abi[f"{cache}_map"]
        assert spec["tensor"] == cache
        assert spec["box"] == [1, min(block_size, 64), 1, 64]
        assert spec["swizzle"] == 128
    assert kernel.abi["launch_scalars"] == ["num_blocks"]
    return maps


#: The attention kernel's trailing parameters: before split-KV, and with it
#: (workspace after the output, num_kv_splits last).
ATTENTION_TRAILING = ["output", "num_tokens", "num_seqs", "max_blocks_per_seq"]
ATTENTION_TRAILING_SPLIT_KV = ["output", "workspace", "num_tokens", "num_seqs",
                               "max_blocks_per_seq", "num_kv_splits"]


def check_attention_trailing(kernel):
    """Asserts that an attention kernel's parameters end as one of the two
    contracts say, and, for split-KV, the workspace (f32, constant [W]),
    grid (x plus num_seqs, z num_kv_splits) and hints the launcher reads.
    Returns the trailing list that matched."""
    params = kernel.params
    if "num_kv_splits" not in params:
        assert params[-len(ATTENTION_TRAILING):] == ATTENTION_TRAILING, params
        return ATTENTION_TRAILING
    assert params[-len(ATTENTION_TRAILING_SPLIT_KV):] == ATTENTION_TRAILING_SPLIT_KV, \
        params
    abi = kernel.abi
    workspace = next(p for p in abi["params"] if p["name"] == "workspace")
    assert workspace["dtype"] == "f32"
    assert len(workspace["shape"]) == 1 and isinstance(workspace["shape"][0], int)
    x, _, z = abi["grid"]
    assert x["value"] == "num_tokens" and x.get("plus") == "num_seqs", x
    assert z["value"] == "num_kv_splits", z
    hints = abi.get("hints") or {}
    assert hints.get("target_ctas", 0) >= 1 and hints.get("max_kv_splits", 0) >= 1, hints
    return ATTENTION_TRAILING_SPLIT_KV


def spec(name="attnc_test_layer", *, hq=16, hkv=2, dqk=128, dv=128, gate="none",
         norm="rms", rope="neox", rotary_dim=None, sinks=False, window=0,
         dtype="bf16", extra_kinds=()):
    """An attnc spec (docs/config-import.md) with one layer kind."""
    rope_entry = {"style": rope}
    if rope != "none":
        rope_entry["theta"] = 10000.0
        if rotary_dim is not None:
            rope_entry["rotary_dim"] = rotary_dim
    kinds = [{"name": name, "layers": [0], "num_q_heads": hq, "num_kv_heads": hkv,
              "qk_head_dim": dqk, "v_head_dim": dv, "gate": gate, "qk_norm": norm,
              "rope": rope_entry, "sliding_window": window, "sinks": sinks}]
    for i, kind in enumerate(extra_kinds):
        kinds.append(dict(kinds[0], name=kind, layers=[i + 1]))
    return {"attnc_spec": 1, "model_type": "test", "dtype": dtype,
            "num_layers": len(kinds), "layer_kinds": kinds}


# The package tests' shared layer specs (compiled once per session through
# conftest's `compiled`): 192/128 with 16/2 heads (gate, gemma norm, partial
# rope, sinks, window), and 64/64 with 8/8 (nothing optional); 16-token
# blocks. SIZES are the symbol values the fake tensors of those tests use.
LAYER = "attnc_test_layer"
GATED = spec(LAYER, hq=16, hkv=2, dqk=192, dv=128, gate="interleaved", norm="gemma",
             rope="neox", rotary_dim=64, sinks=True, window=64)
PLAIN = spec(LAYER, hq=8, hkv=8, dqk=64, dv=64, gate="none", norm="none", rope="none")
SIZES = {"num_tokens": 7, "num_blocks": 5, "num_seqs": 3, "max_blocks_per_seq": 4,
         "num_seqs_plus_one": 4}


class FakeTensor:
    """A device tensor stand-in with __cuda_array_interface__ (v3): the
    pointers are invented, so only argument checks and the fake driver may
    see them."""

    _next = 1 << 32

    def __init__(self, shape, typestr, *, ptr=None, strides=None, readonly=False,
                 version=3):
        if ptr is None:
            ptr = FakeTensor._next
            FakeTensor._next += 1 << 24
        self.ptr = ptr
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
            "strides": strides, "version": version}


# typestr of each ABI dtype (raw void types where numpy has none).
TYPESTR = {"bf16": "<V2", "f16": "<f2", "fp8_e4m3": "|V1", "f32": "<f4",
           "i32": "<i4", "i64": "<i8"}


def fake_args(kernel, sizes, **override):
    """Fake tensors for every pointer parameter of `kernel`, with symbols
    taken from `sizes` (e.g. {"num_tokens": 7, "num_blocks": 4})."""
    args = {}
    for param in kernel.abi["params"]:
        if param["kind"] != "pointer":
            continue
        shape = [sizes[d] if isinstance(d, str) else d for d in param.get("shape", [])]
        args[param["name"]] = FakeTensor(shape, TYPESTR[param["dtype"]])
    args.update(override)
    return args


def check_prefill_attention(model, layer):
    """Asserts whether `layer` has the warp-specialised prefill kernel (kind
    prefill_attention) as attn-specialize's rule says (sm_90a only, the
    arch of the attention kernel's build): a cache of the activation type (no fp8) in pages of 8 or more tokens,
    head dims multiples of 8 and v_head_dim padded to 64 at most 256; and,
    where it has it, its contract: the attention kernel's parameters with
    the caches' tensor maps after their strides (boxes of min(block_size,
    block_n) rows x 64 values, 128-byte swizzle), the split-KV trailing
    parameters, 384 threads, the attention kernel's grid x and y,
    max_kv_splits 1, the hints of the launcher's rule, PDL. Returns the
    kernel or None."""
    att = model.kernel(layer, "attention")
    abi = {p["name"]: p for p in att.abi["params"]}
    _, block_size, _, dqk = abi["k_cache"]["shape"]
    dv = abi["v_cache"]["shape"][3]
    expected = (att.build_reports()[0]["arch"] == "sm_90a"
                and abi["k_cache"]["dtype"] == abi["query"]["dtype"]
                and abi["query"]["dtype"] in ("bf16", "f16") and block_size >= 8
                and dqk % 8 == 0 and dv % 8 == 0 and (dv + 63) // 64 * 64 <= 256)
    assert model.has_prefill_attention(layer) == expected, (layer, abi["k_cache"])
    if not expected:
        return None
    pre = model.kernel(layer, "prefill_attention")
    assert (pre.name, pre.kind, pre.layer) == (f"{layer}__prefill_attention",
                                               "prefill_attention", layer)
    assert "attnc::paged_attention_ws<Config>(" in pre.source
    assert "mma=wgmma_ws" in pre.source
    block_n = int(pre.source.split(" block_n=")[1].split()[0])
    # 176 at padded 128/128 and 80 at 256/256 where the pages' boxes divide
    # it (attn-specialize), else 128 or 64.
    pads = ((dqk + 63) // 64 * 64, (dv + 63) // 64 * 64)
    special = {(128, 128): 176, (256, 256): 80}.get(pads)
    if special and special % min(block_size, special) == 0:
        assert block_n == special, (layer, block_n)
    else:
        assert block_n in (64, 128), (layer, block_n)
    plain = [n for n in att.params if n not in ("k_cache_map", "v_cache_map")]
    at = plain.index("v_cache_head_stride") + 1
    assert pre.params == plain[:at] + ["k_cache_map", "v_cache_map"] + plain[at:]
    assert check_attention_trailing(pre) == ATTENTION_TRAILING_SPLIT_KV
    pabi = {p["name"]: p for p in pre.abi["params"]}
    for cache in ("k_cache", "v_cache"):
        spec = pabi[f"{cache}_map"]
        assert (spec["tensor"], spec["swizzle"]) == (cache, 128)
        assert spec["box"] == [1, min(block_size, block_n), 1, 64]
    assert pre.abi["launch_scalars"] == ["num_blocks"]
    assert pre.abi["block"] == [384, 1, 1]
    assert pre.abi["grid"][:2] == att.abi["grid"][:2]
    hints = pre.abi["hints"]
    assert hints["max_kv_splits"] == 1 and hints["min_rows_per_seq"] == 64
    assert hints["gqa_pack"] == pre.abi["grid"][0]["multiplier"]
    assert pre.abi.get("programmatic_dependent_launch") is True
    return pre
