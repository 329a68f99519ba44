"""The structure a published formula reads: a model's shape (layers, width, heads, kv heads, head dim, MLP width and
gating, vocabulary, experts and top-k, window) and its parameters by group, read once from the built model.

`of_model` runs where the model is (a spec's child process; it imports torch); `Structure` itself is plain data, so
the parent and the tests build one without torch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

LM = "lm"  # a decoder-only language model (causal self-attention, a vocabulary, an LM head)
DIT = "dit"  # a DiT: patch tokens, bidirectional attention, adaLN (flopcheck's reference family)


@dataclass(frozen=True)
class Structure:
    """A transformer's shape and parameter groups; kind '' when it is neither a decoder-only LM nor a DiT (the
    formulas say they do not apply, `why` says what it is)."""

    kind: str = ""
    why: str = ""  # what the model is, when no formula applies to it
    L: int = 0  # layers
    d: int = 0  # model width
    H: int = 0  # query heads
    G: int = 0  # key/value heads (G = H: multi-head; G < H: grouped-query)
    dh: int = 0  # head dim (H * dh need not be d)
    F: int = 0  # MLP hidden width (one expert's, in a mixture of experts)
    m: int = 2  # d x F matrices in the MLP: 2 (GELU, ReLU), 3 (SwiGLU, GeGLU: gated)
    V: int = 0  # vocabulary
    tied: bool = False  # the LM head's weight is the input embedding's
    E: int = 1  # routed experts (1: a dense MLP)
    k: int = 1  # experts per token (top-k)
    W: int = 0  # sliding window (0: none)
    T: int = 0  # tokens per sequence
    B: int = 1  # sequences (samples) per step
    context: int = 0  # the model's context length (n_positions, max_position_embeddings; nanoGPT's block_size)
    # parameters by group (each counted once)
    n_all: int = 0
    n_embed: int = 0  # the input token embedding
    n_pos: int = 0  # other nn.Embedding tables (learned positions)
    n_head: int = 0  # the LM head's weight when it is its own (0 when tied)
    n_norm: int = 0  # norm weights and biases
    n_bias: int = 0  # biases of the matmul layers
    n_experts: int = 0  # the routed experts' parameters, all of them
    n_router: int = 0  # the routers' parameters
    hand: int = 0  # a DiT: flopcheck's term-by-term formula for one forward at this input, FLOPs
    extra: dict[str, Any] = field(default_factory=dict)  # what a family adds (a DiT's patch size)

    @property
    def q(self) -> int:
        """Query width H * dh."""
        return self.H * self.dh

    @property
    def kv(self) -> int:
        """Key (and value) width G * dh."""
        return self.G * self.dh

    @property
    def n(self) -> int:
        """Tokens in the step: B * T."""
        return self.B * self.T

    @property
    def moe(self) -> bool:
        """Routed experts."""
        return self.E > 1

    def scoped(self, tokens: int, batch: int) -> Structure:
        """The same model at T = tokens, B = batch."""
        return replace(self, T=tokens, B=batch)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Structure:
        """Inverse of to_dict; unknown keys refused by the dataclass."""
        return cls(**d)


def _first(config: Any, *names: str, default: Any = None) -> Any:
    """The first of `names` the config has set (configs name one fact several ways: n_embd, hidden_size)."""
    for name in names:
        value = getattr(config, name, None)
        if value is not None:
            return value
    return default


def _layers(model: Any, count: int) -> Any:
    """The ModuleList of the model's `count` decoder layers."""
    from torch import nn  # lazy: torch-free door (verbs.reconcile and the audit load these formulas without torch)

    return next((m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m) == count), None)


def _params(module: Any) -> int:
    """Elements of a module's parameters."""
    return sum(p.numel() for p in module.parameters())


def _groups(model: Any) -> dict[str, int]:
    """Parameters by group: all, the input embedding, other embedding tables, a separate LM head, norms, biases,
    experts, routers; shared tensors once."""
    from torch import nn  # lazy: torch-free door (as in _layers)

    inp = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    out = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    tied = inp is not None and out is not None and out.weight is inp.weight
    seen: set[int] = set()
    g = dict.fromkeys(("n_all", "n_embed", "n_pos", "n_head", "n_norm", "n_bias", "n_experts", "n_router"), 0)
    for name, module in model.named_modules():
        for pname, p in module.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            g["n_all"] += p.numel()
            last = name.rsplit(".", 1)[-1]
            if module is inp:
                g["n_embed"] += p.numel()
            elif isinstance(module, nn.Embedding):
                g["n_pos"] += p.numel()
            elif module is out and not tied:
                g["n_head"] += p.numel()
            elif "Norm" in type(module).__name__:
                g["n_norm"] += p.numel()
            elif ".experts" in f".{name}" or last == "experts":
                g["n_experts"] += p.numel()
            elif last in ("gate", "router") and "Router" in type(module).__name__ or last == "router":
                g["n_router"] += p.numel()
            elif pname == "bias":
                g["n_bias"] += p.numel()
    return {**g, "tied": tied}


def _mlp_matrices(layer: Any, d: int, F: int, E: int) -> int:
    """d x F matrices in one layer's MLP (one expert's): its weight elements over E * d * F (2 plain, 3 gated)."""
    mlp = next((m for n, m in layer.named_children() if n in ("mlp", "block_sparse_moe", "feed_forward")), None)
    if mlp is None or not d or not F:
        return 2
    routers = ("gate.", "router.", "shared")
    weights: int = sum(
        p.numel() for n, p in mlp.named_parameters() if not n.endswith("bias") and not n.startswith(routers)
    )
    return max(2, round(weights / (E * d * F)))


def of_model(model: Any, tokens: int = 0, batch: int = 1) -> Structure:
    """A transformers causal LM's structure from its config and its parameters; any other model: kind '' with what
    it is."""
    config = getattr(model, "config", None)
    name = type(model).__name__
    if config is None or not hasattr(config, "to_dict"):
        return Structure(why=f"{name} is not a transformers language model (no config to read its shape from)")
    if getattr(config, "is_encoder_decoder", False) or not name.endswith(("ForCausalLM", "LMHeadModel")):
        return Structure(why=f"{name} is not a decoder-only causal LM (the formulas are for those)")
    L = _first(config, "num_hidden_layers", "n_layer", "num_layers")
    d = _first(config, "hidden_size", "n_embd", "d_model")
    H = _first(config, "num_attention_heads", "n_head", "num_heads")
    if not H:  # MambaForCausalLM: a state-space LM, no attention to read a transformer's shape from
        return Structure(why=f"{name} has no attention heads in its config (the formulas are for transformers)")
    F = _first(config, "intermediate_size", "n_inner", "ffn_dim", default=4 * d)
    E = _first(config, "num_local_experts", "num_experts", "n_routed_experts", default=1) or 1
    layers = _layers(model, L)
    g: dict[str, Any] = _groups(model)
    return Structure(
        kind=LM,
        L=L,
        d=d,
        H=H,
        G=_first(config, "num_key_value_heads", "n_head_kv", default=H),
        dh=_first(config, "head_dim", default=d // H),
        F=F,
        m=_mlp_matrices(layers[0], d, F, E) if layers is not None else 2,
        V=_first(config, "vocab_size"),
        E=E,
        k=_first(config, "num_experts_per_tok", "top_k", default=1) if E > 1 else 1,
        W=_first(config, "sliding_window", default=0) or 0,
        T=tokens,
        B=batch,
        context=_first(config, "max_position_embeddings", "n_positions", "n_ctx", default=0),
        **g,
    )


def of_dit(config: Any, batch: int, hand: int) -> Structure:
    """A reference DiT's structure from its config; `hand` its term-by-term formula for one forward."""
    return Structure(
        kind=DIT,
        L=config.depth,
        d=config.hidden_size,
        H=config.num_heads,
        G=config.num_heads,
        dh=config.hidden_size // config.num_heads,
        F=int(config.hidden_size * config.mlp_ratio),
        T=config.tokens,
        B=batch,
        hand=hand,
        extra={"patch": config.patch_size},
    )


def of_call(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The structure of a model called on (args, kwargs), JSON-ready: T and B from its first 2-D integer tensor
    (input_ids); {} when it is neither an LM nor worth saying (no config)."""
    import torch  # lazy: torch-free door (as in _layers)

    ids = next(
        (
            t
            for t in (*args, *kwargs.values())
            if isinstance(t, torch.Tensor) and t.dim() == 2 and not t.is_floating_point()
        ),
        None,
    )
    batch, tokens = (int(ids.shape[0]), int(ids.shape[1])) if ids is not None else (1, 0)
    return of_model(model, tokens, batch).to_dict()
