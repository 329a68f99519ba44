"""The exact training step on meta: forward and backward counted separately, per path and kind, beside the 3x rule."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import MODELS
from torch import nn

from flopcheck.cli import main
from flopcheck.exact.training import count_training_step, training_step
from flopcheck.types import Kind
from reference_models import get_config


@pytest.mark.parametrize("attn", ["sdpa", "math"])
def test_dit_s2_step_is_three_forwards_less_the_two_layers_whose_input_needs_no_gradient(attn):
    # DiT-S/2 (T=256, d=384, L=12, p=2, C=4, f=256) forward, by hand:
    #   blocks 12 * (24*T*d^2 + 4*T^2*d) = 12 * (905,969,664 + 100,663,296) = 12,079,595,520
    #   adaLN 12 * 2*d*6d = 21,233,664; x_embedder 2*T*d*C*p^2 = 3,145,728; t_embedder 2*f*d + 2*d^2 = 491,520;
    #   final adaLN 2*d*2d = 589,824; final linear 2*T*d*p^2*C_out = 6,291,456; total 12,111,347,712
    # Backward = 2 x forward everywhere except the layers whose input needs no gradient, which compute their
    # weight gradient only (1 x forward): x_embedder (the latent) 3,145,728 and t_embedder.mlp.0 (the sinusoidal
    # embedding of t) 2*f*d = 196,608: backward = 2 * 12,111,347,712 - 3,342,336 = 24,219,353,088
    step = training_step("DiT-S/2", get_config("DiT-S/2", attn=attn))
    assert step.forward.total == 12_111_347_712
    assert step.backward.total == 24_219_353_088
    assert step.total == 36_330_700_800 and step.rule_3x - step.total == 3_342_336
    assert [(p, f, b) for p, f, b, _ in step.differences()] == [
        ("x_embedder.proj", 3_145_728, 3_145_728),
        ("t_embedder.mlp.0", 196_608, 196_608),
    ]
    # attention's backward is two matmuls per forward matmul, on either path: 2 x (QK^T + attn@V)
    fwd, bwd = step.forward.by_kind(), step.backward.by_kind()
    assert bwd[Kind.ATTN_SCORE] == 2 * fwd[Kind.ATTN_SCORE] == 2 * 603_979_776
    assert bwd[Kind.ATTN_VALUE] == 2 * fwd[Kind.ATTN_VALUE]


@pytest.mark.parametrize("attn", ["sdpa", "math"])
def test_dit_xl2_step(attn):
    # DiT-XL/2 forward 237,242,843,136 (README, test_formula_dit); x_embedder 2*256*1152*4*4 = 9,437,184 and
    # t_embedder.mlp.0 2*256*1152 = 589,824 need no input gradient:
    # 3 * 237,242,843,136 - 9,437,184 - 589,824 = 711,718,502,400
    step = training_step("DiT-XL/2", get_config("DiT-XL/2", attn=attn))
    assert step.forward.total == 237_242_843_136 and step.total == 711_718_502_400
    assert step.rule_3x == 711_728_529_408


def test_count_training_json_has_the_step_and_the_rule(capsys):
    assert main(["count", "DiT-S/2", "--training", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["forward_flops"], d["backward_flops"], d["rule_3x_flops"]) == (
        12_111_347_712,
        24_219_353_088,
        36_334_043_136,
    )
    assert [x["path"] for x in d["differences"]] == ["x_embedder.proj", "t_embedder.mlp.0"]
    assert d["differences"][0]["why"].startswith("weight gradient only")


def test_count_training_text_names_each_difference(capsys):
    assert main(["count", "DiT-XL/2", "--training"]) == 0
    out = capsys.readouterr().out
    assert "forward + backward               711,718,502,400 FLOPs" in out
    assert "exact - rule                         -10,027,008 FLOPs" in out
    assert "x_embedder.proj   9,437,184  9,437,184   18,874,368  -9,437,184  weight gradient only" in out


def _two_layers(freeze: int | None):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.Linear(16, 4)).to("meta")
    if freeze is not None:
        net[freeze].requires_grad_(False)
    return net


def test_frozen_parameters_get_no_weight_gradient():
    # forward on 3 rows: layer 0 2*3*8*16 = 768, layer 1 2*3*16*4 = 384
    x = torch.empty(3, 8, device="meta")
    plain = count_training_step(_two_layers(None), (x,))
    # every weight trains, the input needs no gradient: layer 1 input + weight gradients 2 * 384; layer 0 weight
    # gradient only 768
    assert (plain.forward.total, plain.backward.total) == (1152, 768 + 768)
    first_frozen = count_training_step(_two_layers(0), (x,))
    # layer 0 frozen and its input needs none: no gradient at all, so its output needs none either and layer 1
    # computes its weight gradient only, 384
    assert first_frozen.backward.total == 384
    assert [(p, b, why[:20]) for p, _, b, why in first_frozen.differences()] == [
        ("0", 0, "no gradient: its wei"),
        ("1", 384, "weight gradient only"),
    ]
    last_frozen = count_training_step(_two_layers(1), (x,))
    # layer 1 frozen: its input gradient only, 384; layer 0 its weight gradient, 768
    assert last_frozen.backward.total == 384 + 768
    assert ("1", 384, 384, "input gradient only: its weights are frozen") in last_frozen.differences()


def test_an_input_that_needs_a_gradient_gets_one():
    # PyTorch's own literal (test_flop_counter.py): resnet18 forward + backward 10,884,440,064 FLOPs = 3 x the forward
    # 3,628,146,688, its input requiring grad; without, conv1 (2 * 112^2 * 64 * 7*7*3 = 236,027,904 FLOPs) computes
    # no input gradient
    torchvision = pytest.importorskip("torchvision")
    with torch.device("meta"):
        model = torchvision.models.resnet18()
    needs = torch.empty(1, 3, 224, 224, device="meta", requires_grad=True)
    assert count_training_step(model, (needs,)).total == 10_884_440_064
    plain = torch.empty(1, 3, 224, 224, device="meta")
    assert count_training_step(model, (plain,)).total == 10_884_440_064 - 236_027_904


def test_freeze_leaves_weights_untrained_and_counts_what_remains(capsys):
    # DiT-S/2 with every block frozen: the blocks compute input gradients only (their linears 1 x forward,
    # 12 * 24*T*d^2 = 10,871,635,968; adaLN 21,233,664), attention still both matmuls per forward matmul
    # (2 * 12 * 4*T^2*d = 2,415,919,104), x_embedder and t_embedder.mlp.0 their weight gradient (3,145,728 +
    # 196,608), t_embedder.mlp.2 both (2 * 294,912) and the final layer both (2 * (589,824 + 6,291,456)):
    # backward = 10,871,635,968 + 2,415,919,104 + 21,233,664 + 3,342,336 + 589,824 + 13,762,560 = 13,326,483,456
    assert main(["count", "DiT-S/2", "--training", "--freeze", "blocks.*", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["backward_flops"] == 13_326_483_456
    assert {x["path"]: x["why"] for x in d["differences"]}[
        "blocks.*.attn.qkv"
    ] == "input gradient only: its weights are frozen"


@pytest.mark.integration
def test_a_spec_trains_exactly_too(capsys):
    # torchvision's resnet18: PyTorch's literal 10,884,440,064 less conv1's input gradient 236,027,904
    assert main(["count", "torchvision:resnet18", "--training", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["forward_flops"], d["backward_flops"]) == (3_628_146_688, 2 * 3_628_146_688 - 236_027_904)
    assert d["rule_3x_flops"] == 10_884_440_064


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["count", "DiT-S/2", "--training", "--freeze", "blcoks.*"], "freeze pattern 'blcoks.*' matches no module"),
        (["count", "DiT-S/2", "--freeze", "blocks.*"], "--freeze shapes a training step: add --training"),
        (["count", "DiT-S/2", "--checkpoint", "blocks.*"], "--checkpoint shapes a training step: add --training"),
        (["count", "DiT-S/8", "--optimizer", "sgd"], "--optimizer shapes a training step: add --training"),
        (
            ["count", "DiT-S/2", "--training", "--checkpoint", "block.*"],
            "checkpoint pattern 'block.*' matches no module",
        ),
        (["count", "timm:resnet18", "--training", "--freeze", "nope"], "freeze pattern 'nope' matches no module"),
        (["count", "DiT-S/2", "--training", "--freeze", "*"], "the loss on this output needs no gradient"),
        (["count", "torchvision:resnet18", "--training", "--freeze", "*"], "the loss on this output needs no gradient"),
    ],
)
@pytest.mark.integration
def test_bad_freeze_is_one_line(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_estimate_training_compute_is_steps_times_the_exact_step(capsys):
    # seed 004's run: 1.28M images x 300 epochs = 3.84e8 samples = 1,500,000 steps of batch 256. The exact step of
    # one sample is 711,718,502,400 FLOPs (above), so a step of 256 is 182,199,936,614,400 (counted at batch 256,
    # on meta) and the run 1,500,000 x that = 273,299,904,921,600,000,000; the rule, 3 x 237,242,843,136 x 3.84e8,
    # = 273,303,755,292,672,000,000. On an A100 (312 TFLOPS bf16) at MFU 0.45: 2.733e20 / 140.4e12 s = 540.7 h
    assert (
        main(["estimate", "DiT-XL/2", "--training", "--steps", "1500000", "--batch", "256", "--gpu", "A100", "--json"])
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["flops_per_step"] == 182_199_936_614_400 and d["flops"] == 273_299_904_921_600_000_000
    assert d["rule_3x_flops"] == 273_303_755_292_672_000_000
    assert round(d["gpu_hours"], 1) == 540.7


@pytest.mark.integration
def test_estimate_training_takes_any_spec(capsys):
    # timm's vit_tiny_patch16_224 (T=197, d=192, 12 blocks), forward per sample by hand: blocks 12 * (24*T*d^2 +
    # 4*T^2*d) = 12 * (174,292,992 + 29,805,312) = 2,449,179,648; patch embed 2*196*768*192 = 57,802,752; head
    # 2*192*1000 = 384,000; 2,507,366,400. The step is 3x that less the patch embedding's input gradient (the image
    # needs none): 7,464,296,448 a sample; at batch 2 (counted there, on meta) 14,928,592,896; 10 steps
    # 149,285,928,960; the rule 10 x 3 x 2 x 2,507,366,400 = 150,441,984,000
    assert main(["estimate", "timm:vit_tiny_patch16_224", "--training", "--batch", "2", "--steps", "10", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["batch"], d["flops_per_step"], d["flops"]) == (2, 14_928_592_896, 149_285_928_960)
    assert d["rule_3x_flops"] == 150_441_984_000 and d["inputs"] == "x (2, 3, 224, 224) float32"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["estimate", "DiT-XL/2", "--training", "--cfg"], "a training step has no CFG"),
        (
            ["estimate", "timm:resnet18", "--training", "--freeze", "fc.nope"],
            "freeze pattern 'fc.nope' matches no module",
        ),
        (
            ["estimate", "timm:resnet18", "--training", "--batch", "2", "--input-shape", "4,3,224,224"],
            "--batch 2 and --input-shape 4,3,224,224 disagree",
        ),
        (["estimate", "DiT-XL/2", "--freeze", "blocks.*"], "--freeze shapes a training step: add --training"),
    ],
)
@pytest.mark.integration
def test_bad_training_estimates_are_one_line(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("attn", ["sdpa", "math"])
def test_checkpointed_blocks_run_their_forward_again_in_the_backward(attn, capsys):
    # DiT-S/2 with activation checkpointing on every block: the backward recomputes the blocks' forward once,
    # 12 * (24*T*d^2 + 4*T^2*d) + 12 * 2*d*6d = 12,079,595,520 + 21,233,664 = 12,100,829,184 FLOPs, on top of the
    # plain step's 36,330,700,800 (its model FLOPs): 48,431,529,984 counted. Executed, the fused path's flash kernel
    # also recomputes QK^T in its backward: 12 * 2*T^2*d = 603,979,776 more (the math path: none)
    assert main(["count", "DiT-S/2", "--attn", attn, "--training", "--checkpoint", "blocks.*", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["forward_flops"] + d["backward_flops"] == 48_431_529_984 and d["forward_flops"] == 12_111_347_712
    assert (d["model_flops"], d["checkpoint_recompute_flops"]) == (36_330_700_800, 12_100_829_184)
    assert d["executed_flops"] == d["training_flops"] == 48_431_529_984 + (603_979_776 if attn == "sdpa" else 0)
    recomputed = {x["path"]: x["backward_flops"] for x in d["differences"] if x["why"].startswith("recomputed")}
    # the recomputed attention is found as attention again: 12 * 2*T^2*d = 603,979,776 each for QK^T and attn@V
    assert recomputed["blocks.*.qk"] == recomputed["blocks.*.av"] == 603_979_776
    assert sum(recomputed.values()) == 12_100_829_184


@pytest.mark.parametrize(
    "name",
    [
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        "_scaled_dot_product_efficient_attention_backward",
        "_scaled_dot_product_flash_attention_backward",
        "_scaled_dot_product_cudnn_attention_backward",
        "_scaled_dot_product_fused_attention_overrideable_backward",
    ],
)
def test_every_sdpa_kernels_backward_is_its_four_matmuls(name):
    from flopcheck.exact.ops import FORMULAS

    # (b, h, t, e) = (2, 4, 64, 16): QK^T and attn@V are 2*2*4*64*64*16 = 1,048,576 each; the backward's dQ, dK,
    # dV and dP are four matmuls of that size, 4,194,304, whichever kernel ran (CPU flash, efficient, CUDA flash,
    # cuDNN, the overrideable one)
    q = torch.empty(2, 4, 64, 16, device="meta")
    assert FORMULAS[getattr(torch.ops.aten, name)](q, q, q, q).flops == 4_194_304


def test_the_low_level_attention_kernels_backward_reads_b_t_h_e():
    from flopcheck.exact.ops import FORMULAS

    q = torch.empty(2, 64, 4, 16, device="meta")  # (b, t, h, e): the same attention as above
    for name in ("_flash_attention_backward", "_efficient_attention_backward"):
        assert FORMULAS[getattr(torch.ops.aten, name)](q, q, q, q, q, q).flops == 4_194_304


def test_the_optimizer_step_is_reported_apart_as_elementwise_work(capsys):
    # DiT-XL/2 has 675,129,632 parameters (the DiT paper's 675M; test_reference_models), of which the fixed sin-cos
    # pos_embed, 256 x 1152 = 294,912, needs no gradient: 674,834,720 train. AdamW does no multiply-adds: its first
    # step creates two state tensors per parameter (2 x 674,834,720) and writes 8 elements per parameter
    assert main(["count", "DiT-XL/2", "--training", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    opt = d["optimizer"]
    assert d["trainable_parameters"] == 674_834_720
    assert (opt["name"], opt["multiply_add_flops"], opt["state_elements"]) == ("adamw", 0, 2 * 674_834_720)
    assert opt["elementwise_elements"] // 674_834_720 == 8
    assert d["model_flops"] == 711_718_502_400  # the optimizer is not in the step
    # executed: + the flash kernel's QK^T recompute, 28 x 2 x 256^2 x 1152 = 4,227,858,432
    assert d["executed_flops"] == d["training_flops"] == 711_718_502_400 + 4_227_858_432


def test_the_conv_transpose_loop_is_pytorchs_own_literal():
    # PyTorch's test_flop_counter.py, test_conv_transpose_loop: 50 forwards and backwards of ConvTranspose2d(4, 8,
    # (2, 2), stride=2) on a (1, 4, 30, 2) input that needs no gradient: 1,536,000 FLOPs. By hand: forward
    # 2 * (4*30*2 inputs) * 8 * (2*2) = 15,360; backward the weight gradient only, 15,360; 50 * 30,720
    from flopcheck.exact.counter import ExactCounter

    x = torch.rand(1, 4, 30, 2)
    model = nn.ConvTranspose2d(4, 8, (2, 2), stride=2)
    with ExactCounter() as c:
        for _ in range(50):
            model(x).sum().backward()
    assert c.result().total == 1_536_000 and c.result().complete


def test_an_lstms_backward_counts_each_gradient_it_needs():
    # LSTM(8 -> 16) on (2, 5, 8): per step the gates are x W_ih (8 -> 64) and h W_hh (16 -> 64), 2 * 2 * (8*64 +
    # 16*64) = 6,144 FLOPs; forward 5 steps 30,720. Backward: W_ih's weight gradient 5 * 2*2*8*64 = 10,240 (x needs
    # none), W_hh's weight gradient 5 * 2*2*16*64 = 20,480, and h's gradient through W_hh for the 4 steps after the
    # first (h0 is zeros, needing none) 4 * 4,096 = 16,384: 47,104
    lstm = nn.LSTM(8, 16, batch_first=True).to("meta")
    step = count_training_step(lstm, (torch.empty(2, 5, 8, device="meta"),))
    assert (step.forward.total, step.backward.total) == (30_720, 47_104) and step.backward.complete


@pytest.mark.parametrize(
    "claim, reading", [("10.65 GFLOPs", "training step, exact backward"), ("10.88 GFLOPs", "training x3")]
)
@pytest.mark.integration
def test_a_training_claim_on_a_spec_is_judged_against_its_exact_step(capsys, claim, reading):
    # torchvision's resnet18: exact step 10,648,412,160 (10.65 G); the rule 3 x 3,628,146,688 = 10,884,440,064 (10.88 G)
    assert main(["audit", claim, "--model", "torchvision:resnet18", "--training", "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "consistent" and d["true_flops"] == 10_648_412_160
    assert reading in d["candidates"][0]["reading"]


@pytest.mark.integration
def test_checkpointing_recomputes_only_what_the_backward_needs(capsys):
    # timm's ViT block ends x + mlp(x) with nothing after fc2, so no saved activation needs fc2's output and torch's
    # non-reentrant checkpoint stops its recompute before fc2: per block (vit_tiny: T=197, d=192, MLP 768) the
    # recompute is qkv 2*T*d*3d + QK^T and attn@V 2 * 2*T^2*d + proj 2*T*d^2 + fc1 2*T*d*4d
    # = 43,573,248 + 29,805,312 + 14,524,416 + 58,097,664 = 146,000,640 FLOPs, attributed to the block
    assert main(["count", "timm:vit_tiny_patch16_224", "--training", "--checkpoint", "blocks.*", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    again = {x["path"]: x["backward_flops"] for x in d["differences"] if x["why"].startswith("recomputed")}
    assert again["blocks.0"] + again["blocks.0.qk"] + again["blocks.0.av"] == 146_000_640
    assert sum(again.values()) == 12 * 146_000_640


def test_each_backward_op_belongs_to_the_module_whose_forward_made_its_node():
    # torchvision's resnet18 at (1, 3, 224, 224) on meta: a BasicBlock calls its one ReLU module twice, and
    # ReLU's backward (threshold_backward) writes what its forward wrote: stem 64*112*112 = 802,816 elements;
    # per block 2 calls of C*H*W: layer1 64*56*56 = 200,704, layer2 128*28*28 = 100,352, layer3 256*14*14 =
    # 50,176, layer4 512*7*7 = 25,088. Each belongs to the ReLU, never to a conv whose gradient ran just before
    # (the downsample's, under the gradient hooks this replaced)
    import torchvision

    model = torchvision.models.resnet18().to("meta")
    step = count_training_step(model, (torch.empty(1, 3, 224, 224, device="meta"),))
    relu = {r.path: (r.elements, r.calls) for r in step.backward.uncounted if r.op == "aten.threshold_backward"}
    per_block = {"layer1": 200_704, "layer2": 100_352, "layer3": 50_176, "layer4": 25_088}
    assert relu == {
        "relu": (802_816, 1),
        **{f"{layer}.{i}.relu": (2 * n, 2) for layer, n in per_block.items() for i in (0, 1)},
    }


def test_a_blocks_own_code_keeps_its_backward():
    # DiT-S/2: each block splits its adaLN output (1, 6d) into six with chunk; the backward joins their gradients
    # with one cat of 6d = 2,304 elements, 12 blocks: 27,648, in the block itself (not in norm1, which ran next)
    step = training_step("DiT-S/2", get_config("DiT-S/2"))
    cat = {r.path: (r.elements, r.calls) for r in step.backward.uncounted if r.op == "aten.cat"}
    assert cat == {"blocks.*": (27_648, 12), "final_layer": (768, 1)}  # final layer: chunk(2) of 2d = 768


@pytest.mark.integration
def test_a_model_whose_output_has_no_gradient_is_one_line(tmp_path, monkeypatch, capsys):
    # argmax returns integers: no loss on them has a gradient, so no backward exists; before, the message blamed the
    # inputs ("give its inputs"), which are fine
    (tmp_path / "picks.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Picks(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(8, 4)\n\n"
        "    def forward(self, x):\n        return self.fc(x).argmax(-1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["count", "picks:Picks", "--input-shape", "2,8", "--training"]) == 2
    err = capsys.readouterr().err
    assert "needs no gradient" in err and "give its inputs" not in err and err.count("\n") == 1
    # the forward alone counts: Linear(8, 4) on (2, 8) is 2 * 2*8*4 = 128 FLOPs
    assert main(["count", "picks:Picks", "--input-shape", "2,8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_flops"] == 128


class _Project(torch.autograd.Function):
    """x @ w with a hand-written backward that computes both gradients, whether or not they are needed."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


class _Projector(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(8, 4))

    def forward(self, x):
        return _Project.apply(x, self.w)


def test_a_custom_functions_backward_is_counted_as_it_runs_and_named():
    # x (2, 8) @ w (8, 4): forward 2*2*8*4 = 128 FLOPs. The Function's own backward computes g @ w^T (2*2*4*8 = 128,
    # the input gradient, though x needs none) and x^T @ g (2*8*2*4 = 128): 256. torch's derivative would have done
    # 128; what runs is counted, and each difference names the Function instead of guessing a reason
    step = count_training_step(_Projector().to("meta"), (torch.empty(2, 8, device="meta"),))
    assert (step.forward.total, step.backward.total) == (128, 256)
    whys = {why for _, _, _, why in step.differences()}
    assert whys == {
        "a custom autograd.Function's backward (_Project): its own code, not torch's derivatives, "
        "decides which gradients it computes"
    }


@pytest.mark.integration
def test_a_custom_operators_backward_without_a_formula_is_named_not_called_frozen(monkeypatch, capsys):
    # torchvision's deformable conv (4 -> 6 channels, 3x3) on (2, 4, 8, 8) with its offsets from a conv (4 -> 18):
    # forward 2*768*36 = 55,296 FLOPs (2 x 6 x 8 x 8 = 768 outputs, 4 x 3 x 3 = 36 each). Its backward runs
    # torchvision's own _deform_conv2d_backward, an operator with no formula: counted 0, and the step is incomplete.
    # Before, the why read "no gradient: its weights are frozen", which was false
    monkeypatch.syspath_prepend(str(MODELS))
    from deform_spec import Deform

    step = count_training_step(Deform().to("meta"), (torch.empty(2, 4, 8, 8, device="meta"),))
    assert step.backward.incomplete == ("torchvision._deform_conv2d_backward",)
    whys = {path: (f, b, why) for path, f, b, why in step.differences()}
    assert whys["dcn"] == (
        55_296,
        0,
        "its backward ran torchvision._deform_conv2d_backward, which has no formula: "
        "not counted (the step is INCOMPLETE)",
    )
    # and the count says so under its headline, not only below the step's numbers
    assert main(["count", "deform_spec:Deform", "--input-shape", "2,4,8,8", "--training"]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[2]
        .startswith("INCOMPLETE (the backward): torchvision._deform_conv2d_backward is a custom operator")
    )


class _StopValues(nn.Module):
    """Attention on (2, 8, 16) whose values are the input detached: only q and k carry a gradient."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(self, x):
        scores = (self.q(x) @ self.k(x).transpose(-1, -2)).softmax(-1)  # (2, 8, 8)
        return scores @ x.detach()  # (2, 8, 16)


def test_attentions_backward_is_split_by_the_node_each_matmul_made():
    # QK^T and attn@V are each 2*2*8*8*16 = 4,096 FLOPs forward. Backward: attn@V's node computes dA = dO V^T only
    # (V is detached), 4,096; QK^T's node computes dQ and dK, 8,192. The top module made both (no attention module to
    # key on), and the split comes from the node each backward matmul runs in, not from an order of calls
    step = count_training_step(_StopValues().to("meta"), (torch.empty(2, 8, 16, device="meta", requires_grad=True),))
    fwd, bwd = step.forward.by_kind(), step.backward.by_kind()
    assert fwd[Kind.ATTN_SCORE] == fwd[Kind.ATTN_VALUE] == 4_096
    assert (bwd[Kind.ATTN_VALUE], bwd[Kind.ATTN_SCORE]) == (4_096, 8_192) and Kind.MATMUL not in bwd


@pytest.mark.parametrize(
    "attn, kernel, recompute",
    [
        # DiT-S/2 at 256 px, batch 1: the flash (or efficient, cuDNN) kernel's backward recomputes QK^T, L x 2 x T^2 x d
        # = 12 x 2 x 256^2 x 384 = 603,979,776 FLOPs; the math kernel and the explicit-matmul path recompute nothing
        ("sdpa", None, 603_979_776),
        ("sdpa", "efficient", 603_979_776),
        ("sdpa", "math", 0),
        ("math", None, 0),
    ],
)
def test_executed_flops_beside_model_flops(attn, kernel, recompute, capsys):
    argv = ["count", "DiT-S/2", "--attn", attn, "--training", "--json"] + (["--attn-kernel", kernel] if kernel else [])
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    # model FLOPs: the plain step, 36,330,700,800 (test above); executed: that plus the kernel's recompute
    assert d["model_flops"] == 36_330_700_800 and d["kernel_recompute_flops"] == recompute
    assert d["executed_flops"] == d["training_flops"] == 36_330_700_800 + recompute
    assert d["attn_kernel"] == (kernel or ("flash" if attn == "sdpa" else "math"))


def test_estimate_training_times_model_flops_and_gives_hfu(capsys):
    # DiT-S/2, one step of batch 1 on an H100 (989.4 TFLOPS) at MFU 0.45: 36,330,700,800 / (0.45 x 989.4e12) s;
    # HFU = 0.45 x 36,934,680,576 / 36,330,700,800 = 0.45748...
    assert main(["estimate", "DiT-S/2", "--training", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["model_flops_per_step"], d["executed_flops_per_step"]) == (36_330_700_800, 36_934_680_576)
    assert d["step_seconds"] == pytest.approx(36_330_700_800 / (0.45 * 989.4e12), rel=1e-12)
    assert d["hfu"] == pytest.approx(0.45 * 36_934_680_576 / 36_330_700_800, rel=1e-12)


@pytest.mark.integration
def test_a_specs_fused_attention_is_seen_for_its_executed_flops(capsys):
    # timm's vit_tiny_patch16_224 runs F.scaled_dot_product_attention in each of its 12 blocks: T = 197, d = 192,
    # so flash's backward recomputes 12 x 2 x 197^2 x 192 = 178,831,872 FLOPs over the model's 7,464,296,448 (above)
    assert main(["count", "timm:vit_tiny_patch16_224", "--training", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["model_flops"], d["kernel_recompute_flops"]) == (7_464_296_448, 178_831_872)
    assert d["executed_flops"] == 7_464_296_448 + 178_831_872 and d["attn_kernel"] == "flash"


def test_an_attention_kernel_without_training_is_refused(capsys):
    assert main(["count", "DiT-S/2", "--attn-kernel", "math"]) == 2
    assert "--attn-kernel sets a training step's executed FLOPs: add --training" in capsys.readouterr().err
