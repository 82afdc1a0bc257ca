"""One launch of each benchmarked attention case, for Nsight Compute:

    ncu --kernel-name regex:attention --section SpeedOfLight \
        --section Occupancy --section WarpStateStats \
        python3 bench/profile_attention.py

(PYTHONPATH=python, ATTNC_LIBRARY=<libattnc.so>.) The cases and inputs are
bench_attention.py's."""
import torch

import bench_attention as b


def main():
    torch.manual_seed(0)
    for batch in (8, 64):
        q = torch.randn(batch, 16, b.DQK, device=b.DEV, dtype=torch.bfloat16)
        k = torch.randn(batch, 2, 8192, b.DQK, device=b.DEV, dtype=torch.bfloat16)
        v = torch.randn(batch, 2, 8192, b.DV, device=b.DEV, dtype=torch.bfloat16)
        kc, vc, tables = b.paged(k, v, batch, 8192, 2)
        model = b.model_for(16, 2)
        lens = torch.full((batch,), 8192, device=b.DEV, dtype=torch.int32)
        starts = torch.arange(batch + 1, device=b.DEV, dtype=torch.int32)
        model.attention("full_attention", q, k_cache=kc, v_cache=vc, block_tables=tables,
                        seq_lens=lens, query_start_loc=starts)
    seq, heads = 8192, 16
    q = torch.randn(seq, heads, b.DQK, device=b.DEV, dtype=torch.bfloat16)
    k = torch.randn(1, heads, seq, b.DQK, device=b.DEV, dtype=torch.bfloat16)
    v = torch.randn(1, heads, seq, b.DV, device=b.DEV, dtype=torch.bfloat16)
    kc, vc, tables = b.paged(k, v, 1, seq, heads)
    model = b.model_for(heads, heads)
    model.attention("full_attention", q, k_cache=kc, v_cache=vc, block_tables=tables,
                    seq_lens=torch.tensor([seq], device=b.DEV, dtype=torch.int32),
                    query_start_loc=torch.tensor([0, seq], device=b.DEV, dtype=torch.int32))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
