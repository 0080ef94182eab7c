"""The scenario (pattern, environment, batches, seed), validated; the one entry point of
every scenario a user sends (:func:`parse_scenario`), and the bounds a request is held to
(:func:`check_limits`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import NamedTuple

from ..envs.patterns import FIXED_PRESETS, PAPER_SYNTHETIC, PRESETS, Pattern, preset
from ..errors import SpecError
from ..errors import show as _show
from ..limits import LIMITS, MAX_BATCH_SIZES, MAX_INPUT_BYTES, NOISE_RANGE, Limits
from ..links import QUERY_FIELDS, decode_batch, decode_segments, encode_batch, encode_segments
from .readers import _load_json, _read_csv

# the bounds of one request (the app may tighten them) and of the text read: allseason/limits.py
INPUT_KINDS = ("json", "csv", "query", "dict")
ENVIRONMENT_FIELDS = ("d", "n_arms", "sigma2", "batch_size", "seed")


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
            if not bs or len(bs) > MAX_BATCH_SIZES:
                raise SpecError(
                    "batch_size", f"a list of batch sizes must have 1 to {MAX_BATCH_SIZES} items"
                )
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
            from ..envs import weather

            weather.check_scenario(self)

    @property
    def pattern(self) -> Pattern:
        """The segments as a :class:`Pattern`."""
        return Pattern(self.segments)

    @property
    def horizon(self) -> int:
        """The number of steps."""
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
            from ..envs import weather

            kw = {**weather.FIXED, **kw}
        pattern = preset(name, horizon, n_states)  # SpecError("horizon", ...) if too short
        return cls(segments=pattern.segments, preset=name, **kw)

    def to_dict(self) -> dict:
        """The scenario as plain data (JSON-ready)."""
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

        >>> from allseason.limits import APP_LIMITS
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
            segs = query["segments"]  # pairs of text (a link's): Scenario converts them
            if isinstance(segs, str):
                segs = decode_segments(segs, max_segments=LIMITS["n_segments"])
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
