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
    W: int = 0  # sliding window (0: none); the layers it applies to are `windows`'s nonzero ones
    windows: tuple[int, ...] = ()  # each layer's window (0: global), as its attention module runs it; () = W on all
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
    n_shared: int = 0  # the shared experts' parameters (every token runs them)
    n_bias_router: int = 0  # the routers' biases (within n_router)
    n_bias_experts: int = 0  # the routed experts' biases, all of them (within n_experts)
    n_sinks: int = 0  # attention-sink logits (GPT-OSS: one per head per layer), added to the scores
    n_norm_final: int = 0  # the final norm's parameters (0: unknown, taken as n_norm / (2L + 1))
    n_attn_bias: int = 0  # the biases of the attention projections (q, k, v, o)
    n_qk_norm: int = 0  # q and k norms inside the attention modules (Qwen3, OLMo 2)
    # experts past one width: dense-first layers and shared experts (DeepSeek-V3: 3 dense layers of 18,432 first)
    L_dense: int = 0  # layers with a dense MLP in a mixture-of-experts model (0 in a dense one: all are)
    F_dense: int = 0  # those layers' MLP width
    F_shared: int = 0  # the shared experts' width, all of them together, per MoE layer
    # multi-head latent attention (DeepSeek-V2/V3); kv_lora 0: none
    q_lora: int = 0  # q's low-rank width (0: q projected from d directly)
    kv_lora: int = 0  # the compressed kv latent's width
    dh_nope: int = 0  # q and k head dim without rope
    dh_rope: int = 0  # q and k rope head dim (k's shared by every head)
    dh_v: int = 0  # v head dim
    family: str = ""  # the config's model_type (a framework's per-model formula reads it: Levanter's Gemma glu)
    softcap: float = 0.0  # attention logit soft-capping (Gemma 2): elementwise, no matmul
    sinks: bool = False  # attention sinks (GPT-OSS): one learned logit per head, no matmul
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

    @property
    def mla(self) -> bool:
        """Multi-head latent attention."""
        return self.kv_lora > 0

    @property
    def L_moe(self) -> int:
        """Layers with routed experts."""
        return self.L - self.L_dense if self.moe else 0

    @property
    def layer_windows(self) -> tuple[int, ...]:
        """Each layer's window, 0 for global attention."""
        return self.windows or (self.W,) * self.L

    @property
    def L_window(self) -> int:
        """Layers whose window is shorter than the sequence."""
        return sum(1 for w in self.layer_windows if w and w < self.T)

    @property
    def dh_qk(self) -> int:
        """q and k head dim: nope + rope with MLA, else dh."""
        return self.dh_nope + self.dh_rope if self.mla else self.dh

    def scoped(self, tokens: int, batch: int) -> Structure:
        """The same model at T = tokens, B = batch."""
        return replace(self, T=tokens, B=batch)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Structure:
        """Inverse of to_dict (JSON's list of windows a tuple again); unknown keys refused by the dataclass."""
        return cls(**{**d, "windows": tuple(d.get("windows", ()))})


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
    routed experts, routers, shared experts; shared tensors once."""
    from torch import nn  # lazy: torch-free door (as in _layers)

    inp = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    out = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    tied = inp is not None and out is not None and out.weight is inp.weight
    seen: set[int] = set()
    names = ("n_all", "n_embed", "n_pos", "n_head", "n_norm", "n_bias", "n_experts", "n_router", "n_shared", "n_sinks")
    g = dict.fromkeys((*names, "n_bias_router", "n_bias_experts"), 0)
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
            elif pname == "sinks":
                g["n_sinks"] += p.numel()
            elif ".shared_expert" in f".{name}":
                g["n_shared"] += p.numel()
            elif ".experts" in f".{name}" or last == "experts":
                g["n_experts"] += p.numel()
                g["n_bias_experts"] += p.numel() * pname.endswith("bias")
            elif last in ("gate", "router") and "Router" in type(module).__name__ or last == "router":
                g["n_router"] += p.numel()
                g["n_bias_router"] += p.numel() * pname.endswith("bias")
            elif pname == "bias":
                g["n_bias"] += p.numel()
    return {**g, "tied": tied}


def _attention(layer: Any) -> Any:
    """A decoder layer's self-attention module (None when it has none by a known name)."""
    return next((m for n, m in layer.named_children() if n in ("self_attn", "attention", "attn")), None)


def _mlp(layer: Any) -> Any:
    """A decoder layer's MLP (dense or routed) module."""
    return next((m for n, m in layer.named_children() if n in ("mlp", "block_sparse_moe", "feed_forward")), None)


def _weights(module: Any, skip: tuple[str, ...] = ()) -> int:
    """Elements of a module's matmul weights: no biases, none under a child named in `skip`."""
    return sum(p.numel() for n, p in module.named_parameters() if not n.endswith("bias") and not n.startswith(skip))


def _windows(layers: Any) -> tuple[int, ...]:
    """Each layer's sliding window as its attention module runs it (0: global); () when the modules do not say
    (Mistral's window is the config's, on every layer)."""
    attns = [_attention(layer) for layer in layers] if layers is not None else []
    if not attns or not all(a is not None and hasattr(a, "sliding_window") for a in attns):
        return ()
    return tuple(int(a.sliding_window or 0) for a in attns)


def _mla(attn: Any, H: int) -> dict[str, int]:
    """Multi-head latent attention's widths from its projections' shapes: q_a (d -> q_lora), kv_a (d -> kv_lora +
    rope), kv_b (kv_lora -> H (nope + v)), o (H v -> d); {} when the module is not one."""
    if attn is None or not hasattr(attn, "kv_a_proj_with_mqa"):
        return {}
    kv_lora = int(attn.kv_a_layernorm.weight.numel())
    dh_v = attn.o_proj.in_features // H
    q_a = getattr(attn, "q_a_proj", None)
    return dict(
        q_lora=q_a.out_features if q_a is not None else 0,
        kv_lora=kv_lora,
        dh_rope=attn.kv_a_proj_with_mqa.out_features - kv_lora,
        dh_v=dh_v,
        dh_nope=attn.kv_b_proj.out_features // H - dh_v,
    )


def _experts(layers: Any, d: int, widths: tuple[int, ...]) -> dict[str, int]:
    """The MLPs as the layers run them: d x F matrices per MLP (m), the routed experts (E) and their width F, dense
    layers and their width, the shared experts' width. F is the first of the config's `widths` (moe_intermediate_size,
    intermediate_size) that divides one expert's weights into 2 or 3 d x F matrices: the config agrees with the run."""
    dense: list[int] = []
    expert = shared = routed = 0
    for layer in layers:
        mlp = _mlp(layer)
        if mlp is None:
            continue
        experts = getattr(mlp, "experts", None)
        if experts is None:
            dense.append(_weights(mlp))
            continue
        first = next(experts.parameters())
        count = first.shape[0] if first.dim() == 3 else len(experts)
        expert, routed = _weights(experts) // count, count
        kids = dict(mlp.named_children())
        shared = _weights(kids["shared_experts"]) if "shared_experts" in kids else 0
        shared = _weights(kids["shared_expert"]) if "shared_expert" in kids else shared
    one = expert or (dense[0] if dense else 0)
    F, m = _split(one, d, widths)
    if not F:
        return {"m": max(2, round(one / (d * widths[-1]))) if d and widths[-1] else 2}
    return dict(
        F=F,
        m=m,
        **({"E": routed} if routed else {}),
        L_dense=len(dense) if routed else 0,
        F_dense=dense[0] // (m * d) if routed and dense else 0,
        F_shared=shared // (m * d),
    )


def _split(weights: int, d: int, widths: tuple[int, ...]) -> tuple[int, int]:
    """(F, m): the first width F with weights = m * d * F, m 2 or 3; (0, 2) when none does."""
    return next(((f, weights // (d * f)) for f in widths if f and weights in (2 * d * f, 3 * d * f)), (0, 2))


def _inside_attention(layers: Any) -> tuple[int, int]:
    """The attention projections' biases and the norms inside the attention modules (q and k norms), all layers."""
    bias = norm = 0
    for layer in layers if layers is not None else []:
        attn = _attention(layer)
        if attn is None:
            continue
        for name, module in attn.named_modules():
            params = sum(p.numel() for p in module.parameters(recurse=False))
            if "Norm" in type(module).__name__:
                norm += params
            elif name:
                bias += sum(p.numel() for n, p in module.named_parameters(recurse=False) if n == "bias")
    return bias, norm


def _final_norm(model: Any) -> int:
    """The final norm's parameters (model.norm, ln_f, final_layer_norm)."""
    last = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f")
    found = [m for n, m in model.named_modules() if n.rsplit(".", 1)[-1] in last and "Norm" in type(m).__name__]
    return sum(p.numel() for p in found[-1].parameters()) if found else 0


def of_model(model: Any, tokens: int = 0, batch: int = 1) -> Structure:
    """A transformers causal LM's structure from the modules it runs (each layer's window, MLA's widths, the
    experts' real widths, dense-first layers, shared experts, head_dim, biases) and its config where they agree;
    any other model: kind '' with what it is."""
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
    attn = _attention(layers[0]) if layers is not None else None
    mla: dict[str, Any] = _mla(attn, H)
    widths = (_first(config, "moe_intermediate_size", default=0), F) if E > 1 else (F,)
    mlp: dict[str, Any] = _experts(layers, d, widths) if layers is not None else {}
    E = mlp.pop("E", E)  # the experts the layers hold, where they hold them
    windows = _windows(layers)
    W = max(windows) if windows else _first(config, "sliding_window", default=0) or 0
    bias, qk_norm = _inside_attention(layers)
    head_dim = getattr(attn, "head_dim", None) if attn is not None else None
    dh = mla["dh_nope"] + mla["dh_rope"] if mla else head_dim or _first(config, "head_dim", default=d // H)
    g: dict[str, Any] = _groups(model)
    return Structure(
        kind=LM,
        L=L,
        d=d,
        H=H,
        G=H if mla else _first(config, "num_key_value_heads", "n_head_kv", default=H),
        dh=dh,
        **{"F": F, "m": 2, **mlp},
        V=_first(config, "vocab_size"),
        E=E,
        k=_first(config, "num_experts_per_tok", "top_k", default=1) if E > 1 else 1,
        W=W,
        windows=windows if any(windows) else (),
        T=tokens,
        B=batch,
        context=_first(config, "max_position_embeddings", "n_positions", "n_ctx", default=0),
        n_norm_final=_final_norm(model),
        n_attn_bias=bias,
        n_qk_norm=qk_norm,
        **mla,
        family=str(getattr(config, "model_type", "") or ""),
        softcap=float(getattr(config, "attn_logit_softcapping", 0.0) or 0.0),
        sinks=any(hasattr(_attention(layer), "sinks") for layer in layers) if layers is not None else False,
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
