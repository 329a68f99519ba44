"""A Switch-style layer with no capacity limit: each token's top-1 of 4 experts, every token taken. Its experts'
FLOPs do not depend on the router's choices (every token runs one expert), but its gather of each expert's rows
(nonzero) has no meta kernel."""

import torch
from torch import nn


class SwitchNoCapacity(nn.Module):
    """x (T, d) -> router Linear(d, E) -> each token's top-1 expert -> x + gate x expert(x)."""

    def __init__(self, d: int = 8, hidden: int = 16, experts: int = 4):
        super().__init__()
        self.top_k, self.num_experts = 1, experts
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, hidden, bias=False), nn.ReLU(), nn.Linear(hidden, d, bias=False))
            for _ in range(experts)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, choice = self.router(x).softmax(-1).max(-1)  # (T,), (T,)
        out = x.clone()
        for e, expert in enumerate(self.experts):
            rows = (choice == e).nonzero().squeeze(-1)  # (n_e,): every token that chose e
            if rows.numel():
                out.index_add_(0, rows, gate[rows, None] * expert(x[rows]))  # (n_e, d)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """(model, args): T = 16 tokens of d = 8, 4 experts of width 16, top-1, no capacity."""
    torch.manual_seed(0)
    return SwitchNoCapacity().eval(), (torch.randn(16, 8),)
