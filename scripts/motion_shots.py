"""Screenshots of every motion at 25 %, 50 % and 75 % of its frames, as the offline lecture (the
app's presentation mode) draws them at 1280×720, for looking at: artifacts/motions/. With
`--cvd deuteranomaly` (or protanomaly, tritanomaly) each also as a reader with that colour
vision at full severity sees it (colorspacious), beside it as NAME-deuteranomaly.png."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from convviz.export import html
from convviz.export.story import Story

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
OUT = Path(__file__).resolve().parents[1] / "artifacts" / "motions"


def shots(preset: str, page, only: tuple[str, ...] = ()) -> list[Path]:
    story = Story.of(preset)
    stages = html.deck_stages(story)
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as f:
        f.write(html.lecture_html(story))
    page.goto(Path(f.name).as_uri())
    page.wait_for_function("() => window.__convviz && document.body.dataset.stage === '0'")
    out = []
    for i, stage in enumerate(stages):
        if stage.view != "motion" or (only and stage.key not in only):
            continue
        chart = "chart_" + stage.key.replace("-", "_")
        page.evaluate(f"() => document.querySelectorAll('#deck-head .stage-button')[{i}].click()")
        page.wait_for_function(f"() => document.body.dataset.stage === '{i}'")
        page.wait_for_function(f"() => window.__convviz.players.get('{chart}')")
        page.evaluate(f"() => window.__convviz.players.get('{chart}').pause()")
        count = page.evaluate(f"() => window.__convviz.players.get('{chart}').count")
        for part in (25, 50, 75):
            frame = round((count - 1) * part / 100)
            page.evaluate(f"() => window.__convviz.players.get('{chart}').show({frame}, false)")
            page.wait_for_timeout(400)  # plotly draws the frame
            path = OUT / f"{preset}-{stage.key}-{part}.png"
            page.locator("section.stage.shown").screenshot(path=str(path))
            out.append(path)
    return out


def simulated(path: Path, cvd: str) -> Path:
    """The screenshot as a reader with `cvd` at severity 100 sees it."""
    import numpy as np
    from colorspacious import cspace_convert
    from PIL import Image

    rgb = np.asarray(Image.open(path).convert("RGB"), float) / 255
    seen = cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}, "sRGB1")
    out = path.with_name(f"{path.stem}-{cvd}.png")
    Image.fromarray(np.round(255 * np.clip(seen, 0, 1)).astype(np.uint8)).save(out)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("presets", nargs="*", default=["recitation-s1", "recitation-s2", "classroom"])
    p.add_argument("--stages", default="", help="stage keys, comma-separated (default: all)")
    p.add_argument("--cvd", choices=["deuteranomaly", "protanomaly", "tritanomaly"])
    args = p.parse_args()
    only = tuple(filter(None, args.stages.split(",")))
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for preset in args.presets:
            for path in shots(preset, page, only):
                print(path)
                if args.cvd:
                    print(simulated(path, args.cvd))
        browser.close()


if __name__ == "__main__":
    main()
