"""The pieces every animated figure shares: play/pause buttons and a slider, a frame's title
(the step and the true state), and frame data as plain lists."""

from __future__ import annotations

import numpy as np

from .layout import LEGEND_RIGHT
from .style import state_color, state_label


def plain(a) -> list:
    """A numpy array as a plain list. Animation frames must hold plain lists: plotly.py
    writes numpy arrays as base64 typed-array specs, which plotly.js's ``animate`` merges
    into the trace as an object instead of decoding (the bars or points do not move)."""
    return np.asarray(a).tolist()


def _play_buttons(frame_ms: int, transition_ms: int, redraw: bool, offset: int) -> dict:
    """The ▶ Play and ❚❚ Pause buttons, under the plot's left edge."""
    play = dict(
        frame=dict(duration=frame_ms, redraw=redraw),
        fromcurrent=True,
        transition=dict(duration=transition_ms, easing="linear"),
        mode="immediate",
    )
    pause = dict(
        frame=dict(duration=0, redraw=False), transition=dict(duration=0), mode="immediate"
    )
    return dict(
        type="buttons",
        direction="left",
        showactive=False,
        x=0.0,
        y=0,
        xanchor="left",
        yanchor="top",
        pad=dict(t=55 + offset, r=10),
        buttons=[
            dict(label="▶ Play", method="animate", args=[None, play]),
            dict(label="❚❚ Pause", method="animate", args=[[None], pause]),
        ],
    )


def _slider(names: list[str], labels: list[str], redraw: bool, offset: int) -> dict:
    """A slider with one step per frame (``names``), labelled ``labels``."""
    return dict(
        active=0,
        x=0.17,
        len=0.83,
        y=0,
        yanchor="top",
        pad=dict(t=40 + offset, b=10),
        currentvalue=dict(prefix="step ", xanchor="right", font=dict(size=13)),
        transition=dict(duration=0),
        steps=[
            dict(
                label=lab,
                method="animate",
                args=[
                    [name],
                    dict(
                        mode="immediate",
                        frame=dict(duration=0, redraw=redraw),
                        transition=dict(duration=0),
                    ),
                ],
            )
            for name, lab in zip(names, labels)
        ],
    )


def animation_controls(
    names: list[str],
    labels: list[str],
    frame_ms: int,
    transition_ms: int,
    redraw: bool,
    offset: int = 0,
) -> dict:
    """Play/pause buttons and a slider over the frames ``names`` (labels shown), placed
    ``offset`` pixels further below the plot (room for long tick labels); the legend moves to
    the right, out of their way.

    Parameters
    ----------
    names : list of str
        The frames' names, in order.
    labels : list of str
        What the slider shows for each frame.
    frame_ms, transition_ms : int
        How long each frame shows, and the transition between frames, when playing.
    redraw : bool
        Whether plotly.js redraws the whole figure at each frame.
    offset : int, default 0
        Extra room, in pixels, between the plot and the controls.

    Returns
    -------
    dict
        Layout keys: ``updatemenus``, ``sliders`` and ``legend``.
    """
    buttons = _play_buttons(frame_ms, transition_ms, redraw, offset)
    slider = _slider(names, labels, redraw, offset)
    return dict(updatemenus=[buttons], sliders=[slider], legend=LEGEND_RIGHT)


def frame_title(head: str, step: int, state: int, tail: str = "") -> str:
    """A frame's title: ``head``, the step and the true state (a square in its colour)."""
    c = state_color(state, strong=True)
    return (
        f"{head} · step {step:,} · <span style='color:{c}'>■ true {state_label(state)}</span>{tail}"
    )


__all__ = ["plain", "animation_controls", "frame_title"]
