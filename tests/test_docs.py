"""The docs' own checks (scripts/docs.py), on small pages written here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from docs import glued_lists  # noqa: E402


def test_a_list_right_under_a_paragraph_is_found_and_one_after_a_blank_line_is_not():
    # held-out round 4: docs/audit.md:35 and docs/specs.md:20 and :185 rendered as one paragraph each
    page = "Intro:\n- one\n- two\n\nText:\n\n- fine\n  continued\n\n```\nx:\n- in code\n```\n1. a\nPara\n2. b\n"
    # line 2 follows "Intro:"; line 16 ("2. b") follows "Para"; line 14 ("1. a") follows a closing fence
    assert glued_lists(page) == [2, 16]
