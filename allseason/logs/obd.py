"""The Open Bandit Dataset's sample logs (ZOZOTOWN, November 2019), a real log one command away.

The pure-Python wheel of ``obp`` 0.4.1 on PyPI ships six samples of the Open Bandit Dataset,
10,000 events each: ``obp/dataset/obd/{random,bts}/{all,men,women}/{all,men,women}.csv``
(uniform random logging, or Bernoulli Thompson sampling; all items, men's or women's).
``make data`` runs ``pip download --no-deps obp==0.4.1`` into the data cache, and
:func:`extract` checks the wheel's sha256 and copies the six logs (and the wheel's LICENSE)
out of the zip. Nothing of obp is installed, imported or vendored.

    python -m allseason.logs.obd --present          # exit 0 when the six logs are there
    python -m allseason.logs.obd --extract WHEEL    # check the wheel, extract the logs

The logs land in ``$ALLSEASON_CACHE/obd`` (default ``~/.cache/allseason/obd``), see
:func:`allseason.envs.datasets.cache_dir`.
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from pathlib import Path

VERSION = "0.4.1"
WHEEL = f"obp-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "87dec9caf4283c25ab13036532e0a24566f1c7bdcad1653a8ded43b2f5ef8208"
POLICIES = ("random", "bts")  # the logging policy: uniform random, Bernoulli Thompson
CAMPAIGNS = ("all", "men", "women")
FETCH = f"make data   (or: pip download --no-deps obp=={VERSION} -d DIR, then {__name__} --extract)"
MAX_MEMBER = 20_000_000  # bytes: the largest member read out of the zip (the logs are 3-5 MB)
TITLE = "Open Bandit Dataset (ZOZOTOWN, 2019)"
SOURCE = (
    "ZOZO, Inc.: the Open Bandit Dataset's small sample (10,000 events per log, 7 days of "
    "November 2019 on the fashion site ZOZOTOWN), as shipped in the wheel of obp 0.4.1 on PyPI"
)
LICENCE = (
    "Apache License 2.0: the licence of obp 0.4.1's wheel, which ships these files (its "
    "LICENSE file, and its README: 'This project is licensed under the Apache 2.0 "
    "License'). The full dataset (about 26 million rows) is published separately at "
    "research.zozo.com under its own terms."
)
CITATION = (
    "Yuta Saito, Shunsuke Aihara, Megumi Matsutani and Yusuke Narita. Open Bandit Dataset "
    "and Pipeline: Towards Realistic and Reproducible Off-Policy Evaluation. NeurIPS "
    "Datasets and Benchmarks, 2021 (arXiv:2008.07146)."
)


def obd_dir() -> Path:
    """Where the logs are: ``cache_dir() / "obd"``."""
    from ..envs.datasets import cache_dir

    return cache_dir() / "obd"


def log_path(policy: str = "random", campaign: str = "all") -> Path:
    """The path of one log (it may not exist: see :func:`available`)."""
    if policy not in POLICIES or campaign not in CAMPAIGNS:
        raise ValueError(
            f"no OBD log {policy}/{campaign}; policies {POLICIES}, campaigns {CAMPAIGNS}"
        )
    return obd_dir() / policy / campaign / f"{campaign}.csv"


def available() -> list[tuple[str, str]]:
    """The (policy, campaign) pairs whose log is on disk."""
    return [(p, c) for p in POLICIES for c in CAMPAIGNS if log_path(p, c).is_file()]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def extract(wheel: str | os.PathLike, dest: str | os.PathLike | None = None) -> list[Path]:
    """Check the wheel's sha256 (:data:`WHEEL_SHA256`), then write the six logs and its
    LICENSE under ``dest`` (default :func:`obd_dir`), each through a temporary file renamed
    into place. Only those seven members are read; ValueError if the wheel differs."""
    wheel = Path(wheel)
    got = sha256(wheel)
    if got != WHEEL_SHA256:
        raise ValueError(f"{wheel.name}: sha256 {got}, expected {WHEEL_SHA256}; not obp {VERSION}")
    dest = Path(dest) if dest is not None else obd_dir()
    members = {
        f"obp/dataset/obd/{p}/{c}/{c}.csv": dest / p / c / f"{c}.csv"
        for p in POLICIES
        for c in CAMPAIGNS
    }
    members[f"obp-{VERSION}.dist-info/LICENSE"] = dest / "LICENSE"
    written = []
    with zipfile.ZipFile(wheel) as z:
        for name, target in members.items():
            info = z.getinfo(name)
            if info.file_size > MAX_MEMBER:
                raise ValueError(f"{name}: {info.file_size:,} bytes; at most {MAX_MEMBER:,}")
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".part")
            with z.open(info) as src, open(tmp, "wb") as out:
                out.write(src.read(MAX_MEMBER + 1))
            os.replace(tmp, target)
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """``--present``: exit 0 when the six logs are on disk, else 1; ``--extract WHEEL``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--present"]:
        return 0 if len(available()) == len(POLICIES) * len(CAMPAIGNS) else 1
    if len(argv) == 2 and argv[0] == "--extract":
        try:
            paths = extract(argv[1])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"the Open Bandit Dataset's {len(paths) - 1} sample logs are in {obd_dir()}")
        return 0
    print(f"usage: python -m {__name__} --present | --extract WHEEL", file=sys.stderr)
    return 2


__all__ = [
    "obd_dir",
    "log_path",
    "available",
    "extract",
    "WHEEL_SHA256",
    "POLICIES",
    "CAMPAIGNS",
    "TITLE",
    "SOURCE",
    "LICENCE",
    "CITATION",
    "FETCH",
]

if __name__ == "__main__":
    sys.exit(main())
