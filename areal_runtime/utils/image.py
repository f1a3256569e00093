# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``areal.utils.image``: images as base64 PNG for inference servers, batch padding.

``image2base64`` also passes base64 strings through unchanged, so a dataset that already
stores encoded images works with the same workflow code.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError(
            "images need Pillow: pip install 'areal-devkit[runtime]' (or pillow)"
        ) from exc
    return Image


def image2base64(images: Any) -> list[str]:
    """Base64 PNG strings for one image or a list of them (PIL images or base64 strings)."""
    if isinstance(images, str) or not isinstance(images, list | tuple):
        images = [images]
    encoded = []
    for image in images:
        if isinstance(image, str):
            encoded.append(image)
            continue
        if not isinstance(image, _pil().Image):
            raise TypeError(
                f"image2base64 takes PIL images or base64 strings, got {type(image).__name__}"
            )
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        encoded.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return encoded


def load_image(image: Any, base_dir: str | Path | None = None) -> Any:
    """A PIL image from a PIL image, a file path (relative to ``base_dir``), a ``data:`` URI or
    a base64 string: the forms a JSONL dataset can hold."""
    image_module = _pil()
    if isinstance(image, image_module.Image):
        return image
    if not isinstance(image, str):
        raise TypeError(
            f"an image must be a PIL image, a path or base64, got {type(image).__name__}"
        )
    if image.startswith("data:"):
        image = image.partition(",")[2]
    elif len(image) < 4096:  # a path, not base64
        path = Path(base_dir or ".") / image
        if path.is_file():
            return image_module.open(path).convert("RGB")
        if not _looks_base64(image):
            raise FileNotFoundError(f"image {path} does not exist")
    try:
        raw = base64.b64decode(image, validate=True)
        return image_module.open(io.BytesIO(raw)).convert("RGB")
    except (ValueError, OSError) as exc:
        raise ValueError(
            f"image {image[:40]!r}... is neither a file nor base64 image data"
        ) from exc


def _looks_base64(text: str) -> bool:
    return len(text) % 4 == 0 and all(c.isalnum() or c in "+/=" for c in text)


def pad_images_batch_to_max_size(images: list[Any]) -> list[Any]:
    """Each image centred on a black RGB canvas as large as the largest one in the batch."""
    image_module = _pil()
    width = max(image.size[0] for image in images)
    height = max(image.size[1] for image in images)
    padded = []
    for image in images:
        canvas = image_module.new("RGB", (width, height), (0, 0, 0))
        canvas.paste(image, ((width - image.size[0]) // 2, (height - image.size[1]) // 2))
        padded.append(canvas)
    return padded
