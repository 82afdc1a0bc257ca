"""Fused preprocess benchmark: attnc against PyTorch eager, torch.compile and
the copy-bandwidth floor, side by side in one run.

Shape (the issue's): Hq 32, Hkv 4, Dqk 192, Dv 128, q/k RMSNorm, neox rope
over all 192 dims, paged bf16 cache with 64-token blocks and a random slot
mapping; 16384 tokens, plus 1, 16 and 256 tokens, the no-norm variant and the
fp8-cache variant. The PyTorch side computes the same function as
../shared/bench/torch_baselines.py (split, float32 norm, rope from a cos/sin
table, index_copy into the cache).

Floor: the bytes that must move (qkv read once, q written once, k and v
written once into the cache, positions and slots read) over the device copy
bandwidth measured in this run. attnc is timed twice: one launch from Python
(event-timed, includes the Python argument checks when they do not hide
behind the GPU) and CUDA-graph replay (the kernel itself).

Usage (on the GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_preprocess.py [case ...]   # JSON to $OUT/bench_preprocess.json
"""
import json
import os
import sys
import time

import torch
from triton.testing import do_bench

import attnc

DEV = "cuda"
NQ, NKV, DQK, DV, ROT, BS = 32, 4, 192, 128, 192, 64


def bench(fn, rep=200):
    return do_bench(fn, warmup=25, rep=rep, return_mode="median")  # ms


def graph_time(fn, rep=200):
    """Median time of one call captured in a CUDA graph (launch gaps gone)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm: JIT module load outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return bench(graph.replay, rep)


def copy_bandwidth():
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    result = [2 * n / bench(lambda: b.copy_(a)) / 1e9 for _ in range(2)]
    del a, b
    return result  # TB/s


def config(norm):
    # Qwen3's family has the per-head RMSNorm; Llama's has none. Both neox.
    return {"model_type": "qwen3" if norm else "llama",
            "num_attention_heads": NQ, "num_key_value_heads": NKV,
            "head_dim": DQK, "v_head_dim": DV, "rope_theta": 10000.0,
            "rms_norm_eps": 1e-6, "num_hidden_layers": 1,
            "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


def make_case(T, norm, fp8):
    W = NQ * DQK + NKV * DQK + NKV * DV
    qkv = torch.randn(T, W, device=DEV, dtype=torch.bfloat16)
    qw = torch.randn(DQK, device=DEV, dtype=torch.bfloat16)
    kw = torch.randn(DQK, device=DEV, dtype=torch.bfloat16)
    pos = torch.randint(0, 32768, (T,), device=DEV)
    nb = T // BS + 8
    cdt = torch.float8_e4m3fn if fp8 else torch.bfloat16
    kc = torch.zeros(nb, BS, NKV, DQK, device=DEV, dtype=cdt)
    vc = torch.zeros(nb, BS, NKV, DV, device=DEV, dtype=cdt)
    slots = torch.randperm(nb * BS, device=DEV)[:T]
    scale = torch.ones((), device=DEV, dtype=torch.float32)

    # PyTorch: the baseline's computation.
    inv = 1.0 / (10000 ** (torch.arange(0, ROT, 2, device=DEV,
                                        dtype=torch.float32) / ROT))
    fr = torch.outer(torch.arange(32768, device=DEV, dtype=torch.float32), inv)
    cs_all = torch.cat([fr.cos(), fr.sin()], -1)
    raw = torch.uint8 if fp8 else cdt

    def rms(x, w):
        xf = x.float()
        return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()

    def rope(x, cs):
        c, s = cs.chunk(2, -1)
        c = c[:, None]
        s = s[:, None]
        x1, x2, rest = x[..., :ROT // 2], x[..., ROT // 2:ROT], x[..., ROT:]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, rest], -1)

    def torch_fn(qkv, pos, kc, vc, slots):
        q, k, v = qkv.split([NQ * DQK, NKV * DQK, NKV * DV], -1)
        q = q.view(T, NQ, DQK)
        k = k.view(T, NKV, DQK)
        v = v.view(T, NKV, DV)
        cs = cs_all[pos]
        if norm:
            q = rms(q, qw)
            k = rms(k, kw)
        q = rope(q.float(), cs).to(torch.bfloat16)
        k = rope(k.float(), cs)
        kc.view(-1, NKV, DQK).view(raw).index_copy_(0, slots, k.to(cdt).view(raw))
        vc.view(-1, NKV, DV).view(raw).index_copy_(0, slots, v.to(cdt).view(raw))
        return q

    model = attnc.compile(config(norm), block_size=BS,
                          kv_dtype="fp8" if fp8 else None)
    q_out = torch.empty(T, NQ, DQK, device=DEV, dtype=torch.bfloat16)
    extra = {}
    if norm:
        extra.update(q_norm_weight=qw, k_norm_weight=kw)
    if fp8:
        extra.update(k_scale=scale, v_scale=scale)

    def attnc_fn():
        model.preprocess("full_attention", qkv, positions=pos,
                         slot_mapping=slots, k_cache=kc, v_cache=vc,
                         q_out=q_out, **extra)

    cache_bytes = 1 if fp8 else 2
    bytes_min = (T * W * 2 + T * NQ * DQK * 2 + T * NKV * (DQK + DV) * cache_bytes
                 + T * 16)
    return torch_fn, (qkv, pos, kc, vc, slots), attnc_fn, bytes_min


def main():
    out_dir = os.environ.get("OUT", ".")
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "copy_TBps": copy_bandwidth()}
    copy = min(res["copy_TBps"])
    rows = []
    wanted = [a for a in sys.argv[1:] if not a.startswith("-")]
    for name, kw in [("T16384_norm", dict(T=16384, norm=True, fp8=False)),
                     ("T16384_nonorm", dict(T=16384, norm=False, fp8=False)),
                     ("T16384_norm_fp8", dict(T=16384, norm=True, fp8=True)),
                     ("T256_norm", dict(T=256, norm=True, fp8=False)),
                     ("T16_norm", dict(T=16, norm=True, fp8=False)),
                     ("T1_norm", dict(T=1, norm=True, fp8=False))]:
        if wanted and name not in wanted:
            continue
        torch_fn, args, attnc_fn, bytes_min = make_case(**kw)
        r = {"floor_us": bytes_min / (copy * 1e12) * 1e6}
        r["attnc_graph_us"] = [graph_time(attnc_fn) * 1e3 for _ in range(2)]
        r["attnc_launch_us"] = [bench(attnc_fn) * 1e3 for _ in range(2)]
        r["eager_us"] = [bench(lambda: torch_fn(*args)) * 1e3 for _ in range(2)]
        try:
            compiled = torch.compile(torch_fn, fullgraph=True)
            compiled(*args)
            torch.cuda.synchronize()
            r["inductor_us"] = [bench(lambda: compiled(*args)) * 1e3 for _ in range(2)]
        except Exception as e:  # report, do not hide
            r["inductor_us"] = f"failed: {type(e).__name__}: {str(e)[:160]}"
        torch._dynamo.reset()
        best = min(r["attnc_graph_us"])
        r["attnc_TBps"] = bytes_min / (best * 1e-6) / 1e12
        r["attnc_over_floor"] = best / r["floor_us"]
        if isinstance(r["inductor_us"], list):
            r["speedup_vs_inductor"] = min(r["inductor_us"]) / best
        r["speedup_vs_eager"] = min(r["eager_us"]) / best
        res[name] = r
        rows.append((name, r))
        print(name, json.dumps(r), flush=True)
    with open(os.path.join(out_dir, "bench_preprocess.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"\n{res['gpu']}, copy {copy:.2f} TB/s, {res['date']}")
    print(f"{'case':18} {'floor us':>9} {'attnc us':>9} {'launch us':>10} "
          f"{'eager us':>9} {'compile us':>11} {'x floor':>8} {'TB/s':>6} "
          f"{'vs compile':>10}")
    for name, r in rows:
        inductor = (f"{min(r['inductor_us']):11.1f}"
                    if isinstance(r["inductor_us"], list) else f"{'failed':>11}")
        print(f"{name:18} {r['floor_us']:9.1f} {min(r['attnc_graph_us']):9.1f} "
              f"{min(r['attnc_launch_us']):10.1f} {min(r['eager_us']):9.1f} "
              f"{inductor} {r['attnc_over_floor']:8.2f} {r['attnc_TBps']:6.2f} "
              f"{r.get('speedup_vs_inductor', float('nan')):10.2f}")


if __name__ == "__main__":
    main()
