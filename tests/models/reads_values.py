"""A user's model that reads its mask's values: the length of each prompt from mask.sum() decides how many text
tokens its linear runs over, and a boolean index picks the kept ones."""

import torch


class ReadsMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x, mask):  # x (1, S, 8), mask (1, S) of 0/1
        n = int(mask.sum().item())  # the prompt's length: a value
        kept = x[:, :n]  # (1, n, 8)
        picked = x[mask.bool()]  # (n, 8): a shape that follows the values
        return self.proj(kept), self.proj(picked)


def build():
    # 5 of 8 tokens kept: the mask is built of known values (ones, then zeros), x of unknown ones (torch.empty)
    mask = torch.cat([torch.ones(1, 5), torch.zeros(1, 3)], dim=1)
    return ReadsMask(), (torch.empty(1, 8, 8), mask)


class ReadsActivation(torch.nn.Module):
    """Branches on an activation's value, which no shadow knows: only real tensors can answer."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x):  # x (1, 8)
        return self.proj(x) if bool(x.sum() >= 0) else self.proj(-x)


def build_activation():
    return ReadsActivation(), (torch.empty(1, 8),)


class ReadsActivationHuge(ReadsActivation):
    """ReadsActivation with a Linear(2^18, 2^18): 68,719,738,880 parameters, 275 GB in fp32."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(2**18, 2**18)


def build_huge():
    return ReadsActivationHuge(), (torch.empty(1, 2**18),)


class Loops(torch.nn.Module):
    """A data-dependent loop: its input's values say how many times the linear runs."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):  # x (1, 2^22 + 1): more elements than any value shadow is kept for
        h = x[:, :4]  # (1, 4)
        for _ in range(int(x.mean().item())):  # the mean of the factory's input: 3 passes
            h = self.proj(h)  # (1, 4): 2 x 4 x 4 = 32 FLOPs in its matmul
        return h


def build_loop():
    # the factory's own input, 3.0 everywhere: the loop runs 3 times; too large (4,194,305 elements) for a shadow on
    # meta, so only real tensors know its values, as for a loaded sample
    return Loops(), (torch.full((1, 2**22 + 1), 3.0),)
