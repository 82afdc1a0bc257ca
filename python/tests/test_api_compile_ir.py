"""attn IR in, kernels out: attnc.compile_ir over attnc_model_compile_ir."""
import subprocess

import pytest

import attnc
from attnc_cpu_helpers import CONFIG_DIR, REPO, check_attention_trailing

# A 2/3 layer with an interleaved gate and no norm or rope, written by hand.
SMALL_LAYER = """
func.func @small(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>,
                 %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                 %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> (tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2,
      qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x30xbf16> -> tensor<?x4x2xbf16>, tensor<?x2x2xbf16>,
        tensor<?x2x3xbf16>, tensor<?x4x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?xi64>
        into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts
      {softmax_scale = 0.7071 : f64}
      : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}
"""


def test_hand_written_layer_compiles(context):
    model = attnc.compile_ir(SMALL_LAYER, context=context)
    assert model.layers == ["small"]
    kinds = {k.kind: k for k in model.kernels}
    assert set(kinds) == {"preprocess", "attention"}
    names = [p["name"] for p in kinds["preprocess"].abi["params"]]
    # No norm, no rope: neither parameter exists; the gate is an output.
    assert "q_norm_weight" not in names and "positions" not in names
    assert "gate_out" in names
    check_attention_trailing(kinds["attention"])
    assert "gate" in [p["name"] for p in kinds["attention"].abi["params"]]


def test_attnc_import_output_compiles(context):
    attnc_cli = REPO / "build" / "bin" / "attnc"
    if not attnc_cli.is_file():
        pytest.skip(f"attnc CLI not built ({attnc_cli})")
    text = subprocess.run([str(attnc_cli), "import", str(CONFIG_DIR / "qwen3-8b.json")],
                          check=True, capture_output=True, text=True).stdout
    model = attnc.compile_ir(text, context=context)
    # 128/128 bf16 in pages of 16 on sm_90a: the prefill kernel too.
    assert sorted(k.name for k in model.kernels) == [
        "full_attention__attention", "full_attention__prefill_attention",
        "full_attention__preprocess"]


def test_malformed_ir_names_the_problem(context):
    with pytest.raises(attnc.ConfigError) as error:
        attnc.compile_ir("func.func @f() { attn.nonsense }", context=context)
    assert "mlir" in str(error.value)
    assert "nonsense" in str(error.value)


def test_ir_that_breaks_a_verifier_rule_is_refused(context):
    broken = SMALL_LAYER.replace("num_kv_heads = 2,", "num_kv_heads = 3,", 1)
    with pytest.raises(attnc.ConfigError) as error:
        attnc.compile_ir(broken, context=context)
    assert "num_kv_heads" in str(error.value)
