"""A Lightning callback that logs the meter's figures (mfu, hfu, tflops_per_gpu) with pl_module.log at each
optimizer step, so Lightning's logger writes them at its log steps. Extra: pip install 'flopcheck[lightning]'."""

from __future__ import annotations

from typing import Any

from flopcheck.errors import InputError

try:
    from lightning.pytorch import Callback, LightningModule, Trainer
except ImportError as err:  # pragma: no cover - the extra is missing
    raise InputError("flopcheck.mfu.lightning needs Lightning: pip install 'flopcheck[lightning]'") from err

from flopcheck.mfu.meter import LOGGED, Meter, Metering


class MFUCallback(Metering, Callback):
    """Logs MFU, HFU (fractions of the peak) and model TFLOP/s per GPU of each optimizer step, from flopcheck's
    exact step (FLOPs, 2 per multiply-add) of `example_inputs` counted once when fitting starts.

    Args:
        *example_inputs: one micro-batch as the module's forward takes it, pl_module(*example_inputs).
        gpu: the GPU table's name; None reads torch.cuda's device.
        dtype, causal, kwargs, clock: as flopcheck.mfu.Meter.
        gpus: data-parallel GPUs (default: the trainer's world size).
    """

    def on_fit_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Count the step once: the module's forward on the example inputs, on a meta copy."""
        accum = int(trainer.accumulate_grad_batches)
        gpus = self.gpus or int(trainer.world_size)
        shared = (trainer,)
        self.meter = Meter(
            pl_module, *self.inputs, gpus=gpus, grad_accum=accum, kwargs=self.kwargs, shared=shared, **self.options
        )

    def on_train_batch_start(self, trainer: Trainer, pl_module: LightningModule, batch: Any, batch_idx: int) -> None:
        """An optimizer step starts at its first micro-batch."""
        if self.meter is not None and batch_idx % self.meter.grad_accum == 0:
            self.meter.start()

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """An optimizer step ends at its last micro-batch: its figures logged."""
        if self.meter is None or (batch_idx + 1) % self.meter.grad_accum:
            return
        self.last = self.meter.stop()
        metrics = self.last.metrics()
        pl_module.log_dict({k: metrics[k] for k in LOGGED}, on_step=True, on_epoch=False)
