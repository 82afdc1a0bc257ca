"""Layers with the q/k norm variants of issue 18 (LayerNorm with and without a
bias, Llama 4's unweighted norm, weights per head, statistics over the whole
projection), written as attn IR for ``attnc.compile_ir``: a preprocess-only
layer (split, norm, rope, cache write), so that each case compiles one small
kernel. Shared by the GPU suite (test_preprocess_norms.py) and the package's
CPU tests (python/tests/test_api_qk_norms.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

#: The layer's function name (its layer kind).
NORM_LAYER = "norms"


@dataclass(frozen=True)
class NormCase:
    """One layer: heads and dims, the norm (style, scope, bias, eps, before
    or after rope), the rope (None: no rope), the cache and the token
    count."""
    family: str           # the model family the combination is from
    hq: int
    hkv: int
    dqk: int
    dv: int
    style: str            # rms | gemma | unweighted | layernorm
    scope: str = "head"   # head | head_weights | projection
    bias: bool = False
    eps: float = 1e-5
    after_rope: bool = False
    rope: Optional[str] = "neox"   # neox | gptj | None
    rotary_dim: int = 0   # 0: the whole head
    cache: str = "bf16"   # bf16 | fp8
    tokens: int = 37

    def id(self) -> str:
        rope = f"{self.rope}{self.rotary_dim or ''}" if self.rope else "norope"
        return (f"{self.family}-{self.hq}x{self.hkv}-{self.dqk}_{self.dv}-{self.style}"
                f"-{self.scope}{'-bias' if self.bias else ''}"
                f"{'-after' if self.after_rope else ''}-{rope}-{self.cache}-t{self.tokens}")

    @property
    def rotary(self) -> int:
        return (self.rotary_dim or self.dqk) if self.rope else 0

    def weight_shape(self, heads: int) -> List[int]:
        """The norm weight's (and bias's) shape for `heads` heads."""
        if self.scope == "head":
            return [self.dqk]
        if self.scope == "head_weights":
            return [heads, self.dqk]
        return [heads * self.dqk]

    @property
    def weighted(self) -> bool:
        return self.style != "unweighted"

    def ir(self, name: str = NORM_LAYER) -> str:
        """The layer as attn IR (bf16 activations, block size 16), its
        function (layer kind) named `name`."""
        hq, hkv, dqk, dv = self.hq, self.hkv, self.dqk, self.dv
        width = hq * dqk + hkv * dqk + hkv * dv
        cache_el = "f8E4M3FN" if self.cache == "fp8" else "bf16"
        t = lambda shape: "tensor<" + "x".join(str(d) for d in shape) + "xbf16>"  # noqa: E731
        q_t, k_t = f"tensor<?x{hq}x{dqk}xbf16>", f"tensor<?x{hkv}x{dqk}xbf16>"
        v_t = f"tensor<?x{hkv}x{dv}xbf16>"
        kc_t = f"tensor<?x16x{hkv}x{dqk}x{cache_el}>"
        vc_t = f"tensor<?x16x{hkv}x{dv}x{cache_el}>"
        args = [f"%qkv: tensor<?x{width}xbf16>", "%pos: tensor<?xi64>",
                "%slots: tensor<?xi64>", f"%kc: {kc_t}", f"%vc: {vc_t}"]
        if self.weighted:
            args += [f"%qw: {t(self.weight_shape(hq))}", f"%kw: {t(self.weight_shape(hkv))}"]
        if self.bias:
            args += [f"%qb: {t(self.weight_shape(hq))}", f"%kb: {t(self.weight_shape(hkv))}"]
        if self.cache == "fp8":
            args += ["%ks: tensor<f32>", "%vs: tensor<f32>"]
        attrs = [f"eps = {self.eps:.17e} : f64", f"style = #attn.norm_style<{self.style}>"]
        if self.scope != "head":
            attrs.append(f"scope = #attn.norm_scope<{self.scope}>")

        def norm(x, x_t, which, heads):
            operands, types = x, x_t
            if self.weighted:
                operands += f", %{which}w"
                types += f", {t(self.weight_shape(heads))}"
            if self.bias:
                operands += f" bias %{which}b"
                types += f" bias {t(self.weight_shape(heads))}"
            return f"attn.rms_norm {operands} {{{', '.join(attrs)}}} : {types}"

        def rope(x, x_t):
            return (f"attn.rope {x}, %pos {{style = #attn.rope_style<{self.rope}>, "
                    f"rotary_dim = {self.rotary}, theta = 1.0e4 : f64}} : {x_t}, tensor<?xi64>")

        body = [f"%q0, %k0, %v = attn.qkv_split %qkv {{num_q_heads = {hq}, num_kv_heads = {hkv}, "
                f"qk_head_dim = {dqk}, v_head_dim = {dv}}} : tensor<?x{width}xbf16> -> "
                f"{q_t}, {k_t}, {v_t}"]
        q, k = "%q0", "%k0"
        steps = ["norm", "rope"] if not self.after_rope else ["rope", "norm"]
        for i, step in enumerate(steps):
            if step == "norm":
                body += [f"%q{i + 1} = {norm(q, q_t, 'q', hq)}",
                         f"%k{i + 1} = {norm(k, k_t, 'k', hkv)}"]
            elif self.rope:
                body += [f"%q{i + 1} = {rope(q, q_t)}", f"%k{i + 1} = {rope(k, k_t)}"]
            else:
                continue
            q, k = f"%q{i + 1}", f"%k{i + 1}"
        scales = " scales %ks, %vs" if self.cache == "fp8" else ""
        scale_types = " scales tensor<f32>, tensor<f32>" if self.cache == "fp8" else ""
        body += [f"%kc2, %vc2 = attn.cache_write {k}, %v, %slots into %kc, %vc{scales} : "
                 f"{k_t}, {v_t}, tensor<?xi64> into {kc_t}, {vc_t}{scale_types}",
                 f"return {q}, %kc2, %vc2 : {q_t}, {kc_t}, {vc_t}"]
        if not self.rope:
            args.remove("%pos: tensor<?xi64>")
        return (f"func.func @{name}({', '.join(args)}) -> ({q_t}, {kc_t}, {vc_t}) {{\n  "
                + "\n  ".join(body) + "\n}\n")


def norm_cases() -> List[NormCase]:
    """Every style x scope combination a real family uses, with the shapes
    that stress the kernel: many heads over the whole projection (32 and 40
    q heads of 128), odd and small dims, a bias on and off, before and after
    rope, an fp8 cache."""
    return [
        # OLMo-2 7B / OLMo-3: RMSNorm over the whole projection, before rope.
        NormCase("olmo2", 32, 32, 128, 128, "rms", "projection", eps=1e-6),
        # OLMo-2 13B: 40 heads of 128 (5120 values per token's q).
        NormCase("olmo2", 40, 40, 128, 128, "rms", "projection", eps=1e-6, tokens=19),
        # MiniMax-M2: 48 q heads, 8 KV heads of 128, partial rotary 64.
        NormCase("minimax_m2", 48, 8, 128, 128, "rms", "projection", eps=1e-6, rotary_dim=64),
        # Projection scope with an odd dim, GQA, fp8 cache, one token.
        NormCase("projection_odd", 6, 2, 10, 6, "rms", "projection", rope="gptj",
                 cache="fp8", tokens=1),
        NormCase("projection_odd", 5, 1, 2, 3, "rms", "projection", rope=None, tokens=53),
        # LayerNorm over the whole projection with a bias (no family has it;
        # the kernel's two-pass prologue: the mean, then the variance).
        NormCase("projection_layernorm", 12, 4, 64, 64, "layernorm", "projection", bias=True,
                 tokens=23),
        # Cohere (use_qk_norm): LayerNorm without bias, a weight row per head,
        # gptj rope.
        NormCase("cohere", 32, 8, 128, 128, "layernorm", "head_weights", rope="gptj"),
        # StableLM-2 (qk_layernorm): LayerNorm per head, no bias, partial
        # rotary 25%.
        NormCase("stablelm", 32, 8, 64, 64, "layernorm", "head_weights", rotary_dim=16),
        # Phi (qk_layernorm): nn.LayerNorm(head_dim) with bias, shared by
        # heads, partial rotary 32 of 80.
        NormCase("phi", 32, 32, 80, 80, "layernorm", "head", bias=True, rotary_dim=32),
        # Persimmon: the same with head_dim 64, rotary 32, fp8 cache.
        NormCase("persimmon", 64, 64, 64, 64, "layernorm", "head", bias=True, rotary_dim=32,
                 cache="fp8"),
        # LayerNorm with tiny odd dims and per-head rows with bias (the
        # kernel's padding arithmetic: 3 of a lane group's values are real).
        NormCase("layernorm_odd", 4, 2, 3, 5, "layernorm", "head_weights", bias=True,
                 rope=None, tokens=29),
        # Llama 4: L2Norm (no weight) after a gptj rope.
        NormCase("llama4", 40, 8, 128, 128, "unweighted", "head", after_rope=True, rope="gptj"),
        NormCase("llama4", 8, 2, 64, 64, "unweighted", "head", after_rope=True, rope="gptj",
                 cache="fp8", tokens=5),
        # Hunyuan: RMSNorm per head after a neox rope (the existing kernel
        # path, norm_after_rope), as a control.
        NormCase("hunyuan", 32, 8, 128, 128, "rms", "head", eps=1e-5, after_rope=True),
    ]
