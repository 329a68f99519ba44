"""Claims of utilization and time judged: both sides of the division read.

A utilization is (FLOPs of one sample x samples per second) / (the GPUs' peak). The model's FLOPs are one truth in
every verb: the exact training step with attention counted dense (as PaLM's MFU, Megatron, NeMo, llm-foundry,
torchtitan and `flopcheck count` count it); the work causal attention needs (QK^T and attn@V halved) is printed
beside it, and a figure made with it, or with a published formula, reads as that documented convention with its
distance from the model's FLOPs, never as an error. The numerator is one of a registry of readings (NUMERATORS:
the model's FLOPs, the needed work, executed FLOPs under each recompute policy, 3 x forward, MACs taken as FLOPs, the
forward only, the published formulas `_formula_readings`); the denominator one of the GPU table's peaks
(DENOMINATORS: the job's GPUs at the claimed dtype's dense peak, one GPU's peak for the whole job, the 2:4-sparse
peak, TF32, FP8 or BF16, a neighbouring GPU, the A100 fallback of frameworks that do not know the GPU). An MFU, HFU
or FLOP/s claim is judged by the pair whose arithmetic gives its printed digits (the truth first, then a
convention, then a mistake), and a claim no pair gives still shows its nearest pair; a throughput or a run's cost
is read into the MFU it means (and the HFU, where the recompute policy is stated: never a guess), wrong over 100%
of the peak; a run's compute (PF-days) is judged like a FLOP count of the whole run. The GPU is always stated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flopcheck.auditor.rates import RECOMPUTE, Rate, RateKind, Thing, parse_rate
from flopcheck.errors import InputError
from flopcheck.gpus import GPU, get_gpu, neighbours, the_gpu
from flopcheck.specs import SpecSource
from flopcheck.types import ATTENTION_KINDS, Tier

if TYPE_CHECKING:  # read here, never taken: the exact step imports torch
    from flopcheck.auditor.claims import Claim
    from flopcheck.exact.training import TrainingCount
    from flopcheck.specs.measure import Measured
    from flopcheck.subject import Subject

FALLBACK = "A100"  # the peak frameworks fall back to for a GPU they do not list (research/formulas.md §15-16)
CLOSE_LIMIT = Fraction(1, 100)
WRONG_LIMIT = Fraction(1, 10)


@dataclass(frozen=True)
class SampleWork:
    """One sample's FLOPs (exact integers made fractions per sample): the model's, as executed, its forward, its
    attention (QK^T and attn@V, forward and backward) and the attention kernel's recompute; causal: the model's
    attention is masked causally, so half of it is work the model needs."""

    model: Fraction
    executed: Fraction
    forward: Fraction
    attention: Fraction = Fraction(0)
    recompute: Fraction = Fraction(0)
    causal: bool = False
    training: bool = True
    inputs: str = ""
    formulas: tuple[tuple[str, str, Fraction], ...] = ()  # (name, title, one sample's FLOPs) of published formulas
    forward_attention: Fraction = Fraction(0)  # the forward's QK^T and attn@V: what selective recompute runs again
    params: int = 0  # the model's parameters, embeddings in (0: not read, a reference model's)
    # QK^T and attn@V (forward and backward) at the pairs the masks skip, read from the forward's attention calls
    # (dense - needed, in their share of the step's attention); None: no call's mask was read
    unneeded: Fraction | None = None

    @property
    def needed(self) -> Fraction:
        """The work the model needs, as `flopcheck count` prints it: its FLOPs less the attention at the pairs its
        masks skip (causal: T(T-1)/2 of T^2 pairs a head); where no mask was read, causal attention halved."""
        if self.unneeded is not None:
            return self.model - self.unneeded
        return self.halved

    @property
    def halved(self) -> Fraction:
        """Its FLOPs with causal attention halved, as Megatron's and MaxText's formulas take it (model if not
        causal): QK^T and attn@V / 2, the diagonal's pairs left out."""
        return self.model - self.attention / 2 if self.causal else self.model

    def executed_with(self, policy: str) -> Fraction:
        """Executed FLOPs under an activation recompute policy: the step as run (the attention kernel's recompute
        in) + nothing (none), the forward's QK^T and attn@V (selective: Korthikanti et al. 2022, arXiv:2205.05198
        section 4) or the whole forward (full: every layer's forward run again, Megatron's 4 x forward)."""
        extra = {"none": Fraction(0), "selective": self.forward_attention, "full": self.forward}
        return self.executed + extra[policy]


@dataclass(frozen=True)
class Reading:
    """One side of the division: its name, its words, its value, and whether it is the truth."""

    name: str
    words: str
    value: Fraction
    true: bool = False
    convention: bool = False  # a named, documented convention of the work (the needed work, a published formula)
    formula: str | None = None  # a published formula's reading: its name in flopcheck.published.FORMULAS


def _formula_readings(work: SampleWork, convention: bool = True) -> list[Reading]:
    """The published formulas' readings of one sample's training step (Kaplan 6ND, PaLM, Megatron, torchtitan,
    MaxText ...: flopcheck.published), each by its name."""
    return [
        Reading(f"formula {n}", f"the published formula {n} ({title})", v, convention=convention, formula=n)
        for n, title, v in work.formulas
    ]


def formulas_of(m: Measured, subject: Subject) -> tuple[tuple[str, str, Fraction], ...]:
    """Each published training formula that applies to a named model, per sample of its step, read from the one
    measurement `m` that holds the step (its batch, forward, step and structure)."""
    from flopcheck.auditor.formulas import applied

    batch = m.batch or subject.spec_batch
    return tuple(
        (f.name, f.title, Fraction(flops, batch))
        for f, r in applied(subject, training=True, measured=m)
        if r.error is None and (flops := r.counter_flops) and f.training
    )


def numerators(work: SampleWork, hfu: bool = False, recompute: str | None = None) -> list[Reading]:
    """Every reading of one sample's FLOPs: the truth of an MFU (the model's FLOPs, attention dense) or of an HFU
    (executed FLOPs under the run's recompute policy) marked; the needed work and the formulas as conventions."""
    if not work.training:  # model: one sample's generation (forward x CFG x sampling steps); forward: one step's
        out = [
            Reading("generation", "the generation's FLOPs (forward x CFG x sampling steps)", work.model, True),
            Reading("macs", "MACs taken as FLOPs (half the generation)", work.model / 2),
            Reading("rule_3x", "3 x the generation (a training step's rule, for inference)", 3 * work.model),
        ]
        one = Reading("one_step", "one sampling step taken for the generation", work.forward)
        return out + ([one] if work.forward != work.model else [])
    dense = ", attention dense" if work.causal else ""
    out = [Reading("model", f"the model's FLOPs (the exact training step{dense})", work.model, not hfu)]
    if work.causal:
        words = "the work the model needs (the exact step, attention at the pairs its mask lets through)"
        out.append(Reading("needed", words, work.needed, convention=not hfu))
        if work.halved != work.needed:
            words = "the exact step with causal attention halved (Megatron's and MaxText's convention)"
            out.append(Reading("halved", words, work.halved, convention=not hfu))
    for policy in RECOMPUTE:
        executed = work.executed_with(policy)
        stated = hfu and policy == recompute
        out.append(Reading(f"executed_{policy}", f"executed FLOPs with {policy} recompute", executed, stated))
        if work.causal:
            halved = executed - work.attention / 2 - work.recompute / 2
            words = f"executed FLOPs with {policy} recompute, causal attention halved"
            out.append(Reading(f"executed_{policy}_needed", words, halved, convention=stated))
    out += [
        Reading("rule_3x", "3 x forward", 3 * work.forward),
        Reading("macs", "MACs taken as FLOPs (half the model's FLOPs)", work.model / 2),
        Reading("forward", "the forward only (inference)", work.forward),
    ]
    return out + _formula_readings(work, convention=not hfu)  # a model-FLOPs formula is no reading of an HFU


def denominators(gpu: GPU, gpus: int, dtype: str) -> list[Reading]:
    """Every reading of the peak the job had: its GPUs at the dtype's dense peak (the truth), and the peaks a claim is
    mistakenly taken against, in FLOP/s."""
    tera = Fraction(10**12)
    dense = gpu.tflops_of(dtype)
    if dense is None:
        has = ", ".join(d for d, _ in gpu.dense)
        raise InputError(f"{gpu.name} has no {dtype} peak in its datasheet: give --dtype one of {has}")
    job = f"{gpus} x " if gpus > 1 else ""
    out = [Reading("job", f"{job}{gpu.name}'s {dtype.upper()} dense peak", gpus * _f(dense) * tera, True)]
    if gpus > 1:
        out.append(Reading("one_gpu", f"one {gpu.name}'s {dtype.upper()} dense peak", _f(dense) * tera))
    sparse = gpu.tflops_of(dtype, sparse=True)
    if sparse:
        out.append(Reading("sparse", f"{job}{gpu.name}'s {dtype.upper()} 2:4-sparse peak", gpus * _f(sparse) * tera))
    for other in ("tf32", "fp8", "bf16"):
        peak = gpu.tflops_of(other)
        if other != dtype and peak:
            out.append(Reading(other, f"{job}{gpu.name}'s {other.upper()} dense peak", gpus * _f(peak) * tera))
    for g in neighbours(gpu):
        peak = g.tflops_of(dtype)
        if peak and peak != dense:
            out.append(
                Reading(
                    f"gpu:{g.name}", f"{job}{g.name}'s {dtype.upper()} dense peak (a neighbour)", gpus * _f(peak) * tera
                )
            )
    fallback = get_gpu(FALLBACK)
    if gpu.family != fallback.family:
        words = f"{job}A100's BF16 peak, 312 TFLOPS (a framework's fallback for a GPU it does not list)"
        out.append(Reading("fallback", words, gpus * _f(fallback.tflops) * tera))
    return out


def _f(x: float) -> Fraction:
    """A datasheet figure as written (989.4 stays 989.4, not its binary float)."""
    return Fraction(str(x))


@dataclass(frozen=True)
class Pair:
    """A numerator and a denominator reading, and the value their division gives."""

    top: Reading
    bottom: Reading
    value: Fraction

    @property
    def departures(self) -> int:
        return (not self.top.true) + (not self.bottom.true)

    @property
    def rank(self) -> int:
        """0: the truth; 1: a documented convention of the work over the true peak; 2: a mistake."""
        if self.bottom.true and (self.top.true or self.top.convention):
            return 0 if self.top.true else 1
        return 2

    @property
    def convention(self) -> bool:
        return self.rank == 1

    def words(self, what: RateKind) -> str:
        return (
            f"{self.top.words} over {self.bottom.words}"
            if what not in (RateKind.FLOPS, RateKind.COMPUTE)
            else f"{self.top.words}, {self.bottom.words}"
        )


@dataclass(frozen=True)
class GpuJob:
    """What the claim says of the run: its GPU, how many, the dtype, and its samples per second (the whole job's)."""

    gpu: GPU
    gpus: int
    dtype: str
    samples_per_second: Fraction  # a run's compute (PF-days): the run's samples
    rate_words: str  # '5.7 it/s x batch 256 = 1,459.2 samples/s'


@dataclass(frozen=True)
class UtilizationVerdict:
    """The verdict on a claim of utilization or time: the pair that gives its digits (or none), the true MFU and HFU,
    every pair tried."""

    claim: Any  # auditor.claims.Claim
    verdict: Tier
    job: GpuJob | None  # None: a run's compute (PF-days) is read on no GPU
    work: SampleWork
    mfu: Fraction | None  # the true MFU this run means (None: a compute claim has no time)
    hfu: Fraction | None  # None: the recompute policy was not stated, so the HFU is unknown
    best: Pair | None = None  # the pair whose arithmetic gives the digits (MFU, HFU, FLOP/s claims)
    true_value: Fraction = Fraction(0)  # the claim's quantity, truly (MFU, HFU, FLOP/s; a throughput's: the MFU)
    pairs: tuple[Pair, ...] = field(default=(), repr=False)
    total_flops: int = 0  # a run's cost: the whole run's model FLOPs
    nearest: Pair | None = None  # the pair nearest the claim where none gives its digits
    needed_mfu: Fraction | None = None  # the MFU of the work causal attention needs, beside the model's
    share: Pair | None = None  # a FLOP/s's stated share of the peak, read: the FLOP/s over the peak that gives it
    megatron_x: Fraction | None = None  # a language model's time read by Megatron's 8TP/(nX): the X it means

    @property
    def passed(self) -> bool:
        return self.verdict.passes


MODALITY_OF_THING = {Thing.IMAGE: "image", Thing.VIDEO: "video", Thing.TOKEN: "text"}


def modality(subject: Subject) -> str:
    """What one sample of the model is: 'image', 'video' or 'text' ('' where flopcheck cannot tell: a factory)."""
    spec = subject.spec
    source = spec.source if spec is not None else SpecSource.MODULE
    if source is SpecSource.REFERENCE:
        return "video" if getattr(subject.config(), "video", False) else "image"
    if source is SpecSource.TRANSFORMERS:
        return "text"
    if source in (SpecSource.TIMM, SpecSource.TORCHVISION):
        return "image"
    if source is SpecSource.DIFFUSERS:
        assert spec is not None  # only a spec has a library as its source
        return "video" if spec.options.frames else "image"
    return ""


def is_causal(subject: Subject) -> bool:
    """A decoder-only language model masks attention causally: a transformers class of the causal-LM heads."""
    spec = subject.spec
    return (
        spec is not None
        and spec.source is SpecSource.TRANSFORMERS
        and spec.name.endswith(("ForCausalLM", "LMHeadModel"))
    )


def work_of(claim: Claim) -> SampleWork:
    """One sample's FLOPs for the claim's scope: a training claim's exact step (at its batch, per sample), else the
    forward x CFG x sampling steps of one generation."""
    subject = claim.subject
    if claim.training and subject.formula_family:  # a reference model's step at the claim's batch (a DiT: every
        # published training formula is a language model's, so none is read)
        from flopcheck.exact.training import training_step  # lazy: torch

        step = training_step(subject.text, subject.config(), claim.batch)
        return work_from_step(step, claim.batch, is_causal(subject), subject.inputs)
    if claim.training:  # a named model: its step, batch, inputs, parameters and formulas from one measurement
        m = subject.measured(training=True)
        assert m.training is not None, subject.text  # measured with training: its step
        work = work_from_step(m.training, m.batch or subject.spec_batch, is_causal(subject), m.inputs)
        return replace(work, formulas=formulas_of(m, subject), params=m.params)
    per = Fraction(subject.truth(), subject.batch or 1) * (2 if claim.cfg else 1)
    return SampleWork(per * claim.steps, per * claim.steps, per, training=False, inputs=subject.inputs)


def work_from_step(step: TrainingCount, batch: int, causal: bool = False, inputs: str = "") -> SampleWork:
    """One sample's work from an exact training step (exact.training.TrainingCount) of `batch` samples."""
    fwd, bwd = step.forward.by_kind(), step.backward.by_kind()
    attention = sum(fwd.get(k, 0) + bwd.get(k, 0) for k in ATTENTION_KINDS)
    forward_attention = sum(fwd.get(k, 0) for k in ATTENTION_KINDS)
    return SampleWork(
        Fraction(step.model_flops, batch),
        Fraction(step.executed_flops, batch),
        Fraction(step.forward.total, batch),
        Fraction(attention, batch),
        Fraction(step.kernel_recompute, batch),
        causal,
        True,
        inputs,
        forward_attention=Fraction(forward_attention, batch),
        unneeded=_unneeded(step, attention, batch),
    )


def _unneeded(step: TrainingCount, attention: int, batch: int) -> Fraction | None:
    """One sample's attention at the pairs its masks skip: the step's QK^T and attn@V x (dense - needed) / dense of
    the forward's attention calls (the backward skips the same pairs); None when no call's mask was read."""
    from flopcheck.exact.attention_work import masked, totals  # lazy: door start-up

    calls = step.forward.attention
    if not calls or not masked(calls):
        return None
    t = totals(calls)
    return Fraction(attention * (t["dense"] - t["needed"]), t["dense"] * batch) if t["dense"] else None


def explain_mfu(value: Fraction, work: SampleWork, job: GpuJob, hfu: bool = False) -> tuple[Fraction, Pair]:
    """The true MFU (or HFU) of a run and the pair of readings nearest to a logged `value`."""
    rate = Rate(RateKind.HFU if hfu else RateKind.MFU, Decimal(0), Decimal(0), "MFU")
    pairs = _pairs(rate, work, job)
    true = next(p for p in pairs if p.departures == 0)
    return true.value, min(pairs, key=lambda p: (abs(p.value - value) / p.value, p.departures))


def job_of(claim: Claim, rate: Rate, work: SampleWork) -> GpuJob:
    """The run the claim describes: its GPU (named in the text or --gpu; never a default), how many, its dtype, its
    samples/s."""
    gpu = the_gpu(rate.gpu, claim.gpu)
    if gpu is None:  # rates.needs asks for it; a claim built past it is refused here, not given a GPU
        raise InputError(f"{rate.written or rate.label} is read against a GPU's peak: name the GPU with --gpu")
    gpus = rate.gpus or claim.gpus or 1
    dtype = claim.dtype or "bf16"
    if rate.kind is RateKind.COST or rate.kind is RateKind.FLOPS and claim.throughput is None:
        return GpuJob(gpu, gpus, dtype, Fraction(0), rate.label)
    if rate.kind is RateKind.THROUGHPUT:
        throughput = rate
    else:
        assert claim.throughput is not None  # rates.needs refused an MFU, HFU or FLOP/s claim without one
        throughput = parse_rate(claim.throughput)
    fits(claim, throughput)
    per_second = Fraction(str(throughput.value))
    shown = f"{_num(per_second)} {throughput.label}" + (" per GPU" if throughput.per_gpu else "")
    if throughput.label == "s/it":  # as written, then inverted: '2.1 s/it = 0.47619 iterations/s'
        shown = f"{throughput.written} = {_num(per_second)} iterations/s"
    if throughput.thing is Thing.ITERATION:  # a generation's iteration is one of its sampling steps
        per_second *= Fraction(claim.batch, 1 if work.training else claim.steps)
        shown += f" x batch {claim.batch}" + ("" if work.training else f" / {claim.steps} sampling steps")
    elif throughput.thing is Thing.TOKEN:
        assert claim.text_tokens is not None  # rates.needs refused tokens/s without the sequence length
        per_second /= claim.text_tokens
        shown += f" / {claim.text_tokens:,} tokens per sample"
    if throughput.per_gpu:
        per_second *= gpus
        shown += f" x {gpus} GPUs" if gpus > 1 else ""
    return GpuJob(gpu, gpus, dtype, per_second, f"{shown} = {_num(per_second)} samples/s for the job")


def fits(claim: Claim, rate: Rate) -> None:
    """A throughput's unit fits the claim's model (no tokens/s of an image model); else one line naming both."""
    fits_subject(claim.subject, rate, claim.model)


def fits_subject(subject: Subject, rate: Rate, name: str = "") -> None:
    """A throughput's unit fits the model: images/s an image model, videos/s a video model, tokens/s a language
    model; it/s and samples/s any model."""
    wanted = MODALITY_OF_THING.get(rate.thing) if rate.thing else None
    if wanted is None:
        return
    has = modality(subject)
    if has != wanted:
        what = f"is {'an' if has == 'image' else 'a'} {has} model" if has else "has samples flopcheck cannot name"
        raise InputError(f"{rate.label} does not fit {name or subject.text}, which {what}: count it/s or samples/s")


def _num(x: Fraction) -> str:
    return f"{float(x):,.6g}"


def judge(claim: Claim) -> UtilizationVerdict:
    """The verdict on a claim of utilization or time (claim.rate)."""
    rate = claim.rate
    assert rate is not None  # judged here only as a claim of utilization or time (verbs.audit.judge_claim)
    if claim.tokens and modality(claim.subject) != "text":
        raise InputError(f"--tokens counts a language model's training tokens; {claim.model} takes no text tokens")
    if rate.kind is RateKind.FLOPS and claim.throughput is None:  # '163 TFLOP/s per A100, 52% of peak': no model's work
        return _share_only(claim, rate)
    work = work_of(claim)
    if rate.kind is RateKind.COMPUTE:
        return _compute(claim, rate, work)
    job = job_of(claim, rate, work)
    peak = denominators(job.gpu, job.gpus, job.dtype)[0].value
    if rate.kind is RateKind.COST:
        return _cost(claim, rate, work, job, peak)
    per_second = job.samples_per_second / peak
    mfu, needed = work.model * per_second, work.needed * per_second
    hfu = work.executed_with(claim.recompute or rate.recompute) * per_second if _policy(claim) else None
    if rate.kind is RateKind.THROUGHPUT:
        tier = Tier.CONSISTENT if mfu <= 1 and (hfu or 0) <= 1 else Tier.WRONG
        return UtilizationVerdict(claim, tier, job, work, mfu, hfu, true_value=mfu, needed_mfu=needed)
    pairs = _pairs(rate, work, job, _policy(claim))
    tier, best, nearest, true = _tier(pairs, Fraction(str(rate.value)), Fraction(str(rate.precision)))
    share = None
    if rate.share is not None:  # the FLOP/s's own share of the peak, checked against the datasheet too
        share_tier, share = _share_tier(rate, job)
        tier = max(tier, share_tier, key=TIER_ORDER.index)
    return UtilizationVerdict(
        claim, tier, job, work, mfu, hfu, best, true.value, tuple(pairs), 0, nearest, needed, share
    )


TIER_ORDER = [Tier.CONSISTENT, Tier.CLOSE, Tier.WRONG, Tier.UNEXPLAINED]


def _policy(claim: Claim) -> str:
    """The run's recompute policy, stated by --recompute or in the claim's text ('' when not: the HFU is unknown)."""
    return str(claim.recompute or (claim.rate.recompute if claim.rate else "") or "")


def _tier(pairs: list[Pair], claimed: Fraction, precision: Fraction) -> tuple[Tier, Pair | None, Pair, Pair]:
    """The tier, the pair whose digits the claim gives (the truth first, then a convention, then a mistake), the
    nearest pair, and the true one: consistent for the truth, close for a documented convention (named with its
    distance from the model's FLOPs), else by the distance from the truth (1%: close, else wrong; no pair within 10%:
    unexplained)."""
    true = next(p for p in pairs if p.rank == 0)
    fitting = sorted((p for p in pairs if _fits(p.value, claimed, precision)), key=lambda p: (p.rank, p.departures))
    best = fitting[0] if fitting else None
    nearest = min(pairs, key=lambda p: (abs(p.value - claimed) / p.value, p.rank))
    off = abs(claimed - true.value) / true.value
    if best is not None and best.rank < 2:
        return (Tier.CONSISTENT if best.rank == 0 else Tier.CLOSE), best, nearest, true
    if best is None and off > WRONG_LIMIT:
        return Tier.UNEXPLAINED, best, nearest, true
    return (Tier.CLOSE if off <= CLOSE_LIMIT else Tier.WRONG), best, nearest, true


def _share_tier(rate: Rate, job: GpuJob) -> tuple[Tier, Pair]:
    """A FLOP/s quoted with its share of the peak ('163 TFLOP/s per A100, 52% of peak'): the FLOP/s per GPU over
    each peak of one GPU; consistent where the true peak gives the share's digits, else the peak that does."""
    assert rate.share is not None  # read only where the claim quotes a share
    flops = Fraction(str(rate.value)) / (1 if rate.per_gpu else job.gpus)
    top = Reading("stated", f"the stated {_num(flops / 10**12)} TFLOP/s per GPU", flops, True)
    pairs = [Pair(top, b, flops / b.value) for b in denominators(job.gpu, 1, job.dtype)]
    tier, best, nearest, _ = _tier(pairs, Fraction(str(rate.share)), Fraction(str(rate.share_precision)))
    return tier, best or nearest


def _share_only(claim: Claim, rate: Rate) -> UtilizationVerdict:
    """A FLOP/s per GPU quoted with its share of the peak and no throughput: checked against itself and the
    datasheet alone (the model's FLOPs are not read: nothing says how many samples the run did)."""
    job = job_of(claim, rate, SampleWork(Fraction(0), Fraction(0), Fraction(0)))
    tier, share = _share_tier(rate, job)
    flops = Fraction(str(rate.value)) / (1 if rate.per_gpu else job.gpus)
    work = SampleWork(Fraction(0), Fraction(0), Fraction(0), training=claim.training)
    return UtilizationVerdict(claim, tier, job, work, None, None, true_value=flops / share.bottom.value, share=share)


def _true(readings: list[Reading]) -> int:
    return next(i for i, r in enumerate(readings) if r.true)


def _fits(value: Fraction, claimed: Fraction, precision: Fraction) -> bool:
    """The claim's digits match: rounded (within half the last digit) or truncated."""
    return abs(value - claimed) <= precision or claimed <= value < claimed + 2 * precision


def _pairs(rate: Rate, work: SampleWork, job: GpuJob, recompute: str = "") -> list[Pair]:
    """Every numerator x denominator reading of an MFU, HFU or FLOP/s claim, and its value."""
    tops = numerators(work, hfu=rate.kind is RateKind.HFU, recompute=recompute or None)
    if rate.kind is RateKind.FLOPS:  # FLOP/s per GPU (the job's / GPUs) or the whole job's
        per = Reading("per_gpu", f"per GPU ({job.gpus} GPUs)", Fraction(job.gpus), rate.per_gpu)
        whole = Reading("whole", "for the whole job", Fraction(1), not rate.per_gpu)
        bottoms = [per, whole] if job.gpus > 1 else [Reading("per_gpu", "on one GPU", Fraction(1), True)]
    else:
        bottoms = denominators(job.gpu, job.gpus, job.dtype)
    return [Pair(t, b, t.value * job.samples_per_second / b.value) for t in tops for b in bottoms]


def _samples(claim: Claim) -> Fraction:
    """A run's samples: its tokens over the sequence length, or its steps x batch."""
    if claim.tokens:
        if not claim.text_tokens:
            raise InputError("--tokens: give the sequence length with --text-tokens, like --text-tokens 2048")
        return Fraction(claim.tokens, claim.text_tokens)
    return Fraction(claim.steps * claim.batch)


def _cost(claim: Claim, rate: Rate, work: SampleWork, job: GpuJob, peak: Fraction) -> UtilizationVerdict:
    """A run's cost (GPU-seconds) read into the MFU it means: the whole run's model FLOPs / (GPU-seconds x peak per
    GPU), the needed work's beside it, the HFU where the recompute policy is stated; wrong when over 100%."""
    samples = _samples(claim)
    per_gpu_peak = peak / job.gpus
    seconds = Fraction(str(rate.value))
    model = work.model * samples
    mfu, needed = model / (seconds * per_gpu_peak), work.needed * samples / (seconds * per_gpu_peak)
    policy = _policy(claim)
    hfu = work.executed_with(policy) * samples / (seconds * per_gpu_peak) if policy else None
    tier = Tier.CONSISTENT if mfu <= 1 and (hfu or 0) <= 1 else Tier.WRONG
    x = megatron_x(claim, work, seconds)
    return UtilizationVerdict(
        claim, tier, job, work, mfu, hfu, true_value=mfu, total_flops=round(model), needed_mfu=needed, megatron_x=x
    )


def megatron_x(claim: Claim, work: SampleWork, gpu_seconds: Fraction) -> Fraction | None:
    """A language model's training time read by Megatron's estimate, time = 8TP/(nX) (Narayanan et al. 2021,
    arXiv:2104.04473, section 5.1: T tokens, P parameters, n GPUs, X FLOP/s per GPU, activation recompute in): the
    X that n x time means, X = 8TP / (n x time); None where the run is not counted in tokens."""
    if not claim.tokens or not work.params:
        return None
    return 8 * Fraction(claim.tokens) * work.params / gpu_seconds


def _compute(claim: Claim, rate: Rate, work: SampleWork) -> UtilizationVerdict:
    """A run's compute (PF-days) judged like a FLOP count of the whole run: each reading of one sample's FLOPs x the
    run's samples, to the claim's digits."""
    if not work.training:
        raise InputError(f"{rate.written} is a training run's compute: write 'training' after the model")
    samples = _samples(claim)
    run = Reading("run", "for the whole run", Fraction(1), True)
    pairs = [Pair(t, run, t.value * samples) for t in numerators(work)]
    tier, best, nearest, true = _tier(pairs, Fraction(str(rate.value)), Fraction(str(rate.precision)))
    return UtilizationVerdict(
        claim, tier, None, work, None, None, best, true.value, tuple(pairs), round(true.value), nearest
    )


def implied(
    subject: Subject, throughput: str, batch: int, gpu: GPU, gpus: int, step: TrainingCount
) -> tuple[Fraction, Fraction, str]:
    """`flopcheck estimate --throughput`: the MFU and HFU a measured throughput means on `gpus` of `gpu` (its dense
    BF16 peak), from the exact step at `batch` (per sample), and the rate in words."""
    rate = parse_rate(throughput)
    if rate.thing is Thing.TOKEN:
        raise InputError("--throughput in tokens/s: audit it as a claim (flopcheck audit ... --text-tokens N)")
    per_second = (
        Fraction(str(rate.value)) * (batch if rate.thing is Thing.ITERATION else 1) * (gpus if rate.per_gpu else 1)
    )
    peak = gpus * _f(gpu.tflops) * 10**12
    mfu = Fraction(step.model_flops, batch) * per_second / peak
    hfu = Fraction(step.executed_flops, batch) * per_second / peak
    return mfu, hfu, f"{throughput} = {_num(per_second)} samples/s on {gpus} x {gpu.name}"
