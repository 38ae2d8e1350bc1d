"""`python -m convviz export`: files named as the app's downloads, written whole or not at all."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from convviz.__main__ import main as convviz_main
from convviz.export import cli
from convviz.export.story import ANIMATIONS, Story
from convviz.model.presets import PRESETS_BY_KEY
from convviz.render.story.board import BOARD

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    """`python -m convviz …` of this checkout (whichever one the environment has installed)."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "convviz", *args], capture_output=True, text=True, timeout=300,
        cwd=cwd, env=env,
    )  # fmt: skip


def _here(*args: str, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `python -m convviz …` run in this process: the refusals'
    many cases (the process door itself: `_run`'s tests, the unknown command's among them)."""
    try:
        code = convviz_main(list(args))
    except SystemExit as exit:  # argparse refuses by exiting
        code = exit.code
    said = capsys.readouterr()
    return code, said.out, said.err


def test_help_explains_every_option_and_format():
    run = _run("export", "--help")
    assert run.returncode == 0
    for word in ("--preset", "--link", "--formats", "--out", "--quiet", *cli.FORMATS):
        assert word in run.stdout
    assert "recitation-s2" in run.stdout  # the presets are listed


@pytest.mark.parametrize(
    "args, says",
    [
        (["--preset", "nope"], "unknown preset `nope`"),
        (["--formats", "png,jpg"], "unknown format `jpg`"),
        (["--link", "javascript:alert(1)"], "`javascript:alert(1)` is not a convviz link"),
        (["--link", "http://127.0.0.1:8501/Forward"], "has no query that says which layer"),
        (["--link", "http://127.0.0.1:8501/?utm=1"], "`utm` in the link is not a parameter"),
        (["--link", "just words"], "has no query that says which layer"),
        (["--link", "?preset=nope%0A%1B[31m"], "unknown preset `nope⏎�[31m`"),
        (["--formats", ""], "unknown format"),
        (["--link", "?preset=classroom&H=abc"], "`H=abc` is not a whole number"),
        (["--link", "?preset=classroom&kH=11&H=3"], "spans 11 rows"),
        (["--preset", "d2l", "--link", "?preset=d2l"], "not allowed with argument"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_code_2(args, says, tmp_path, capsys):
    code, out, err = _here("export", *args, "--out", str(tmp_path / "out"), capsys=capsys)
    assert code == 2
    assert err.count("\n") == 1 and says in err and out == ""
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--out", ""], "--out is empty: name a folder"),  # it wrote into the current folder
        (["--out", " "], "--out is empty"),
        (["--workers", "0"], "`0` is too small: --workers must be a whole number in 1…64"),
        (["--workers", "-5"], "--workers `-5` is too small"),
        (["--workers", "2.0"], "--workers `2.0` is not a whole number"),
        (["--link", "http://h/Two_layers?preset=recitation-s2&kH2=99"], "`kH2=99` is too large"),
        (["--link", "?preset=recitation-s2&relu=2"], "`relu=2` must be 0 or 1"),
    ],
)
def test_what_the_command_line_cannot_honour_is_refused(args, says, tmp_path, capsys, monkeypatch):
    """`--out ''` wrote into the current folder, `--workers 0` and a bad layer-2 field passed."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _here("export", "--formats", "py", *args, capsys=capsys)
    assert code == 2, out
    assert err.count("\n") == 1 and says in err and out == ""
    assert not list(tmp_path.iterdir())


def test_files_already_there_are_replaced_only_with_force(tmp_path):
    """An existing file in --out was replaced without a word."""
    mine = tmp_path / "convviz-d2l-numpy.py"
    mine.write_text("my notes")
    run = _run("export", "--preset", "d2l", "--formats", "py", "--out", str(tmp_path))
    assert run.returncode == 2 and "add --force to replace them" in run.stderr
    assert "convviz-d2l-numpy.py" in run.stderr and mine.read_text() == "my notes"
    run = _run("export", "--preset", "d2l", "--formats", "py", "--out", str(tmp_path), "--force")
    assert run.returncode == 0 and "import numpy" in mine.read_text()


def test_unknown_command():
    run = _run("exprot")
    assert run.returncode == 2 and "unknown command 'exprot'" in run.stderr


def test_exports_files_named_as_the_apps_downloads(tmp_path):
    link = "http://127.0.0.1:8501/Forward?preset=d2l&sel=y:1:0&n=0"
    run = _run("export", "--link", link, "--formats", "svg,tex,py", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    story = Story.of(link=link)
    expected = sorted(
        [story.file_name(s.name, "svg") for s in story.stills()]
        + ["convviz-d2l-stages.tex", "convviz-d2l-numpy.py", "convviz-d2l-torch.py"]
    )
    assert names == expected  # nothing else: no temporary '.part' files
    assert run.stdout.splitlines() == [
        f"wrote {tmp_path / j.name} ({(tmp_path / j.name).stat().st_size:,} bytes)"
        for j in cli.jobs(story, ["svg", "tex", "py"])
    ]
    assert "y_{10}" in (tmp_path / "convviz-d2l-stages.tex").read_text()  # the link's cell
    for name in expected:
        if name.endswith(".svg"):
            assert (tmp_path / name).read_text().rstrip().endswith("</svg>")


def test_every_format_makes_every_stage():
    story = Story.of("recitation-s1")
    names = [j.name for j in cli.jobs(story, list(cli.FORMATS))]
    stills, anims = len(story.stills()), len(story.animations())
    assert len(names) == len(set(names)) == 2 * stills + 3 * anims + 1 + 1 + 1 + 2
    for ext in cli.FORMATS:
        assert any(n.endswith(f".{ext}") for n in names)
    assert "convviz-recitation-s1-backward-pass.mp4" in names
    assert tuple(a.name for a in story.animations()) == animated(story)
    assert "convviz-recitation-s1-lecture.html" in names


@pytest.mark.encoder  # a GIF and an MP4 (ffmpeg)
def test_gif_and_mp4_share_one_drawing(monkeypatch):
    from convviz.export import video

    calls = []
    real = video.sweep_rendered
    monkeypatch.setattr(video, "sweep_rendered", lambda *a, **k: calls.append(1) or real(*a, **k))
    story = Story.of("recitation-s1")
    jobs = cli.jobs(story, ["gif", "mp4"])
    gif, mp4 = jobs[0], jobs[1]
    assert (gif.name, mp4.name) == ("convviz-recitation-s1-forward.gif",) * 1 + (
        "convviz-recitation-s1-forward.mp4",
    )
    assert gif.make().startswith(b"GIF89a") and mp4.make()[4:8] == b"ftyp"
    assert len(calls) == 1


def test_a_failed_file_leaves_nothing_half_written(tmp_path, monkeypatch, capsys):
    def broken(story, formats):
        return [
            cli.Job("good.tex", lambda: b"whole"),
            cli.Job("bad.gif", lambda: (_ for _ in ()).throw(RuntimeError("renderer broke"))),
        ]

    monkeypatch.setattr(cli, "jobs", broken)
    assert cli.main(["--preset", "d2l", "--out", str(tmp_path), "--quiet"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.tex"]
    err = capsys.readouterr().err
    assert "failed on bad.gif: renderer broke" in err


def test_write_atomic_removes_its_temporary_file_on_error(tmp_path):
    target = tmp_path / "x.png"
    with pytest.raises(TypeError):
        cli.write_atomic(target, "not bytes")  # fails mid-write
    assert list(tmp_path.iterdir()) == []
    cli.write_atomic(target, b"abc")
    assert target.read_bytes() == b"abc" and list(tmp_path.iterdir()) == [target]


def test_exports_never_load_streamlit():
    code = (
        "import sys; import convviz.__main__, convviz.export.cli, convviz.export.html, "
        "convviz.export.video, convviz.export.latex, convviz.export.snippet, "
        "convviz.export.handout; print('streamlit' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.stdout.strip() == "False", run.stderr


def test_progress_bar_counts_the_files(capsys):
    bar = cli.Progress(4, enabled=True)
    bar.show(1, "convviz-d2l-forward.gif")
    bar.end()
    err = capsys.readouterr().err
    assert err.startswith("\r[#######---------------------] 1/4 ") and err.endswith("\n")
    assert "convviz-d2l-forward.gif" in err
    quiet = cli.Progress(4, enabled=False)
    quiet.show(1, "x")
    quiet.end()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("query", "y_cell", "w_cell", "x_cell"),
    [
        ("preset=recitation-s2", (1, 1), (2, 2), None),  # nothing selected: the last cells
        ("preset=recitation-s2&sel=y:0:1", (0, 1), (2, 2), None),
        ("preset=recitation-s2&sel=grad_w:1:0", (1, 1), (1, 0), None),
        ("preset=recitation-s2&sel=x:2:2", (0, 0), (2, 2), (2, 2)),  # the first to read it
    ],
)
def test_stills_light_the_cell_whose_sum_they_write(query, y_cell, w_cell, x_cell):
    """As the pages' PNG and SVG: the forward and weight-gradient slides write the sum of the cell
    the page opens on (the selected one, else the last) and light it and its window: red if it is
    selected, else outlined black as the cell written out; a selected input cell is marked and the
    outputs that read it outlined."""
    story = Story.of(link=f"?{query}")
    forward, weight = still(story, "forward"), still(story, "weight-grad")
    assert forward.formula.target.index == y_cell and weight.formula.target.index == w_cell
    x, _, y = forward.panels
    y_selected, w_selected = "sel=y:" in query, "sel=grad_w:" in query
    assert (y.selected, y.written) == ((y_cell, None) if y_selected else (None, y_cell))
    assert x.highlight.sum() == 9  # its 3×3 window
    assert x.selected == x_cell
    if x_cell:
        assert y.highlight.all()  # x[2, 2] is in all four windows of the stride-2 layer
    dw = weight.panels[2]
    assert (dw.selected, dw.written) == ((w_cell, None) if w_selected else (None, w_cell))
    assert weight.panels[0].highlight.any()


@pytest.mark.parametrize("preset", ["recitation-s2", "classroom"])
def test_the_full_correlation_slide_lights_the_cell_its_formula_writes(preset):
    """Step 5 writes ∂L/∂x̃ of the page's cell (the centre of ∂L/∂x, in padded indices) beside
    its grid, with that cell outlined (black: written out, not selected) and its window lit (the
    slide wrote ∂L/∂x₂₂, lit nothing)."""
    story = Story.of(preset)
    step5 = still(story, "correlate")
    assert step5.name == "input-grad-step5"  # the file name of the page's PNG / SVG and GIF
    operand, _, out = step5.panels
    (pt, _), (pl, _) = story.spec.padding
    H, W = story.spec.in_size
    cell = (H // 2 + pt, W // 2 + pl)
    assert (out.selected, out.written) == (None, cell) and operand.highlight.any()
    # named as x̃'s axes label it (they count from −padding)
    assert step5.formula.target.name == "dxp" and step5.formula.target.index == (H // 2, W // 2)
    assert step5.formula.value == story.layer.input_grad.grad_x_padded[0, 0][cell]


def test_storyboard_slides_mark_a_selection_only_when_there_is_one():
    """With nothing selected the step-1 slide lit every ∂L/∂y cell as 'linked to the selection'
    and the mask slide drew ∂L/∂x₂₂ red as 'selected cell': the page's followed cell is now the
    cell written out below (black), and nothing is lit. A selected cell stays red, its links
    lit."""
    plain = Story.of("recitation-s2")
    step1, step6 = still(plain, "grad-out"), still(plain, "mask")
    assert all(p.highlight is None and p.selected is None for p in (*step1.panels, *step6.panels))
    assert step6.panels[1].written == (2, 2) and step6.formula.target.index == (2, 2)
    chosen = Story.of(link="?preset=recitation-s2&sel=grad_x:1:1")
    mask = still(chosen, "mask").panels[1]
    assert mask.selected == (1, 1) and mask.written is None
    assert still(chosen, "grad-out").panels[0].highlight.any()  # the ∂L/∂y cells that reach it


def still(story: Story, key: str):
    """The still of the stage `key`."""
    return next(s for s in story.stills() if s.stage.key == key)


def animated(story: Story, kind: str | None = None) -> tuple[str, ...]:
    """The file names of the story's animations (of one kind of drawing: "motion", "sweep",
    "figure"), in order."""
    return tuple(
        s.export
        for s in story.stages()
        if s.animated and (kind is None or getattr(BOARD[s.key], kind) is not None)
    )


def _named(story: Story, names, exts) -> list[str]:
    return [story.file_name(n, ext) for n in names for ext in exts]


@pytest.mark.parametrize("preset", [p for p in PRESETS_BY_KEY if p != "qa-channels"])
def test_a_small_layer_draws_every_animation_as_gif_and_mp4(preset):
    story = Story.of(preset)
    assert [j.name for j in cli.jobs(story, ["gif", "mp4"])] == _named(
        story, animated(story), ("gif", "mp4")
    )


def test_a_wide_layer_draws_only_its_sliding_windows():
    """qa-channels' 100-wide grid: a motion's GIF took minutes and 13–18 MB (the app offers none
    over MAX_GIF_SIDE); the sliding windows' GIFs take seconds."""
    story = Story.of("qa-channels")
    drawn = [a for a in animated(story) if a not in animated(story, "motion")]  # windows, runs
    assert [j.name for j in cli.jobs(story, ["gif", "mp4"])] == _named(story, drawn, ("gif", "mp4"))
    assert sorted(animated(story)) == sorted(drawn + list(animated(story, "motion")))


def _main_without_drawing(monkeypatch, *args: str) -> int:
    """cli.main with the real job list, each file's bytes faked (no drawing)."""
    real = cli.jobs
    monkeypatch.setattr(
        cli,
        "jobs",
        lambda story, formats: [replace(j, make=lambda: b"") for j in real(story, formats)],
    )
    return cli.main([*args, "--quiet"])


@pytest.mark.parametrize(
    ("formats", "kinds"), [("gif", "GIFs"), ("png,gif,mp4", "GIFs and MP4s"), ("png,html", None)]
)
def test_a_wide_layer_says_in_one_line_which_motions_it_skipped(
    formats, kinds, tmp_path, monkeypatch, capsys
):
    args = ("--preset", "qa-channels", "--formats", formats, "--out", str(tmp_path))
    assert _main_without_drawing(monkeypatch, *args) == 0
    out, err = capsys.readouterr()
    assert all(line.startswith("wrote ") for line in out.splitlines())
    if kinds is None:  # no GIF or MP4 asked: nothing skipped
        assert err == ""
        return
    story = Story.of("qa-channels")
    motions = animated(story, "motion")
    assert err.count("\n") == 1 and err.startswith(f"skipped {len(motions)} motion {kinds} (")
    assert all(name in err for name in motions) and "wider than 12 cells" in err
    assert not any(name in err for name in animated(story, "sweep"))


def test_a_small_layer_skips_nothing(tmp_path, monkeypatch, capsys):
    args = ("--preset", "classroom", "--formats", "gif,mp4", "--out", str(tmp_path))
    assert _main_without_drawing(monkeypatch, *args) == 0
    out, err = capsys.readouterr()
    assert err == "" and len(out.splitlines()) == 2 * len(animated(Story.of("classroom")))


def test_a_folder_listing_shows_the_storyboards_files_in_its_order():
    """Stage 5 was saved as '…-full-correlation.*' beside '…-input-grad-stepN.*': a listing
    sorted it before stage 1. Every stage is now 'input-grad-stepN', as the page saves it."""
    story = Story.of("classroom")
    names = [s.name for s in story.stills()] + [a.name for a in story.animations()]
    stages = list(dict.fromkeys(n for n in names if n.startswith("input-grad")))
    assert stages == sorted(stages) == [f"input-grad-step{i}" for i in range(1, 7)]
    assert [n for n in ANIMATIONS if n.startswith("input-grad")] == stages[1:]
