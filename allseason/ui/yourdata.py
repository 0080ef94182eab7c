"""The "Your data" page: a user's CSV (a logged-bandit log, or a per-arm reward table), checked,
then evaluated offline (a log) or raced on (a table).

The file a user brings is hostile until :func:`allseason.api.read_user_file` has checked it;
a problem is ONE ``st.error`` under the upload, naming the row or the column, and the page
keeps working. The file's bytes live in ``st.session_state[SOURCE]`` (an upload, or an example
made from a seed by :mod:`allseason.logs.examples`); results in ``st.session_state[RESULT]``,
keyed by the file's sha256 and the options, so changing page and coming back shows them
again. Nothing is written to disk.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import nullcontext

import streamlit as st

from allseason import api
from allseason.logs import examples, offline
from allseason.logs import table as table_mod
from allseason.logs.reader import MAX_COLUMNS
from allseason.viz.text import md

from . import keys, queueing, runcache, state, yourdata_log, yourdata_table

SOURCE, RESULT = keys.YD_SOURCE, keys.YD_RESULT  # the file {"name", "data", ...}; its result
UPLOAD, PARSED = keys.YD_UPLOAD, keys.YD_PARSED  # the uploader; (key, the parsed file)

LIMITS = offline.APP_LIMITS  # rows, bytes, context columns (the reward table: rows, bytes)
MAX_MB = LIMITS["bytes"] // 1_000_000
TABLE_SPECS = yourdata_table.TABLE_SPECS  # the race on a reward table
PARSE_BYTES_PER_SECOND = 5_000_000  # reading a file, in the queue (0.13 CPU-s/MB measured)
READ_WITHOUT_SLOT_BYTES = api.READ_WITHOUT_SLOT_BYTES  # a smaller file is read at once


def limits_text() -> str:
    return (
        f"At most **{LIMITS['rows']:,} rows** and **{MAX_MB} MB** per file (the command "
        f"line, `python -m allseason replay FILE`, reads {offline.LOG_LIMITS['rows']:,} "
        f"rows); up to {MAX_COLUMNS:,} columns (only those used are read); a reward table at most "
        f"{table_mod.MAX_ARMS} arms and {state.APP_LIMITS['horizon']:,} steps "
        f"(periods × customers)."
    )


def reset() -> None:
    """Your data's options go back to their defaults (keys.reset); the file and its results
    stay."""
    keys.reset(st.session_state, keys.PAGE_YOUR_DATA)


def _on_upload() -> None:
    f = st.session_state.get(UPLOAD)
    if f is None:
        if (st.session_state.get(SOURCE) or {}).get("origin") == "upload":
            st.session_state.pop(SOURCE, None)
        return
    st.session_state[SOURCE] = file_record(
        f.name, f.getvalue()[: LIMITS["bytes"] + 1], "upload", size=f.size
    )


def file_record(name: str, data: bytes, origin: str, size: int | None = None) -> dict:
    """A file as the page keeps it, with what is known of it once and for all at upload: its
    sha256 (the key of every result computed from it) and its kind (log or reward table,
    :func:`api.detect_kind` on its header). Its content is checked while it is read."""
    return {
        "name": name,
        "data": data,
        "size": len(data) if size is None else size,
        "origin": origin,
        "sha256": hashlib.sha256(data).hexdigest(),
        "kind": api.user_file_kind(data),
    }


def _use_example(kind: str) -> None:
    name, make = examples.EXAMPLES[kind]
    st.session_state[SOURCE] = file_record(name, make(), "example")
    st.session_state[keys.YD_KIND] = "auto"
    st.session_state[keys.YD_SCALE] = "none"


def _use_obd() -> None:
    from allseason.logs import obd

    policy, campaign = st.session_state[keys.YD_OBD].split("/")
    st.session_state[SOURCE] = file_record(
        f"obd-{policy}-{campaign}.csv", obd.log_path(policy, campaign).read_bytes(), "example"
    )
    st.session_state[keys.YD_KIND] = "auto"
    st.session_state[keys.YD_SCALE] = "none"


def real_log_section() -> None:
    """The "Try a real log" entry: the Open Bandit Dataset's sample logs (when ``make data``
    fetched them), with their source, licence and citation."""
    from allseason.logs import obd

    st.markdown(f"**Try a real log: {obd.TITLE}**")
    have = [f"{p}/{c}" for p, c in obd.available()]
    if not have:
        st.caption(f"Not on this server: `make data` fetches it ({obd.WHEEL} from PyPI).")
        return
    words = {"random": "uniform random logging", "bts": "Thompson-sampling logging"}
    st.selectbox(
        "Open Bandit Dataset sample",
        have,
        key=keys.YD_OBD,
        format_func=lambda v: f"{words[v.split('/')[0]]}, {v.split('/')[1]} items",
        help="10,000 real impressions each: items shown on ZOZOTOWN and whether they were "
        "clicked, with the logger's propensities.",
    )
    st.button(
        "Load this real log",
        key="yd_obd_load",
        icon=":material/storefront:",
        on_click=_use_obd,
        use_container_width=True,
    )
    st.caption(f"**Source**: {obd.SOURCE}. **Licence**: {obd.LICENCE} **Cite**: {obd.CITATION}")


def _message(err: api.SpecError) -> str:
    """A SpecError as one sentence per problem (a line break between): a row or column
    message stands alone, others name the input."""
    msg = err.message
    if msg.startswith(("row ", "time ", "column ")):
        return msg[0].upper() + msg[1:]
    return state.explain(err)


def format_help() -> None:
    st.markdown(
        "**A log** (one row per event): `timestamp`, `arm`, `reward` in [0, 1], optional "
        "`propensity` and context columns `x0`, `x1`, …; Open Bandit Dataset names "
        "(`item_id`, `click`, `propensity_score`) are read too. Evaluated offline by replay "
        "(and IPS with propensities).  \n**A reward table** (one row per period and arm): "
        "`time` (a date or a period number), `arm`, `reward` (the arm's rate that period, in "
        "[0, 1]). It becomes a world the policies race on."
    )


def upload_section():
    """The upload, the example buttons, the options and the parsed file (a Log, a
    RewardTable, or None), with any problem shown as one error under the upload."""
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.file_uploader(
            "Upload a CSV file (a log or a reward table)",
            type=["csv"],
            key=UPLOAD,
            on_change=_on_upload,
            max_upload_size=api.upload_cap_mb(LIMITS["bytes"]),
            help="UTF-8, comma-separated, a header row. " + limits_text(),
        )
        # a file not read yet: its bar is the page's first message after the upload (it
        # leaves the server before the rest of the page is drawn again: under load, 20 pages
        # rerun at once), right under the uploader
        source = st.session_state.get(SOURCE)
        bar = None
        if source is not None and _parsed(source) is None:
            bar = st.progress(0.0, text=f"Reading {md(source['name'], 80)}…")
    with right:
        _examples_panel()
    with left:
        st.caption(limits_text())
        _options_panel()
        if source is None:
            return None, None
        return source, _parse(source, bar)


def _examples_panel() -> None:
    """The example buttons (made from a seed), the real log, the format's help."""
    st.markdown("**Try an example** (made from a seed, nothing is downloaded)")
    st.button(
        "An Open-Bandit-style click log",
        key="yd_ex_log",
        icon=":material/ads_click:",
        on_click=_use_example,
        args=("log",),
        use_container_width=True,
        help=f"{examples.OBD_ROWS:,} events, {examples.N_ITEMS} items shown at "
        f"random, about 0.4% clicks: sparse, as real click logs are.",
    )
    st.button(
        "A seasonal reward table",
        key="yd_ex_table",
        icon=":material/calendar_month:",
        on_click=_use_example,
        args=("table",),
        use_container_width=True,
        help=f"{examples.WEEKS} weeks x {len(examples.PRODUCTS)} products "
        f"({', '.join(examples.PRODUCTS)}): each season of the year has its "
        f"best seller, and the seasons come back every year.",
    )
    real_log_section()
    format_help()


def _options_panel() -> None:
    """How the file is read and evaluated: kind, scale, arms, context, seeds, customers."""
    with st.expander("Options", icon=":material/tune:"):
        c1, c2 = st.columns(2)
        c1.selectbox(
            "Kind",
            ["auto", "log", "table"],
            key=keys.YD_KIND,
            help="auto: a `timestamp` column makes a log, a `time` column a reward table.",
        )
        c2.selectbox(
            "Scale the rewards",
            ["none", "max", "minmax"],
            key=keys.YD_SCALE,
            help="none: a reward outside [0, 1] is an error. max: divide by the "
            "largest. minmax: (value − min) / (max − min).",
        )
        c1.text_input(
            "Arms (optional)",
            key=keys.YD_ARMS,
            help="A number N (arms 0 … N−1) or labels separated by commas; any "
            "other arm in the file is an error. Empty: every arm of a log, "
            "the arms of a table's earliest period.",
        )
        c2.text_input(
            "Context columns (log, optional)",
            key=keys.YD_CONTEXT,
            help="Columns separated by commas: numbers as they are; text (hashed user "
            "features, say) one-hot on its most frequent values, within d ≤ 500. "
            "Empty: x0, x1, ….",
        )
        c1.number_input(
            "Seeds",
            2,
            10,
            api.DEFAULT_SEEDS,
            key=keys.YD_SEEDS,
            help="Replays (or races) with different random draws of the "
            "policies; the 95% intervals use them.",
        )
        c2.number_input(
            "Customers per period (table)",
            1,
            200,
            table_mod.STEPS,
            key=keys.YD_STEPS,
            help="Each period of a reward table is one batch of this many customers (steps).",
        )


def options() -> dict:
    ss = st.session_state
    return {
        "kind": ss.get(keys.YD_KIND, "auto"),
        "scale": ss.get(keys.YD_SCALE, "none"),
        "arms": (ss.get(keys.YD_ARMS) or "").strip(),
        "context": (ss.get(keys.YD_CONTEXT) or "").strip(),
        "seeds": int(ss.get(keys.YD_SEEDS, api.DEFAULT_SEEDS)),
        "steps": int(ss.get(keys.YD_STEPS, table_mod.STEPS)),
    }


def _parsed(source: dict):
    """The file as read already (a rerun: a widget moved), or None."""
    parsed = st.session_state.get(PARSED)
    return parsed[1] if parsed and parsed[0] == _key(source, "parsed") else None


def _parse(source: dict, bar=None):
    """The file read (a Log or a RewardTable; None after a problem, shown as one error), its
    progress on ``bar`` (made here if None)."""
    opts = options()
    key = _key(source, "parsed")
    data = _parsed(source)
    if data is not None:
        if bar is not None:
            bar.empty()
        return data
    try:
        if source["size"] > LIMITS["bytes"]:  # the reader's own check sees only the bytes kept
            raise api.SpecError(
                "file",
                f"the file has {source['size']:,} bytes; at most "
                f"{LIMITS['bytes']:,} bytes are read "
                f"({LIMITS['bytes'] / 1e6:g} MB)",
            )
        kind = source["kind"] if opts["kind"] == "auto" else opts["kind"]
        # a small file is read at once (at most about 0.3 CPU-s): the visitor sees what it
        # holds, and its evaluation's place in the queue, without waiting for a slot behind
        # the running evaluations; a larger one holds a slot of the fair queue (N visitors
        # cannot multiply its cost and memory), a short request (about 0.13 CPU-s per MB,
        # measured on the OBD-like example), its place shown while it waits
        if bar is None:
            bar = st.progress(0.0, text=f"Reading {md(source['name'], 80)}…")
        cost = max(0.1, source["size"] / PARSE_BYTES_PER_SECOND)
        slot = (
            nullcontext()
            if source["size"] <= READ_WITHOUT_SLOT_BYTES
            else runcache.compute_slot(bar, cost, "reading a file")
        )
        with slot:
            data = api.read_user_file(
                source["data"],
                kind,
                arms=opts["arms"] or None,
                scale=None if opts["scale"] == "none" else opts["scale"],
                context=opts["context"] or None,
                limits=LIMITS,
            )
    except queueing.QueueStopped as e:
        st.info(f"{e.message}. Upload the file again to queue it.")
        return None
    except api.SpecError as e:
        lines = "  \n".join(md(line) for line in _message(e).split("\n"))  # one per problem
        st.error(f"**{md(source['name'], 80)}**: {lines}", icon=":material/error:")
        return None
    finally:
        if bar is not None:
            bar.empty()
    st.session_state[PARSED] = (key, data)
    return data


def _key(source: dict, kind: str) -> str:
    return f"{kind}:{source['sha256']}:{json.dumps(options(), sort_keys=True)}"


def _stored(key: str):
    got = st.session_state.get(RESULT)
    return got[2] if got and got[0] == key else None


# --- a reward table ---------------------------------------------------------------------------
def page_body() -> None:
    source, data = upload_section()
    if data is None:
        if source is None:
            st.info("Upload a CSV file or try an example.", icon=":material/upload_file:")
        return
    st.divider()
    if isinstance(data, api.RewardTable):
        key = _key(source, "table")
        yourdata_table.show_table(source, data, options(), key, _stored(key))
    else:
        yourdata_log.show_log(source, data, options(), _key(source, "log"))


__all__ = [
    "page_body",
    "upload_section",
    "file_record",
    "SOURCE",
    "RESULT",
    "UPLOAD",
    "LIMITS",
]
