"""The Live page: a show whose season the presenter switches by hand (``api.LiveRun``); the
show turned into a race to analyse is :mod:`allseason.ui.live_analyse`.

The run lives in ``st.session_state`` (:data:`RUN`). The stage -- the season buttons, the
status line, the ticker and the three figures -- is one fragment (:func:`stage`, key
``live_stage``) defined with ``run_every=INTERVAL`` while the show plays, so the browser asks
for it ``1 / INTERVAL`` times a second and only it reruns; each rerun plays
``speed × INTERVAL`` steps and draws the new frame. A season button is inside the stage, so
a click reruns the stage alone and its first frame is already under the new season.

Pausing (the Pause button, or :data:`IDLE_MINUTES` without a control touched) reruns the
whole page, which defines the stage without ``run_every``: the browser stops asking, and no
server CPU is spent on a forgotten tab. A closed tab asks for nothing either (the reruns are
driven by the browser's timer).
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from allseason import api
from allseason.viz import live as vlive
from allseason.viz.text import html, md

from . import keygate, keys, state
from .frame import PLOTLY_CONFIG, alt_text, current_page, guard
from .keys import LIVE_CONFIG as CONFIG  # (contestants, seed) the run was started with
from .keys import LIVE_LAST_CALL as LAST_CALL
from .keys import LIVE_NOTE as NOTE  # (kind, text) to show on the stage until the next control
from .keys import LIVE_PAUSED as PAUSED
from .keys import LIVE_POLICIES_W as POLICIES_W
from .keys import LIVE_PRESENTER as PRESENTER
from .keys import LIVE_REDEFINING as REDEFINING
from .keys import LIVE_RUN as RUN  # the api.LiveRun
from .keys import LIVE_SCREEN as SCREEN  # the presenter's screen, one of SCREENS
from .keys import LIVE_SEED_W as SEED_W
from .keys import LIVE_SPEED as SPEED  # steps per second (canonical; the slider is SPEED_W)
from .keys import LIVE_SPEED_W as SPEED_W
from .keys import LIVE_TOUCHED as TOUCHED  # time.time() of the last control touched
from .live_look import CSS, PRESENTER_CSS, SCREENS

INTERVAL = 0.25  # seconds between two frames while the show plays (4 frames a second)
IDLE_MINUTES = 5  # the show pauses after this long without a control touched
SPEED_MIN, SPEED_MAX, SPEED_DEFAULT = 5, 400, 40  # steps per second
MAX_CONTESTANTS = api.MAX_LIVE_CONTESTANTS  # allseason.limits
TICKER_LINES = 4


# the stage's figures redraw four times a second: no toolbar, no hover, no zoom (a static
# plot is lighter for the browser; the figures of a race are on the Race page)
PLOTLY = {**PLOTLY_CONFIG, "displayModeBar": False, "staticPlot": True}


# --- state ------------------------------------------------------------------------------------
def reset() -> None:
    """The Live page's controls start again from the show (keys.reset); the show goes on."""
    keys.reset(st.session_state, keys.PAGE_LIVE)


def touch() -> None:
    """A control was used: the idle clock starts again."""
    st.session_state[TOUCHED] = time.time()


def new_run(policies, seed: int) -> api.LiveRun:
    specs = [api.PolicySpec(n, api.default_params(n)) for n in policies]
    return api.LiveRun(specs, seed=int(seed))


def restart(force: bool = True) -> None:
    """A new show with the chosen contestants and seed (a callback: before the rerun);
    ``force=False`` (the contestants' and seed's on_change): only if they differ from the
    show's. In chromium, the sidebar's on_change callbacks also fire, with unchanged values,
    on the page rerun that turns presenter mode on (which stops drawing the sidebar): a
    show must not restart then."""
    ss = st.session_state
    touch()
    config = ss.get(CONFIG, (api.LIVE_POLICIES, 0))
    policies = list(ss[POLICIES_W] if POLICIES_W in ss else config[0])
    seed = ss[SEED_W] if ss.get(SEED_W) is not None else config[1]
    if not force and (tuple(policies), int(seed)) == ss.get(CONFIG):
        return
    ss.pop(NOTE, None)
    if not policies:
        ss[NOTE] = (
            "error",
            "Contestants: choose at least one; the show goes on with the contestants it had.",
        )
        return
    if len(policies) > MAX_CONTESTANTS:
        ss[NOTE] = (
            "error",
            f"Contestants: at most {MAX_CONTESTANTS} on the stage; the "
            f"show goes on with the contestants it had.",
        )
        return
    try:
        ss[RUN] = new_run(policies, seed)
    except api.SpecError as e:
        ss[NOTE] = ("error", state.explain(e) + "; the show goes on as it was.")
        return
    ss[CONFIG] = (tuple(policies), int(seed))
    ss[PAUSED] = False  # a new show plays


def the_run() -> api.LiveRun:
    """The session's show (a new one with the default contestants at first)."""
    ss = st.session_state
    if RUN not in ss:
        ss[RUN] = new_run(api.LIVE_POLICIES, 0)
        ss[CONFIG] = (tuple(api.LIVE_POLICIES), 0)
        ss.setdefault(PAUSED, False)
        touch()
    return ss[RUN]


def checked_speed() -> int:
    """The speed in steps per second, from the session (or a ``?speed=`` link on arrival),
    brought within bounds with a warning if it was not."""
    ss = st.session_state
    raw = ss.get(SPEED)
    if raw is None:
        raw = st.query_params.get("speed", SPEED_DEFAULT)
    try:
        value = float(raw)
        if value != value or value in (float("inf"), float("-inf")):  # NaN, infinities
            raise ValueError
    except (TypeError, ValueError):
        st.warning(
            f"Speed: must be a number of steps per second from {SPEED_MIN} to "
            f"{SPEED_MAX}, got “{md(raw, 30)}”; {SPEED_DEFAULT} is used.",
            icon=":material/speed:",
        )
        value = SPEED_DEFAULT
    speed = int(min(max(round(value), SPEED_MIN), SPEED_MAX))
    if speed != value:
        st.warning(
            f"Speed: must be from {SPEED_MIN} to {SPEED_MAX} steps per second, got "
            f"{md(raw, 30)}; {speed} is used.",
            icon=":material/speed:",
        )
    ss[SPEED] = speed
    return speed


def steps_per_frame(speed: int) -> int:
    return max(1, round(speed * INTERVAL))


DEBOUNCE = 0.5  # seconds: a second call of the same control within this is the same click
NEW_SEASON_KEY = "live_new_"  # + the season it makes (1-based): see _first_call
PAUSE_KEY, RESUME_KEY = "live_pause", "live_resume"  # see season_buttons
# REDEFINING is set where the stage asks for the whole page to be drawn again (_stage, beside
# its st.rerun: after Pause, Resume, the presenter toggle, the idle pause; the stage is then
# defined with or without run_every); until that page run has finished (drawing), keys and
# clicks on the stage are dropped, so no fragment rerun changes the show while the page is
# being redefined (issue 27's key storm)


def _first_call(control: str) -> bool:
    """False if ``control`` (a button) was called within DEBOUNCE seconds, else True.

    In chromium, a click on a button of the stage can reach its callback twice: the
    ``run_every`` rerun that comes while the click's rerun runs carries the click's trigger
    again (seen 0.02-0.2 s apart, one frame; over 0.5 s on a loaded machine). Twice "New
    season" would add two seasons; the button is therefore keyed by the season it makes
    (``live_new_<k>``), so a late second call is for a season that exists: nothing changes."""
    ss = st.session_state
    if ss.get(REDEFINING):
        return False
    now = time.monotonic()
    last = ss.get(LAST_CALL, {})
    if now - last.get(control, -1e9) < DEBOUNCE:
        return False
    ss[LAST_CALL] = {**last, control: now}
    return True


def _switch(s: int, control: str) -> None:
    """Play season ``s`` (0-based; ``n_states`` = a new one) from the next frame on.

    The buttons carry their target, fixed when they were drawn (New season: the number of
    seasons then), and :func:`_first_call` drops a second call within DEBOUNCE seconds."""
    if not _first_call(control):
        return
    touch()
    ss = st.session_state
    ss.pop(NOTE, None)
    try:
        ss[RUN].switch(s)
    except api.SpecError as e:
        ss[NOTE] = ("warning", _season_message(e, ss[RUN]))


def _season_message(err: api.SpecError, run: api.LiveRun) -> str:
    if getattr(err, "got", None) == run.n_states:
        return (
            f"No season {run.n_states + 1}: a live show has at most {run.max_states} "
            f"seasons (keys 1–{run.max_states}). Bring back one of those seen so far."
        )
    return f"Season: {state.explain(err)}"


def _pause(paused: bool) -> None:
    if not _first_call("pause"):
        return
    if st.session_state.get(PAUSED, False) == paused:
        return  # a click delivered again after the page was redrawn (see season_buttons)
    touch()
    st.session_state[PAUSED] = paused
    st.session_state.pop(NOTE, None)
    # REDEFINING is set by the stage, where it asks for the whole page (_stage, st.rerun):
    # set here, a Pause that changes nothing left it set with no page run to clear it, and
    # the stage dropped every key after it (the key storm's stage stopped answering,
    # 2026-11-27)


def _speed_changed() -> None:
    ss = st.session_state
    if SPEED_W in ss and ss[SPEED_W] != ss.get(SPEED):
        touch()
        ss[SPEED] = ss[SPEED_W]


def _presenter() -> None:
    touch()


# --- the page ---------------------------------------------------------------------------------
def screen() -> dict:
    """The presenter's screen (:data:`SCREENS`)."""
    return SCREENS.get(st.session_state.get(SCREEN), SCREENS["1920×1080"])


def presenter() -> bool:
    return bool(st.session_state.get(PRESENTER, False))


def header() -> None:
    """The title and what the page is for (not in presenter mode: the stage fills the
    screen)."""
    if presenter():
        return
    st.title(current_page()[0])
    st.markdown(
        "**You call the seasons.** Press **Season k** (or the key *k*) to bring a "
        "season back, **New season** (*N*) for a world nobody has seen, **Pause** "
        "(*P*) to stop. Every contestant plays the same arms and noise: watch which "
        "one recovers at once and which starts learning again."
    )


def settings() -> None:
    """The sidebar: speed, contestants, seed, restart (hidden in presenter mode)."""
    ss = st.session_state
    with st.sidebar:
        st.subheader("The show")
        ss[SPEED_W] = ss[SPEED]
        st.slider(
            "Speed (steps per second)",
            SPEED_MIN,
            SPEED_MAX,
            key=SPEED_W,
            on_change=_speed_changed,
            help=f"Steps played per second; {1 / INTERVAL:g} frames a second of "
            f"speed × {INTERVAL:g} steps each.",
        )
        policies, seed = ss[CONFIG]
        if POLICIES_W not in ss:
            ss[POLICIES_W] = list(policies)
        st.multiselect(
            "Contestants",
            api.policy_names(),
            key=POLICIES_W,
            on_change=restart,
            args=(False,),
            format_func=_contestant_name,
            max_selections=MAX_CONTESTANTS,
            help="Changing them starts a new show. The first All-Season is the "
            "one whose top weight the ribbon follows.",
        )
        if SEED_W not in ss:
            ss[SEED_W] = seed
        st.number_input(
            "Seed",
            0,
            2**31 - 1,
            step=1,
            key=SEED_W,
            on_change=restart,
            args=(False,),
            help="The arms, the noise, the seasons' θ and the contestants' "
            "draws; changing it starts a new show.",
        )
        st.button(
            "Restart",
            key="live_restart",
            on_click=restart,
            icon=":material/restart_alt:",
            width="stretch",
            help="A new show from step 0, same contestants and seed.",
        )
        st.caption(
            f"The show pauses by itself after {IDLE_MINUTES} minutes without a "
            f"control touched. At most {ss[RUN].max_states} seasons; speed "
            f"{SPEED_MIN}–{SPEED_MAX} steps per second. The environment: d = 5, "
            f"K = 5 arms, σ² = 0.1, batch 1 (the paper's synthetic setting)."
        )


def _contestant_name(name: str) -> str:
    from allseason.viz.style import policy_name

    return policy_name(name)


def style() -> None:
    """The page's style (in presenter mode, sized for the chosen screen)."""
    st.html(CSS)
    keygate.install()  # keys paced in the browser: one click per idle moment (issue 27)
    if presenter():
        st.html(PRESENTER_CSS.replace("* K)", f"* {screen()['text']})"))


def start() -> None:
    """The session's show (a new one at first) and its speed, checked."""
    the_run()
    checked_speed()


@contextlib.contextmanager
def drawing():
    """Around the page's drawing: once it is drawn, the stage takes keys again (a control
    that redraws the whole page sets :data:`REDEFINING`; issue 27's key storm)."""
    try:
        yield
    finally:
        st.session_state.pop(REDEFINING, None)


def stage() -> None:
    """The stage, as a fragment that reruns every INTERVAL while the show plays."""
    playing = not st.session_state.get(PAUSED, False)
    st.fragment(_stage, run_every=INTERVAL if playing else None, key="live_stage")(
        playing, presenter(), screen()
    )


def _stage(defined_playing: bool, defined_presenter: bool, defined_screen: dict) -> None:
    ss = st.session_state
    with guard("the live show"):
        run: api.LiveRun = ss[RUN]
        playing = not ss.get(PAUSED, False)
        if (playing, presenter(), screen()) != (defined_playing, defined_presenter, defined_screen):
            # Pause, Resume, the presenter toggle or its screen: the whole page again, so
            # the stage is defined with (or without) run_every and the page's style follows
            ss[REDEFINING] = True
            st.rerun()
        if playing and time.time() - ss.get(TOUCHED, 0) > IDLE_MINUTES * 60:
            ss[PAUSED] = True
            ss[NOTE] = (
                "info",
                f"Paused by itself after {IDLE_MINUTES} minutes without a "
                "control touched. Press Resume (or P) to go on.",
            )
            ss[REDEFINING] = True
            st.rerun()  # the whole page: the stage is defined again, without run_every
        speed = ss.get(SPEED, SPEED_DEFAULT)
        if playing:
            run.advance(steps_per_frame(speed))
        season_buttons(run)
        if NOTE in ss:
            kind, text = ss[NOTE]
            getattr(st, kind)(text)
        frame = run.frame()
        draw(run, frame, speed, playing)


def season_buttons(run: api.LiveRun) -> None:
    """One button per season seen so far (keys 1-9), New season (N), Pause (P) and the
    presenter toggle, in one row."""
    ss = st.session_state
    paused = ss.get(PAUSED, False)
    left, right = st.columns([5, 2.2] if presenter() else [5, 1.45], vertical_alignment="center")
    with left.container(
        key="live_buttons", horizontal=True, gap="small", vertical_alignment="center"
    ):
        st.markdown(
            '<span class="live-season-word">Season</span>', unsafe_allow_html=True, width="content"
        )
        for s in range(run.n_states):  # labelled by number: nine of them fit on a row
            st.button(
                f"{s + 1}",
                key=f"live_season_{s + 1}",
                shortcut=str(s + 1),
                on_click=_switch,
                args=(s, f"season {s + 1}"),
                type="primary" if s == run.state else "secondary",
                help=f"Bring season {s + 1} back (key {s + 1})",
            )
        st.button(
            "New season",
            # keyed by the season it makes: a click delivered twice (below) names the button
            # the browser showed, so its second call asks for that season again, a no-op
            key=f"{NEW_SEASON_KEY}{run.n_states + 1}",
            shortcut="N",
            on_click=_switch,
            args=(run.n_states, "new"),
            icon=":material/add:",
            help=f"A season nobody has seen (key N); at most {run.max_states} in a show.",
        )
        st.button(
            "Resume" if paused else "Pause",
            # two widgets, keyed by what they do: a click delivered again after the page
            # was redrawn (see _first_call) names the button the browser showed, so a late
            # second "Pause" pauses again instead of calling the redrawn Resume
            key=RESUME_KEY if paused else PAUSE_KEY,
            on_click=_pause,
            args=(not paused,),
            icon=":material/play_arrow:" if paused else ":material/pause:",
            shortcut="P",
            type="primary" if paused else "tertiary",
            help="Pause or resume the show (key P).",
        )
    with right.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.toggle(
            "Presenter mode",
            key=PRESENTER,
            on_change=_presenter,
            help="Hide the sidebar and the settings, enlarge text and lines for a projector.",
        )
        if presenter():
            ss.setdefault(SCREEN, "1920×1080")
            st.segmented_control(
                "Screen",
                list(SCREENS),
                key=SCREEN,
                on_change=_presenter,
                label_visibility="collapsed",
                required=True,
                help="The projector's resolution: the stage fills it.",
            )


def ticker_lines(frame: api.LiveFrame, n: int = TICKER_LINES) -> list[tuple[int, str]]:
    """The ticker's newest ``n`` lines, newest first: (step, text)."""
    lines = sorted(frame.ticker, key=lambda t: t.step, reverse=True)  # stable: said order
    return [(t.step, t.text) for t in lines[:n]]


def status_html(frame: api.LiveFrame, speed: int, playing: bool) -> str:
    mode = f"▶ {speed} steps/s" if playing else "paused"  # (no font here has ⏸)
    return (
        f'<div class="live-status" data-step="{frame.t}" '
        f'data-season="{frame.current_state + 1}">'
        f'<b>Season {frame.current_state + 1}</b> · step <span class="num">'
        f"{frame.t:,}</span> · {mode}</div>"
    )


def ticker_html(frame: api.LiveFrame) -> str:
    lines = ticker_lines(frame)
    if not lines:
        return (
            '<ul class="live-ticker"><li>The show has started: season 1. Press '
            "<b>New season</b> (N) when you like.</li></ul>"
        )
    items = "".join(
        f'<li><span class="when">step {step:,}</span> &nbsp;{html(text)}</li>'
        for step, text in lines
    )
    return f'<ul class="live-ticker" aria-live="polite">{items}</ul>'


def draw(run: api.LiveRun, frame: api.LiveFrame, speed: int, playing: bool) -> None:
    """The status line, the ticker and the three figures: in two columns for a projector
    (presenter mode, sized for the chosen screen: :data:`SCREENS`),
    else one under the other."""
    big = presenter()
    size = screen() if big else dict(scale=1.0, rate=330, ribbon=220, since=300)
    scale = size["scale"]
    rate = vlive.rate_figure(
        frame, window=run.window, rate_window=run.rate_window, scale=scale, height=size["rate"]
    )
    ribbon = vlive.ribbon_figure(frame, window=run.window, scale=scale, height=size["ribbon"])
    since = vlive.since_switch_figure(frame, scale=scale, height=size["since"])
    if big:
        left, right = st.columns([3, 2], gap="medium")
    else:
        left = right = st.container()
    with right if big else left:
        status, ticker = (st.container(), st.container()) if big else st.columns([2, 3])
        status.markdown(status_html(frame, speed, playing), unsafe_allow_html=True)
        ticker.markdown(ticker_html(frame), unsafe_allow_html=True)
    keys = {
        "rate": vlive.contestants_key(frame.labels, scale=scale),
        "ribbon": vlive.bandits_key(frame, scale=scale),
    }
    with left:
        for fig, name in ((rate, "rate"), (ribbon, "ribbon")):
            st.plotly_chart(fig, key=f"live_{name}", config=PLOTLY, alt=alt_text(fig))
            st.markdown(keys[name], unsafe_allow_html=True)
    with right:
        st.plotly_chart(since, key="live_since", config=PLOTLY, alt=alt_text(since))
