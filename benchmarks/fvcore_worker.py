"""One fvcore count of a reference DiT, run as its own process by bench_count.py.

fvcore traces the model with torch.jit on real tensors (it cannot run on meta), so the model must
exist on the CPU. Mode 'init' builds it the way the DiT code does (constructor, then the paper's
initialisation): how fvcore is used in practice. Mode 'empty' allocates it uninitialised: the
fastest fvcore can be. Prints fvcore's total, in MACs as fvcore reports.
Usage: python fvcore_worker.py MODEL INPUT_SIZE init|empty
"""

import sys

import torch
from fvcore.nn import FlopCountAnalysis

from reference_models import get_config
from reference_models.dit import DiT, build_dit, initialize_weights, make_inputs

name, input_size, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cfg = get_config(name, input_size=input_size)
model = initialize_weights(DiT(cfg)).eval() if mode == "init" else build_dit(cfg, device="cpu")
analysis = FlopCountAnalysis(model, make_inputs(cfg, device="cpu"))
analysis.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
with torch.no_grad():
    print(f"fvcore {name} input {input_size}: {analysis.total():,} MACs")
