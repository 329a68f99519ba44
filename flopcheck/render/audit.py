"""Audit verdicts as text and as JSON-ready dicts."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from flopcheck.fmt import commas, si
from flopcheck.reconciler import masked
from flopcheck.render import hang
from flopcheck.types import CLOSE_LIMIT, ModelPart, Space, Tier, Unit, scope_words

if TYPE_CHECKING:  # readings run counters, and the auditor's Verdict prints through this module: no import of them
    from flopcheck.auditor import Candidate, Verdict
    from flopcheck.auditor.readings import ToolReading


def _value(v: Decimal, unit: Unit) -> str:
    """An absolute value in a unit, with a prefix: 118.62 GMACs."""
    return si(int(v * unit.flops_per_unit), unit)


def _where(v: Verdict) -> str:
    c = v.claim
    res = (
        f"{c.resolution[0]} px"
        if c.resolution and c.resolution[0] == c.resolution[1]
        else (f"{c.resolution[0]}x{c.resolution[1]}" if c.resolution else v.inputs or "the model's default input")
    )
    scope = scope_words(c.batch, c.cfg, c.steps, c.training)
    part = {
        ModelPart.MODEL: "",
        ModelPart.EMBEDDINGS: ", embedding layers only",
        ModelPart.BLOCK: ", one block",
        ModelPart.LINEAR: ", block linears only",
        ModelPart.ATTENTION: ", attention only",
    }[c.part]
    frames = f" x {c.frames} frames" if c.frames else ""
    pixels = ", on pixels" if c.space is Space.PIXEL else ""
    return f"{res}{frames}{pixels}{part}, " + (" x ".join(scope) or "one forward")


def _space(v: Verdict) -> str:
    """'pixels' or 'latent': where the best reading ran, in the words the fingerprint uses."""
    return "pixels" if v.space is Space.PIXEL else "latent"


def _named(c: Candidate) -> str:
    """'MACs, attention counted: 118.62 GMACs' or a counter's 'what fvcore_jit (fvcore 0.1.5) reports ... = 4.61
    GMACs'."""
    return f"{c.describe()} = {_value(c.value, c.unit)}"


def _cause_words(v: Verdict) -> str:
    """What explains the distance of a close or wrong claim: the reading its digits match (or the nearest), and how
    far that reading departs from the model's multiply-adds."""
    c = v.cause
    if c is None:
        return "no cause was found for the difference" if v.verdict is Tier.CLOSE else ""
    fit = c.fit(v.claim)
    if fit:
        said = f"its digits are {_named(c)} ({fit})"
    elif c.relative <= CLOSE_LIMIT:
        said = f"likely {_named(c)} ({float(c.relative):.3%} off) with its inputs rounded"
    else:
        said = f"nearest {_named(c)} ({float(c.relative):.3%} off)"
    return said + _departure_words(c, v)


def _departure_words(c: Candidate, v: Verdict) -> str:
    """', which leaves out 72.3% of the multiply-adds the model does (over the 10% omission limit)'."""
    if not c.departure:
        return ""
    limit = v.claim.omission_limit
    what = "leaves out" if c.departs_by < 0 else "counts, beyond the model's work,"
    side = "over" if c.departure > limit else "within"
    share = f"{float(c.departure):.3%} of the multiply-adds the model does"
    return f", which {what} {share} ({side} the {limit:.0%} omission limit)"


def sentence(v: Verdict) -> str:
    """The verdict as one sentence a reader can paste into a review."""
    c, best = v.claim, v.best
    claim = c.text[len(c.model) :].strip() if c.text.startswith(c.model) else c.text
    rel = float(best.relative)
    side = "over" if c.value > best.value else "under"
    off = "exactly" if not best.distance else f"{rel:.3%} {side}"
    true = _value(Decimal(v.true_flops) / c.label_unit.flops_per_unit, c.label_unit)
    if v.verdict is Tier.CONSISTENT:
        if best.tool:
            head = (
                f"consistent: {claim} is {best.describe()} ({best.tool.words}) = "
                f"{_value(best.value, best.unit)} ({best.fit(c)})"
            )
        else:
            head = f"consistent: {claim} is {_named(best)} ({best.fit(c)})"
        others = _tool_names([t for t in v.tools if not best.tool or _tool(t).count.counter != best.tool.count.counter])
        if others:
            head += f"; {others} report{'s' if ',' not in others and ' and ' not in others else ''} it too"
        if v.also:
            a = v.also[0]
            head += (
                f"; ambiguous: it is also {_named(a)} ({a.fit(c)}); the first is simpler "
                f"({best.reading.causes(v.stated)} against {a.reading.causes(v.stated)} causes)"
            )
        return head
    if v.verdict is Tier.CLOSE:
        return f"close: {claim} is {off} {_named(best)}; {_cause_words(v)}"
    if v.verdict is Tier.WRONG:
        cause = _cause_words(v)
        return (
            f"WRONG: {claim} is {off} {_named(best)}" + (f"; {cause}" if cause else "") + f"; the true value is {true}"
        )
    if v.verdict is Tier.UNEXPLAINED:
        return f"UNEXPLAINED: {claim} is beyond 10% of every reading; nearest {_named(best)} ({rel:.3%} off)"
    if v.unmade:
        names = sorted({n.partition(":")[0] for n in v.unmade})
        return (
            f"INCOMPLETE: no verdict on {claim}: the reading of {' and '.join(names)} could not be made, and the "
            f"claim may be {'that count' if len(names) == 1 else 'one of them'}; without it, nearest "
            f"{_named(best)} ({rel:.3%} off)"
        )
    return f"INCOMPLETE: no verdict on {claim}, the reference is {v.reference}"


def _tool(c: Candidate) -> ToolReading:
    """A counter's candidate's reading (a verdict's tools and readings are all counters')."""
    assert c.tool is not None, c
    return c.tool


def _tool_names(tools: list[Candidate]) -> str:
    """'fvcore_jit (explicit attention), thop_hooks (both paths) and torchprofile_jit': each counter once ('by its
    convention' where it was carried from a stand-in, not run on the model)."""
    paths: dict[str, set[str]] = {}
    carried = {_tool(t).count.counter for t in tools if _tool(t).stand_in}
    for t in tools:
        paths.setdefault(_tool(t).count.counter, set()).add(_tool(t).path)
    names = [
        n
        + ("" if "" in p else " (both paths)" if len(p) > 1 else f" ({next(iter(p))})")
        + (" by its convention" if n in carried else "")
        for n, p in sorted(paths.items())
    ]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def fingerprint_words(v: Verdict) -> str:
    """The best reading's fingerprint: unit, attention, norms, scope, space, input, tool."""
    b = v.judged  # what the digits most likely counted: the reading the claim is judged by
    if b.tool and v.verdict is Tier.UNEXPLAINED and not b.fit(v.claim):  # the nearest counter is not what it counted
        where = [v.scope_words, *([_space(v)] if v.space else []), v.inputs or "the model's default input"]
        return " · ".join(["no count, variant or counter matches its digits", *where])
    if b.tool:
        return " · ".join(
            [b.tool.words, v.scope_words, *([_space(v)] if v.space else []), v.inputs, f"tool: {b.tool.tool}"]
        )
    r = b.reading
    norms = f"{b.norm} {r.norms} per element" if r.norms else "norms and elementwise ops not counted"
    adaln = ["per-sample layers per token"] if r.per_sample_per_token else []
    tools = [f"tool: {', '.join(dict.fromkeys(_tool(t).tool for t in v.tools))}"] if v.tools else []
    coverage = (
        "every layer counted"
        if r.coverage.words == "attention counted" and not b.attention
        else masked.words(b.findings) or r.coverage.words
    )
    return " · ".join(
        [
            r.unit.value + "s",
            coverage,
            norms,
            *adaln,
            v.scope_words,
            *([_space(v)] if v.space else []),
            v.inputs or "the model's default input",
            *tools,
        ]
    )


def to_text(v: Verdict, width: int | None = None) -> str:
    """Claim, the verdict sentence, the fingerprint, the truth, the runners-up; `width`: the columns each line is
    wrapped to, its text under its text (None: one line each, as a file or a pipe takes them)."""
    c = v.claim
    head = c.text if c.text.startswith(c.model) else f"{c.model} {c.text}"
    lines = [f'"{head}" · {_where(v)}' + (f" · {c.source}" if c.source else "")]
    lines.append(f"  verdict     {sentence(v)}")
    lines.append(f"  fingerprint {fingerprint_words(v)}")
    lines.append(
        f"  true        {commas(v.true_flops)} FLOPs = {si(v.true_flops)} = {si(v.true_flops, Unit.MAC)} "
        f"({_where(v)}, {v.reference})"
    )
    caused = {f.code for f in v.cause.findings} if v.cause else set()
    for f in v.best.findings:  # each cause said once: where the digits' reading has it too, with its delta there
        if f.code not in caused:
            lines.append(f"  {f.code:11s} {f.title} {f.delta:+,} FLOPs")
    for f in v.cause.findings if v.cause else ():
        lines.append(f"  cause {f.code:5s} {f.title} {f.delta:+,} FLOPs")
    for r in v.runners_up[:3]:
        lines.append(f"  runner-up   {r.describe()}: {_value(r.value, r.unit)} (off by {float(r.relative):.3%})")
    shown = {id(t) for t in (v.best, *v.tools)}
    for r in [t for t in v.readings if id(t) not in shown][:3]:  # the nearest counters whose digits do not match
        lines.append(f"  counter     {r.describe()}: {_value(r.value, r.unit)} (off by {float(r.relative):.3%})")
    for note in v.notes:
        lines.append(f"  no reading  {note}")
    if v.pipeline_hint:
        lines.append(f"  pipeline    {v.pipeline_hint}")
    return "\n".join(out for line in lines for out in (hang(line, 14, width) if width else [line]))


def to_dict(v: Verdict) -> dict[str, Any]:
    """JSON-ready: integers in FLOPs, the verdict, the reading and the candidates."""
    best, judged = v.best, v.judged  # the sentence's nearest count, and the reading the claim is judged by
    return {
        "id": v.claim.id,
        "claim": v.claim.text,
        "model": v.claim.model,
        "source": v.claim.source,
        "verdict": v.verdict,
        "passed": v.passed,
        "sentence": sentence(v),
        "fingerprint": fingerprint_words(v),
        # what the judged reading counted, as its fingerprint says it (a counter's coverage is its attention key's)
        "unit": judged.unit.value,
        "attention": v.attention,
        "coverage": judged.reading.coverage if judged.tool is None else None,
        "scope": v.scope,
        "space": _space(v) if v.space else "",
        "inputs": v.inputs,
        "claimed_flops": int(v.claim.claimed_flops),
        "reading_flops": best.flops,
        "true_flops": v.true_flops,
        "relative_error": float(best.relative),
        "cause": v.cause.describe() if v.cause else None,
        # the reading the claim is judged by: its category, and the share of the model's multiply-adds it departs by
        "category": judged.category.value,
        "departure": float(judged.departure),
        "omission_limit": float(v.claim.omission_limit),
        "tools": [_tool(t).tool for t in v.tools] + ([best.tool.tool] if best.tool and best not in v.tools else []),
        "carried_from": {
            _tool(t).count.counter: _tool(t).stand_in for t in (*v.tools, best) if t.tool and _tool(t).stand_in
        },
        "also": [a.describe() for a in v.also],
        "findings": [{"code": f.code, "title": f.title, "delta_flops": f.delta} for f in best.findings],
        "candidates": [
            {"reading": c.describe(), "unit": c.unit.value, "flops": c.flops, "relative_error": float(c.relative)}
            for c in (best, *v.runners_up)
        ],
        "notes": list(v.notes),
        "pipeline_hint": v.pipeline_hint,
        "counters": [
            {
                "counter": _tool(t).count.counter,
                "reading": t.describe(),
                "unit": t.unit.value,
                "reported": _tool(t).count.reported,
                "flops": t.flops,
                "relative_error": float(t.relative),
            }
            for t in v.readings
        ],
    }


MARKDOWN_HEAD = (
    "| claim | as written | verdict | judged against | cause of the distance | off by | true value |\n"
    "|---|---|---|---|---|---|---|"
)


def markdown_row(v: Verdict) -> str:
    """One claim's row: id, the claim as written, verdict, the count judged against, the cause of the distance (or the
    counters whose output matches), how far off, the true value in FLOPs."""
    c = v.claim
    written = c.text[len(c.model) :].strip() if c.text.startswith(c.model) else c.text
    cause = v.cause.describe() if v.cause else (_tool_names(list(v.tools)) + " match" if v.tools else "")
    judged = v.best.describe() if not v.best.tool else v.best.tool.tool
    return (
        f"| {c.id} | {written} | {v.verdict} | {judged} | {cause} | {float(v.best.relative):.3%} | "
        f"{v.true_flops:,} FLOPs |"
    )
