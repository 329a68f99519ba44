"""A mixture of experts whose experts run as one grouped matmul (torch._grouped_mm, as transformers' Mixtral does):
the tokens sorted by expert, each expert's rows multiplied by its own weight, in bfloat16 (the op's dtype)."""

import torch
from torch import nn


class GroupedExperts(nn.Module):
    """x (T, d) -> router Linear(d, E) -> tokens sorted by expert -> grouped x @ W_e (E, d, F) -> (T, F)."""

    offs: torch.Tensor  # a buffer: register_buffer's attribute, typed here

    def __init__(self, d: int = 16, hidden: int = 32, experts: int = 2) -> None:
        super().__init__()
        self.router = nn.Linear(d, experts, bias=False, dtype=torch.bfloat16)
        self.w = nn.Parameter(torch.zeros(experts, d, hidden, dtype=torch.bfloat16))
        self.register_buffer("offs", torch.tensor([3, 8], dtype=torch.int32))  # rows 0-2 expert 0, rows 3-7 expert 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.bfloat16)  # (T, d)
        gate = self.router(x).softmax(-1)  # (T, E)
        out: torch.Tensor = torch._grouped_mm(x, self.w, offs=self.offs) * gate[:, :1]  # (T, F)
        return out


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): T = 8 tokens of d = 16, 2 experts of width 32; in eval mode."""
    return GroupedExperts().eval(), (torch.zeros(8, 16),)
