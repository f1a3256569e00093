# SPDX-License-Identifier: Apache-2.0
"""The cookiecutter template, baked for real into copies of the seed projects."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cookiecutter.exceptions import FailedHookException
from cookiecutter.main import cookiecutter

from areal_devkit.scaffold.init_editor import exported_names
from areal_devkit.scaffold.variants import VARIANTS, generated_paths

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "template"
SEEDS = ROOT / "examples" / "seed_projects"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def bake(repo: Path, **context) -> None:
    cookiecutter(
        str(TEMPLATE), no_input=True, extra_context=context, output_dir=str(repo),
        overwrite_if_exists=True, skip_if_file_exists=True, accept_hooks=True,
    )  # fmt: skip


def snapshot(repo: Path) -> dict[str, str]:
    return {
        str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    }


def run(cmd, cwd, **kw):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=ENV, **kw)


@pytest.fixture(scope="module")
def baked(tmp_path_factory):
    """Every variant baked into one copy of the lazy (AReaL-shaped) seed."""
    repo = tmp_path_factory.mktemp("lazy") / "repo"
    shutil.copytree(SEEDS / "lazy_project", repo)
    before = (repo / "myproj/workflow/__init__.py").read_text()
    for variant in VARIANTS:
        bake(repo, workflow_name=f"my_{variant}", variant=variant, package="myproj.workflow")
    return repo, before


@pytest.mark.slow
def test_generated_tests_pass_lint_clean_and_render_fully(baked):
    repo, _ = baked
    generated = [repo / f"myproj/workflow/my_{v}.py" for v in VARIANTS]
    generated += [repo / f"tests/test_my_{v}_workflow.py" for v in VARIANTS]
    for path in generated:
        text = path.read_text()
        assert "{{" not in text and "{%" not in text, path
        assert text.startswith("# SPDX-License-Identifier: Apache-2.0")
    proc = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], repo, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    ran = re.search(r"(\d+) passed", proc.stdout)
    assert ran and int(ran.group(1)) >= 5 * len(VARIANTS), proc.stdout[-3000:]
    assert "skipped" not in proc.stdout and "failed" not in proc.stdout  # every test ran
    files = [str(p) for p in generated]
    assert run([sys.executable, "-m", "ruff", "check", "--no-cache", *files], repo).returncode == 0
    assert (
        run(
            [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", *files], repo
        ).returncode
        == 0
    )
    lint = run([sys.executable, "-m", "areal_lint.cli", *files], repo)
    assert lint.returncode == 0, lint.stdout


def test_lazy_init_gets_exactly_one_line_per_list_per_bake(baked):
    repo, before = baked
    after = (repo / "myproj/workflow/__init__.py").read_text()
    added = [line for line in after.splitlines() if line not in before.splitlines()]
    names = {
        "rlvr": "MyRlvrWorkflow",
        "multi_turn": "MyMultiTurnWorkflow",
        "agent_openai": "MyAgentOpenaiAgent",
        "vision": "MyVisionWorkflow",
        "agent_openai_agents": "MyAgentOpenaiAgentsAgent",
        "agent_anthropic": "MyAgentAnthropicAgent",
        "agent_claude": "MyAgentClaudeAgent",
    }
    assert set(names) == set(VARIANTS)
    expected = [f'    "{n}",' for n in names.values()] + [
        f'    "{n}": "myproj.workflow.my_{v}",' for v, n in names.items()
    ]
    assert sorted(added) == sorted(expected)
    assert len(after.splitlines()) == len(before.splitlines()) + 2 * len(VARIANTS)
    assert "# Name -> module" in after  # comments kept


def test_eager_init_and_the_cookiecutter_cli(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SEEDS / "plain_project", repo)
    before = (repo / "mypkg/__init__.py").read_text().splitlines()
    proc = run(
        [str(Path(sys.executable).with_name("cookiecutter")), str(TEMPLATE), "--no-input", "-o", str(repo), "-f", "-s",
         "workflow_name=calc", "variant=rlvr", "package=mypkg"],
        tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    after = (repo / "mypkg/__init__.py").read_text().splitlines()
    assert [line for line in after if line not in before] == [
        "from .calc import CalcWorkflow",
        '__all__ = ["BaseThing", "CalcWorkflow"]',
    ]
    assert "# the existing export" in "\n".join(after)


def test_the_same_code_imports_from_areal_inside_an_areal_checkout(tmp_path):
    for runtime in ("areal", "areal_runtime"):
        repo = tmp_path / runtime
        (repo / "pkg").mkdir(parents=True)
        (repo / "pkg/__init__.py").write_text("")
        cookiecutter(
            str(TEMPLATE), no_input=True, output_dir=str(repo), overwrite_if_exists=True,
            skip_if_file_exists=True, accept_hooks=False,
            extra_context={"workflow_name": "w", "package": "pkg", "runtime": runtime},
        )  # fmt: skip
    # With hooks off nothing is moved out of the staging folder the template renders into.
    a = next((tmp_path / "areal").glob(".areal-devkit-staging-*/pkg/w.py")).read_text()
    b = next((tmp_path / "areal_runtime").glob(".areal-devkit-staging-*/pkg/w.py")).read_text()
    assert "from areal.api.reward_api import AsyncRewardWrapper" in a
    assert a.replace("from areal.", "from areal_runtime.") == b


BAD_INPUTS = [
    ({"workflow_name": "My-Flow"}, "not a lowercase Python identifier"),
    ({"workflow_name": "class"}, "is a Python keyword"),
    ({"workflow_name": "_private"}, "not a lowercase Python identifier"),
    ({"workflow_name": "../escape"}, "not a lowercase Python identifier"),
    ({"workflow_name": "a/b"}, "not a lowercase Python identifier"),
    ({"workflow_name": 'x"y'}, "not a lowercase Python identifier"),
    ({"workflow_name": "echo"}, "already exists"),
    ({"workflow_name": "fresh", "class_name": "EchoWorkflow"}, "EchoWorkflow is already exported"),
    (
        {"workflow_name": "fresh", "package": "myproj.missing"},
        "target package myproj.missing not found",
    ),
    (
        {"workflow_name": "fresh", "variant": "multi_turn", "max_turns": "0"},
        "max_turns must be >= 1",
    ),
    (
        {"workflow_name": "fresh", "variant": "multi_turn", "turn_discount": "2"},
        "turn_discount must be in (0, 1]",
    ),
]


@pytest.mark.parametrize(("context", "message"), BAD_INPUTS, ids=[str(c) for c, _ in BAD_INPUTS])
def test_bad_input_is_refused_and_nothing_changes(tmp_path, capfd, context, message):
    repo = tmp_path / "repo"
    shutil.copytree(SEEDS / "lazy_project", repo)
    before = snapshot(repo)
    with pytest.raises(FailedHookException):
        bake(repo, **{"package": "myproj.workflow", **context})
    assert message in capfd.readouterr().err
    assert snapshot(repo) == before


def test_repeated_name_is_refused(tmp_path, capfd):
    repo = tmp_path / "repo"
    shutil.copytree(SEEDS / "lazy_project", repo)
    bake(repo, workflow_name="once", package="myproj.workflow")
    before = snapshot(repo)
    with pytest.raises(FailedHookException):
        bake(repo, workflow_name="once", package="myproj.workflow")
    assert "already exists" in capfd.readouterr().err
    assert snapshot(repo) == before


def test_an_init_it_cannot_edit_is_refused_and_generated_files_removed(tmp_path, capfd):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    # passes validation, fails in post-generation: the generated files must be removed again
    (repo / "pkg/__init__.py").write_text('EXTRA = ["B"]\n__all__ = ["A"] + EXTRA\n')
    before = snapshot(repo)
    with pytest.raises(FailedHookException):
        bake(repo, workflow_name="w", package="pkg")
    err = capfd.readouterr().err
    assert "could not register" in err and "the repository is as before" in err
    assert "must be a literal list" in err
    assert snapshot(repo) == before
    # a shape refused up front: nothing is even generated
    (repo / "pkg/__init__.py").write_text('__all__ = ["A"]\n__all__ += ["B"]\n')
    before = snapshot(repo)
    with pytest.raises(FailedHookException):
        bake(repo, workflow_name="w", package="pkg")
    assert "assigned more than once" in capfd.readouterr().err
    assert snapshot(repo) == before


def test_wrapper_refuses_disabled_hooks_and_replays(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SEEDS / "plain_project", repo)
    cli = [sys.executable, "-m", "areal_devkit", "new"]
    proc = run(
        [*cli, "w1", "--package", "mypkg", "--repo", str(repo), "--accept-hooks", "no"], tmp_path
    )
    assert proc.returncode == 2 and "--accept-hooks must stay 'yes'" in proc.stderr
    proc = run([*cli, "w1", "--package", "mypkg", "--repo", str(repo)], tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "mypkg/w1.py").is_file() and "next: python -m pytest" in proc.stdout
    again = run(
        [*cli, "w1", "--package", "mypkg", "--repo", str(repo), "--replay"], tmp_path, timeout=120
    )
    assert again.returncode == 1 and "already exists" in again.stderr  # replayed the same answers


MUTATIONS = {
    "prompt not masked": ("[[0] * n_in + [1] * n_out]", "[[1] * n_in + [1] * n_out]"),
    "batch dimension dropped": (
        "[resp.input_tokens + resp.output_tokens]",
        "resp.input_tokens + resp.output_tokens",
    ),
    "reward not awaited": (
        "reward = await self.async_reward_fn(",
        "reward = self.async_reward_fn(",
    ),
    "stop ids not added": (
        "gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(",
        "gconfig.new(n_samples=1) or (",
    ),
    "logprobs misaligned": (
        "[[0.0] * n_in + resp.output_logprobs]",
        "[resp.output_logprobs + [0.0] * n_in]",
    ),
    "completion re-tokenized from its text": (
        "n_in, n_out = resp.input_len, resp.output_len",
        "resp.output_tokens = self.tokenizer.encode(completion); "
        "n_in, n_out = resp.input_len, resp.output_len",
    ),
}


@pytest.mark.slow
def test_generated_rlvr_test_catches_injected_bugs(tmp_path):
    """One workflow baked as is and one per bug, each with its own generated test, all run by
    one pytest process (torch and the model load once, not once per bug)."""
    repo = tmp_path / "repo"
    shutil.copytree(SEEDS / "lazy_project", repo)
    names = {"pristine": "mut0"} | {bug: f"mut{i}" for i, bug in enumerate(MUTATIONS, 1)}
    for name in names.values():
        bake(repo, workflow_name=name, package="myproj.workflow")
    for bug, (old, new) in MUTATIONS.items():
        module = repo / f"myproj/workflow/{names[bug]}.py"
        text = module.read_text()
        assert " ".join(old.split()) in " ".join(text.split()), f"mutation {bug!r} does not apply"
        module.write_text(_replace_ignoring_layout(text, old, new))
    files = [f"tests/test_{name}_workflow.py" for name in names.values()]
    proc = run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *files],
        repo,
        timeout=300,
    )
    assert proc.returncode == 1 and "error during collection" not in proc.stdout, proc.stdout
    for bug, name in names.items():
        outcomes = re.findall(
            rf"^(PASSED|FAILED|ERROR) tests/test_{name}_workflow\.py::", proc.stdout, re.M
        )
        if bug == "pristine":
            assert outcomes and set(outcomes) == {"PASSED"}, proc.stdout
        else:
            assert "FAILED" in outcomes, f"the generated test did not catch: {bug}"


def _replace_ignoring_layout(text: str, old: str, new: str) -> str:
    """Replace ``old`` even if ruff wrapped it over several lines."""
    import re

    pattern = r"\s*".join(re.escape(token) for token in old.split())
    return re.sub(pattern, new, text, count=1)


def test_variants_are_listed_once_and_every_variant_has_its_template_files():
    spec = json.loads((TEMPLATE / "cookiecutter.json").read_text())
    assert spec["variant"] == list(VARIANTS)
    prompts = spec["__prompts__"]["variant"]
    for name, what in VARIANTS.items():
        assert prompts[name] == f"{name}: {what}"
        assert (TEMPLATE / "templates" / "workflow" / f"{name}.py.jinja").is_file()
        assert (TEMPLATE / "templates" / "tests" / f"{name}.py.jinja").is_file()
        assert f"`{name}`" in (ROOT / "docs" / "template.md").read_text()
    assert [str(p) for p in generated_paths("a.b", "calc")] == [
        "a/b/calc.py",
        "tests/test_calc_workflow.py",
    ]


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_cookiecutter_from_a_repository_root_interactive_no_input_and_replay(tmp_path):
    """The design card's usage: `cookiecutter template` run in the repository it writes into."""
    cli = str(Path(sys.executable).with_name("cookiecutter"))
    temp = tmp_path / "temp"  # where cookiecutter writes the hooks it runs
    temp.mkdir()
    env = {**os.environ, "COOKIECUTTER_CONFIG": str(tmp_path / "cc.yaml"), "TMPDIR": str(temp)}
    (tmp_path / "cc.yaml").write_text(f"replay_dir: {tmp_path / 'replay'}\n")
    first, second = tmp_path / "first", tmp_path / "second"
    for repo in (first, second):
        shutil.copytree(SEEDS / "lazy_project", repo)

    def cookiecutter_in(repo, *args, answers=None):
        return subprocess.run(
            [cli, str(TEMPLATE), *args], cwd=repo, env=env, input=answers, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip

    typed = "calc\n2\n\n\nmyproj.workflow\n\n\n\n"  # name, variant 2 (multi_turn), defaults
    proc = cookiecutter_in(first, answers=typed)
    assert proc.returncode == 0, proc.stderr
    assert "class CalcWorkflow(RolloutWorkflow)" in (first / "myproj/workflow/calc.py").read_text()
    assert "CalcWorkflow" in exported_names((first / "myproj/workflow/__init__.py").read_text())
    assert (first / "tests/test_calc_workflow.py").is_file()
    assert not list(first.glob(".areal-devkit-*"))  # no staging folder left behind

    proc = cookiecutter_in(second, "--no-input", "workflow_name=adder", "package=myproj.workflow")
    assert proc.returncode == 0, proc.stderr
    assert (second / "myproj/workflow/adder.py").is_file()

    before = {p: p.read_text() for p in first.rglob("*.py")}
    refused = cookiecutter_in(first, "--replay")  # the saved answers are the second repo's
    assert refused.returncode != 0
    assert f"the answers to replay were given in {second}" in refused.stderr
    assert {p: p.read_text() for p in first.rglob("*.py")} == before  # nothing written
    assert not list(first.glob(".areal-devkit-*"))

    (second / "myproj/workflow/adder.py").unlink()
    (second / "tests/test_adder_workflow.py").unlink()
    shutil.copy2(SEEDS / "lazy_project/myproj/workflow/__init__.py", second / "myproj/workflow")
    replayed = cookiecutter_in(second, "--replay")  # this repository's own answers
    assert replayed.returncode == 0, replayed.stderr
    assert (second / "myproj/workflow/adder.py").is_file()
    # cookiecutter never deletes its copies of the hooks; the hooks delete them (a refused run
    # too), so four runs leave nothing in the temporary folder
    assert list(temp.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_runs_checks_trains_and_shows_with_no_flags(
    variant, baked, tmp_path, capsys, monkeypatch
):
    """The README's tour on each freshly generated variant (after its generated tests and lint,
    above): check, run, train and view on the embedded default with no --data, no --kwargs."""
    import warnings

    from areal_devkit.cli import main as cli_main

    def main(argv):  # no warning of any kind reaches the user on a normal run
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # claude-agent-sdk leaves its message stream open when an episode is cancelled while
            # ClaudeSDKClient connects (the trainer cancels the episodes still running after its
            # last step); anyio's __del__ then warns whenever the collector reaches it. Python
            # never shows a ResourceWarning by default, so no user sees this one.
            warnings.filterwarnings(
                "ignore", r"Unclosed <MemoryObject(Receive|Send)Stream", ResourceWarning
            )
            code = cli_main(argv)
        assert [str(w.message) for w in caught] == [], argv
        return code

    repo, _ = baked
    module = repo / f"myproj/workflow/my_{variant}.py"
    for linter in (["areal-lint"], ["flake8", "--select=ARL"]):
        lint = run([str(Path(sys.executable).with_name(linter[0])), *linter[1:], str(module)], repo)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    class_name = re.search(r"^class (\w+)", module.read_text(), re.M).group(1)
    spec = f"myproj.workflow.my_{variant}:{class_name}"
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))
    for name in [m for m in sys.modules if m == "myproj" or m.startswith("myproj.")]:
        monkeypatch.delitem(sys.modules, name)

    assert main(["check", spec, "--limit", "8"]) == 0
    assert "PASS: 8 episodes, 8 passed" in capsys.readouterr().out

    trajectories = tmp_path / "traj.jsonl"
    code = main(["run", spec, "--limit", "16", "--output", str(trajectories)])
    out = capsys.readouterr()
    accepted = int(re.search(r"episodes 16  accepted (\d+)", out.out).group(1))
    assert accepted >= 15, out.out
    assert code == (0 if accepted == 16 else 1), out.err  # a rejected episode fails the run

    # Each agent_claude episode starts the Claude Code CLI (about 2 s of CPU): a smaller batch
    # keeps this test to seconds (the default batch takes minutes per step on 2 cores).
    small = ["--batch-size", "1", "--group-size", "2"] if variant == "agent_claude" else []
    assert main(["train", spec, "--steps", "6", "--quiet", *small]) == 0
    out = capsys.readouterr()
    share = re.search(r"episodes? rejected(?: \(([\d.]+)% of \d+\))?", out.out)
    assert share, out.out
    # At most a tenth of the groups; agent_claude's 6 steps have 7 groups of 2, where one group
    # dropped as stale (AReaL's max_head_offpolicyness rule, timing-dependent) is already 14%.
    one_stale = "1 group of 2 episodes rejected" in out.out and "): 1 stale" in out.out
    assert float(share.group(1) or 0) <= 10 or (variant == "agent_claude" and one_stale), out.out

    page = tmp_path / "episodes.html"
    assert main(["view", str(trajectories), "-o", str(page)]) == 0
    html = page.read_text()
    assert html.count('"a": true') + html.count('"a":true') >= 15
    if variant == "vision":
        assert '"<|image_pad|>",2]' in html.replace(" ", "")  # shown as image placeholders
