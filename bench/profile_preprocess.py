"""Runs the 16384-token preprocess case a few times, for Nsight Compute:
ncu --clock-control none -k regex:preprocess python3 bench/profile_preprocess.py"""
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_preprocess import make_case  # noqa: E402

_, _, attnc_fn, _ = make_case(T=16384, norm=True, fp8=False)
for _ in range(3):
    attnc_fn()
torch.cuda.synchronize()
