"""check_explain_small.py DECODE.json PREFILL.json: the `attnc explain --json`
documents of explain-small.json (Llama layout: 4 query heads, 2 KV heads,
head_dim 64, bf16, rope over the whole head, pages of 16 tokens, 3 layers)
against numbers worked out by hand here.

DECODE.json: --batch 2 --context 100 --bandwidth 1 --flops 1 --no-compile
PREFILL.json: --prefill --batch 1 --context 40 --no-compile (H200 defaults)
"""
import json
import math
import sys


def close(got, want, what):
    if not math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15):
        sys.exit(f"{what}: got {got}, want {want}")


def same(got, want, what):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


decode = json.load(open(sys.argv[1]))
prefill = json.load(open(sys.argv[2]))

# The keys are those docs/explain.md lists (a key added or renamed there
# must be added or renamed here).
same(sorted(decode), ["arch", "compiled", "config", "floor_us", "layer_kinds",
                      "machine", "model_type", "ok", "rank", "tp",
                      "workload"], "document keys")
same(sorted(decode["layer_kinds"][0]),
     ["activation", "block_size", "cache", "features", "floor_us_all_layers",
      "floor_us_per_layer", "heads", "kernels", "layers", "name",
      "num_layers", "softmax_scale"], "layer kind keys")
same(sorted(decode["layer_kinds"][0]["kernels"][0]),
     ["block", "dynamic_shared_memory_bytes", "form", "grid", "kind", "name",
      "per_token", "resources", "schedule", "work"], "preprocess keys")
same(sorted(decode["layer_kinds"][0]["kernels"][1]),
     ["block", "dynamic_shared_memory_bytes", "form", "grid", "kind", "name",
      "per_token", "resources", "schedule", "split_kv", "work",
      "workload_tile"], "attention keys")
same(sorted(decode["layer_kinds"][0]["kernels"][1]["work"]),
     ["bound", "compute_us", "floor_us", "flops", "memory_us", "read_bytes",
      "written_bytes"], "work keys")

same(decode["ok"], True, "ok")
same(decode["model_type"], "llama", "model_type")
same(decode["compiled"], False, "compiled")
same(decode["workload"], {"phase": "decode", "batch": 2, "context": 100,
                          "query_tokens": 2}, "workload")
same(decode["machine"], {"bandwidth_tb_per_s": 1.0, "matmul_tflop_per_s": 1.0,
                         "defaults": False}, "machine")
(kind,) = decode["layer_kinds"]
same(kind["name"], "full_attention", "kind name")
same(kind["layers"], [0, 1, 2], "layers")
same(kind["heads"], {"num_q_heads": 4, "num_kv_heads": 2, "group_size": 2,
                     "qk_head_dim": 64, "v_head_dim": 64,
                     "gate_layout": "none"}, "heads")
# 1 / sqrt(64)
close(kind["softmax_scale"], 0.125, "softmax_scale")
features = kind["features"]
same(features["rope"]["present"], True, "rope")
same(features["rope"]["rotary_dim"], 64, "rotary_dim")
for absent in ("qk_norm", "gate", "sliding_window", "attention_chunk", "sinks", "logit_softcap",
               "value_scale", "query_temperature", "fp8_cache"):
    same(features[absent], {"present": False}, absent)

# On sm_90a the layer (bf16 pages of 16, 64/64) also has the
# warp-specialised prefill kernel: listed after the attention kernel, its
# schedule the wgmma_ws one; the layer's floor stays the two kernels' (the
# prefill kernel is the attention kernel's alternative, not counted twice).
pre, att, ws = kind["kernels"]
same(ws["name"], "full_attention__prefill_attention", "prefill name")
same(ws["kind"], "prefill_attention", "prefill kind")
same({key: ws["schedule"][key] for key in ("block_m", "num_warps", "mma", "max_kv_splits")},
     {"block_m": 128, "num_warps": 12, "mma": "wgmma_ws", "max_kv_splits": 1},
     "prefill schedule")
same(ws["block"], [384, 1, 1], "prefill block")
same(pre["name"], "full_attention__preprocess", "preprocess name")
same(pre["resources"], None, "resources without compile")
# Fused width 4*64 + 2*64 + 2*64 = 512 bf16 = 1024 bytes, + 8 (slot) + 8
# (position) = 1040 read; q 4*64*2 = 512 + K and V 2*(64+64)*2 = 512 = 1024
# written.
same(pre["per_token"], {"read_bytes": 1040, "written_bytes": 1024}, "per token")
# 2 tokens at 1 TB/s: (2080 + 2048) / 1e12 s = 0.004128 us.
close(pre["work"]["read_bytes"], 2080, "preprocess read")
close(pre["work"]["written_bytes"], 2048, "preprocess written")
close(pre["work"]["floor_us"], 0.004128, "preprocess floor")
same(pre["work"]["bound"], "memory", "preprocess bound")

same(att["name"], "full_attention__attention", "attention name")
same(att["form"], "tensor_core", "form")
# K/V per key 2*(64+64)*2 = 512; q 4*64*2 = 512 read, output 4*64*2 = 512
# written per query token; 2*4*(64+64) = 1024 FLOPs per (query, key).
same(att["per_token"], {"kv_bytes_per_key": 512, "query_read_bytes": 512,
                        "output_written_bytes": 512,
                        "flops_per_query_key": 1024}, "attention per token")
# Per sequence: 100 keys * 512 = 51200, q 512, ceil(100/16) = 7 pages * 4 =
# 28, length and start 8: 51748; 2 sequences: 103496 read, 1024 written.
# FLOPs 2 * 100 * 1024 = 204800. At 1 TB/s and 1 TFLOP/s: memory 0.10452
# us, compute 0.2048 us: compute-bound.
close(att["work"]["read_bytes"], 103496, "attention read")
close(att["work"]["written_bytes"], 1024, "attention written")
close(att["work"]["flops"], 204800, "attention flops")
close(att["work"]["memory_us"], 0.10452, "attention memory_us")
close(att["work"]["compute_us"], 0.2048, "attention compute_us")
close(att["work"]["floor_us"], 0.2048, "attention floor")
same(att["work"]["bound"], "compute", "attention bound")
# Split-KV from the schedule the pipeline chose (checked first): block_m
# 128, gqa_pack 2 (the whole group), target_ctas 264, max 64 splits. Grid x
# = ceil(2 tokens * 2 / 128) + 2 sequences = 3, of which max(1, 2) = 2
# surely busy; grid y = 2 KV heads * (2 / 2) packs = 2: 4 busy CTAs, and
# floor(264 / 4) = 66 capped at 64 splits.
s = att["schedule"]
same((s["block_m"], s["gqa_pack"], s["target_ctas"], s["max_kv_splits"]),
     (128, 2, 264, 64), "schedule")
same(att["split_kv"]["busy_ctas"], 4, "busy")
same(att["split_kv"]["num_kv_splits"], 64, "splits")
same(att["grid"], [3, 2, 64], "grid")
# A decode step has 2 rows per sequence (1 token x 2 packed heads): the
# tiles of at most 16 rows, mma.sync.
same(att["workload_tile"], {"rows": 2, "mma": "mma.sync"}, "tile")
# Per layer 0.004128 + 0.2048 = 0.208928 us, 3 layers 0.626784 us.
close(kind["floor_us_per_layer"], 0.208928, "per layer")
close(decode["floor_us"], 0.626784, "model floor")

# Prefill of 40 tokens: 40*41/2 = 820 (query, key) pairs * 1024 = 839680
# FLOPs; 40 keys * 512 + 40 queries * 512 + 3 pages * 4 + 8 = 40980 read,
# 40 * 512 = 20480 written. At 4.25 TB/s: 61460 / 4.25e12 s = 0.014461 us;
# at 780 TFLOP/s: 839680 / 780e12 s = 0.0010765 us: memory-bound.
same(prefill["workload"]["query_tokens"], 40, "prefill query tokens")
same(prefill["machine"]["defaults"], True, "prefill machine")
pre, att, ws = prefill["layer_kinds"][0]["kernels"]
same(ws["kind"], "prefill_attention", "prefill kernel in the prefill phase")
close(pre["work"]["read_bytes"], 40 * 1040, "prefill preprocess read")
close(att["work"]["flops"], 839680, "prefill flops")
close(att["work"]["read_bytes"], 40980, "prefill read")
close(att["work"]["written_bytes"], 20480, "prefill written")
close(att["work"]["memory_us"], 61460 / 4.25e12 * 1e6, "prefill memory_us")
close(att["work"]["compute_us"], 839680 / 780e12 * 1e6, "prefill compute_us")
same(att["work"]["bound"], "memory", "prefill bound")
# 40 tokens * 2 heads = 80 rows in one 128-row block: wgmma tiles.
same(att["workload_tile"], {"rows": 80, "mma": "wgmma"}, "prefill tile")
print("explain-small: ok")
