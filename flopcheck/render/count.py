"""A CountResult as text and as a JSON-ready dict: term by term, the exact count beside the formula where the model
has one, else the exact count alone (the reference of a model without a formula)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from flopcheck.counted import ExactCount
from flopcheck.fmt import commas, si, table
from flopcheck.types import Breakdown, Unit, Work

if TYPE_CHECKING:
    from flopcheck.exact.training import TrainingCount
    from flopcheck.verbs.count import CountResult


def headline(r: CountResult) -> str:
    """'DiT-XL/2 · latent 32x32 (256 px) · T=256 · batch 1 · attn sdpa · forward', or 'timm:resnet50 · x (1, 3,
    224, 224) float32 · batch 1 · forward'."""
    if r.formula is None:
        return f"{r.name} · {r.measured.inputs} · batch {r.batch} · {r.scope.describe()}"
    return f"{r.name} · {r.config.describe_input()} · batch {r.batch} · attn {r.config.attn} · {r.scope.describe()}"


def to_text(r: CountResult) -> str:
    """The breakdown term by term in FLOPs and MACs, the exact count beside the formula (or alone)."""
    return _formula_text(r, r.formula) if r.formula is not None else _exact_text(r)


def to_dict(r: CountResult) -> dict[str, Any]:
    """JSON-ready: full integers, FLOPs and MACs, every term, the exact count and what it left uncounted."""
    return _formula_dict(r, r.formula) if r.formula is not None else _exact_dict(r)


def _formula_text(r: CountResult, form: Breakdown) -> str:
    exact = r.exact_by_path()
    rows = [
        [t.path, t.kind.value, t.formula, commas(t.flops), commas(exact.get(t.path, 0)), commas(t.macs)]
        for t in form.terms
    ]
    rows += [[p, "(exact only)", "", "0", commas(f), "0"] for p, f in exact.items() if p not in form.by_path()]
    rows.append(["total", "", "", commas(form.total), commas(r.exact_total), commas(form.total_macs)])
    lines = [
        headline(r),
        *_incomplete(r.exact, r.training),
        "symbols: " + " ".join(f"{k}={v}" for k, v in form.symbols),
        "",
        table(rows, ["term", "kind", "formula", "formula FLOPs", "exact FLOPs", "MACs"], right={3, 4, 5}),
        "",
        f"total: {commas(form.total)} FLOPs = {si(form.total)} = {si(form.total, Unit.MAC)}",
        "by kind (FLOPs): " + ", ".join(f"{k.value} {commas(v)}" for k, v in form.by_kind().items()),
        _verdict(r, form),
        *_attention_lines(r),
        "",
        *_uncounted(r.exact),
    ]
    if r.training is not None:
        lines += ["", *training_lines(r.training)]
    return "\n".join(lines)


def _attention_lines(r: CountResult) -> list[str]:
    """Attention under its masks in every convention (none when no call has a mask), scaled to the scope."""
    from flopcheck.exact.attention_work import scaled  # lazy: torch-free door (flopcheck.exact's torch)
    from flopcheck.render.attention import needed_line, to_lines  # lazy: it imports flopcheck.exact

    calls = scaled(r.exact.attention, r.exact_factor)
    lines = to_lines(calls, r.attn_kernel)
    return ["", *lines, *needed_line(r.exact_total, calls)] if lines else []


def _attention_dict(r: CountResult) -> dict[str, Any]:
    """The 'attention' key: every SDPA call kind's dense, needed and executed FLOPs (none without an SDPA call)."""
    from flopcheck.exact.attention_work import scaled, to_dict  # lazy: torch-free door (flopcheck.exact's torch)

    calls = scaled(r.exact.attention, r.exact_factor)
    return {"attention": to_dict(calls, r.attn_kernel)} if calls else {}


def _generation_lines(m: Any) -> list[str]:
    """A causal LM's generation (--generate): prefill, decode steps, per output token, bytes a step reads."""
    from flopcheck.render.generation import to_lines  # lazy: torch-free door (flopcheck.exact's torch)

    g = getattr(m, "generation", None)
    return ["", *to_lines(g)] if g is not None else []


def _incomplete(exact: ExactCount, training: TrainingCount | None) -> list[str]:
    """The lines under the headline saying what a count lacks: its forward's, and a training step's backward's."""
    lines = [exact.incompleteness()] if not exact.complete else []
    if training is not None and not training.backward.complete:
        lines.append(training.backward.incompleteness().replace("INCOMPLETE:", "INCOMPLETE (the backward):", 1))
    return lines


def training_lines(t: TrainingCount) -> list[str]:
    """The exact training step beside the 3x rule, and every term where the rule's backward = 2 x forward fails."""
    rows = [
        [p or "(top)", commas(f), commas(b), commas(2 * f), f"{b - 2 * f:+,}", why] for p, f, b, why in t.differences()
    ]
    lines = [
        "training step, exact (on meta: the forward, a mean loss, its backward from the loss):",
        f"  forward                 {commas(t.forward.total):>24} FLOPs",
        f"  backward                {commas(t.backward.total):>24} FLOPs",
        f"  forward + backward      {commas(t.total):>24} FLOPs = {si(t.total)}",
        f"  model FLOPs             {commas(t.model_flops):>24} FLOPs  (autograd's forward + backward, no recompute: "
        f"what MFU is defined on)",
        f"  executed FLOPs          {commas(t.executed_flops):>24} FLOPs  (+ {commas(t.checkpoint_recompute)} "
        f"checkpointing's recompute + {commas(t.kernel_recompute)} the {t.kernel} attention kernel's QK^T recompute: "
        f"what the hardware runs)",
        f"  3 x forward (the rule)  {commas(t.rule_3x):>24} FLOPs",
        f"  exact - rule            {t.total - t.rule_3x:>+24,} FLOPs",
    ]
    if rows:
        lines += [
            "",
            "where the backward is not 2 x the forward:",
            table(rows, ["term", "forward", "backward", "2 x forward", "difference", "why"], right={1, 2, 3, 4}),
        ]
    if not t.backward.complete:
        lines.append(t.backward.incompleteness())
    if t.optimizer is not None:
        calls, elements = t.optimizer.uncounted_by_category().get(Work.ELEMENTWISE, (0, 0))
        state = t.optimizer.uncounted_by_category().get(Work.CREATION, (0, 0))[1]
        lines += [
            "",
            f"optimizer step ({t.optimizer_name}, apart from the step above): {commas(t.trainable)} trainable "
            f"parameters; {commas(t.optimizer.total)} FLOPs of multiply-adds; elementwise work: "
            f"{commas(calls)} ops writing {commas(elements)} elements ({elements / t.trainable:.1f} per "
            f"parameter); {commas(state)} elements of state created on the first step",
        ]
    return lines


def training_dict(t: TrainingCount) -> dict[str, Any]:
    """JSON-ready: the exact step, the rule and the terms that differ."""
    return {
        "forward_flops": t.forward.total,
        "backward_flops": t.backward.total,
        "training_flops": t.executed_flops,  # an alias of executed_flops, kept for its readers
        "model_flops": t.model_flops,
        "executed_flops": t.executed_flops,
        "attn_kernel": t.kernel,
        "checkpoint_recompute_flops": t.checkpoint_recompute,
        "kernel_recompute_flops": t.kernel_recompute,
        "rule_3x_flops": t.rule_3x,
        "exact_minus_rule_flops": t.total - t.rule_3x,
        "backward_complete": t.backward.complete,
        "backward_incomplete_ops": list(t.backward.incomplete),
        "backward_by_kind": {k.value: v for k, v in t.backward.by_kind().items()},
        "differences": [
            {
                "path": p,
                "forward_flops": f,
                "backward_flops": b,
                "rule_backward_flops": 2 * f,
                "delta_flops": b - 2 * f,
                "why": why,
            }
            for p, f, b, why in t.differences()
        ],
        "trainable_parameters": t.trainable,
        **({"optimizer": _optimizer_dict(t, t.optimizer)} if t.optimizer else {}),
    }


def _optimizer_dict(t: TrainingCount, optimizer: ExactCount) -> dict[str, Any]:
    """The optimizer's step, apart: its multiply-adds (none for AdamW) and its elementwise work."""
    by = optimizer.uncounted_by_category()
    calls, elements = by.get(Work.ELEMENTWISE, (0, 0))
    return {
        "name": t.optimizer_name,
        "multiply_add_flops": optimizer.total,
        "elementwise_calls": calls,
        "elementwise_elements": elements,
        "state_elements": by.get(Work.CREATION, (0, 0))[1],
    }


def _uncounted(exact: ExactCount) -> list[str]:
    """What the exact count did not count, by category, with the elements each wrote: nothing is 0 in silence."""
    rows = [[cat, commas(calls), commas(el)] for cat, (calls, el) in sorted(exact.uncounted_by_category().items())]
    return [
        "not counted (no multiply-adds; recorded per category, elements written per forward):",
        table(rows, ["category", "calls", "elements"], right={1, 2}),
    ]


def _verdict(r: CountResult, f: Breakdown) -> str:
    if r.agrees:
        return f"exact count ({r.exact.device}): {commas(r.exact_total)} FLOPs, equal to the formula term by term"
    return (
        f"exact count ({r.exact.device}): {commas(r.exact_total)} FLOPs DIFFERS from the formula by "
        f"{commas(r.exact_total - f.total)} FLOPs"
    )


def _formula_dict(r: CountResult, f: Breakdown) -> dict[str, Any]:
    c = r.config
    return {
        "model": r.name,
        "config": asdict(c),
        "tokens": c.tokens,
        "batch": r.batch,
        "attn": c.attn,
        "space": c.space,
        "scope": {"steps": r.scope.steps, "cfg": r.scope.cfg, "training": r.scope.training, "factor": r.scope.factor},
        "unit": "FLOP",
        "total_flops": f.total,
        "total_macs": f.total_macs,
        "terms": [
            {"path": t.path, "kind": t.kind.value, "flops": t.flops, "macs": t.macs, "formula": t.formula}
            for t in f.terms
        ],
        "by_kind": {k.value: v for k, v in f.by_kind().items()},
        "exact_count_flops": r.exact_total,
        "exact_count_device": r.exact.device,
        "exact_by_path": r.exact_by_path(),
        "exact_matches_formula": r.agrees,
        "complete": r.exact.complete,
        "incomplete_ops": list(r.exact.incomplete),
        "uncounted": [
            {"category": cat, "calls": calls, "elements": el}
            for cat, (calls, el) in sorted(r.exact.uncounted_by_category().items())
        ],
        **(training_dict(r.training) if r.training is not None else {}),
        **_attention_dict(r),
    }


# A model without a formula (a spec, a live module): the exact count is the reference, term by term


def _exact_text(r: CountResult) -> str:
    """The exact count term by term (path, kind, ops, FLOPs, MACs), how the model was built, what it left out."""
    m, b = r.measured, r.breakdown
    rows = [[t.path or "(top)", t.kind.value, t.formula, commas(t.flops), commas(t.macs)] for t in b.terms]
    rows.append(["total", "", "", commas(b.total), commas(b.total_macs)])
    blocks = ", ".join(f"{x.path} ({x.count} x {x.type_name})" for x in m.blocks) or "none found"
    lines = [
        headline(r),
        *m.notes,
        *_incomplete(m.exact, m.training),
        f"parameters: {commas(m.params)} · repeated blocks: {blocks}",
        "",
        table(rows, ["term", "kind", "ops", "FLOPs", "MACs"], right={3, 4}),
        "",
        f"total: {commas(b.total)} FLOPs = {si(b.total)} = {si(b.total, Unit.MAC)}",
        "by kind (FLOPs): " + ", ".join(f"{k.value} {commas(v)}" for k, v in b.by_kind().items()),
        f"exact count ({m.exact.device}): the reference for this model; it has no hand formula, so every term is its "
        f"ops' own count",
        *_attention_lines(r),
        *_generation_lines(m),
        "",
        *_uncounted(m.exact),
    ]
    if m.training is not None:
        lines += ["", *training_lines(m.training)]
    return "\n".join(lines)


def _exact_dict(r: CountResult) -> dict[str, Any]:
    m, b, batch = r.measured, r.breakdown, r.batch
    s = b.scope
    return {
        "model": m.text,
        "inputs": m.inputs,
        "notes": list(m.notes),
        "batch": batch,
        "parameters": m.params,
        "blocks": [{"path": x.path, "count": x.count, "type": x.type_name} for x in m.blocks],
        "scope": {"steps": s.steps, "cfg": s.cfg, "training": s.training, "factor": s.factor},
        "unit": "FLOP",
        "reference": "exact count",
        "exact_count_device": m.exact.device,
        "total_flops": b.total,
        "total_macs": b.total_macs,
        "terms": [
            {"path": t.path, "kind": t.kind.value, "flops": t.flops, "macs": t.macs, "ops": t.formula} for t in b.terms
        ],
        "by_kind": {k.value: v for k, v in b.by_kind().items()},
        "complete": m.exact.complete,
        "incomplete_ops": list(m.exact.incomplete),
        "uncounted": [
            {"category": cat, "calls": calls, "elements": el}
            for cat, (calls, el) in sorted(m.exact.uncounted_by_category().items())
        ],
        **(training_dict(m.training) if m.training is not None else {}),
        **_attention_dict(r),
        **({"routing": [x.to_dict() for x in m.exact.routing]} if m.exact.routing else {}),
        **({"generation": m.generation.to_dict()} if getattr(m, "generation", None) is not None else {}),
    }
