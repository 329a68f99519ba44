"""A transformers TrainerCallback that adds the meter's figures (mfu, hfu, tflops_per_gpu) to the Trainer's logs
at each logging step. Extra: pip install 'flopcheck[transformers]'."""

from __future__ import annotations

from typing import Any

from flopcheck.errors import InputError

try:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
except ImportError as err:  # pragma: no cover - the extra is missing
    raise InputError("flopcheck.mfu.hf needs transformers: pip install 'flopcheck[transformers]'") from err

from flopcheck.mfu.meter import LOGGED, Meter, Metering


class MFUTrainerCallback(Metering, TrainerCallback):
    """Adds MFU, HFU (fractions of the peak) and model TFLOP/s per GPU of the last optimizer step to the Trainer's
    logs, from flopcheck's exact step (FLOPs, 2 per multiply-add) of `example_inputs` counted once at train start.

    Args:
        *example_inputs: one micro-batch as the model's forward takes it positionally; `kwargs` for keyword inputs
            (a Trainer calls model(**batch)).
        gpu: the GPU table's name; None reads torch.cuda's device.
        gpus: data-parallel GPUs (default: the Trainer's world size).
        dtype, causal, clock: as flopcheck.mfu.Meter.

    The figures land in trainer.state.log_history and in the `logs` every later callback's on_log sees; a reporting
    integration registered before this callback (report_to) runs its on_log first.
    """

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Count the step once: the model's forward on the example inputs, on a meta copy."""
        gpus, accum = self.gpus or int(args.world_size), int(args.gradient_accumulation_steps)
        self.meter = Meter(
            kwargs["model"], *self.inputs, gpus=gpus, grad_accum=accum, kwargs=self.kwargs, **self.options
        )

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self.meter is not None:
            self.meter.start()

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        if self.meter is not None:
            self.last = self.meter.stop()

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        """The last step's figures into the logs and the log history entry the Trainer just wrote."""
        if self.last is None or logs is None or "train_runtime" in logs:
            return
        metrics = self.last.metrics()
        added = {k: metrics[k] for k in LOGGED}
        logs.update(added)
        if state.log_history:
            state.log_history[-1].update(added)
