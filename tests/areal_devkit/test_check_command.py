# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit check`` as a user runs it, on the embedded default model: ``main(args)`` in
this process (the ``devkit_main`` fixture), so the model and torch load once per worker rather
than once per case; test_cli.py keeps the command's subprocess path covered."""

import re

import pytest

FLOWS = "tests.areal_runtime.testing.consistency_workflows"


@pytest.fixture
def check(devkit_main):
    def call(*args):
        return devkit_main("check", *args, "--limit", "4")

    return call


@pytest.mark.parametrize(
    "workflow",
    [
        "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow",
        f"{FLOWS}:MultiTurn",
        f"{FLOWS}:ProxyAgent",
    ],
)
def test_correct_workflows_pass(workflow, check):
    proc = check(workflow, "--temperature", "0.7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: 4 episodes, 4 passed, 0 failed, 0 skipped; 0 problems" in proc.stdout
    assert "logprob parity with the model: on (LocalEngine, temperature-scaled" in proc.stdout


# (workflow, check named in the report, a regex for where, the likely cause)
BUGS = [
    ("RetokenizedCompletion", "tokens", r"position \d+", "completion re-tokenized from text"),
    ("ShiftedLogprobs", "logprobs-engine", r"position \d+", "logprobs shifted by one"),
    ("PlaceholderLogprobs", "logprobs-engine", r"position \d+", "logprobs are placeholders"),
    ("PromptInLossMask", "loss-mask", r"position 0", "prompt tokens in the loss mask"),
    ("RerenderedMultiTurn", "prompt-prefix", r"position \d+", "turn 2's prompt does not extend"),
    ("ChatTextAgentWorkflow", "tokens", r"position \d+", "completion re-tokenized from text"),
    ("NoLogprobsKey", "trajectory", "", "the workflow's trajectory has no usable 'logprobs'"),
]


@pytest.mark.parametrize(("workflow", "name", "where", "cause"), BUGS)
def test_each_bug_class_fails_with_the_named_check(workflow, name, where, cause, check):
    proc = check(f"{FLOWS}:{workflow}", "--temperature", "1.0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(rf"episode \d+( row 0 {where})?  \[{name}\]", proc.stdout), proc.stdout
    assert f"likely cause: {cause}" in proc.stdout
    assert "expected:" in proc.stdout or name == "trajectory"
    assert re.search(r"FAIL: 4 episodes, \d passed, [1-4] failed", proc.stdout)
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_workflow_that_blocks_the_event_loop_fails_with_the_line(check):
    proc = check(f"{FLOWS}:BlocksTheLoop")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"event loop blocked for \d+ ms by episode \d+", proc.stdout), proc.stdout
    assert "consistency_workflows.py" in proc.stdout and "time.sleep(0.3)" in proc.stdout
    assert "event-loop (blocked 100 ms or more)" in proc.stdout
    assert re.search(
        r"FAIL: 4 episodes, 4 passed, .*; the event loop blocked [1-4] time", proc.stdout
    )
    off = check(f"{FLOWS}:BlocksTheLoop", "--stall-threshold-ms", "0")
    assert off.returncode == 0 and "PASS: 4 episodes" in off.stdout, off.stdout
    assert "event-loop" not in off.stdout


def test_scripted_engine_skips_only_the_model_parity(check):
    proc = check("examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "not a LocalEngine" in proc.stdout and "logprob parity with the model: off" in proc.stdout
    )
    proc = check(f"{FLOWS}:PromptInLossMask", "--engine", "scripted")
    assert proc.returncode == 1 and "[loss-mask]" in proc.stdout


def test_usage_errors_exit_2(check, devkit_main):
    for args, message in [
        (["examples.nope:X"], "No module named 'examples.nope'"),
        (["examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "gpu"], "unknown engine"),
        (["examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--atol", "0"], "--atol must be > 0"),
        (
            [f"{FLOWS}:NeedsAModelName"],
            "NeedsAModelName needs model_name (it takes: gconfig, tokenizer, model_name): "
            "pass its arguments as --kwargs '{\"model_name\": ...}'",
        ),
        (
            [f"{FLOWS}:NeedsAModelName", "--kwargs", '{"model_name": "m", "modelname": "m"}'],
            "NeedsAModelName takes no modelname",
        ),
    ]:
        proc = check(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr
    help_text = devkit_main("check", "--help").stdout
    assert "examples:" in help_text and "--engine hf:./my-model" in help_text
