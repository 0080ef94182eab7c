"""Claims worded as measured: three over-strong wordings an audit against the paper
found must not come back, in the README, the docs, the engine and app texts (allseason/, which
holds the tour, the docstrings and the CLI's help) and the pages.

1. Carried weights (fixed share) are our reconstruction, not the paper's text: the text's
   displayed equation for omega is Algorithm 3's last-batch product. No "follow the text"
   section may cover the weights.
2. "Carried weights reach the paper's 0.74" on MNIST ten-arm regular was one run (tau = 500,
   N_max = 5, one seed); the tuned table cell is 0.72 +- 0.01.
3. D-LinTS samples from N(mu, M^-1), wider than the V^-1 V~ V^-1 of D-LinUCB and of Kim &
   Tewari's D-LinTS: disclosed where D-LinTS is described.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _files() -> list[Path]:
    out = [ROOT / "README.md", ROOT / "app.py"]
    out += sorted((ROOT / "docs").rglob("*.md"))
    out += sorted((ROOT / "allseason").rglob("*.py"))
    out += sorted((ROOT / "app_pages").glob("*.py"))
    return [p for p in out if p.is_file()]


FILES = _files()
TEXT = {p: p.read_text(encoding="utf-8") for p in FILES}
# the old wordings, as regular expressions over text with whitespace collapsed (so a phrase
# broken across lines or string literals' line ends still matches)
FORBIDDEN = {
    "carried weights reach the paper's number": r"reach(es|ed)?\s+the\s+paper'?s\s+(ten-arm\s+\w+\s+)?(number\s+)?\(?0\.7",
    "weights carried as the paper's text": r"weights\s+are\s+carried\s+from\s+batch\s+to\s+batch\s+\(fixed\s+share\);\s+the\s+printed\s+rule\s+is\s+one\s+setting\s+away",
    "the app's pointer to the old heading": r"why\s+carried\s+weights\s+are\s+the\s+default:\s+readme",
    "fixed share as what the text says": r"(the\s+text|the\s+paper'?s\s+text)\s+(says|prescribes|describes)\s+(carried|fixed[\s-]share)",
}
FOLLOW_HEADING = re.compile(
    r"^#+\s*Where we follow the paper'?s text rather than its "
    r"pseudo-code\s*$",
    re.M | re.I,
)


def _flat(text: str) -> str:
    text = re.sub(r'"\s*\n\s*(f?")', " ", text)  # join adjacent string literals
    return re.sub(r"\s+", " ", text)


def test_the_patterns_catch_the_old_wordings():
    old = (
        "they reach the paper's ten-arm MNIST number (0.74 on the regular pattern; ...)",
        "- **Weights are carried from batch to batch (fixed share); the printed rule is one "
        "setting away.**",
        'st.caption("Why carried weights are the default: README, *Where we follow the '
        'paper\'s "\n               "text*.',
    )
    for text, (name, pattern) in zip(old, list(FORBIDDEN.items())[:3]):
        assert re.search(pattern, _flat(text), re.I), name


@pytest.mark.parametrize("name", list(FORBIDDEN))
def test_no_over_strong_wording(name):
    pattern = re.compile(FORBIDDEN[name], re.I)
    hits = [
        f"{p.relative_to(ROOT)}: {m.group(0)!r}"
        for p in FILES
        for m in pattern.finditer(_flat(TEXT[p]))
    ]
    assert not hits, hits


def test_follow_the_text_sections_do_not_cover_the_weights():
    """Under the heading "Where we follow the paper's text rather than its pseudo-code", up to
    the next heading, no item is about carried weights (it may say they are not on the list)."""
    seen = 0
    for p in FILES:
        if p.suffix != ".md":
            continue
        for m in FOLLOW_HEADING.finditer(TEXT[p]):
            seen += 1
            rest = TEXT[p][m.end() :]
            section = (
                rest[: re.search(r"^#", rest, re.M).start()]
                if re.search(r"^#", rest, re.M)
                else rest
            )
            items = [line for line in section.splitlines() if line.startswith("- ")]
            for item in items:
                assert not re.search(r"carried|fixed[\s-]share|weighting", item, re.I), (p, item)
    assert seen >= 1  # the heading still exists, for the items the text does decide


def test_the_one_seed_number_is_said_to_be_one_seed():
    """0.736 (carried weights, MNIST ten-arm regular) was one run on one seed: wherever it is
    quoted, "one seed" is said within the same sentence or the next."""
    for p in FILES:
        flat = _flat(TEXT[p])
        for m in re.finditer(r"0\.736\b", flat):
            around = flat[max(0, m.start() - 300) : m.end() + 300]
            assert re.search(r"one\s+seed", around, re.I), (p, around)


def test_d_lints_covariance_is_disclosed():
    baselines = _flat((ROOT / "docs" / "baselines.md").read_text(encoding="utf-8"))
    assert re.search(r"by default D-LinTS samples from \*\*N\(μ, M⁻¹\)\*\*", baselines, re.I)
    assert "Kim & Tewari" in baselines and "V⁻¹ Ṽ V⁻¹" in baselines and "wider" in baselines
    fidelity = _flat((ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8"))
    assert "By default D-LinTS samples from N(μ, M⁻¹)" in fidelity
