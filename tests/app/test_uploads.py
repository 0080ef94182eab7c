"""Files a user sends: the Pattern builder's upload (a JSON scenario or a CSV segment table)
under ``streamlit.testing.v1.AppTest``, and the CLI's ``--pattern FILE.csv``.

A good file becomes the scenario; a bad or oversized one is reported with ``st.error`` naming
the problem (segment/row, line, field) and the pattern in force is kept. AppTest does not go
through the server, so ``server.maxUploadSize`` does not apply here: these tests check the
limit the app enforces itself (``api.MAX_INPUT_BYTES``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.cli import main as cli_main
from allseason.ui import keys, state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
BUILDER = "app_pages/1_Pattern_builder.py"
TIMEOUT = 90
START = api.Scenario(
    segments=((0, 400), (1, 300), (0, 300)),
    d=3,
    n_arms=4,
    sigma2=0.2,
    batch_size=5,
    seed=7,
    preset="custom",
)


def open_builder(scenario: api.Scenario = START) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state[state.SCENARIO] = scenario
    at.session_state["pb_reseed"] = True
    at.switch_page(BUILDER)
    at.run()
    assert not at.exception
    return at


def upload(at: AppTest, name: str, data: bytes | str, mime: str = "text/csv") -> None:
    if isinstance(data, str):
        data = data.encode()
    at.file_uploader(key="pb_upload").set_value((name, data, mime))
    at.run()


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def assert_kept(at: AppTest, scenario: api.Scenario = START) -> None:
    assert at.session_state[state.SCENARIO] == scenario
    assert at.selectbox(key="pb_preset").value == scenario.preset
    assert at.slider(key="pb_d").value == scenario.d


def test_good_csv_replaces_the_pattern_and_keeps_the_environment():
    at = open_builder()
    upload(at, "seasons.csv", "state,length\n0,500\n1,250\n2,250\n0,500\n")
    assert_clean(at)
    assert errors(at) == []
    assert any("Loaded seasons.csv" in s.value for s in at.success)
    sc = at.session_state[state.SCENARIO]
    assert sc.segments == ((0, 500), (1, 250), (2, 250), (0, 500)) and sc.preset == "custom"
    assert (sc.d, sc.n_arms, sc.sigma2, sc.batch_size, sc.seed) == (3, 4, 0.2, 5, 7)
    assert at.selectbox(key="pb_preset").value == "custom"
    table = at.data_editor[0].value
    assert table["state"].tolist() == [0, 1, 2, 0] and table["length"].tolist() == [
        500,
        250,
        250,
        500,
    ]
    assert at.query_params["segments"] == "0x500_1x250_2x250_0x500"


def test_spreadsheet_csv_with_bom_semicolons_and_crlf_is_read():
    at = open_builder()
    upload(at, "excel.csv", "\ufeffLength;State\r\n500;0\r\n250;1\r\n\r\n".encode("utf-8"))
    assert_clean(at)
    assert errors(at) == []
    assert at.session_state[state.SCENARIO].segments == ((0, 500), (1, 250))


@pytest.mark.parametrize(
    "name, data, needles",
    [
        ("bad.csv", "state,length\n0,400\n1,abc\n", ["Segment 2, length", "line 3", "'abc'"]),
        ("empty.csv", "state,length\n0,400\n1,\n", ["Segment 2, length", "is empty"]),
        (
            "formula.csv",
            "state,length\n=cmd|' /C calc'!A0,5\n",
            ["Segment 1, state", "must be an integer"],
        ),
        (
            "path.csv",
            "state,length\n0,5\n1,../../etc/passwd\n",
            ["Segment 2, length", "must be an integer"],
        ),
        ("noheader.csv", "0,400\n1,300\n", ["File", "header state,length"]),
        ("lengths.csv", "length\n400\n300\n", ["missing: state"]),
        ("extra.csv", "state,length,note\n0,400,x\n", ["unknown column 'note'"]),
        ("cells.csv", "state,length\n0,400,7\n", ["Segment 1", "3 cells"]),
        ("zero.csv", "state,length\n0,400\n1,0\n", ["Segment 2, length", "between 1 and"]),
        ("long.csv", "state,length\n0,40000\n1,20000\n", ["at most 50,000 steps"]),
        ("states.csv", "state,length\n0,40\n20,40\n", ["numbered 0 to 11"]),
        ("binary.csv", b"\x00\xff\xfe\x00garbage", ["UTF-8"]),
        ("header-only.csv", "state,length\n", ["no rows"]),
        ("broken.json", "{not json", ["not valid JSON"]),
        ("deep.json", "[" * 50_000, ["nested too deeply"]),
    ],
)
def test_bad_file_is_reported_and_the_pattern_kept(name, data, needles):
    at = open_builder()
    upload(at, name, data)
    assert_clean(at)
    found = [e for e in errors(at) if f"{name} was not loaded" in e]
    assert found, errors(at)
    assert "the pattern was not changed" in found[0]
    for needle in needles:
        assert needle in found[0], found[0]
    assert_kept(at)


def test_other_file_types_never_reach_the_app():
    """The uploader takes .json and .csv only; Streamlit itself refuses anything else on the
    server (a browser would not even offer it). The pattern is kept, the details are not
    shown (showErrorDetails = "none"), and the session carries on."""
    at = open_builder()
    upload(at, "pattern.txt", "state,length\n0,5\n", "text/plain")
    assert "Traceback" not in " ".join(e.value for e in at.exception)
    assert at.session_state[state.SCENARIO] == START
    at.run()
    assert_clean(at)
    upload(at, "good.csv", "state,length\n1,100\n0,100\n")
    assert_clean(at)
    assert at.session_state[state.SCENARIO].segments == ((1, 100), (0, 100))


@pytest.mark.parametrize("size", [api.MAX_INPUT_BYTES + 1, 1_048_576, 3_000_000])
def test_oversized_file_is_rejected_before_it_is_read(size):
    """1,048,576 bytes passes the server's maxUploadSize = 1 (MB) but not the app's limit."""
    head = b"state,length\n0,5\n"
    at = open_builder()
    upload(at, "big.csv", head + b"\n" * (size - len(head)))
    assert_clean(at)
    found = [e for e in errors(at) if "big.csv was not loaded" in e]
    assert found and f"is {size:,} bytes; at most 1,000,000 bytes" in found[0], errors(at)
    assert_kept(at)


def test_bad_then_good_file_clears_the_error():
    at = open_builder()
    upload(at, "bad.csv", "state,length\n0,-1\n")
    assert any("bad.csv was not loaded" in e for e in errors(at))
    upload(at, "good.csv", "state,length\n1,100\n0,100\n")
    assert_clean(at)
    assert errors(at) == []
    assert at.session_state[state.SCENARIO].segments == ((1, 100), (0, 100))


def test_partial_json_keeps_the_environment_and_is_custom():
    at = open_builder()
    upload(
        at,
        "mine.json",
        json.dumps({"segments": [[0, 300], [1, 200]], "seed": 11}),
        "application/json",
    )
    assert_clean(at)
    assert errors(at) == []
    sc = at.session_state[state.SCENARIO]
    assert sc.segments == ((0, 300), (1, 200)) and sc.preset == "custom" and sc.seed == 11
    assert (sc.d, sc.n_arms, sc.sigma2, sc.batch_size) == (3, 4, 0.2, 5)


def test_download_buttons_offer_json_and_csv():
    at = open_builder()
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download scenario (JSON)" in labels and "Download segment table (CSV)" in labels
    # what the CSV button serves reads back as the same pattern
    assert api.parse_scenario(START.to_csv(), "csv", defaults=START) == START


# --- the CLI reads the same files through the same entry point ------------------------------
def test_cli_runs_a_csv_segment_table(tmp_path, capsys):
    f = tmp_path / "seasons.csv"
    f.write_text("state,length\n0,100\n1,50\n0,100\n")
    assert (
        cli_main(
            [
                "run",
                "--pattern",
                str(f),
                "--policies",
                "lints",
                "--seeds",
                "1",
                "--d",
                "3",
                "--json",
            ]
        )
        == 0
    )
    assert "lints" in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("state,length\n0,100\n1,=1+1\n", "segments[2].length"),
        ("0,100\n", "header"),
        ("state,length\n" + "0,1\n" * 300_000, "larger than"),
    ],
)
def test_cli_bad_csv_is_one_line_exit_2(tmp_path, capsys, text, needle):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    assert cli_main(["run", "--pattern", str(f), "--policies", "lints", "--seeds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and needle in err and len(err.strip().splitlines()) == 1


def test_what_the_user_sent_is_shown_as_text_not_markdown():
    at = open_builder()
    upload(at, "[click](http://x)_$1$.csv", "state,length\n0,`$x$`\n")
    assert_clean(at)
    found = [e for e in errors(at) if "was not loaded" in e]
    assert found and found[0].startswith(r"\[click\](http\:" + "\u2060" + r"//x)\_\$1\$.csv"), (
        errors(at)
    )
    assert r"\`\$x\$\`" in found[0]
    assert_kept(at)


# --- the Race page: a downloaded race JSON sent back ----------------------------------------
RACE_PAGE = "app_pages/2_Race.py"
TINY = api.Scenario(
    segments=((0, 120), (1, 80)), d=2, n_arms=3, sigma2=0.2, batch_size=5, seed=5, preset="custom"
)


def open_race_page() -> AppTest:
    at = open_app_page(RACE_PAGE, timeout=TIMEOUT)
    assert_clean(at)
    return at


def upload_race(at: AppTest, name: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode()
    at.file_uploader(key="race_upload").set_value((name, data, "application/json"))
    at.run()


def test_race_json_round_trip():
    # a race set on one session's Race page and run: its "Race JSON" (the run's key) ...
    sender = open_race_page()
    sender.session_state[state.SCENARIO] = TINY
    sender.run()
    sender.multiselect(key="race_policies").set_value(["allseason-sw", "sw-lints", "bob"])
    sender.slider(key="race_seeds").set_value(2)
    sender.run()
    sender.number_input(key="hp_sw-lints_tau").set_value(40)
    sender.run()
    sender.button(key="race_run").click()
    sender.run()
    assert_clean(sender)
    sent = sender.session_state[keys.LAST_RACE]
    text = sent.to_json()
    assert sent.scenario == TINY and sent.n_seeds == 2
    # ... uploaded in a fresh session gives the same settings, and the same race
    at = open_race_page()
    upload_race(at, "race.json", text)
    assert_clean(at)
    assert not errors(at), errors(at)
    assert any("Loaded race.json" in s.value for s in at.success)
    assert at.session_state[state.SCENARIO] == TINY
    assert at.multiselect(key="race_policies").value == ["allseason-sw", "sw-lints", "bob"]
    assert at.slider(key="race_seeds").value == 2
    assert at.number_input(key="hp_sw-lints_tau").value == 40
    assert state.race_to_query(at.session_state[state.RACE_CHOICE])["sw-lints.tau"] == "40"
    # the same race: served from the cache, no need to run it again
    assert any("cache" in s.value.lower() or "computed" in s.value.lower() for s in at.success), [
        s.value for s in at.success
    ]


def _race_json(**changes) -> str:
    data = api.Race(TINY, api.policy_specs(["lints", "sw-lints"]), 2).to_dict()
    data.update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(
    "data, needle",
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "must be a JSON object"),
        (_race_json(n_seeds=0), "Seeds: must be between 1"),
        (_race_json(n_seeds=50), "Seeds"),
        (_race_json(policies=[{"name": "nope"}]), "nope"),
        (
            _race_json(policies=[{"name": "lints"}, {"name": "lints", "label": "lints-2"}]),
            "two contestants of the policy lints",
        ),
        (_race_json(policies=[{"name": "lints", "label": "my lints"}]), "labelled differently"),
        (_race_json(policies=[{"name": "lints", "params": {"sigma2": 5.0}}]), "scenario's sigma2"),
    ],
)
def test_race_json_bad_file_is_reported_and_settings_kept(data, needle):
    at = open_race_page()
    before = at.session_state[state.RACE_CHOICE]  # frozen: compared by value below
    upload_race(at, "race.json", data)
    assert_clean(at)
    found = [e for e in errors(at) if "was not loaded" in e]
    assert found and needle in found[0], errors(at)
    assert at.session_state[state.RACE_CHOICE] == before
    assert at.session_state[state.SCENARIO] == api.Scenario()


def test_race_json_oversized_file_is_refused():
    at = open_race_page()
    upload_race(at, "big.json", " " * (api.MAX_INPUT_BYTES + 1) + "{}")
    assert_clean(at)
    found = [e for e in errors(at) if "was not loaded" in e]
    assert found and "at most" in found[0] and "1 MB" in found[0], errors(at)
    assert at.session_state[state.SCENARIO] == api.Scenario()
