# SPDX-License-Identifier: Apache-2.0
"""train_vision teaches the image placeholders without making them louder than any word."""

import shutil

import torch

from areal_runtime.models.default_model import MODEL_DIR, load_default_model
from areal_runtime.models.train_vision import train
from areal_runtime.models.vision import VISION_TOKENS


def test_only_the_image_rows_change_and_they_stay_within_the_longest_text_row(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    model, tok = load_default_model(folder)
    image_rows = tok.convert_tokens_to_ids(VISION_TOKENS)
    weights = model.get_input_embeddings().weight.detach().clone()
    weights[image_rows] *= 4  # as loud as an uncapped run left them: they were written into calls
    model.get_input_embeddings().weight.data.copy_(weights)
    model.save_pretrained(str(folder))

    train(seconds=2, folder=folder)

    after = load_default_model(folder)[0].get_input_embeddings().weight.detach()
    text = torch.ones(len(after), dtype=torch.bool)
    text[image_rows] = False
    assert torch.equal(after[text], weights[text])
    longest = after[text].norm(dim=1).max()
    assert (after[image_rows].norm(dim=1) <= longest + 1e-5).all()
    assert not torch.equal(after[image_rows], weights[image_rows])
