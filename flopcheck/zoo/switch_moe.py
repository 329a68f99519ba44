"""Routed experts whose work depends on the router's output: a Switch-style layer (top-1 of E experts per token, each
expert taking at most C = ceil(capacity_factor x T / E) tokens, the rest dropped: they pass through the residual) and
an expert-choice layer (each expert picks its top C tokens). Each expert is its own module, called on the rows it
took, so a count on real tensors (`--device cpu`) reads the tokens each expert processed (exact.routing).

Not a zoo Entry: which rows an expert takes is a value, so on meta (the zoo's report) the forward cannot run; count
it with `flopcheck count flopcheck.zoo.switch_moe:factory --device cpu`.
"""

import math

import torch
from torch import nn


def _expert(d: int, hidden: int) -> nn.Sequential:
    """One expert: Linear(d, h) -> ReLU -> Linear(h, d)."""
    return nn.Sequential(nn.Linear(d, hidden, bias=False), nn.ReLU(), nn.Linear(hidden, d, bias=False))


class SwitchMoE(nn.Module):
    """x (T, d) -> router Linear(d, E) -> each token's top-1 expert, at most C tokens an expert in token order ->
    x + gate x expert(x) for the tokens taken, x for the tokens dropped."""

    def __init__(self, d: int = 8, hidden: int = 16, experts: int = 4, capacity_factor: float = 1.0):
        super().__init__()
        self.top_k, self.num_experts, self.capacity_factor = 1, experts, capacity_factor
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(_expert(d, hidden) for _ in range(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.shape[0]  # x (T, d)
        capacity = math.ceil(self.capacity_factor * tokens / self.num_experts)  # C
        gate, choice = self.router(x).softmax(-1).max(-1)  # (T,), (T,): ties go to the lowest expert
        out = x.clone()  # a dropped token passes through the residual
        for e, expert in enumerate(self.experts):
            rows = (choice == e).nonzero().squeeze(-1)[:capacity]  # (n_e,): the first C tokens that chose e
            if rows.numel():
                out.index_add_(0, rows, gate[rows, None] * expert(x[rows]))  # (n_e, d)
        return out


class ExpertChoiceMoE(nn.Module):
    """x (T, d) -> router Linear(d, E) -> each expert's top C tokens by score, C = ceil(capacity_factor x T / E) ->
    x + sum over the experts that picked a token of gate x expert(x)."""

    def __init__(self, d: int = 8, hidden: int = 16, experts: int = 4, capacity_factor: float = 1.0):
        super().__init__()
        self.num_experts, self.capacity_factor = experts, capacity_factor
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(_expert(d, hidden) for _ in range(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        capacity = math.ceil(self.capacity_factor * x.shape[0] / self.num_experts)  # C, x (T, d)
        scores = self.router(x).softmax(-1)  # (T, E)
        gate, rows = scores.t().topk(capacity, dim=-1)  # (E, C): each expert's C tokens
        out = x.clone()
        for e, expert in enumerate(self.experts):
            out.index_add_(0, rows[e], gate[e, :, None] * expert(x[rows[e]]))  # (C, d)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """(model, args): a Switch layer, T = 16 tokens of d = 8, 4 experts of width 16, capacity factor 1.0 (C = 4)."""
    torch.manual_seed(0)
    return SwitchMoE().eval(), (torch.randn(16, 8),)


def expert_choice() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """(model, args): an expert-choice layer, T = 16 tokens of d = 8, 4 experts of width 16, C = 4 each."""
    torch.manual_seed(0)
    return ExpertChoiceMoE().eval(), (torch.randn(16, 8),)
