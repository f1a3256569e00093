"""Trajectories that will not train as sampled."""

import numpy as np
import torch

from areal.api.io_struct import ModelRequest
from areal.utils.hf_utils import apply_chat_template


class Retokenized:
    async def arun_episode(self, engine, data):
        resp = await engine.agenerate(ModelRequest(input_ids=data["ids"]))
        completion_str = self.tokenizer.decode(resp.output_tokens, skip_special_tokens=True)
        answer = completion_str.strip()
        ids = self.tokenizer.encode(answer)  # ARL501: self.tokenizer.encode, resp
        seq = resp.input_tokens + ids
        logprobs = [0.0] * resp.input_len + resp.output_logprobs
        loss_mask = [0] * resp.input_len + [1] * len(ids)
        return dict(
            input_ids=torch.tensor(seq),
            logprobs=torch.tensor(logprobs),
            loss_mask=torch.tensor(loss_mask),
        )


async def retokenized_by_call(tokenizer, engine, req):
    out = await engine.agenerate(req)
    text = tokenizer.batch_decode([out.output_tokens])[0]
    completion_ids = tokenizer(text, add_special_tokens=False)["input_ids"]  # ARL501: tokenizer, out
    return {"input_ids": out.input_tokens + completion_ids, "loss_mask": [0] * out.input_len + [1] * len(completion_ids)}


async def retokenized_into_the_response(self, engine, req):
    resp = await engine.agenerate(req)
    text = self.tokenizer.decode(resp.output_tokens)
    resp.output_tokens = self.tokenizer(f"{text}\n").input_ids  # ARL501: self.tokenizer, resp
    return resp


class Placeholders:
    async def arun_episode(self, engine, data):
        resp = await engine.agenerate(data)
        seq = resp.input_tokens + resp.output_tokens
        logprobs = [0.0] * resp.input_len + [0.0] * len(resp.output_tokens)  # ARL502: resp
        old_logp = torch.zeros(resp.output_len)  # ARL502: resp
        return {
            "input_ids": torch.tensor(seq),
            "logprobs": torch.tensor(logprobs),
            "old_logp": old_logp,
            "loss_mask": torch.tensor([0] * resp.input_len + [1] * resp.output_len),
        }


async def placeholder_in_the_dict(engine, req):
    out = await engine.agenerate(req)
    generated = out.output_tokens
    return dict(
        input_ids=torch.tensor(out.input_tokens + generated),
        logprobs=torch.tensor([0.0] * out.input_len + [0.0 for _ in generated]),  # ARL502: out
    )


class PromptMasked:
    async def arun_episode(self, engine, data):
        resp = await engine.agenerate(data)
        seq = resp.input_tokens + resp.output_tokens
        loss_mask = [1] * len(seq)  # ARL503: resp
        return dict(
            input_ids=torch.tensor(seq),
            logprobs=torch.tensor([0.0] * resp.input_len + resp.output_logprobs),
            loss_mask=torch.tensor(loss_mask),
        )


async def mask_over_input_ids(engine, req, prompt_ids):
    resp = await engine.agenerate(req)
    input_ids = prompt_ids + resp.output_tokens
    return {
        "input_ids": np.array(input_ids),
        "loss_mask": np.ones(len(input_ids)),  # ARL503: resp
        "logprobs": np.array([0.0] * len(prompt_ids) + resp.output_logprobs),
    }


async def mask_from_lengths(engine, req):
    resp = await engine.agenerate(req)
    return dict(
        input_ids=torch.tensor(resp.input_tokens + resp.output_tokens),
        loss_mask=torch.tensor([1] * (resp.input_len + resp.output_len)),  # ARL503: resp
    )


class Retemplated:
    async def arun_episode(self, engine, data):
        messages = list(data["messages"])
        for _ in range(self.max_turns):
            prompt_ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
            resp = await engine.agenerate(ModelRequest(input_ids=prompt_ids))
            reply = self.tokenizer.decode(resp.output_tokens)
            messages.append({"role": "assistant", "content": reply})
            messages.append({"role": "user", "content": "try again"})
        full_ids = self.tokenizer.apply_chat_template(messages)  # ARL504: self.tokenizer.apply_chat_template, resp
        return dict(
            input_ids=torch.tensor(full_ids),
            loss_mask=torch.tensor(self.assistant_mask(full_ids)),
        )


async def retemplated_as_text(tokenizer, engine, messages, turns):
    while turns:
        turns -= 1
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        resp = await engine.agenerate(ModelRequest(input_ids=prompt))
        messages += [{"role": "assistant", "content": tokenizer.decode(resp.output_tokens)}]
    rendered = tokenizer.apply_chat_template(messages, tokenize=False)  # ARL504: tokenizer.apply_chat_template, resp
    return {"input_ids": tokenizer(rendered)["input_ids"]}


# ---- chat-API text re-tokenized into training tokens (issue 22) -------------------------------
class ScaffoldingSearch:
    """AReaL's examples/scaffolding/search_scaffolding.py: an OpenAI-style completion's text."""

    async def arun_episode(self, engine, data):
        input_ids = data["input_ids"]
        output = await self.scaffolding_llm.generate_async(data["prompt"])
        last_interaction = list(output.data.values())[-1]
        output_str = ""
        if last_interaction.completion is not None:
            output_str = last_interaction.completion.choices[0].message.content or ""
        output_tokens = self.tokenizer.encode(output_str, add_special_tokens=False)  # ARL501: self.tokenizer.encode, resp
        seq = input_ids + output_tokens
        return {
            "input_ids": torch.tensor(seq, dtype=torch.int32),
            "loss_mask": torch.tensor([0] * len(input_ids) + [1] * len(output_tokens)),
            "logprobs": torch.tensor([0.0] * len(seq)),
        }


async def scaffolding_fallback(self, result):
    """AReaL's examples/scaffolding/workflow.py: the output text when no token ids came back."""
    scaffolding_output = result.outputs[0]
    resp = next(iter(scaffolding_output.data.values())).model_response
    if resp is not None and not resp.output_tokens:
        output_text = scaffolding_output.text or ""
        output_tokens = self.tokenizer.encode(output_text, add_special_tokens=False)  # ARL501: self.tokenizer.encode, resp
        resp.output_tokens = output_tokens
    return resp


async def responses_and_messages_apis(tokenizer, client, anthropic_client, prompt_ids):
    response = await client.responses.create(model="m", input="x")
    ids = tokenizer(response.output_text)["input_ids"]  # ARL501: tokenizer, resp
    message = await anthropic_client.messages.create(model="m", max_tokens=8, messages=[])
    more = tokenizer.encode(message.content[0].text)  # ARL501: tokenizer.encode, resp
    return dict(input_ids=prompt_ids + ids + more)


class RetemplatedLikeMultiTurn:
    """AReaL's MultiTurnWorkflow shape, but training the re-templated history."""

    async def arun_episode(self, engine, data):
        messages = data["messages"]
        for turn in range(self.max_turns):
            input_ids = apply_chat_template(self.tokenizer, messages, tokenize=True, add_generation_prompt=True)
            resp = await engine.agenerate(ModelRequest(input_ids=input_ids))
            completions_str = self.tokenizer.decode(resp.output_tokens)
            messages += [
                {"role": "assistant", "content": completions_str},
                {"role": "user", "content": "Your answer is wrong. Try again."},
            ]
        seq = apply_chat_template(self.tokenizer, messages, tokenize=True)  # ARL504: apply_chat_template, resp
        return dict(input_ids=torch.tensor(seq, dtype=torch.int32))


async def retemplated_chat_api_history(self, client, messages):
    for _ in range(3):
        completion = await client.chat.completions.create(model="m", messages=messages)
        messages.append({"role": "assistant", "content": completion.choices[0].message.content})
        messages.append({"role": "user", "content": "continue"})
    ids = self.tokenizer.apply_chat_template(messages, tokenize=True)  # ARL504: self.tokenizer.apply_chat_template, resp
    return {"input_ids": ids}


class RerenderedAtTheEnd:
    """Issue 27: the loop keeps the decoded answers; one re-render at the end is trained."""

    async def arun_episode(self, engine, data):
        messages = list(data["messages"])
        prompt_ids = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        text = ""
        for _ in range(self.max_turns):
            ids = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
            resp = await engine.agenerate(ModelRequest(input_ids=ids))
            text = self.tokenizer.decode(resp.output_tokens)
            messages = messages + [{"role": "user", "content": self.feedback(text)}]
        full = self.tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": text}], tokenize=True)  # ARL504: self.tokenizer.apply_chat_template, resp
        loss_mask = [0] * len(prompt_ids) + [1] * (len(full) - len(prompt_ids))
        return dict(input_ids=torch.tensor(full), loss_mask=torch.tensor(loss_mask))


async def rerendered_from_a_comprehension(tokenizer, engine, prompt, requests):
    responses = [await engine.agenerate(req) for req in requests]
    turns = [{"role": "assistant", "content": tokenizer.decode(r.output_tokens)} for r in responses]
    history = prompt + turns
    ids = tokenizer.apply_chat_template(history, tokenize=True)  # ARL504: tokenizer.apply_chat_template, r
    return {"input_ids": ids}


async def rerendered_from_a_text_list(tokenizer, engine, prompt, n):
    answers = []
    for _ in range(n):
        resp = await engine.agenerate(ModelRequest(input_ids=prompt))
        answers.append(tokenizer.decode(resp.output_tokens))
    chat = [{"role": "assistant", "content": answer} for answer in answers]
    ids = tokenizer.apply_chat_template(chat, tokenize=True)  # ARL504: tokenizer.apply_chat_template, resp
    return {"input_ids": ids}
