"""Text from outside is shown as text. Markdown links, remote images and math are
sent through every link parameter (the scenario's, the race's, policy hyperparameters and
their names, Inside's view/contestant/seed, the tour's step, Live's speed, an unknown name)
and every upload field (a scenario JSON or CSV and its file name, a race file, a Your data
CSV's column names and file name); no element that renders Markdown may hold them
unescaped, and each page must show at least one of them escaped (so the test can fail).
"""

from __future__ import annotations

import json
import re

import markdown
import pytest
from google.protobuf.json_format import MessageToDict

pytest.importorskip("streamlit")

from conftest import open_app_page

from allseason.links import QUERY_FIELDS
from allseason.ui import yourdata
from allseason.ui.race_settings import RACE_UPLOAD
from allseason.viz.text import JOINER, html, md

LINK = "[a](https://evil.example/x)"
IMAGE = "![i](http://127.0.0.1:9/q.png)"
MATH = "$x^{2}$"
PAYLOADS = (LINK, IMAGE, MATH)
# what a payload that Markdown would render looks like: a link or image syntax, an autolink
# (a colon not escaped before //) or math (a $ not escaped)
RENDERED = re.compile(
    r"(?<!\\)\]\([^)]*(?:evil|127\.0\.0\.1)|https?://(?:evil|127)|(?<!\\)<https?"
    r"|(?<!\\)\$x"
)
# elements whose text Streamlit renders as Markdown (widgets: their labels, help, options)
MARKDOWN = ("markdown", "caption", "error", "warning", "info", "success", "toast", "title")
MARKDOWN += ("header", "subheader", "exception", "latex")
WIDGETS = ("selectbox", "radio", "multiselect", "checkbox", "button", "number_input")
WIDGETS += ("text_input", "slider", "select_slider", "toggle", "expander", "tabs")
PAGES = (
    "app_pages/0_Home.py",
    "app_pages/1_Pattern_builder.py",
    "app_pages/2_Race.py",
    "app_pages/3_Inside_All-Season.py",
    "app_pages/6_Guided_tour.py",
    "app_pages/8_Live.py",
)


def link_with(payload: str) -> dict[str, str]:
    """Every parameter a link may carry, each set to ``payload`` (and one named by it)."""
    query = {k: payload for k in QUERY_FIELDS}
    query.update(
        {
            "policies": payload,
            "n_seeds": payload,
            "allseason-sw.n_max": payload,
            "allseason-sw.tau": payload,
            "allseason-sw.share": payload,
            "lints.lam": payload,
            "allseason-sw." + payload: "1",
            "view": payload,
            "contestant": payload,
            "inside_seed": payload,
            "step": payload,
            "speed": payload,
            payload: payload,
        }
    )
    return query


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def rendered(at) -> list[str]:
    """Every string of every element that renders Markdown (body, label, help, options)."""
    return [
        text
        for kind in MARKDOWN + WIDGETS
        for el in at.get(kind)
        for text in _strings(MessageToDict(el.proto))
    ]


def assert_no_raw(at, where: str) -> int:
    """No payload Markdown would render; returns how many strings quote one escaped."""
    texts = rendered(at)
    bad = [t[:200] for t in texts if RENDERED.search(t)]
    assert not bad, (where, bad)
    assert not at.exception, (where, [e.value for e in at.exception])
    return sum(bool(re.search(r"evil|127|x[\\]*\^", t)) for t in texts)


@pytest.mark.parametrize("page", PAGES)
def test_no_link_parameter_renders_as_markdown(page):
    shown = 0
    for payload in PAYLOADS:
        at = open_app_page(page, query=link_with(payload), from_home=False)
        shown += assert_no_raw(at, f"{page} {payload}")
    assert shown > 0, f"{page}: no message quoted the link's values"


def _upload(at, key: str, name: str, data: bytes, mime: str):
    at.file_uploader(key=key).set_value((name, data, mime))
    at.run()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_upload_field_renders_as_markdown(payload):
    # the Pattern builder: a scenario JSON (file name, keys, values) and a CSV segment table
    at = open_app_page("app_pages/1_Pattern_builder.py")
    shown = 0
    for name, data, mime in (
        (f"{payload}.json", json.dumps({"d": payload}).encode(), "application/json"),
        (f"{payload}.json", json.dumps({payload: 1}).encode(), "application/json"),
        (f"{payload}.csv", f"state,length\n0,{payload}\n".encode(), "text/csv"),
        (f"{payload}.csv", f"state,{payload}\n0,5\n".encode(), "text/csv"),
        (f"{payload}.json", b"state,length\n0,500\n", "application/json"),
    ):
        _upload(at, "pb_upload", name, data, mime)
        shown += assert_no_raw(at, f"scenario upload {name}")
    _upload(at, "pb_upload", f"{payload}.csv", b"state,length\n0,500\n1,300\n", "text/csv")
    shown += assert_no_raw(at, "a good scenario upload")  # "Loaded <name>."
    # the Race page: a race JSON with the payload as label, policy, hyperparameter and file name
    at = open_app_page("app_pages/2_Race.py")
    for race in (
        {"scenario": {}, "policies": [{"name": "lints", "label": payload}], "n_seeds": 1},
        {"scenario": {}, "policies": [{"name": payload}], "n_seeds": 1},
        {"scenario": {}, "policies": [{"name": "lints", "params": {payload: 1}}]},
        {"scenario": {"d": payload}, "policies": ["lints"]},
        {"scenario": {}, "policies": ["lints"], "n_seeds": payload},
    ):
        _upload(at, RACE_UPLOAD, f"{payload}.json", json.dumps(race).encode(), "application/json")
        shown += assert_no_raw(at, f"race upload {race}")
    # Your data: the file's name, its column names and cells
    at = open_app_page("app_pages/7_Your_data.py")
    rows = "".join(f"2024-01-{d:02d},a,{d % 2}\n" for d in range(1, 29))
    for name, text in (
        (f"{payload}.csv", f"timestamp,arm,{payload}\n" + rows),
        (f"{payload}.csv", f"timestamp,arm,reward,{payload}\n" + rows.replace("\n", ",1\n")),
        (f"{payload}.csv", f"timestamp,arm,reward\n2024-01-01,a,{payload}\n"),
        (f"{payload}.csv", f"{payload}\n1\n"),
    ):
        _upload(at, yourdata.UPLOAD, name, text.encode(), "text/csv")
        shown += assert_no_raw(at, f"your data {text[:60]!r}")
    assert shown > 0


@pytest.mark.parametrize(
    "text",
    [
        *PAYLOADS,
        "<https://evil.example>",
        "https://evil.example/a www.evil.example a@evil.example",
        "<img src=x onerror=alert(1)>",
        "line\n\n# heading\n---\n> quote\n- item\n1. item",
        ":red[alert] :material/home: **bold** _it_ `code` ~~s~~ | a | b |",
        "[a]: https://evil.example\n[a]",
    ],
)
def test_md_renders_as_the_same_characters_and_nothing_else(text):
    out = markdown.markdown(md(text), extensions=["tables"])
    assert "<a" not in out and "<img" not in out and "<h1" not in out, out
    assert "<li" not in out and "<blockquote" not in out and "<code" not in out, out
    assert "<strong" not in out and "<em" not in out and "<table" not in out, out
    # CommonMark (Streamlit's renderer) shows an escaped ASCII punctuation as itself
    # (GFM finds literal autolinks after the escapes: a word joiner breaks them)
    shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md(text)).replace(JOINER, "")
    assert not re.search(r"(?i)https?://|www\.|@\w", re.sub(r"\\(.)", r"\1", md(text)))
    assert " ".join(shown.split()) == " ".join(text.split())


def test_html_escapes_tags_and_quotes():
    assert html('<a href="https://evil.example">x</a>') == (
        "&lt;a href=&quot;https://evil.example&quot;&gt;x&lt;/a&gt;"
    )
    assert md("x" * 100, 10) == "x" * 10 + "…"
