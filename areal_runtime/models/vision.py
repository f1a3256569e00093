# SPDX-License-Identifier: Apache-2.0
"""The embedded default processor and image task, so vision workflows run with no flags.

``TinyVisionProcessor`` behaves like a Qwen2-VL processor at toy scale: the chat template writes
``<|vision_start|><|image_pad|><|vision_end|>`` for each image part, and the processor expands
each ``<|image_pad|>`` into one token per patch (``PATCHES_PER_IMAGE``), returning
``input_ids``, ``pixel_values`` (one row of RGB values per patch), ``image_grid_thw`` and
``mm_token_type_ids``. The embedded model reads text only: its image tokens are placeholders, so
the bundled task keeps the question in the text. A real vision-language model (``hf:PATH`` with
its own processor) sees the pixels.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

VISION_START, IMAGE_PAD, VISION_END = "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"
VISION_TOKENS = [VISION_START, IMAGE_PAD, VISION_END]
GRID = 2  # patches per side
PATCH = 4  # pixels per patch side
PATCHES_PER_IMAGE = GRID * GRID
VISION_SAMPLE = Path(__file__).parent / "data" / "vision_sample" / "rows.jsonl"


class TinyVisionProcessor:
    """Images + chat text -> model inputs, with the image placeholders the template writes."""

    image_token = IMAGE_PAD

    def __init__(self, tokenizer: Any) -> None:
        missing = [t for t in VISION_TOKENS if t not in tokenizer.get_vocab()]
        if missing:
            raise ValueError(f"the tokenizer has no image tokens {missing}; use tiny_tokenizer()")
        self.tokenizer = tokenizer
        self.image_token_id = tokenizer.convert_tokens_to_ids(IMAGE_PAD)

    def __call__(
        self,
        images: Any = None,
        text: str | list[str] | None = None,
        padding: bool = False,
        return_tensors: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        if not isinstance(text, str):
            if not (isinstance(text, list) and len(text) == 1 and isinstance(text[0], str)):
                raise TypeError("TinyVisionProcessor takes one prompt string (chat-templated text)")
            text = text[0]
        images = (
            [] if images is None else list(images) if isinstance(images, list | tuple) else [images]
        )
        if text.count(IMAGE_PAD) != len(images):
            raise ValueError(
                f"the prompt has {text.count(IMAGE_PAD)} image placeholder(s) and {len(images)} "
                "image(s) were given: give each image a {'type': 'image'} part in the messages"
            )
        expanded = text.replace(IMAGE_PAD, IMAGE_PAD * PATCHES_PER_IMAGE)
        input_ids = list(self.tokenizer.encode(expanded))
        pixel_values = [patch for image in images for patch in _patches(image)]
        token_types = [int(t == self.image_token_id) for t in input_ids]
        out = {
            "input_ids": input_ids,
            "attention_mask": [1] * len(input_ids),
            "mm_token_type_ids": token_types,
            "pixel_values": pixel_values,
            "image_grid_thw": [[1, GRID, GRID] for _ in images],
        }
        if return_tensors == "pt":
            import torch

            out = {
                "input_ids": torch.tensor([input_ids]),
                "attention_mask": torch.tensor([out["attention_mask"]]),
                "mm_token_type_ids": torch.tensor([token_types]),
                "pixel_values": torch.tensor(pixel_values, dtype=torch.float32).reshape(
                    -1, PATCH * PATCH * 3
                ),
                "image_grid_thw": torch.tensor(out["image_grid_thw"], dtype=torch.long).reshape(
                    -1, 3
                ),
            }
        return out

    def decode(self, ids: Any, **kwargs: Any) -> str:
        return self.tokenizer.decode(ids, **kwargs)


def _patches(image: Any) -> list[list[float]]:
    """The image as ``PATCHES_PER_IMAGE`` rows of RGB values in [0, 1]."""
    from areal_runtime.utils.image import load_image

    pixels = load_image(image).convert("RGB").resize((GRID * PATCH, GRID * PATCH))
    data = list(pixels.getdata())
    rows = []
    for gy in range(GRID):
        for gx in range(GRID):
            row: list[float] = []
            for y in range(gy * PATCH, (gy + 1) * PATCH):
                for x in range(gx * PATCH, (gx + 1) * PATCH):
                    row.extend(c / 255 for c in data[y * GRID * PATCH + x])
            rows.append(row)
    return rows


@functools.cache
def tiny_vision_processor() -> TinyVisionProcessor:
    """The embedded default processor, on the shared tiny tokenizer."""
    from areal_runtime.models.tokenizers import tiny_tokenizer

    return TinyVisionProcessor(tiny_tokenizer())


def with_image(row: dict[str, Any], image: Any) -> dict[str, Any]:
    """``row`` with ``image`` shown before the text of its last user message."""
    messages = [dict(m) for m in row["messages"]]
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    content = messages[last]["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    messages[last]["content"] = [{"type": "image"}, *parts]
    return {**row, "messages": messages, "images": [*row.get("images", []), image]}


def sample_image(a: int, b: int) -> Any:
    """A small picture for the question ``a+b``: two colour bars whose lengths are a and b."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (32, 32), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 4, a, 12), fill=(220, 60, 60))
    draw.rectangle((0, 20, b, 28), fill=(60, 60, 220))
    return image


def vision_sample_path() -> Path:
    """The bundled image dataset: JSONL rows whose ``images`` are PNG paths beside it."""
    return VISION_SAMPLE


def write_vision_sample(path: Path = VISION_SAMPLE, n: int = 32) -> None:
    """(Re)build the bundled image dataset from the arithmetic sample's first ``n`` rows."""
    from areal_runtime.models.default_model import load_sample_dataset

    (path.parent / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for i, row in enumerate(load_sample_dataset()[:n]):
        question = row["messages"][-1]["content"]
        a, b = (int(x) for x in question.removeprefix("What is ").rstrip("?").split("+"))
        name = f"images/{i:03d}.png"
        sample_image(a, b).save(path.parent / name)
        lines.append(json.dumps(with_image(row, name)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_vision_sample()
    print(f"wrote {VISION_SAMPLE}")
