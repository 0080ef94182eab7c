"""Frozen, validated configuration: a scenario (pattern + environment + batches + seed), the
policies to race, and the race itself.

Every value a user sends (CLI flag or file, JSON or CSV upload, URL) enters through ONE entry
point, :func:`parse_scenario`, and is either accepted as a valid :class:`Scenario` or rejected
with a ``SpecError`` whose ``field`` names the input. Text is size-checked before it is read
(``MAX_INPUT_BYTES``), parsed with ``json`` / ``csv`` only, and never evaluated; nothing a
user sends is used as a path.

    >>> sc = parse_scenario('{"segments": [[0, 500], [1, 300]], "d": 3}')
    >>> sc.horizon, sc.d, sc.preset
    (800, 3, 'custom')
    >>> parse_scenario({"segments": [[0, 500], [1, -3]]}, "dict")
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: segments[2].length: must be between 1 and 200000, got -3
    >>> PolicySpec("allseason-sw", {"tau": 20}).params
    (('tau', 20),)
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

from .envs.patterns import FIXED_PRESETS, PAPER_SYNTHETIC, PRESETS, Pattern, preset
from .errors import SpecError
from .errors import show as _show
from .limits import LIMITS, MAX_INPUT_BYTES, NOISE_RANGE, Limits
from .links import QUERY_FIELDS, decode_batch, decode_segments, encode_batch, encode_segments
from .policies import check_params, hyperparameters, policy_class

# the bounds of one request (the app may tighten them) and of the text read: allseason/limits.py
INPUT_KINDS = ("json", "csv", "query", "dict")
ENVIRONMENT_FIELDS = ("d", "n_arms", "sigma2", "batch_size", "seed")
CSV_COLUMNS = ("state", "length")


def _int(field, value, lo, hi):
    bad = SpecError(field, f"must be an integer, got {_show(value)}")
    if isinstance(value, bool) or value is None:
        raise bad
    n = value if isinstance(value, int) else None
    if n is None and isinstance(value, str):
        try:
            n = int(value.strip())  # exact, also beyond 2**53 (a seed in a link)
        except ValueError:
            pass
    if n is None:
        try:
            f = float(value)
        except (TypeError, ValueError, OverflowError):
            raise bad from None
        if math.isinf(f) and isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            raise SpecError(field, f"must be between {lo} and {hi}, got {_show(value.strip())}")
        if not math.isfinite(f) or f != int(f):
            raise bad
        n = int(f)
    if not lo <= n <= hi:
        raise SpecError(
            field, f"must be between {lo} and {hi}, got {_show(n)}", bounds=(lo, hi), got=n
        )
    return n


def _float(field, value, lo, hi, *, lo_open=False):
    if isinstance(value, bool) or value is None:
        raise SpecError(field, f"must be a number, got {_show(value)}")
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise SpecError(field, f"must be a number, got {_show(value)}") from None
    if not math.isfinite(f) or f < lo or f > hi or (lo_open and f == lo):
        rng = f"({lo:g}, {hi:g}]" if lo_open else f"[{lo:g}, {hi:g}]"
        raise SpecError(field, f"must be a number in {rng}, got {_show(value)}")
    return f


@dataclass(frozen=True)
class Scenario:
    """A seasonal problem: the pattern, the linear environment, how rewards are batched, seed.

    segments: ((state, length), ...); d: dimension; n_arms: K; sigma2: reward noise variance;
    batch_size: B, or a tuple of batch sizes repeated in turn (inhomogeneous batches);
    seed: root of every random stream; preset: the preset name it came from, if any.
    """

    segments: tuple[tuple[int, int], ...] = PAPER_SYNTHETIC
    d: int = 5
    n_arms: int = 5
    sigma2: float = 0.1
    batch_size: int | tuple[int, ...] = 1
    seed: int = 0
    preset: str = "paper-synthetic"

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        segs = self.segments
        if not isinstance(segs, (list, tuple)) or not segs:
            raise SpecError("segments", "must be a non-empty list of [state, length] pairs")
        if len(segs) > LIMITS["n_segments"]:
            raise SpecError("segments", f"at most {LIMITS['n_segments']} segments")
        clean = []
        for i, seg in enumerate(segs):
            if not isinstance(seg, (list, tuple)) or len(seg) != 2:
                raise SpecError("segments", f"segment {i + 1} must be a [state, length] pair")
            clean.append(
                (
                    _int(f"segments[{i + 1}].state", seg[0], 0, LIMITS["n_states"] - 1),
                    _int(f"segments[{i + 1}].length", seg[1], 1, LIMITS["horizon"]),
                )
            )
        set_("segments", tuple(clean))
        if self.horizon > LIMITS["horizon"]:
            raise SpecError(
                "segments",
                f"the horizon (sum of lengths) must be at most "
                f"{LIMITS['horizon']}, got {self.horizon}",
            )
        set_("d", _int("d", self.d, 1, LIMITS["d"]))
        set_("n_arms", _int("n_arms", self.n_arms, 2, LIMITS["n_arms"]))
        set_("sigma2", _float("sigma2", self.sigma2, *NOISE_RANGE))  # 1 / sigma2 stays finite
        bs = self.batch_size
        if isinstance(bs, (list, tuple)):
            if not bs or len(bs) > 1000:
                raise SpecError("batch_size", "a list of batch sizes must have 1 to 1000 items")
            sizes = tuple(_int("batch_size", b, 1, LIMITS["batch_size"]) for b in bs)
            set_("batch_size", sizes if len(sizes) > 1 else sizes[0])  # [5] is 5: one form
        else:
            set_("batch_size", _int("batch_size", bs, 1, LIMITS["batch_size"]))
        set_("seed", _int("seed", self.seed, 0, 2**63 - 1))
        if self.preset not in PRESETS + ("custom",):
            raise SpecError(
                "preset",
                f"must be one of {', '.join(PRESETS + ('custom',))}, got {_show(self.preset)}",
            )
        if self.preset in FIXED_PRESETS:  # a world from data: its pattern and shape are fixed
            from .envs import weather

            weather.check_scenario(self)

    @property
    def pattern(self) -> Pattern:
        return Pattern(self.segments)

    @property
    def horizon(self) -> int:
        return sum(n for _, n in self.segments)

    def batch_ends(self):
        """Index of the last step of every batch, shape (n_batches,)."""
        import numpy as np

        sizes = self.batch_size if isinstance(self.batch_size, tuple) else (self.batch_size,)
        reps = -(-self.horizon // sum(sizes))
        ends = np.cumsum(np.tile(sizes, reps)) - 1
        ends = ends[ends < self.horizon - 1]
        return np.append(ends, self.horizon - 1).astype(np.int64)

    @classmethod
    def from_preset(
        cls, name: str, *, horizon: int | None = None, n_states: int | None = None, **kw
    ) -> Scenario:
        """A scenario on a preset pattern (see :func:`allseason.envs.preset`); n_states
        None is 3. A preset from data (``seattle-weather``) fixes the pattern and d, n_arms,
        sigma2, batch_size (:data:`allseason.envs.weather.FIXED`): left out, they take its
        values; given otherwise, a SpecError names the field."""
        if name not in PRESETS:
            raise SpecError("preset", f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        if horizon is not None:
            horizon = _int("horizon", horizon, 1, LIMITS["horizon"])
        if n_states is not None:
            n_states = _int("n_states", n_states, 1, LIMITS["n_states"])
        if name in FIXED_PRESETS:
            from .envs import weather

            kw = {**weather.FIXED, **kw}
        pattern = preset(name, horizon, n_states)  # SpecError("horizon", ...) if too short
        return cls(segments=pattern.segments, preset=name, **kw)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["segments"] = [list(s) for s in self.segments]
        if isinstance(self.batch_size, tuple):
            out["batch_size"] = list(self.batch_size)
        return out

    @classmethod
    def from_dict(cls, data) -> Scenario:
        """Validate a plain dict (e.g. parsed JSON); unknown keys are an error."""
        if not isinstance(data, dict):
            raise SpecError("scenario", "must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            name = sorted(map(str, unknown))[0]
            raise SpecError(
                name[:40] if name.strip() else "scenario",
                f"unknown field {name[:40]!r}; known: {', '.join(sorted(known))}",
            )
        return cls(**data)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): the cache key of a scenario."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Scenario:
        """``parse_scenario(text, "json")``: a JSON object, or a bare list of segments."""
        return parse_scenario(text, "json")

    def to_query(self) -> dict[str, str]:
        """Link parameters that rebuild this scenario exactly through
        ``parse_scenario(query, "query")``; an untouched preset is written in short form
        (``preset``, ``horizon``, ``n_states``), any other pattern as ``segments``."""
        q = {"preset": self.preset}
        n_states = max(s for s, _ in self.segments) + 1
        short = False
        if self.preset != "custom":
            try:
                short = (
                    Scenario.from_preset(
                        self.preset, horizon=self.horizon, n_states=n_states
                    ).segments
                    == self.segments
                )
            except SpecError:
                short = False
        if short:
            q["horizon"] = str(self.horizon)
            if self.preset != "paper-synthetic":
                q["n_states"] = str(n_states)
        else:
            q["segments"] = encode_segments(self.segments)
        q.update(
            d=str(self.d),
            n_arms=str(self.n_arms),
            sigma2=f"{self.sigma2!r}",
            batch_size=encode_batch(self.batch_size),
            seed=str(self.seed),
        )
        return q

    def to_csv(self) -> str:
        """The segment table as CSV (header ``state,length``), as ``parse_scenario(text,
        "csv")`` reads it. Every cell is an integer, so no spreadsheet reads a formula."""
        return "state,length\n" + "".join(f"{s},{n}\n" for s, n in self.segments)


# --- the one entry point for user input -----------------------------------------------------
class Rejected(NamedTuple):
    """A link parameter that :func:`parse_scenario` left out (kind "query", lenient mode):
    ``param`` is its name (None: the pattern as a whole), ``value`` what was sent."""

    param: str | None
    value: object
    error: SpecError


def file_kind(name: str) -> str:
    """The ``kind`` of a file by its name's ending: 'json' or 'csv'. The name is only looked
    at, never opened."""
    ending = str(name).lower().rsplit(".", 1)[-1] if "." in str(name) else ""
    if ending not in ("json", "csv"):
        raise SpecError(
            "file",
            f"must be a .json scenario or a .csv segment table, got {_show(str(name)[-60:])}",
        )
    return ending


def parse_scenario(
    source,
    kind: str = "json",
    *,
    defaults=None,
    limits: Limits = LIMITS,
    rejected: list | None = None,
    max_bytes: int = MAX_INPUT_BYTES,
) -> Scenario:
    """THE entry point for scenarios a user sends: returns a valid :class:`Scenario` or raises
    :class:`SpecError` whose ``field`` names the input (a scenario field such as ``d`` or
    ``segments[3].length``, or ``file`` / ``query`` / ``scenario`` for the whole input, or an
    unknown key as sent). Nothing else escapes; nothing is evaluated or opened.

    kind
        ``"json"``: text or bytes (at most ``max_bytes``) holding a JSON object with the fields
        of :class:`Scenario` (unknown keys are an error; segments without a preset are a
        custom pattern), or a bare list of ``[state, length]`` segments (a custom pattern).
        ``"csv"``: text or bytes (UTF-8, or UTF-16 with a BOM; at most ``max_bytes``) of a segment
        table: first the header, which must name exactly the columns ``state`` and
        ``length`` (any order and case; ``,`` ``;`` or tab between cells), then one row per
        segment. Blank lines and trailing empty cells are skipped. A table of lengths only
        is refused: which state each row is in cannot be guessed. The result is a custom
        pattern; errors name the segment (= data row) and say the line of the file.
        ``"query"``: a mapping of link parameters (``QUERY_FIELDS``; see
        :meth:`Scenario.to_query`): a preset with ``horizon`` and ``n_states``, or
        ``segments=0x1500_1x1000``; ``batch_size=10_20`` or ``10,20``. Values are strings,
        or already numbers/lists (the CLI's flags).
        ``"dict"``: an already parsed JSON value (as for "json").
    defaults
        A Scenario or a mapping giving the environment fields (``d``, ``n_arms``,
        ``sigma2``, ``batch_size``, ``seed``; None values are skipped) that the source leaves
        out. The pattern always comes from the source; for "query" in lenient mode a Scenario
        here is also the fallback when the link's pattern is unusable.
    limits
        The bounds the result must be within (default: the engine's :data:`LIMITS`; the app
        passes :data:`APP_LIMITS`). A value beyond them is a SpecError that quotes them, also
        when it is beyond the engine's too (:func:`check_limits`).
    rejected
        "query" only. None (default): the first bad parameter raises. A list: lenient mode,
        as for a link: every parameter is checked on its own, a bad one is appended as a
        :class:`Rejected` and left out, the others still apply, and a scenario is always
        returned (the defaults' pattern when the link's is unusable).
    """
    if kind not in INPUT_KINDS:
        raise SpecError("kind", f"must be one of {', '.join(INPUT_KINDS)}, got {_show(kind)}")
    env = _environment(defaults)
    if kind == "query":
        return _from_query(source, env, defaults, limits, rejected, max_bytes)
    lines = None
    if kind == "json":
        data = _load_json(source, max_bytes)
    elif kind == "csv":
        segments, lines = _read_csv(source, max_bytes)
        data = {"segments": segments, "preset": "custom"}
    else:
        data = source
    if isinstance(data, list):  # a bare list of [state, length] segments
        data = {"segments": data, "preset": "custom"}
    if not isinstance(data, dict):
        raise SpecError("scenario", "must be a JSON object (or a list of [state, length] segments)")
    if "segments" in data and "preset" not in data:  # hand-made segments: a custom pattern
        data = {**data, "preset": "custom"}
    try:
        sc = Scenario.from_dict({**env, **data})
    except SpecError as e:
        e = _said_within(e, limits)
        m = re.match(r"segments\[(\d+)\]", e.field)
        if lines and m and 1 <= int(m[1]) <= len(lines):
            raise SpecError(
                e.field, f"{e.message} (line {lines[int(m[1]) - 1]} of the file)"
            ) from None
        raise e from None
    return check_limits(sc, limits)


def check_limits(scenario: Scenario, limits: Limits = LIMITS) -> Scenario:
    """``scenario`` if it is within ``limits``, else a SpecError naming the field and quoting
    the bound.

    Parameters
    ----------
    scenario
        A valid scenario (so within the engine's :data:`LIMITS`).
    limits
        The bounds, e.g. the app's :data:`APP_LIMITS`.

        >>> check_limits(Scenario(d=30), APP_LIMITS)
        Traceback (most recent call last):
        ...
        allseason.errors.SpecError: d: at most 20 in this app, got 30
    """
    where, hint = limits.where, (f"; {limits.hint}" if limits.hint else "")
    horizon, top = scenario.horizon, limits["horizon"]
    if horizon > top:
        raise SpecError(
            "horizon",
            f"at most {top:,} steps{where} (got {horizon:,}){hint}",
            bounds=(1, top),
            got=horizon,
        )
    if len(scenario.segments) > limits["n_segments"]:
        raise SpecError("segments", f"at most {limits['n_segments']:,} segments{where}")
    n_states = max(s for s, _ in scenario.segments) + 1
    if n_states > limits["n_states"]:
        raise SpecError(
            "segments",
            f"states are numbered 0 to {limits['n_states'] - 1}{where} (got state {n_states - 1})",
        )
    for name in ("d", "n_arms"):
        value = getattr(scenario, name)
        if value > limits[name]:
            raise SpecError(
                name,
                f"at most {limits[name]}{where}, got {value}",
                bounds=(1 if name == "d" else 2, limits[name]),
                got=value,
            )
    sizes = (
        scenario.batch_size if isinstance(scenario.batch_size, tuple) else (scenario.batch_size,)
    )
    if max(sizes) > limits["batch_size"]:
        raise SpecError("batch_size", f"at most {limits['batch_size']:,}{where}")
    return scenario


def _said_within(err: SpecError, limits: Limits) -> SpecError:
    """A number of steps beyond the engine's bounds is beyond tighter ``limits`` too: the error
    quotes theirs (a link's horizon of 10**6 in the app: the app's 50,000, not 200,000)."""
    steps = err.field == "horizon" or err.field.endswith(".length")
    if limits is LIMITS or not steps or not isinstance(err.got, int):
        return err
    top, where = limits["horizon"], limits.where
    if err.got > top:
        hint = f"; {limits.hint}" if limits.hint else ""
        message = f"at most {top:,} steps{where} (got {err.got:,}){hint}"
    elif err.got < 1:
        message = f"must be between 1 and {top:,}{where}, got {err.got:,}"
    else:
        return err
    return SpecError(err.field, message, bounds=(1, top), got=err.got)


def _environment(defaults) -> dict:
    if defaults is None:
        return {}
    if isinstance(defaults, Scenario):
        return {k: getattr(defaults, k) for k in ENVIRONMENT_FIELDS}
    if not isinstance(defaults, Mapping):
        raise SpecError("defaults", "must be a Scenario or a mapping")
    for k in defaults:
        if k not in ENVIRONMENT_FIELDS:
            raise SpecError(
                str(k)[:40], f"is not an environment field ({', '.join(ENVIRONMENT_FIELDS)})"
            )
    return {k: v for k, v in defaults.items() if v is not None}


def _size_check(source, max_bytes: int, name: str = "file"):
    if isinstance(source, (bytearray, memoryview)):
        source = bytes(source)
    if isinstance(source, bytes):
        n = len(source)
    elif isinstance(source, str):
        n = len(source) if len(source) > max_bytes else len(source.encode("utf-8", "surrogatepass"))
    else:
        raise SpecError(name, f"must be text, got {type(source).__name__}")
    if n > max_bytes:
        raise SpecError(
            name,
            f"is too large ({'at least ' if isinstance(source, str) else ''}"
            f"{n:,} bytes); at most {max_bytes:,} bytes",
        )
    return source


def _load_json(source, max_bytes):
    source = _size_check(source, max_bytes)
    try:
        return json.loads(source)
    except RecursionError:
        raise SpecError("file", "not valid JSON here (nested too deeply)") from None
    except (ValueError, TypeError) as e:  # incl. UnicodeDecodeError, ints of > 4300 digits
        why = "a number with thousands of digits" if "Exceeds the limit" in str(e) else str(e)[:200]
        raise SpecError("file", f"not valid JSON ({why})") from None


def _read_csv(source, max_bytes) -> tuple[list[list[str]], list[int]]:
    """The segment table's cells (text, validated by Scenario) and each row's line number."""
    source = _size_check(source, max_bytes)
    if isinstance(source, bytes):
        try:  # UTF-8 (a BOM is fine), or UTF-16 with its BOM (spreadsheets' "Unicode text")
            text = source.decode(
                "utf-16" if source[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
            )
        except UnicodeDecodeError as e:
            raise SpecError(
                "file", f"is not UTF-8 text (byte {e.start + 1}); save the table as CSV UTF-8"
            ) from None
    else:
        text = source.removeprefix("\ufeff")
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    delimiter = "," if "," in first else ";" if ";" in first else "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns: dict[str, int] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for cells in reader:
            cells = [c.strip() for c in cells]
            while cells and not cells[-1]:
                cells.pop()
            if not cells:
                continue  # a blank line
            if columns is None:
                columns = _csv_header(cells)
                continue
            i = len(rows) + 1
            if i > LIMITS["n_segments"]:
                raise SpecError("segments", f"at most {LIMITS['n_segments']} segments (rows)")
            if len(cells) > len(columns):
                raise SpecError(
                    f"segments[{i}]",
                    f"row {i} (line {reader.line_num}) has "
                    f"{len(cells)} cells; the header has "
                    f"{len(columns)} (state, length)",
                )
            row = []
            for name in CSV_COLUMNS:
                j = columns[name]
                if j >= len(cells) or not cells[j]:
                    raise SpecError(
                        f"segments[{i}].{name}", f"is empty (line {reader.line_num} of the file)"
                    )
                row.append(cells[j])
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as e:
        raise SpecError(
            "file", f"not a readable CSV table (line {reader.line_num}: {str(e)[:100]})"
        ) from None
    if columns is None:
        raise SpecError(
            "file", "is empty; expected the header state,length and one row per segment"
        )
    if not rows:
        raise SpecError("segments", "the table has a header but no rows")
    return rows, lines


def _csv_header(cells: list[str]) -> dict[str, int]:
    names = [c.lower() for c in cells]
    if all(_looks_numeric(c) for c in names):
        raise SpecError(
            "file", f"the first line must be the header state,length; got {_show(','.join(cells))}"
        )
    for j, name in enumerate(names):
        if name not in CSV_COLUMNS:
            raise SpecError(
                "file",
                f"unknown column {_show(cells[j])} in the header; the columns are state,length",
            )
        if names.index(name) != j:
            raise SpecError("file", f"the column {name!r} appears twice in the header")
    missing = [c for c in CSV_COLUMNS if c not in names]
    if missing:
        raise SpecError(
            "file",
            f"the header must name the columns state and length (missing: {', '.join(missing)})",
        )
    return {name: names.index(name) for name in CSV_COLUMNS}


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except (ValueError, OverflowError):
        return False
    return True


def _from_query(query, env, defaults, limits, rejected, max_bytes) -> Scenario:
    base = defaults if isinstance(defaults, Scenario) else None

    def drop(param, value, err):
        if rejected is None:
            raise err
        rejected.append(Rejected(param, value, err))

    def fallback(good):  # lenient mode: the defaults' pattern with the usable parameters
        try:
            return check_limits(Scenario(**{**(_pattern(base) if base else {}), **good}), limits)
        except SpecError:
            return base if base is not None else Scenario()

    if not isinstance(query, Mapping):
        drop(None, None, SpecError("query", "must be a mapping of parameters"))
        return fallback(env)
    try:
        size = sum(len(str(k)) + len(str(v)) for k, v in query.items())
    except Exception:
        size = max_bytes + 1
    if size > max_bytes:
        drop(
            None,
            None,
            SpecError("query", f"is too long ({size:,} characters); at most {max_bytes:,}"),
        )
        return fallback(env)
    for key in query:
        if key not in QUERY_FIELDS:
            name = str(key)[:40]
            drop(
                key,
                query[key],
                SpecError(
                    name if name.strip() else "query",
                    f"unknown parameter {_show(name)}; known: {', '.join(QUERY_FIELDS)}",
                ),
            )
    good = dict(env)
    if query.get("preset") in FIXED_PRESETS:  # the preset fixes these: only the link may
        good = {k: v for k, v in good.items() if k == "seed" or k in query}  # (and errs)
    for key in ("d", "n_arms", "sigma2", "seed", "batch_size"):
        if key not in query:
            continue
        value = query[key]
        try:
            v = decode_batch(value) if key == "batch_size" and isinstance(value, str) else value
            check_limits(Scenario(**{key: v}), limits)
            good[key] = v
        except SpecError as e:
            drop(key, value, e)
    has_segments = "segments" in query
    preset_ = query.get("preset", base.preset if has_segments and base else "paper-synthetic")
    if preset_ not in PRESETS + ("custom",):
        drop(
            "preset",
            preset_,
            SpecError("preset", f"must be one of {', '.join(PRESETS + ('custom',))}"),
        )
        preset_ = "custom" if has_segments else "paper-synthetic"
    try:
        if has_segments:
            segs = query["segments"]
            segs = (
                decode_segments(segs, max_segments=LIMITS["n_segments"])
                if isinstance(segs, str)
                else segs
            )
            sc = Scenario(segments=segs, preset=preset_, **good)
        elif preset_ == "custom":
            raise SpecError("segments", "a custom pattern needs segments=STATExLENGTH_...")
        else:
            kw = {k: query[k] for k in ("horizon", "n_states") if k in query}
            sc = Scenario.from_preset(preset_, **kw, **good)
        check_limits(sc, limits)
    except SpecError as e:
        drop(None, None, _said_within(e, limits))
        return fallback(good)
    return sc


def _pattern(sc: Scenario) -> dict:
    return {"segments": sc.segments, "preset": sc.preset}


@dataclass(frozen=True)
class PolicySpec:
    """One contestant: a registered policy name, its hyperparameters, a display label.

    sigma2 defaults to the scenario's noise variance (the paper's 'correct specification')."""

    name: str
    params: tuple[tuple[str, object], ...] = ()
    label: str = ""

    def __post_init__(self):
        try:
            policy_class(self.name)
        except SpecError as e:
            raise SpecError("policies", e.message, bounds=e.bounds, got=e.got) from None
        params = dict(self.params.items() if isinstance(self.params, dict) else self.params)
        try:  # the policy's declaration: values are checked now rather than mid-race
            check_params(self.name, params)
        except SpecError as e:
            raise e.within(self.name) from None
        object.__setattr__(self, "params", tuple(sorted(params.items())))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def build(self, d: int, *, rng=None, sigma2: float | None = None, horizon: int | None = None):
        """Instantiate the policy for dimension d; sigma2 and horizon (BoB needs T) fill in
        the hyperparameters of those names that the spec leaves unset."""
        params = dict(self.params)
        for key, value in (("sigma2", sigma2), ("horizon", horizon)):
            if value is not None and key in hyperparameters(self.name):
                params.setdefault(key, value)
        return policy_class(self.name)(d, rng=rng, **params)

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "label": self.label}


def policy_specs(names_or_dicts, **shared) -> tuple[PolicySpec, ...]:
    """Build specs from names (sharing the hyperparameters each one takes) or dicts."""
    specs = []
    for item in names_or_dicts:
        if isinstance(item, PolicySpec):
            specs.append(item)
            continue
        if isinstance(item, dict):
            specs.append(
                PolicySpec(item.get("name", ""), item.get("params", {}), item.get("label", ""))
            )
            continue
        name = str(item).strip()
        try:
            allowed = hyperparameters(name)
        except SpecError as e:
            raise SpecError("policies", e.message, bounds=e.bounds, got=e.got) from None
        specs.append(
            PolicySpec(name, {k: v for k, v in shared.items() if k in allowed and v is not None})
        )
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise SpecError("policies", f"labels must be unique, got {labels}")
    if not specs:
        raise SpecError("policies", "choose at least one policy")
    if len(specs) > LIMITS["n_policies"]:
        raise SpecError(
            "policies",
            f"at most {LIMITS['n_policies']} policies, got {len(specs)}",
            bounds=(1, LIMITS["n_policies"]),
            got=len(specs),
        )
    return tuple(specs)


@dataclass(frozen=True)
class Race:
    """Several policies on one scenario over ``n_seeds`` independent seeds."""

    scenario: Scenario = field(default_factory=Scenario)
    policies: tuple[PolicySpec, ...] = ()
    n_seeds: int = 1

    def __post_init__(self):
        object.__setattr__(self, "policies", policy_specs(self.policies))
        object.__setattr__(self, "n_seeds", _int("n_seeds", self.n_seeds, 1, LIMITS["n_seeds"]))

    @classmethod
    def checked(
        cls, scenario: Scenario, policies, n_seeds: int = 1, limits: Limits = LIMITS
    ) -> Race:
        """The race of these settings within ``limits``: the one check of a race's settings
        (the app's forms and links collect values and show its message).

        Parameters
        ----------
        scenario
            A valid scenario.
        policies
            PolicySpecs, policy names or dicts (as :func:`policy_specs` takes them).
        n_seeds
            Independent seeds.
        limits
            The bounds, e.g. the app's :data:`APP_LIMITS`.

        Raises
        ------
        SpecError
            For the first setting that is not valid: ``policies`` (none, or too many),
            ``n_seeds`` (out of range, or over the budget of horizon x seeds x policies), a
            hyperparameter (``"<policy>.<name>"``) or a field of the scenario.

            >>> Race.checked(Scenario(), ["lints"], 12, APP_LIMITS)
            Traceback (most recent call last):
            ...
            allseason.errors.SpecError: n_seeds: must be between 1 and 10, got 12
        """
        policies = tuple(policies)
        if not policies:
            raise SpecError("policies", "choose at least one policy")
        if len(policies) > limits["n_policies"]:
            raise SpecError("policies", f"at most {limits['n_policies']} policies{limits.where}")
        n_seeds = _int("n_seeds", n_seeds, 1, limits["n_seeds"])
        race = cls(check_limits(scenario, limits), policy_specs(policies), n_seeds)
        budget = limits.get("budget")
        work = scenario.horizon * n_seeds * len(race.policies)
        if budget is not None and work > budget:
            raise SpecError(
                "n_seeds",
                f"horizon × seeds × policies is {work:,}; at most {budget:,}{limits.where}. "
                f"Use fewer seeds or policies, or a shorter horizon",
            )
        return race

    def to_dict(self) -> dict:
        return {
            "scenario": self.scenario.to_dict(),
            "n_seeds": self.n_seeds,
            "policies": [p.to_dict() for p in self.policies],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data, limits: Limits = LIMITS) -> Race:
        """The race of a plain dict (``to_dict``'s, e.g. a race JSON sent back), checked
        within ``limits`` (:meth:`checked`)."""
        if not isinstance(data, dict):
            raise SpecError("race", "must be a JSON object")
        try:
            scenario = Scenario.from_dict(data.get("scenario", {}))
        except SpecError as e:
            raise _said_within(e, limits) from None
        return cls.checked(scenario, data.get("policies", []), data.get("n_seeds", 1), limits)
