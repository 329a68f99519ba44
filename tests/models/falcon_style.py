"""Two habits of transformers' decoders before 5.2x (Falcon's, in the held-out round): a Linear subclass whose forward
is `x @ self.weight.T` (FalconLinear: never F.linear), and a rotary embedding that forms its frequencies as the
matmul `inv_freq (d/2, 1) @ positions (1, T)` in its own forward."""

import torch
from torch import nn


class AtLinear(nn.Linear):
    """y = x W^T by '@' (transformers' FalconLinear): a torch layer's subclass that never calls F.linear."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T  # (B, T, out)


class Rotary(nn.Module):
    """cos and sin of theta_{t,i} = t / 10000^(2i/d), the angles as the outer product inv_freq @ positions."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim))  # (d/2,)

    def forward(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = self.inv_freq[None, :, None] @ positions[:, None, :].float()  # (B, d/2, 1) @ (B, 1, T): (B, d/2, T)
        angles = torch.cat((freqs, freqs), dim=1).transpose(1, 2)  # (B, T, d)
        return angles.cos(), angles.sin()


class Net(nn.Module):
    """x -> rotate(AtLinear(x)) -> Linear: a projection by '@', rotated by angles from a matmul, then a head."""

    def __init__(self, d: int = 16, classes: int = 4) -> None:
        super().__init__()
        self.rotary = Rotary(d)
        self.proj = AtLinear(d, d, bias=False)
        self.head = nn.Linear(d, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[1], device=x.device)[None].expand(x.shape[0], -1)  # (B, T)
        cos, sin = self.rotary(positions)  # (B, T, d) each
        h = self.proj(x)  # (B, T, d)
        return self.head(h * cos + h.flip(-1) * sin)  # (B, T, classes)


def factory() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(model, args): 16 tokens of width 16."""
    return Net().eval(), (torch.zeros(1, 16, 16),)
