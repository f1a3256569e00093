# SPDX-License-Identifier: Apache-2.0
"""An outside agent for online training: what you write by hand to feed a running trainer.

It knows nothing of AReaL or this repository: plain HTTP (``httpx``) for the gateway's session
routes and the OpenAI SDK for the model. Each episode:

1. ``POST /rl/start_session`` with the admin key -> ``{"session_id": ..., "api_key": ...}``;
2. chat with the model through the OpenAI SDK, the session's ``api_key`` as the API key;
3. score the answer and ``POST /rl/set_reward`` ``{"reward": r}`` with the session key (it goes
   to the session's last completion; pass ``interaction_id`` for another one) -> ``{"ok": true}``;
4. ``POST /rl/end_session`` with the session key -> the session becomes one training episode.

python examples/online_agent/agent.py http://127.0.0.1:PORT   # the address the trainer printed
"""

from __future__ import annotations

import argparse
import os
import random
import re
import time

import httpx
from openai import OpenAI


def wait_for_gateway(url: str, timeout: float = 120.0) -> None:
    """The trainer prints its address before the gateway answers; wait until it does."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"no gateway answers at {url}/health; is the trainer running?")
        time.sleep(0.2)


def score(question: tuple[int, int], answer: str) -> float:
    """The outside evaluator: 1 if the first number in the answer is the sum, else 0."""
    number = re.search(r"-?\d+", answer)
    return 1.0 if number is not None and int(number.group()) == sum(question) else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gateway_url", help="the address the trainer printed")
    parser.add_argument(
        "--admin-key",
        default=os.environ.get("ADMIN_KEY", "sk-online-example"),
        help="rollout.agent.admin_api_key of the trainer's config (env: ADMIN_KEY)",
    )
    parser.add_argument(
        "--episodes",
        type=int,
        default=4,
        help="sessions to run: total_train_steps x consumer_batch_size trains them all",
    )
    parser.add_argument("--seed", type=int, default=0, help="which questions are asked")
    args = parser.parse_args()
    url = args.gateway_url.rstrip("/")
    rng = random.Random(args.seed)

    wait_for_gateway(url)
    admin = httpx.Client(
        base_url=url,
        headers={"Authorization": f"Bearer {args.admin_key}"},
        # A start waits while the trainer has no episode free for another session (its
        # staleness control), up to 120 s; then it answers 429.
        timeout=180,
    )
    for episode in range(1, args.episodes + 1):
        started = admin.post("/rl/start_session", json={"task_id": "arithmetic"})
        started.raise_for_status()
        session = started.json()  # {"session_id": "arithmetic-0", "api_key": "..."}
        key = session["api_key"]

        model = OpenAI(base_url=f"{url}/v1", api_key=key, timeout=120)
        a, b = rng.randint(0, 40), rng.randint(0, 40)
        reply = model.chat.completions.create(
            model="default",  # any name: the gateway serves the model being trained
            messages=[{"role": "user", "content": f"What is {a}+{b}?"}],
            max_tokens=16,
        )
        answer = reply.choices[0].message.content or ""
        reward = score((a, b), answer)

        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
            client.post("/rl/set_reward", json={"reward": reward}).raise_for_status()
            client.post("/rl/end_session").raise_for_status()
        print(
            f"episode {episode}: session {session['session_id']} asked {a}+{b}, "
            f"answer {answer.strip()!r}, reward {reward}",
            flush=True,
        )


if __name__ == "__main__":
    main()
