"""The reconcile verb: every counter's count of each subject explained against the truth, cause by cause, to a
residual; with sweep, each counter judged from its totals at four latent sides too (the T-sweep).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flopcheck.counters import REQUIRED
from flopcheck.errors import InputError
from flopcheck.published.reconcile import names as formula_names
from flopcheck.reconciler import explain
from flopcheck.reconciler.sweep import sweep_sizes, sweeps_for
from flopcheck.render import fit
from flopcheck.render.reconcile import to_list, to_text
from flopcheck.subject import counts_of
from flopcheck.verbs.compare import counter_names
from flopcheck.verbs.formulas import formula_results

DEFAULT_RECONCILE = ("DiT-S/2", 32)  # reconcile with no model: DiT-S/2 at 256 px, both attention paths


@dataclass
class Reconciling:
    """Every counter's count explained against the truth, and the T-sweeps' verdicts from totals alone."""

    results: list[Any]
    sweeps: list[Any]
    tokens: dict[str, Any]  # attention path -> the sweep's token counts, in words
    header: str = ""  # a model without a formula: its input and its reference, in words
    required: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """1 when a residual is left, or a counter on the card gave no number."""
        unexplained = any(r.residual not in (0, None) or r.incomplete for r in self.results)
        return 1 if unexplained or any(r.error for r in self.results if r.counter in self.required) else 0

    def to_text(self) -> str:
        head = "".join(f"{line}\n" for line in fit(self.header.rstrip("\n"))) + "\n" if self.header else ""
        return head + to_text(self.results, self.sweeps, self.tokens)

    def to_data(self) -> list[Any]:
        return to_list(self.results, self.sweeps)


def run(
    subjects: list[Any],
    names: list[str] | None = None,
    timeout_s: float = 600.0,
    sweep: bool = False,
    progress: Any = None,
    formulas: list[str] | None = None,
    training: bool = False,
    device: str = "meta",
) -> Reconciling:
    """Each named counter on each subject explained, cause by cause; with sweep, a reference model is also counted
    at four latent sides and each counter judged from its totals alone (the T-sweep). With formulas (names or
    'all'), those published formulas are explained against the exact count (the exact training step with
    training), and the counters run only when named. `device` (not meta): a spec's reference is its exact count on
    real tensors there (cpu: its masks and routers read), the inputs the counters run on."""
    _check_device(subjects, device, formulas)
    subjects = [_placed(s, device) for s in subjects]
    first = subjects[0]
    if training and not formulas:
        raise InputError("reconcile --training explains the formulas against the exact training step: add --formula")
    if formulas:
        formula_names(formulas)  # an unknown name: exit 2 before anything runs
        if sweep:
            raise InputError("--sweep judges counters from their totals; a formula is arithmetic: drop one of them")
        found = [r for s in subjects for r in formula_results(s, formulas, training)]
        if not names:
            return Reconciling(found, [], {}, _header(first, training))
        counted = run(subjects, names, timeout_s, False, progress)
        return Reconciling(found + counted.results, [], {}, counted.header, REQUIRED)
    if sweep and not first.formula_family:
        raise InputError(
            f"--sweep varies a reference model's latent side; {first.text} has its own input: "
            f"reconcile it at --resolution values one by one"
        )
    for s in subjects:
        s.check_executable()
    main_size = first.key()[1]  # a bad model or size: exit 2 before anything runs
    grid = sweep_sizes(first.config().patch_size) if sweep else []
    swept = [s.with_options(input_size=g) for s in subjects for g in grid if g != main_size]
    counts = counts_of(subjects + swept, counter_names(names), timeout_s=timeout_s, progress=progress)
    refs = {s.key(): s.reference() for s in subjects}
    results = [explain(c, refs[(c.model, c.input_size, c.attn)]) for c in counts if c.input_size == main_size]
    tokens = {s.attn: ", ".join(str(s.with_options(input_size=g).config().tokens) for g in grid) for s in subjects}
    return Reconciling(results, sweeps_for(results, counts, grid), tokens, _header(first, device=device), REQUIRED)


def _check_device(subjects: list[Any], device: str, formulas: list[str] | None) -> None:
    """--device places a spec's exact count (its reference); a reference model's truth is its formula, and the
    formulas are explained against the count on meta: there it would be ignored, so it is refused."""
    if device == "meta":
        return
    if formulas:
        raise InputError(
            f"--device {device} places the counters' reference; --formula explains formulas on meta: drop one of them"
        )
    fixed = next((s.text for s in subjects if s.formula_family), None)
    if fixed is not None:
        raise InputError(f"--device {device}: {fixed} is a reference model, its truth is its formula: drop --device")


def _placed(subject: Any, device: str) -> Any:
    """The subject with its exact count made on `device` (not meta: on real tensors, the counters' inputs), so its
    reference, its batch and its header are that count's."""
    if device == "meta":
        return subject
    return replace(subject, _measured=subject.measured(device=device))


def _header(first: Any, training: bool = False, device: str = "meta") -> str:
    """A model without a hand formula: its input and its reference, in words ('' for a reference model)."""
    if first.formula_family:
        return ""
    measured = first.measured(training=training)
    where = "" if device == "meta" else f" on real {device} tensors"
    return f"{first.text} · input {measured.inputs} · reference: its exact count{where}\n\n"
