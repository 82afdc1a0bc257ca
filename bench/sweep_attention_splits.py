"""Decode time against the KV split count (the benchmark's decode shape:
context 8192, Hq 16, Hkv 2, 192/128, bf16 cache in 64-token pages), for
choosing the split rule. CUDA-graph replay times.

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=<libattnc.so> \
    python3 bench/sweep_attention_splits.py
"""
import torch

import bench_attention as b


def main():
    torch.manual_seed(0)
    model = b.model_for(16, 2)
    hints = model.kernel("full_attention", "attention").abi.get("hints", {})
    top = hints.get("max_kv_splits", 1)
    for batch in (1, 8, 32, 64):
        length = 8192
        q = torch.randn(batch, 16, b.DQK, device=b.DEV, dtype=torch.bfloat16)
        k = torch.randn(batch, 2, length, b.DQK, device=b.DEV, dtype=torch.bfloat16)
        v = torch.randn(batch, 2, length, b.DV, device=b.DEV, dtype=torch.bfloat16)
        kc, vc, tables = b.paged(k, v, batch, length, 2)
        lens = torch.full((batch,), length, device=b.DEV, dtype=torch.int32)
        starts = torch.arange(batch + 1, device=b.DEV, dtype=torch.int32)
        out = torch.empty(batch, 16, b.DV, device=b.DEV, dtype=torch.bfloat16)
        workspace = b.workspace_for(model, "full_attention")
        kv_bytes = batch * 2 * length * (b.DQK + b.DV) * 2
        auto = model.attention_splits("full_attention", batch, batch)
        row = []
        for splits in sorted({1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, auto}):
            if splits > top:
                continue
            try:
                model.attention_splits("full_attention", batch, batch, num_kv_splits=splits)
            except Exception:  # noqa: BLE001 - over the workspace capacity
                continue

            def run():
                model.attention("full_attention", q, k_cache=kc, v_cache=vc,
                                block_tables=tables, seq_lens=lens, query_start_loc=starts,
                                out=out, workspace=workspace, num_kv_splits=splits)
            us = b.graph_time(run) * 1e3
            row.append(f"{splits}{'*' if splits == auto else ''}:{us:.1f}us/{kv_bytes / us / 1e6:.2f}")
        print(f"B{batch}: " + "  ".join(row), flush=True)


if __name__ == "__main__":
    main()
