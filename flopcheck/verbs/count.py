"""The count verb: one subject, one scope -> a CountResult: the exact count, beside the hand formula where the
subject's family has one (a reference model), else the exact count alone is the reference (a spec, a live module).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flopcheck.counted import ExactCount
from flopcheck.errors import InputError
from flopcheck.formula import exact_matches, formula_breakdown
from flopcheck.render.count import to_dict, to_text
from flopcheck.types import Breakdown, Scope

if TYPE_CHECKING:
    from flopcheck.exact.training import TrainingCount
    from flopcheck.subject import Subject


@dataclass(frozen=True)
class CountResult:
    """The exact count of one model, one input, one scope, beside its formula where it has one; FLOPs."""

    name: str
    config: Any  # a reference model's config; None for a model without a formula
    batch: int
    scope: Scope
    formula: Breakdown | None  # the hand formula scaled to the scope; None: the exact count is the reference
    exact: ExactCount  # one counted forward (batch 2N under CFG)
    training: TrainingCount | None = (
        None  # a training scope: the exact step (exact.training.TrainingCount), forward and backward
    )
    measured: Any = None  # a model without a formula: specs.measure.Measured (its input, notes, parameters, blocks)
    attn_kernel: str = ""  # the kernel a masked attention's executed work follows (--attn-kernel); '' not given

    @property
    def breakdown(self) -> Breakdown:
        """The reference term by term, scaled to the scope: the formula, or the exact count's own terms."""
        return self.formula if self.formula is not None else self.measured.breakdown().scoped(self.scope)

    @property
    def exit_code(self) -> int:
        """0 when the exact count equals the formula term by term (a model without one: 0), else 1."""
        return 0 if self.agrees else 1

    def to_text(self) -> str:
        return to_text(self)

    def to_data(self) -> dict[str, Any]:
        return to_dict(self)

    @property
    def exact_factor(self) -> int:
        """What multiplies the counted forward: steps and training (CFG is already in its batch)."""
        return self.scope.steps * (3 if self.scope.training else 1)

    @property
    def exact_total(self) -> int:
        """The exact count scaled to the scope, FLOPs."""
        return self.exact.total * self.exact_factor

    def exact_by_path(self) -> dict[str, int]:
        """Exact FLOPs per path, scaled to the scope."""
        return {p: f * self.exact_factor for p, f in self.exact.by_path().items()}

    @property
    def agrees(self) -> bool:
        """Formula and exact count equal in total and term by term (no formula: nothing to disagree with)."""
        return self.formula is None or exact_matches(self.exact_by_path(), self.formula)


def check_device(device: str) -> None:
    """A device torch knows and this machine has: meta (no compute), cpu, or an accelerator that is here."""
    if device == "meta":  # the default: no torch needed to say so (a spec's count imports it in its child)
        return
    import torch  # lazy: torch-free door (a name that resolves to nothing is refused before torch loads)

    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError):
        raise InputError(f"--device {device!r} is not a torch device: use meta (the default), cpu or cuda") from None
    backend = getattr(torch, kind, None)
    if kind not in ("meta", "cpu") and not (backend is not None and backend.is_available()):
        raise InputError(f"--device {device!r}: this machine has no {kind}; use meta (the default) or cpu")


def training_options(
    training: bool,
    freeze: Sequence[str] | None = None,
    checkpoint: Sequence[str] | None = None,
    optimizer: str | None = None,
) -> dict[str, Any]:
    """What shapes a training step (frozen and checkpointed module patterns, the optimizer counted apart: default
    adamw, 'none' for none); given without training it would be ignored, so it is refused."""
    for flag, value in (("freeze", freeze), ("checkpoint", checkpoint), ("optimizer", optimizer)):
        if value and not training:
            raise InputError(f"--{flag} shapes a training step: add --training")
    chosen = optimizer or "adamw"
    return {
        "frozen": tuple(freeze or ()),
        "checkpointed": tuple(checkpoint or ()),
        "optimizer": chosen if training and chosen != "none" else "",
    }


def run(
    subject: Subject,
    scope: Scope = Scope(),
    device: str = "meta",
    frozen: tuple[str, ...] = (),
    checkpointed: tuple[str, ...] = (),
    optimizer: str = "",
    attn_kernel: str = "",
    generate: tuple[int, int] | None = None,
) -> CountResult:
    """The CountResult of a subject (flopcheck.subject.Subject) at a scope: a reference model's formula and exact
    count on `device`; any other model's exact count on `device` (a named model's measured in its child process; on
    cpu its masks' and routers' values are read), with
    the exact training step when the scope is training (its executed FLOPs following `attn_kernel`: flash,
    efficient, cudnn or math; default flash where the attention is fused)."""
    if subject.formula_family and generate:
        raise InputError(f"--generate counts a causal LM's decoding: {subject.text} is not one")
    check_generation(bool(generate), scope.training, scope.steps, scope.cfg)
    if subject.formula_family:  # torch imported here: a name that resolves to nothing is refused before it
        from flopcheck.exact import exact_count  # lazy: torch (see above)
        from flopcheck.exact.training import training_step  # lazy: torch

        config = subject.config()
        formula = formula_breakdown(subject.text, config, batch=subject.batch, scope=scope)
        exact = exact_count(subject.text, config, batch=subject.batch, cfg=scope.cfg, device=device)
        step = (
            training_step(subject.text, config, subject.batch, tuple(frozen), tuple(checkpointed), optimizer)
            if scope.training
            else None
        )
        return CountResult(subject.text, config, subject.batch, scope, formula, exact, with_kernel(step, attn_kernel))
    m = subject.measured(
        training=scope.training,
        frozen=tuple(frozen),
        checkpointed=tuple(checkpointed),
        optimizer=optimizer,
        device=device,
        generate=generate,
    )
    step = with_kernel(m.training, attn_kernel, alone=True)
    return CountResult(m.text, None, m.batch or subject.spec_batch, scope, None, m.exact, step, m, attn_kernel)


def generation_options(
    generate: int | None,
    prompt_tokens: int | None,
    text_tokens: int | None,
    training: bool = False,
    steps: int | None = None,
    cfg: bool = False,
) -> tuple[int, int] | None:
    """(prompt tokens, decode steps) of --generate N [--prompt-tokens P] (P: --text-tokens, else 0: the counted
    forward's own tokens), or None; a prompt without decode steps, two prompts, or a generation beside a training
    step or a sampler's steps and CFG (check_generation), is refused."""
    if prompt_tokens and not generate:
        raise InputError("--prompt-tokens sets a generation's prompt: add --generate N (decode steps)")
    check_generation(bool(generate), training, steps or 1, cfg)
    if prompt_tokens and text_tokens and prompt_tokens != text_tokens:
        raise InputError(f"--prompt-tokens {prompt_tokens} and --text-tokens {text_tokens}: give one (the prompt)")
    return (prompt_tokens or text_tokens or 0, generate) if generate else None


def check_generation(generate: bool, training: bool, steps: int, cfg: bool) -> None:
    """A generation is its own total (prefill + decode steps): beside a training step (which counts no decoding) or a
    diffusion sampler's steps and CFG (which would scale the prefill alone) it would give a second total: refused."""
    if not generate:
        return
    if training:
        raise InputError(
            "--generate counts inference (prefill + decode steps); --training counts one training step: "
            "give one of them"
        )
    if steps != 1 or cfg:
        given = " and ".join(f for f, on in (("--steps", steps != 1), ("--cfg", cfg)) if on)
        verb = "scale" if " and " in given else "scales"
        raise InputError(
            f"{given} {verb} a diffusion sampler's forwards; --generate counts a causal LM's decoding step by step: "
            f"drop {given}"
        )


def with_kernel(step: TrainingCount | None, attn_kernel: str, alone: bool = False) -> TrainingCount | None:
    """The training step (None: no training) with the attention kernel its executed FLOPs follow (none given: its
    default); a kernel without a training step would be ignored, so it is refused, unless `alone` (a spec's count,
    whose masked attention's executed work follows the kernel)."""
    from flopcheck.exact.training import ATTN_KERNELS  # lazy: torch

    if attn_kernel and attn_kernel not in ATTN_KERNELS:
        raise InputError(f"attention kernel {attn_kernel!r}: use {', '.join(ATTN_KERNELS)}")
    if attn_kernel and step is None and not alone:
        raise InputError("--attn-kernel sets a training step's executed FLOPs: add --training")
    return replace(step, attn_kernel=attn_kernel) if step is not None and attn_kernel else step
