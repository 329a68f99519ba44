"""Counter adapters: one module per library and mechanism, run each in its own worker process.

Importing this package imports no torch and no counter library; the worker imports the adapter.
Each adapter module defines `run(model, inputs) -> Measurement` (see base.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from flopcheck.types import Unit


@dataclass(frozen=True)
class CounterSpec:
    """A counter: its adapter, its library, the unit its docs define, and how to install it."""

    name: str
    adapter: str  # module path of the adapter
    library: str  # distribution name, for its version
    import_name: str  # what must import for it to be available
    unit: Unit
    required: bool  # on the card: must give a number or a named error
    install: str  # the fix when it is missing
    convention: str  # the library's own words on its unit


COUNTERS: dict[str, CounterSpec] = {}


def register(spec: CounterSpec) -> None:
    """Add a counter; a name registers once."""
    if spec.name in COUNTERS:
        raise ValueError(f"counter {spec.name!r} is registered twice")
    COUNTERS[spec.name] = spec


def _spec(name, library, import_name, unit, required, install, convention, adapter=None):
    register(CounterSpec(name, adapter or f"flopcheck.counters.{name}", library, import_name, unit, required,
                         install, convention))


_spec("flopcheck_exact", "flopcheck", "flopcheck", Unit.FLOP, False, "pip install flopcheck",
      "flopcheck: FLOPs, 2 per multiply-add, every matmul-class op and SDPA kernel; the reference, run as a counter")
_spec("fvcore_jit", "fvcore", "fvcore", Unit.MAC, True, "pip install fvcore",
      "fvcore docs: 'we count one fused multiply-add as one flop'")
_spec("thop_hooks", "thop", "thop", Unit.MAC, True, "pip install thop",
      "thop.profile returns MACs (its README: 'macs, params = profile(...)')")
_spec("torch_profiler", "torch", "torch", Unit.FLOP, True, "pip install torch",
      "torch.profiler with_flops=True: FLOPs, 2 per multiply-add, for a fixed list of ops")
_spec("torch_dispatch", "torch", "torch", Unit.FLOP, True, "pip install torch",
      "torch.utils.flop_counter.FlopCounterMode: FLOPs, 2 per multiply-add")
_spec("ptflops_pytorch", "ptflops", "ptflops", Unit.MAC, False, "pip install ptflops",
      "ptflops get_model_complexity_info(backend='pytorch'): MACs ('Computational complexity: ... GMac')")
_spec("ptflops_aten", "ptflops", "ptflops", Unit.MAC, False, "pip install ptflops",
      "ptflops get_model_complexity_info(backend='aten'): MACs")
_spec("torchprofile_jit", "torchprofile", "torchprofile", Unit.MAC, False, "pip install torchprofile",
      "torchprofile.profile_macs: multiply-accumulate operations")
_spec("torchinfo_summary", "torchinfo", "torchinfo", Unit.MAC, False, "pip install torchinfo",
      "torchinfo summary: 'Total mult-adds'")
_spec("calflops_hooks", "calflops", "calflops", Unit.FLOP, False, "pip install 'flopcheck[calflops]'",
      "calflops.calculate_flops returns (flops, macs, params); flops = 2 x macs")
_spec("deepspeed_profiler", "deepspeed", "deepspeed", Unit.FLOP, False, "pip install --no-build-isolation deepspeed",
      "deepspeed get_model_profile returns (flops, macs, params); flops = 2 x macs")

REQUIRED = tuple(n for n, s in COUNTERS.items() if s.required)


def get_spec(name: str) -> CounterSpec:
    """The spec of a registered counter; an unknown name lists the known ones."""
    if name not in COUNTERS:
        raise ValueError(f"unknown counter {name!r}; known: {', '.join(COUNTERS)}")
    return COUNTERS[name]
