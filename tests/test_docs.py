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


def test_the_browser_check_fails_a_hidden_search_box_and_a_network_request():
    # held-out round 4: read from disk, the site's search was gone (the theme's offline plugin loaded its Worker shim
    # from unpkg.com, which fails offline, and the theme then hides the box); the browser check saw no console line
    from docs import page_faults

    box = '<div class="md-search" data-md-component="search" role="dialog"{}>'
    assert page_faults(box.format("") + '<script src="javascripts/iframe-worker-shim.js"></script>') == []
    assert page_faults(box.format(' hidden=""')) == ["the search box is hidden"]
    assert page_faults("<p>no theme</p>") == ["no search box"]
    shim = '<script src="https://unpkg.com/iframe-worker/shim"></script><link rel="stylesheet" href="//x.org/a.css">'
    assert page_faults(box.format("") + shim) == [
        "a network request: https://unpkg.com/iframe-worker/shim",
        "a network request: //x.org/a.css",
    ]
    assert page_faults(box.format("") + '<a href="https://github.com/x">source</a>') == []  # a link is no request
