"""The Two layers page in AppTest: the chain drawn with the engine's numbers, the ReLU's gate, its
own fields in the link, bad input refused with a reason and the last valid view kept; the Checks
page's two-layer finite-difference check."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_pages import assert_clean, figures, open_page, query, z_of

from convviz.model.lecture import CHAIN_PAGE, LECTURE

pytestmark = pytest.mark.apptest

CHECKS = "pages/8_Checks.py"


def step_of(key: str) -> str:
    return str(LECTURE.step_of(LECTURE.stage(key)))


def heatmap(fig: dict, panel: int) -> np.ndarray:
    """The z of the figure's heatmap number `panel` (one per panel, in order)."""
    maps = [d for d in fig["data"] if d.get("type") == "heatmap"]
    return z_of(maps[panel])


def messages(at) -> str:
    return "\n".join(m.value for kind in (at.warning, at.error, at.info) for m in kind)


def test_the_page_draws_every_stage_and_keeps_its_fields_in_the_link():
    for stage in LECTURE.on_page(CHAIN_PAGE):
        at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of(stage.key))
        assert_clean(at)
        assert figures(at), stage.key
        q = query(at)
        assert (q["kH2"], q["pad2"], q["relu"], q["b1"]) == ("2", "1", "1", "0")
        share = next(c.value for c in at.main.caption if "Share this view" in c.value)
        assert "kH2=2" in share and "preset=recitation-s2" in share


def test_a_still_stage_offers_its_picture_and_a_motion_its_gif():
    at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of("chain-weights"))
    labels = [b.proto.label for b in at.get("download_button")]
    assert any("PNG" in label for label in labels) and any("SVG" in label for label in labels)
    at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of("handover"))
    assert any("GIF" in b.proto.label for b in at.get("download_button"))


def test_the_forward_chain_shows_the_engines_h_and_y():
    at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of("chain-forward"))
    fig = figures(at)[0]
    # x, pre, h, y, t: the recitation's layer 1 is all positive, h = pre
    np.testing.assert_array_equal(heatmap(fig, 2), [[195, 231], [240, 231]])
    assert any("L = " in c.value for c in at.main.caption)


def test_a_negative_bias_shuts_a_gate_the_page_marks_and_says():
    at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of("handover"), b1="-200")
    assert_clean(at)
    motion, gate = figures(at)[:2]
    assert "ReLU gate shut" in str(motion["layout"]["annotations"])
    pre, grad_h, grad_y1 = (heatmap(gate, i) for i in range(3))
    np.testing.assert_array_equal(pre, [[-5, 31], [40, 31]])
    np.testing.assert_array_equal(grad_y1, np.where(pre > 0, grad_h, 0))
    assert grad_h[0, 0] != 0 and grad_y1[0, 0] == 0
    words = " ".join(m.value for m in at.markdown)
    assert "∂L/∂h is layer 1's ∂L/∂y" in words


def test_without_the_relu_the_gate_is_open():
    at = open_page(CHAIN_PAGE, preset="recitation-s2", step=step_of("handover"), b1="-200",
                   relu="0")  # fmt: skip
    assert_clean(at)
    _, gate = figures(at)[:2]
    np.testing.assert_array_equal(heatmap(gate, 2), heatmap(gate, 1))
    assert query(at)["relu"] == "0"


@pytest.mark.parametrize(
    ("name", "raw"), [("kH2", "abc"), ("kH2", "99"), ("relu", "maybe"), ("b1", "1e3")]
)
def test_a_malformed_field_is_named_and_the_default_kept(name, raw):
    at = open_page(CHAIN_PAGE, preset="recitation-s2", **{name: raw})
    assert not at.exception
    said = messages(at)
    assert f"{name}=" in said and "kept" in said, said
    assert figures(at)


def test_an_impossible_layer_2_is_refused_and_the_last_valid_one_drawn():
    at = open_page(CHAIN_PAGE, preset="recitation-s2", kH2="5", pad2="0")  # h is 2×2
    assert not at.exception
    said = messages(at)
    assert "Cannot compute the two layers" in said and "layer 2" in said, said
    assert figures(at)  # the defaults' view
    at.number_input(key="ctl_chain_kH2").set_value(2).run()
    assert not at.error and query(at)["kH2"] == "2"
    at.number_input(key="ctl_chain_kW2").set_value(6).run()  # 6 > 2 + 2·0 again
    assert "Showing the last valid ones" in messages(at)
    assert query(at)["kW2"] == "2"  # the link holds the view drawn
    assert figures(at)


def test_the_checks_page_shows_the_two_layer_check_passing():
    at = open_page(CHECKS, preset="recitation-s2")
    assert_clean(at)
    heads = [m.value for m in at.markdown if m.value.startswith("## ")]
    row = next(h for h in heads if "Finite differences through both layers" in h)
    assert "agrees" in row and "check_circle" in row, row
    why = " ".join(c.value for c in at.caption)
    assert "chain rule's ∂L/∂w₁" in why
    assert "Layer 2 as the Two layers page draws it: kernel 2×2, stride 1×1, padding 1" in why
