"""Every diffusers transformer class counted from its own defaults (`flopcheck count diffusers:CLASS`, no other
argument), written to flopcheck/data/diffusers/classes.json: complete with its FLOPs and input, or refused with the
one line a user would see. The suite checks the file against the installed diffusers (tests/test_diffusers_classes.py).

    python scripts/diffusers_census.py            # rewrite the list
    python scripts/diffusers_census.py --check    # exit 1 when the list differs from what this diffusers gives
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "flopcheck" / "data" / "diffusers" / "classes.json"


def transformer_classes() -> list[str]:
    """diffusers' top-level model classes that are transformers by what they are, not by their name: defined in its
    `diffusers.models.transformers` package (HunyuanDiT2DModel and LuminaNextDiT2DModel have no 'Transformer' in
    theirs)."""
    import diffusers
    from torch import nn

    def is_transformer(name: str) -> bool:
        cls = getattr(diffusers, name, None)
        module = getattr(cls, "__module__", "")
        return isinstance(cls, type) and issubclass(cls, nn.Module) and module.startswith(TRANSFORMERS)

    return sorted(n for n in dir(diffusers) if is_transformer(n))


TRANSFORMERS = "diffusers.models.transformers."  # the package diffusers keeps its transformer models in


def census(names: list[str] | None = None) -> dict:
    """{'diffusers': version, 'unit': 'FLOP', 'classes': {name: {'complete': True, 'flops': int, 'inputs': words} or
    {'refused': line}}}, of every transformer class (or of `names`)."""
    import diffusers

    from flopcheck.children import one_line
    from flopcheck.specs import SpecError, parse
    from flopcheck.specs.measure import Measured, measure

    out = {}
    for name in names or transformer_classes():
        try:  # as `flopcheck count diffusers:NAME` counts it, less the real-tensor fallback (a full-size model on CPU)
            m = Measured.from_dict(measure(parse(f"diffusers:{name}").to_dict(), real=False))
            words = next((n for n in m.notes if n.startswith("input ")), m.inputs)
            out[name] = (
                {"complete": True, "flops": m.exact.total, "inputs": words}  # FLOPs: 2 per multiply-add
                if m.exact.complete
                else {"refused": m.exact.incompleteness()}
            )
        except SpecError as err:
            out[name] = {"refused": str(err)}
        except Exception as err:  # noqa: BLE001 - the class's forward on flopcheck's inputs: its one line
            out[name] = {"refused": f"failed on meta: {one_line(err)}"}
    return {"diffusers": diffusers.__version__, "unit": "FLOP", "classes": out}


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    now = census()
    done = sum("complete" in v for v in now["classes"].values())
    print(f"diffusers {now['diffusers']}: {done} of {len(now['classes'])} transformer classes count complete")
    text = json.dumps(now, indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        same = LIST.exists() and LIST.read_text() == text
        print("the list is up to date" if same else f"{LIST} differs: run python scripts/diffusers_census.py")
        return 0 if same else 1
    LIST.write_text(text)
    print(f"wrote {LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
