"""The app's state is typed and declared once: every ``st.session_state`` key is in the table of
:mod:`allseason.ui.keys` (its type, its owner among ``frame.PAGES``, its kind) and the glue
names it by the table's constant, never by a literal; each page's ``reset()`` drops exactly
its form and view keys; the race settings are a :class:`~allseason.ui.state.RaceChoice`; the
pages take their titles and icons from ``frame.PAGES``; fragments get a run's short key and
one function recomputes a run the cache has dropped."""

from __future__ import annotations

import ast
import re
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

import streamlit as st

from allseason import api
from allseason.ui import (
    deployed,
    frame,
    inside,
    keys,
    live,
    paper_runs,
    pattern,
    race_settings,
    runcache,
    state,
    tour,
    when,
    yourdata,
)

ROOT = Path(__file__).resolve().parents[2]
GLUE = sorted((ROOT / "allseason" / "ui").glob("*.py")) + sorted(
    [ROOT / "app.py", *(ROOT / "app_pages").glob("*.py")]
)
RESETS = {  # the page that owns keys: its reset()
    keys.PAGE_PATTERN: pattern.reset,
    keys.PAGE_RACE: race_settings.reset,
    keys.PAGE_INSIDE: inside.reset,
    keys.PAGE_PAPER: paper_runs.reset,
    keys.PAGE_TOUR: tour.reset,
    keys.PAGE_YOUR_DATA: yourdata.reset,
    keys.PAGE_LIVE: live.reset,
    keys.PAGE_WHEN: when.reset,
    keys.PAGE_DEPLOYED: deployed.reset,
}


def _state_accesses(tree: ast.AST):
    """(line, literal) of every session-state access by a string literal: ``ss["k"]``,
    ``ss.get("k")`` / ``pop`` / ``setdefault``, ``"k" in ss``, ``ss.update(k=...)``."""

    def is_state(node) -> bool:
        return (isinstance(node, ast.Name) and node.id == "ss") or (
            isinstance(node, ast.Attribute) and node.attr == "session_state"
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_state(node.value):
            if isinstance(node.slice, ast.Constant | ast.JoinedStr):
                yield node.lineno, ast.unparse(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if is_state(node.func.value) and node.func.attr in ("get", "pop", "setdefault"):
                if node.args and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
                    yield node.lineno, ast.unparse(node.args[0])
            if is_state(node.func.value) and node.func.attr == "update" and node.keywords:
                yield node.lineno, ", ".join(k.arg for k in node.keywords)
        elif isinstance(node, ast.Compare) and any(is_state(c) for c in node.comparators):
            if isinstance(node.left, ast.Constant):
                yield node.lineno, ast.unparse(node.left)


def test_the_glue_names_every_key_by_the_tables_constant():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {literal}"
        for path in GLUE
        for line, literal in _state_accesses(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "use the constants of allseason/ui/keys.py:\n" + "\n".join(found)


def test_no_widget_key_of_the_table_is_typed_as_a_literal():
    """A widget whose value is state takes its key from the table (``key=keys.X``)."""
    names = {k.name for k in keys.TABLE.values() if not k.prefix}
    found = []
    for path in GLUE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "key":
                if isinstance(node.value, ast.Constant) and node.value.value in names:
                    where = f"{path.relative_to(ROOT)}:{node.value.lineno}"
                    found.append(f"{where}: {node.value.value}")
    assert not found, "\n".join(found)


def test_the_table_declares_type_owner_and_kind_of_every_key():
    titles = {title for _, title, _, _ in frame.PAGES}
    for key in keys.TABLE.values():
        assert key.page in titles | {keys.EVERY_PAGE}, key
        assert key.kind in keys.KINDS and key.doc, key
        assert isinstance(key.type, type | tuple), key
    # no two entries claim one key (a prefix would shadow a name)
    for a in keys.TABLE.values():
        for b in keys.TABLE.values():
            if a is not b and a.prefix:
                assert not a.matches(b.name), (a.name, b.name)
    assert keys.declared("hp_lints_alpha") is keys.TABLE[keys.HP]
    assert keys.declared("pb_table_editor_3") is keys.TABLE[keys.PB_TABLE_EDITOR]
    assert keys.declared("pb_download") is None  # a download button's key: not state


def _every_key() -> dict[str, object]:
    out = {k.name + ("x" if k.prefix else ""): 0 for k in keys.TABLE.values()}
    out["dl_steps"] = 0  # a widget key that is not state: no page's reset touches it
    return out


@pytest.mark.parametrize("page", sorted(RESETS))
def test_each_page_resets_exactly_its_form_and_view_keys(page, monkeypatch):
    ss = _every_key()
    monkeypatch.setattr(st, "session_state", ss)
    RESETS[page]()
    dropped = set(_every_key()) - set(ss)
    want = {
        k.name + ("x" if k.prefix else "")
        for k in keys.TABLE.values()
        if k.page == page and k.kind in ("form", "view")
    }
    assert dropped == want


def test_every_page_that_owns_a_key_has_a_reset():
    owners = {k.page for k in keys.TABLE.values()} - {keys.EVERY_PAGE}
    assert owners == set(RESETS)


def test_the_race_uploads_reset_keeps_its_own_messages(monkeypatch):
    ss = _every_key()
    monkeypatch.setattr(st, "session_state", ss)
    race_settings.reset(form_only=True)
    assert keys.RACE_POLICIES not in ss and "hp_x" not in ss
    assert keys.RACE_UPLOAD in ss and keys.RACE_UPLOAD_ERROR in ss and keys.RACE_CHART in ss


def test_the_race_choice_is_a_frozen_value():
    choice = state.default_choice()
    assert isinstance(choice, state.RaceChoice)
    assert choice.policies == tuple(api.DEFAULT_POLICIES) and choice.n_seeds == api.DEFAULT_SEEDS
    assert choice == state.default_choice()  # compared by value
    with pytest.raises(FrozenInstanceError):
        choice.n_seeds = 3
    other = choice.with_params("lints", {"alpha": 2.0})
    assert other.params["lints"] == {"alpha": 2.0} and choice.params["lints"] != {"alpha": 2.0}
    race = state.race(choice, api.Scenario())
    assert [p.name for p in race.policies] == list(choice.policies)
    assert state.choice_of(race.policies, race.n_seeds) == choice


def test_pages_take_title_and_icon_from_frame_pages():
    """No page script repeats an icon or its own title: ``frame.page`` and ``frame.page_link``
    read them from ``frame.PAGES``."""
    titles = {title for _, title, _, _ in frame.PAGES}
    for path in [*(ROOT / "app_pages").glob("*.py"), *(ROOT / "allseason" / "ui").glob("*.py")]:
        if path.name == "frame.py":
            continue
        text = path.read_text(encoding="utf-8")
        if path.parent.name == "app_pages":
            assert ":material/" not in text, path.name  # no icon typed in a page script
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("frame.page", "page"):
                args = [a.value for a in node.args if isinstance(a, ast.Constant)]
                assert not set(args) & titles, (path.name, args)
                assert not any(k.arg in ("icon", "title") for k in node.keywords), path.name
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.page_link":
                raise AssertionError(f"{path.name}: use frame.page_link (the icon of PAGES)")


def test_fragments_get_a_short_key_and_one_function_recomputes(monkeypatch):
    sc = api.Scenario.from_preset("regular", horizon=300)
    race = api.Race(sc, api.policy_specs(["lints"]), 1)
    key = runcache.key_of(race)
    assert re.fullmatch(r"[0-9a-f]{16}", key) and len(race.to_json()) > len(key)
    monkeypatch.setattr(st, "session_state", {keys.LAST_RACE: race})
    runcache.store().clear()
    run = runcache.get_or_recompute(key)  # not in the cache: recomputed from the session's race
    assert run.key == key and run.race == race and runcache.store().get(key) is run
    assert runcache.get_or_recompute(key) is run  # then from the cache
    assert runcache.last_run() is run
    with pytest.raises(LookupError):
        runcache.get_or_recompute("0" * 16)
    assert not hasattr(runcache, "run_of") and not hasattr(runcache, "partial_steps")
    runcache.store().clear()


def test_the_values_in_a_session_have_the_declared_types():
    """A walk (Pattern builder, a small race, Inside All-Season, Live): every declared key in
    the session holds a value of its declared type."""
    from conftest import open_app_page

    at = open_app_page("app_pages/1_Pattern_builder.py")
    at.session_state[keys.SCENARIO] = api.Scenario.from_preset("regular", horizon=300)
    at.session_state[keys.PB_RESEED] = True
    at.run()
    at.switch_page("app_pages/2_Race.py").run()
    at.multiselect(key=keys.RACE_POLICIES).set_value(["allseason-sw", "lints"]).run()
    at.button(key="race_run").click().run()
    at.switch_page("app_pages/3_Inside_All-Season.py").run()
    at.switch_page("app_pages/8_Live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    seen = at.session_state.to_dict()
    checked = 0
    for name, value in seen.items():
        entry = keys.declared(name)
        if entry is not None and value is not None:
            assert isinstance(value, entry.type), (name, type(value), entry.type)
            checked += 1
    for name in (keys.SCENARIO, keys.RACE_CHOICE, keys.LAST_RACE, keys.LIVE_RUN):
        assert isinstance(seen[name], keys.TABLE[name].type), name
    assert checked >= 12, checked
