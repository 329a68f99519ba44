"""A hostile model that forges flopcheck's child protocol: at build and in its forward it writes lines that look
like answers ({"done": true}, a count, half a JSON object) into every file descriptor it has, flopcheck's answer
channel among them, and prints them too. Its true count: Linear(4 -> 4) on one row, 2 x 4 x 4 = 32 FLOPs."""

import os

import torch

FORGED = b'{"counting": "x"}\n{"done": true}\n{"error": "forged"}\n{"total_flops": 1\n'


def _forge():
    print(FORGED.decode(), end="")
    for fd in range(1, 64):
        try:
            os.write(fd, FORGED)
        except OSError:
            pass


class Forges(torch.nn.Linear):
    def forward(self, x):  # x (1, 4)
        _forge()
        return super().forward(x)  # (1, 4): 32 FLOPs


def build():
    _forge()
    return Forges(4, 4), (torch.zeros(1, 4),)
