# SPDX-License-Identifier: Apache-2.0
"""A user's own tools on the embedded model, tried as a new user would (issue 39).

Two agents whose tools the model was never trained on, each measured with the CLI a user runs:

- ``renamed``: the ``agent_openai_agents`` scaffold with its tool renamed
  ``sum_numbers(first, second)`` and nothing else changed (its instructions still say "the add
  tool").
- ``convert``: a hand-written httpx agent (no SDK, no template) with a ``convert`` tool of its
  own and 30 rows of its own ("Convert 12 km to m."), rewarded 1 for the right number in the
  final answer.

For each: ``run --limit 32`` (sampled at temperature 1, the reward mean), then ``train --steps
N`` (mean reward of the first 5 and the last 5 steps), the wall time and the load around it.

    PYTHONPATH=. python benchmarks/bench_own_tools.py [--steps 50] [--engine hf:DIR] [--only convert]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_tool_agents import _env, scaffold

CONVERT_AGENT = '''
import json

import httpx

CONVERT = {
    "type": "function",
    "function": {
        "name": "convert",
        "description": "Convert a quantity from one unit to another.",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "from_unit": {"type": "string"},
                "to_unit": {"type": "string"},
            },
            "required": ["value", "from_unit", "to_unit"],
        },
    },
}
FACTORS = {("km", "m"): 1000, ("m", "cm"): 100, ("kg", "g"): 1000, ("h", "min"): 60}


def convert(value, from_unit, to_unit):
    return float(value) * FACTORS[(from_unit, to_unit)]


class ConvertAgent:
    """My agent: one chat call with my tool, run it, one more call for the answer."""

    async def run(self, data, **extra_kwargs):
        url = extra_kwargs["base_url"].rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {extra_kwargs['api_key']}"}
        messages = [{"role": "user", "content": data["question"]}]
        async with httpx.AsyncClient(timeout=120) as client:
            for _ in range(2):
                body = {"model": "default", "messages": messages, "tools": [CONVERT],
                        "max_tokens": 128}
                reply = (await client.post(url, json=body, headers=headers)).json()
                message = reply["choices"][0]["message"]
                calls = message.get("tool_calls") or []
                if not calls:
                    break
                messages.append(message)
                for call in calls:
                    try:
                        result = convert(**json.loads(call["function"]["arguments"]))
                    except Exception as exc:
                        result = f"error: {exc}"
                    messages.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": str(result)}
                    )
        answer = message.get("content") or ""
        return 1.0 if data["answer"] in answer.replace(",", "") else 0.0
'''
UNITS = [("km", "m", 1000), ("m", "cm", 100), ("kg", "g", 1000), ("h", "min", 60)]


def convert_rows(count: int = 30, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        src, dst, factor = rng.choice(UNITS)
        value = rng.randint(2, 40)
        rows.append(
            {"question": f"Convert {value} {src} to {dst}.", "answer": f"{value * factor:g}"}
        )
    return rows


def rename_tool(module: Path) -> None:
    """The scaffold's ``add(a, b)`` becomes ``sum_numbers(first, second)``; nothing else."""
    text = module.read_text()
    text = text.replace(
        "def add(a: float, b: float) -> float:",
        "def sum_numbers(first: float, second: float) -> float:",
    )
    text = text.replace("    return a + b", "    return first + second")
    text = text.replace("tools=[add]", "tools=[sum_numbers]")
    if "sum_numbers(first" not in text or "tools=[sum_numbers]" not in text:
        raise SystemExit(f"{module}: the scaffold's tool changed; update rename_tool")
    module.write_text(text)


def project_for(name: str, root: Path) -> tuple[Path, str, list[str]]:
    """``(project, workflow, extra CLI args)`` for agent ``name``."""
    project = root / name
    if name == "renamed":
        scaffold(project, "agent_openai_agents")
        rename_tool(project / "myproj" / "workflow" / "calc.py")
        return project, "myproj.workflow.calc:CalcAgent", []
    project.mkdir(parents=True)
    (project / "my_agent.py").write_text(CONVERT_AGENT)
    data = project / "convert.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in convert_rows()))
    return project, "my_agent:ConvertAgent", ["--data", str(data)]


def _cli(project: Path, args: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "areal_devkit", *args],
        cwd=project, env=_env(project), capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args[:2])} failed\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
    return time.perf_counter() - start


def measure(name: str, steps: int, engine: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        project, workflow, extra = project_for(name, Path(tmp))
        episodes = Path(tmp) / "run.jsonl"
        load = [os.getloadavg()[0]]
        run_s = _cli(project, ["run", workflow, "--limit", "32", "--output", str(episodes),
                               "--stall-threshold-ms", "0", *extra, *engine])  # fmt: skip
        rewards = [json.loads(line)["reward"] for line in episodes.read_text().splitlines()]
        metrics = Path(tmp) / "metrics.jsonl"
        train_s = 0.0
        curve: list[float] = []
        if steps:
            train_s = _cli(project, ["train", workflow, "--steps", str(steps), "--quiet",
                                     "--metrics-out", str(metrics), *extra, *engine])  # fmt: skip
            curve = [json.loads(line)["reward_mean"] for line in metrics.read_text().splitlines()]
        load.append(os.getloadavg()[0])
    first = sum(curve[:5]) / 5 if curve else float("nan")
    last = sum(curve[-5:]) / 5 if curve else float("nan")
    return {
        "name": name,
        "run_mean": sum(r or 0.0 for r in rewards) / len(rewards),
        "episodes": len(rewards),
        "first5": first,
        "last5": last,
        "run_s": run_s,
        "train_s": train_s,
        "load": sum(load) / len(load),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=50, help="train steps (0: run only)")
    parser.add_argument("--engine", help="passed to run and train (default: the embedded model)")
    parser.add_argument("--only", choices=["renamed", "convert"], action="append")
    args = parser.parse_args()
    engine = ["--engine", args.engine] if args.engine else []
    print(
        "| agent | run --limit 32 mean | episodes | train first 5 | last 5 | rise | run s | train s | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.only or ["renamed", "convert"]:
        r = measure(name, args.steps, engine)
        print(
            f"| {name} | {r['run_mean']:.3f} | {r['episodes']} | {r['first5']:.3f} | "
            f"{r['last5']:.3f} | {r['last5'] - r['first5']:+.3f} | {r['run_s']:.0f} | "
            f"{r['train_s']:.0f} | {r['load']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
