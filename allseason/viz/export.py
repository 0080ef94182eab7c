"""Downloads: a figure as a standalone HTML page, a table as CSV (in full, not downsampled)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

HTML_CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def figure_html(fig: go.Figure) -> bytes:
    """The figure as a complete HTML page (UTF-8) with plotly.js inlined: it opens offline,
    animations and hover included."""
    return fig.to_html(
        include_plotlyjs=True, full_html=True, config=HTML_CONFIG, auto_play=False
    ).encode("utf-8")


def frames_csv(df: pd.DataFrame) -> bytes:
    """A table as CSV (UTF-8, header, no index column)."""
    return df.to_csv(index=False).encode("utf-8")


__all__ = ["figure_html", "frames_csv"]
