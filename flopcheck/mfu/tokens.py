"""`flops_per_token`: the exact training FLOPs of one token, for loops that compute MFU as torchtitan does
(mfu = flops_per_token x tokens/s / peak, torchtitan/components/metrics.py at b5bcd76c), where torchtitan's own
figure is 6N + 12LHQT (flopcheck.published.torchtitan)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from flopcheck import checks

if TYPE_CHECKING:
    from torch import nn


def flops_per_token(
    model_or_name: nn.Module | str, seq_len: int, *, config: str | None = None, causal: bool | None = None
) -> Fraction:
    """One token's training FLOPs (2 per multiply-add): the exact step of one sequence of `seq_len` tokens / seq_len,
    attention dense, the model's FLOPs as every flopcheck verb takes them (torchtitan's 12LHQT counts it so too;
    `causal` marks a module's attention causal, which `flopcheck audit` reads for the needed work beside it).

    Args:
        model_or_name: a language model nn.Module taking token ids [batch, seq_len], or a spec flopcheck resolves
            ('transformers:GPT2LMHeadModel', with `config`).
        seq_len: tokens per sequence.
        config: a spec's config.json (a path, or a config flopcheck ships: 'gpt2', 'llama-3-8b').
        causal: a module's attention is causal (default False); a name's is read from its class.
    Returns:
        a Fraction: exact, multiply it by tokens/s and divide by the peak.
    """
    checks.COUNT("seq_len", seq_len)
    if isinstance(model_or_name, str):
        return _of_name(model_or_name, seq_len, config, causal)
    import torch

    from flopcheck.mfu.meter import step_work, true_flops

    ids = torch.zeros(1, seq_len, dtype=torch.long, device="meta")
    work, _ = step_work(model_or_name, (ids,), {}, training=True, causal=bool(causal))
    return true_flops(work)[0] / seq_len


def _of_name(name: str, seq_len: int, config: str | None, causal: bool | None) -> Fraction:
    """A spec's exact step at one sequence of seq_len tokens, per token."""
    from flopcheck.auditor.utilization import is_causal, work_from_step
    from flopcheck.mfu.meter import true_flops
    from flopcheck.specs import parse
    from flopcheck.subject import subject_of

    subject = subject_of(parse(name, text_tokens=seq_len, config=config))
    m = subject.measured(training=True)
    masked = is_causal(subject) if causal is None else causal
    work = work_from_step(m.step, m.batch or 1, masked)
    return true_flops(work)[0] / seq_len
