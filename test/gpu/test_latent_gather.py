"""latent_gather on the GPU: each sequence's cached latent rows [c_kv | k_pe]
copied through its block table into contiguous rows, bit for bit (a 16-bit
cache), or widened and multiplied by cache_scale (fp8: the same float32
product rounded to the activation dtype, so also compared exactly). Pages of
16 and 64 tokens, cache views with a wider token stride, sequences of 0..300
rows (length 1 and empty ones included), block tables in random order. The
output is NaN-poisoned first, with spare rows past cu_seqlens[-1] that must
stay untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import pytest

try:
    import torch
except ImportError:  # collected (and skipped) without torch
    torch = None

WIDTH = 576  # kv_lora_rank 512 + qk_rope_head_dim 64


@dataclass(frozen=True)
class Layer:
    activation: str   # "bf16" | "fp16"
    fp8: bool
    block_size: int
    width: int = WIDTH

    @property
    def name(self) -> str:
        return f"{self.activation}_{'fp8' if self.fp8 else 'same'}_page{self.block_size}_w{self.width}"

    def ir(self) -> str:
        act = {"bf16": "bf16", "fp16": "f16"}[self.activation]
        cache = f"tensor<?x{self.block_size}x{self.width}x{'f8E4M3FN' if self.fp8 else act}>"
        out = f"tensor<?x{self.width}x{act}>"
        scale_arg = ", %s: tensor<f32>" if self.fp8 else ""
        scale_use = " scale %s" if self.fp8 else ""
        scale_type = " scale tensor<f32>" if self.fp8 else ""
        return f"""
func.func @gather(%cache: {cache}, %tables: tensor<?x?xi32>, %cu: tensor<?xi32>{scale_arg}) -> {out} {{
  %rows = attn.latent_gather %cache, %tables, %cu{scale_use}
      : {cache}, tensor<?x?xi32>, tensor<?xi32>{scale_type} -> {out}
  return %rows : {out}
}}
"""


LAYERS = [
    Layer("bf16", False, 64),
    Layer("bf16", False, 16),
    Layer("bf16", True, 64),
    Layer("bf16", True, 16),
    Layer("fp16", True, 64),
    Layer("fp16", False, 16, width=36),   # rows of 4.5 chunks: element copies
]

LENGTHS = {
    "one": [1],
    "varlen": [1, 0, 300, 64, 65, 17, 1, 128],
    "long": [2000, 3],
}

_models = {}


def model_for(context, layer: Layer):
    import attnc
    if layer not in _models:
        _models[layer] = attnc.compile_ir(layer.ir(), context=context)
    return _models[layer]


def paged(lengths: List[int], block_size: int, generator):
    """Block tables giving each sequence whole blocks in a random order (the
    unused entries point at the last block); returns (tables, num_blocks)."""
    blocks = [-(-n // block_size) for n in lengths]
    total = sum(blocks) + 1
    order = torch.randperm(total - 1, generator=generator, device="cuda").tolist()
    width = max(1, max(blocks))
    tables = torch.full((len(lengths), width), total - 1, dtype=torch.int32)
    at = 0
    for s, count in enumerate(blocks):
        tables[s, :count] = torch.tensor(order[at:at + count], dtype=torch.int32)
        at += count
    return tables.cuda(), total


@pytest.mark.parametrize("view", [False, True], ids=["dense", "view"])
@pytest.mark.parametrize("lengths", list(LENGTHS), ids=list(LENGTHS))
@pytest.mark.parametrize("layer", LAYERS, ids=[layer.name for layer in LAYERS])
def test_latent_gather(attnc_context, generator, layer, lengths, view):
    model = model_for(attnc_context, layer)
    counts = LENGTHS[lengths]
    act = {"bf16": torch.bfloat16, "fp16": torch.float16}[layer.activation]
    tables, num_blocks = paged(counts, layer.block_size, generator)
    stored = act if not layer.fp8 else torch.float8_e4m3fn
    shape = (num_blocks, layer.block_size, layer.width)
    values = torch.randn(*shape, generator=generator, device="cuda") * 3
    if view:
        # rows inside a wider per-token allocation (token stride width + 64)
        full = torch.randn(num_blocks, layer.block_size, layer.width + 64,
                           generator=generator, device="cuda").to(stored)
        cache = full[..., :layer.width]
        cache.copy_(values.to(stored))
        assert not cache.is_contiguous()
    else:
        cache = values.to(stored)
    scale = None
    if layer.fp8:
        scale = torch.tensor(0.37, dtype=torch.float32, device="cuda")
    cu = [0]
    for n in counts:
        cu.append(cu[-1] + n)
    spare = 5
    out = torch.full((cu[-1] + spare, layer.width), float("nan"), dtype=act, device="cuda")
    cu_t = torch.tensor(cu, dtype=torch.int32, device="cuda")
    result = model.latent_gather("gather", latent_cache=cache, block_tables=tables,
                                 cu_seqlens=cu_t, cache_scale=scale, out=out)
    assert result is out
    torch.cuda.synchronize()

    # the expected rows, gathered on their raw bytes (index kernels need not
    # take float8)
    raw = cache.view(torch.uint8) if layer.fp8 else cache
    rows = []
    for s, n in enumerate(counts):
        j = torch.arange(n, device="cuda")
        blocks = tables[s].long()[j // layer.block_size]
        rows.append(raw[blocks, j % layer.block_size])
    expected = torch.cat(rows)
    if layer.fp8:
        expected = (expected.view(torch.float8_e4m3fn).float() * scale).to(act)
    got = out[:cu[-1]]
    assert not bool(got.isnan().any()), "a gathered row was not written"
    assert torch.equal(got, expected.to(act)), (
        f"{int((got != expected).sum())} values differ from the cached rows")
    assert bool(out[cu[-1]:].isnan().all()), "rows past cu_seqlens[-1] were written"


def test_output_allocated(attnc_context, generator):
    layer = LAYERS[0]
    model = model_for(attnc_context, layer)
    tables, num_blocks = paged([70, 3], layer.block_size, generator)
    cache = torch.randn(num_blocks, layer.block_size, layer.width, generator=generator,
                        device="cuda").to(torch.bfloat16)
    cu = torch.tensor([0, 70, 73], dtype=torch.int32, device="cuda")
    out = model.latent_gather("gather", latent_cache=cache, block_tables=tables, cu_seqlens=cu)
    assert out.shape == (73, layer.width) and out.dtype == torch.bfloat16
    torch.cuda.synchronize()
    assert torch.equal(out[70:], cache[tables[1, 0].long(), :3])
