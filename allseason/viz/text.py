r"""Text from outside (a link, a file's name, a column name, a cell) shown as text.

Streamlit renders ``st.error``, ``st.markdown``, captions and labels as Markdown (with math
between ``$`` signs and ``:color[...]`` directives), and Plotly renders a subset of HTML
(``<a href>`` included) in titles and labels. A value a visitor sends must never become a
link, an image the browser fetches, a formula or a heading in the app's own voice, so every
such value goes through one of these two functions before it is placed in Markdown or in a
figure:

- :func:`md` backslash-escapes every character that can start Markdown here (CommonMark lets
  any ASCII punctuation be escaped, and an escaped one is shown as itself): ``\ ` * [ ] < >
  $ ~ | # @ { }``, an underscore at a word's edge, a colon before a non-space
  (``:material/x:``) and a list marker at the start, and puts an invisible word joiner
  (U+2060) into ``https://``, ``www.`` and ``a@b`` (GFM finds those autolinks after the
  escapes are resolved); line breaks and other control characters become spaces. So
  nothing can become a block, a link, an image, an autolink, emphasis, math, an icon or raw
  HTML, while ordinary text (``n_seeds``, ``Seeds: must be``, ``1,000.5``) stays as it is;
- :func:`html` escapes ``& < > " '`` for HTML blocks (``unsafe_allow_html``) and Plotly text.

    >>> print(md("[x](https://evil.example) _a_ n_max: $x$").replace(JOINER, "^"))
    \[x\](https\:^//evil.example) \_a\_ n_max: \$x\$
    >>> print(md("- a\n# b www.x.y a@b.c").replace(JOINER, "^"), md("1. a"))
    \- a \# b www^.x.y a\@^b.c 1\. a
    >>> html('<a href="x">')
    '&lt;a href=&quot;x&quot;&gt;'
"""

from __future__ import annotations

import html as _html
import re

_ACTIVE = re.compile(
    r"([\\`*\[\]<>$~|#@{}])"  # always
    r"|((?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))"  # emphasis: an underscore at a word's edge
    r"|(:(?=\S))"  # an icon or a directive (:red[, :material/x:)
)
# GFM finds literal autolinks (https://x, www.x, a@b.c) in the text AFTER escapes are
# resolved, so a backslash does not stop them: an invisible word joiner breaks the pattern
_AUTOLINK = re.compile(r"(?i)(?<=[a-z]:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)")
JOINER = "\u2060"
_LIST = re.compile(r"^(\d*)([-+]|(?<=\d)[.)])(?=[\s-]|$)")  # a list marker or a rule (---)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")


def _cut(text: object, limit: int | None) -> str:
    """``str(text)``, cut to ``limit`` characters (then ``…``) when it is longer."""
    value = str(text)
    if limit is not None and len(value) > limit:
        value = value[:limit] + "…"
    return value


def md(text: object, limit: int | None = None) -> str:
    """``text`` as Markdown that shows exactly those characters (on one line).

    Parameters
    ----------
    text : object
        The value from outside (converted with ``str``).
    limit : int, optional
        Keep at most this many characters of the value (before escaping), then ``…``.
    """
    value = _CONTROL.sub(
        " ", _cut(text, limit)
    ).lstrip()  # 4 leading spaces would start a code block
    value = _ACTIVE.sub(lambda m: "\\" + m[0], _AUTOLINK.sub(JOINER, value))
    return _LIST.sub(r"\1\\\2", value)


def html(text: object, limit: int | None = None) -> str:
    """``text`` escaped for an HTML block or a Plotly title, label or hover text.

    Parameters
    ----------
    text : object
        The value from outside (converted with ``str``).
    limit : int, optional
        Keep at most this many characters of the value (before escaping), then ``…``.
    """
    return _html.escape(_CONTROL.sub(" ", _cut(text, limit)), quote=True)


__all__ = ["md", "html"]
