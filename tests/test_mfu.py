"""The MFU meter, its integrations and assert_log_mfu: each logged figure equal to the hand value from the exact
step and a step time the test sets (the clock is injected, so the expected value is exact).

The model: Linear(64, 128) -> ReLU -> Linear(128, 10) on 8 samples of 64 features. Per sample (tests/test_utilization
derives it): forward 2 x (64 x 128 + 128 x 10) = 18,944; backward: the first Linear's weight gradient only (its input
needs none) 2 x 64 x 128 = 16,384, the second's weight and input gradients 2 x 2 x 1,280 = 5,120 -> 40,448 FLOPs.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from flopcheck.errors import InputError
from flopcheck.mfu import Meter, flops_per_token, match_device
from flopcheck.testing import FlopAssertionError, assert_log_mfu, assert_mfu_close

PER_SAMPLE = 40_448
H100 = Fraction("989.4") * 10**12


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def test_meter_mfu_is_the_exact_step_over_the_time():
    model, x = _mlp(), torch.zeros(8, 64)
    meter = Meter(model, x, gpu="H100", gpus=4, grad_accum=2)
    u = meter.update(2e-9)
    # one GPU's step: 8 samples x 2 micro-batches x 40,448 = 647,168 FLOPs in 2e-9 s = 323.584e12 FLOP/s;
    # / 989.4e12 = 32.705%; samples/s: 8 x 2 x 4 GPUs / 2e-9 = 3.2e10
    assert meter.exact_update(Fraction(2, 10**9))[0] == Fraction(647_168 * 10**9, 2) / H100
    assert u.tflops_per_gpu == pytest.approx(323.584, rel=1e-12) and u.samples_per_second == pytest.approx(3.2e10)
    assert u.mfu == u.hfu == pytest.approx(float(Fraction(647_168 * 10**9, 2) / H100), rel=1e-12)
    assert all(p.device.type == "cpu" for p in model.parameters())  # counted on a meta twin, the module untouched
    # a short last step of 4 samples per GPU: 4 x 40,448 = 161,792 FLOPs in 2e-9 s = 80.896e12 FLOP/s
    assert meter.update(2e-9, samples=4).tflops_per_gpu == pytest.approx(80.896, rel=1e-12)


def test_meter_equals_assert_mfu_close_truth():
    model, x = _mlp(), torch.zeros(8, 64)
    u = Meter(model, x, gpu="A100").update(8e-9)  # 8 samples in 8e-9 s = 1e9 samples/s
    # 40,448 x 1e9 / 312e12 = 12.964%
    truth = assert_mfu_close(model, x, u.mfu, samples_per_second=1e9, gpu="A100")
    assert u.mfu == pytest.approx(truth, rel=1e-12) == pytest.approx(40_448e9 / 312e12, rel=1e-12)


def test_an_inference_meter_divides_the_forward():
    # forward only: 8 x 18,944 = 151,552 FLOPs in 1e-9 s = 151.552e12 FLOP/s; / 312e12 = 48.574%
    u = Meter(_mlp(), torch.zeros(8, 64), gpu="A100", training=False).update(1e-9)
    assert u.mfu == u.hfu == pytest.approx(151_552e9 / 312e12, rel=1e-12)


def test_start_stop_reads_the_injected_clock():
    ticks = iter([10.0, 10.5])
    meter = Meter(_mlp(), torch.zeros(8, 64), gpu="H100", clock=lambda: next(ticks))
    meter.start()
    # 8 x 40,448 = 323,584 FLOPs in 0.5 s: 647,168 FLOP/s
    assert meter.stop().tflops_per_gpu == pytest.approx(647_168 / 1e12, rel=1e-12)


def test_unknown_devices_and_bad_numbers_are_one_line():
    with pytest.raises(InputError, match="gpu='H100'"):
        match_device("NVIDIA GH200 480GB")  # a GH200 is not an H200: unlisted, never guessed
    assert match_device("NVIDIA A100-SXM4-40GB").name == "A100-40GB"
    assert match_device("NVIDIA H100 PCIe").name == "H100-PCIe"
    meter = Meter(_mlp(), torch.zeros(8, 64), gpu="H100")
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(InputError, match="seconds must be a finite number > 0"):
            meter.update(bad)
    with pytest.raises(InputError, match="grad_accum must be a whole number"):
        Meter(_mlp(), torch.zeros(8, 64), gpu="H100", grad_accum=0)


@pytest.mark.integration
def test_flops_per_token_of_a_name_is_the_model_flops():
    # tests/data/llama_tiny.json at 128 tokens (tests/test_utilization.py): the exact step 1,410,859,008 per sequence,
    # attention dense (the model's FLOPs); / 128 = 11,022,336 per token (torchtitan's 6N + 12LHQT: 11,030,016)
    got = flops_per_token("transformers:LlamaForCausalLM", 128, config="tests/data/llama_tiny.json")
    assert got == 11_022_336 and 1_410_859_008 == 128 * 11_022_336


class TinyLM(torch.nn.Module):
    """Token ids [b, T] -> an embedding of 100 x 32, one Linear(32, 100) head: logits [b, T, 100]."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        self.head = torch.nn.Linear(32, 100)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))  # (b, T, 100)


def test_flops_per_token_of_a_module_and_tokens_per_second():
    # per token: head forward 2 x 32 x 100 = 6,400, its weight gradient 6,400 (the embedding's output needs its
    # gradient too: 6,400 more) -> 19,200; the embedding is a lookup: 0
    assert flops_per_token(TinyLM(), 16) == 19_200
    meter = Meter(TinyLM(), torch.zeros(2, 16, dtype=torch.long), gpu="H100")
    # 2 sequences x 16 tokens in 1 s: 32 tokens/s
    assert meter.update(1.0).tokens_per_second == 32


def test_lightning_callback_logs_the_meters_mfu():
    pl = pytest.importorskip("lightning.pytorch")
    from flopcheck.mfu.lightning import MFUCallback

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = _mlp()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

        def training_step(self, batch: torch.Tensor, i: int) -> torch.Tensor:
            return self(batch).mean()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    ticks = iter(float(t) / 4 for t in range(100))  # each read of the clock a quarter second later
    cb = MFUCallback(torch.zeros(8, 64), gpu="H100", clock=lambda: next(ticks))
    data = torch.utils.data.DataLoader(torch.zeros(24, 64), batch_size=8)
    trainer = pl.Trainer(
        max_steps=3,
        callbacks=[cb],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        log_every_n_steps=1,
    )
    trainer.fit(Module(), data)
    # 8 samples x 40,448 = 323,584 FLOPs per step in 0.25 s (start and stop one tick apart): 1,294,336 FLOP/s;
    # / 989.4e12
    assert trainer.callback_metrics["mfu"].item() == pytest.approx(1_294_336 / 989.4e12, rel=1e-6)
    assert trainer.callback_metrics["tflops_per_gpu"].item() == pytest.approx(1_294_336 / 1e12, rel=1e-6)


def test_transformers_callback_adds_mfu_to_the_trainers_logs(tmp_path):
    transformers = pytest.importorskip("transformers")
    from flopcheck.mfu.hf import MFUTrainerCallback

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = _mlp()

        def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"loss": self.net(x).mean()}

    ticks = iter(float(t) / 4 for t in range(100))
    cb = MFUTrainerCallback(torch.zeros(8, 64), gpu="H100", clock=lambda: next(ticks))
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=3,
        per_device_train_batch_size=8,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
    )
    data = [{"x": torch.zeros(64)} for _ in range(24)]
    trainer = transformers.Trainer(model=Net(), args=args, train_dataset=data, callbacks=[cb])
    trainer.train()
    logged = [h for h in trainer.state.log_history if "mfu" in h]
    # as above: 323,584 FLOPs per step in 0.25 s over 989.4e12
    assert len(logged) == 3 and logged[-1]["mfu"] == pytest.approx(1_294_336 / 989.4e12, rel=1e-6)


def test_assert_log_mfu_names_the_reading(tmp_path):
    # tests/data/logs/keyvalue_dit.log: DiT-XL/2, 64 samples per GPU per 1.0 s on 16 H100s: true MFU 4.6038%
    run = dict(model="DiT-XL/2", gpu="H100", gpus=16, batch=64)
    assert assert_log_mfu("tests/data/logs/keyvalue_dit.log", **run) == pytest.approx(0.046038, rel=1e-4)
    # a log whose 0.04604 is 3 x the forward's (711,728,529,408 x 1,024 / (16 x 989.4e12) = 4.6039%) at 2 s a step,
    # whose truth is half that: 2.3019%
    off = tmp_path / "off.log"
    off.write_text("step=1 seconds=2.0 mfu=0.04604\nstep=2 seconds=2.0 mfu=0.04604\n")
    with pytest.raises(FlopAssertionError, match="logs MFU 0.04604 .* gives 0.02302"):
        assert_log_mfu(str(off), **run)
