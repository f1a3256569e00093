# SPDX-License-Identifier: Apache-2.0
"""The viewer page in a real headless Chromium: what a person sees, read from the rendered DOM."""

from html.parser import HTMLParser

import pytest

from areal_devkit.trajectory_text import TrajectoryRow
from areal_devkit.viewer import EpisodeView, write_page
from areal_devkit.viewer.browser import INSTALL_FAILED_MARKER, dump_dom, find_chromium
from areal_runtime.models.tokenizers import tiny_tokenizer


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        if INSTALL_FAILED_MARKER.exists():
            pytest.skip(
                f"Chromium could not be installed here: {INSTALL_FAILED_MARKER.read_text()}"
            )
        pytest.fail("Chromium is missing: run scripts/install_chromium.sh (make test does)")
    return path


class Elements(HTMLParser):
    """Every element's tag, classes and attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[str, set[str], dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._capture: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.items.append((tag, set((attributes.get("class") or "").split()), attributes))
        self._capture = attributes.get("id")

    def handle_data(self, data):
        if self._capture:
            self.text[self._capture] = self.text.get(self._capture, "") + data

    def handle_endtag(self, tag):
        self._capture = None

    def having(self, *classes: str) -> list[dict[str, str | None]]:
        return [attrs for _, cls, attrs in self.items if set(classes) <= cls]


def row(tok, parts, reward):
    """A row from ``[(text, trained), ...]`` with the stop token after each trained part."""
    ids, mask = [], []
    for text, trained in parts:
        piece = tok.encode(text, add_special_tokens=False) + ([tok.eos_token_id] if trained else [])
        ids += piece
        mask += [int(trained)] * len(piece)
    return TrajectoryRow(
        ids, mask, [-0.5 if m else 0.0 for m in mask], [3 if m else -1 for m in mask], reward
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tok = tiny_tokenizer()
    episodes = [
        EpisodeView(
            0, True, 1.0, None, None, [row(tok, [("What is 2+3?", False), ("5", True)], 1.0)]
        ),
        EpisodeView(
            1,
            True,
            0.9,
            None,
            None,
            [
                row(
                    tok,
                    [("What is 2+2?", False), ("5", True), ("Try again.", False), ("4", True)],
                    0.9,
                )
            ],
        ),
        EpisodeView(
            2,
            True,
            0.5,
            None,
            None,
            [
                row(tok, [("hi", False), ("a", True)], 0.25),
                row(tok, [("hi a", False), ("b", True)], 0.5),
            ],
        ),
        EpisodeView(
            3, False, None, "exception", "Traceback (most recent call last):\nValueError: boom", []
        ),
    ]
    path = tmp_path_factory.mktemp("viewer") / "page.html"
    write_page(episodes, path, tok, title="test page")
    return path, episodes


def rendered(chromium, url):
    parser = Elements()
    parser.feed(dump_dom(chromium, url))
    return parser


@pytest.mark.slow
@pytest.mark.browser
def test_every_episode_token_and_mask_is_rendered_without_script_errors(chromium, page):
    path, episodes = page
    dom = rendered(chromium, path.as_uri())
    body = next(attrs for tag, _, attrs in dom.items if tag == "body")
    assert body.get("data-ready") == "1", "the viewer script did not finish"
    html = next(attrs for tag, _, attrs in dom.items if tag == "html")
    assert "data-script-errors" not in html and not dom.text.get("script-errors", "").strip()
    assert len(dom.having("episode")) == 4 and len(dom.having("episode", "rejected")) == 1
    rows = [r for ep in episodes for r in ep.rows]
    tokens = sum(len(r.token_ids) for r in rows)
    trained = sum(sum(r.loss_mask) for r in rows)
    listed = [a for a in dom.having("tok") if "data-t" in a]  # the legend's samples have no index
    assert len(listed) == tokens
    assert len([a for a in dom.having("tok", "trn") if "data-t" in a]) == trained
    assert len([a for a in dom.having("tok", "ctx") if "data-t" in a]) == tokens - trained
    # every completion ends with the EOS, shown as a special token; turns are marked
    assert len([a for a in dom.having("tok", "special") if "data-t" in a]) == 5
    assert len(dom.having("turn", "trn")) == 5 and len(dom.having("turn", "ctx")) == 5
    assert dom.text.get("shown") == "4 of 4 shown"
    assert len(dom.having("error")) == 1  # the rejected episode's traceback head


@pytest.mark.slow
@pytest.mark.browser
def test_filters_from_the_address_hide_episodes(chromium, page):
    path, _ = page
    dom = rendered(chromium, path.as_uri() + "#rejected=0&min=0.8")
    hidden = [a for a in dom.having("episode") if "hidden" in a]
    assert len(hidden) == 2  # the rejected one and the 0.5 one
    assert dom.text.get("shown") == "2 of 4 shown"
