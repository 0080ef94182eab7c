"""Load test: many real browser sessions racing at once against ``streamlit run app.py``.

Starts the app on 127.0.0.1 (a free port, headless), samples the server's memory (RSS of
the process and its children, every 0.2 s, in a thread) and drives Debian's headless
chromium through Playwright's asyncio API (one browser, one context = one Streamlit session
per simulated user):

1. idle: the server alone, before any page is opened;
2. warm-up: one short race in its own session (first imports and kernel loading; reported,
   not compared);
3. single: ONE session alone runs a race (time from the click on "Run race" to the race
   being done and the page idle);
4. concurrent: N sessions open the Race page at once, each with a DISTINCT scenario given in
   the link (``seed``, ``d``, ``n_arms``), then all click "Run race" together.

Every session checks, after its race, that the page belongs to its own scenario: the
scenario line and the URL show its seed/d/K, the race's JSON download holds its scenario,
and (``--verify``, on by default) the leaderboard's numbers equal those of its race
recomputed here from that JSON (runs are deterministic); leaderboards must differ between
sessions. No ``stException`` and no error alert may appear. Prints a table and writes JSON.

    python benchmarks/load_test.py [--sessions 10] [--port P] [--out /tmp/allseason-load.json]

**This benchmark measures its own browsers too.** The N headless chromium pages run on the
server's machine and share its cores: on 2 cores, 20 pages took 413 CPU-s of browser against
74.5 CPU-s of server (main eceeea0, quiet machine), so opening the Race page (about 5-10
CPU-s of chromium each: Streamlit's JavaScript, the season chart) took 76-107 s and a race
80-170 s, mostly waiting for a core behind the other browsers. A real workshop has one
browser per laptop. Read the times beside ``cpu_busy`` (server and browser CPU from the
first page opened to the last race drawn, and the cores they kept busy): the phase's own
wall time runs on to ``--timeout`` when any session hangs, and the machine then looks idle.

``--server-nice -20`` (root) puts the app server ahead of every other process of the machine
(e.g. other work beside the benchmark) and ``--nice-browsers N`` starts every chromium at
niceness N (a wrapper script: ``nice -n N chromium``; their helpers inherit it), so the
server's process gets the cores first, as it would with one browser per laptop: the
server's numbers then tell what a visitor waits for the server, not for the benchmark's
other 19 browsers. Off by default (the earlier numbers
were taken without it); say which when quoting.

A starved page also misses the server's websocket ping (uvicorn closes a connection whose
pong has not come back within 30 s; the browser sees code 1006 and reconnects to the same
session, which reruns the page): ``websocket_closed_at`` gives when. Before the Race page
showed a session's last race again after such a rerun, a session whose race had been pushed
out of the 8-race cache by the others came back to "Press Run race to start" and hung to the
timeout, which looked like a lost click (6 of 20 on main eceeea0).

Needs /usr/bin/chromium (``make browser``; never ``playwright install``), playwright and
psutil. ``tests/browser/test_load.py`` runs :func:`run` (3 sessions, no warm-up session) and
asserts on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, ROOT, Server

BROWSER = [CHROMIUM]  # the executable the sessions' chromium is started from (--nice-browsers)
SERVER_NICE = [0]  # --server-nice: the app server's niceness (root may give it priority: < 0)
UNTIL_FEEDBACK = [False]  # --until-feedback: an upload is complete at its first feedback


def server_first(pid: int) -> None:
    """Every thread of the app server ``pid`` at :data:`SERVER_NICE` (threads it starts later
    inherit it from its main thread); nothing at 0."""
    if not SERVER_NICE[0]:
        return
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.setpriority(os.PRIO_PROCESS, int(task.name), SERVER_NICE[0])


def nice_browsers(niceness: int, folder: str) -> str:
    """A script in ``folder`` that starts chromium at ``niceness`` (its helpers inherit it);
    used as the browser's executable from then on. Returns its path."""
    import stat

    path = Path(folder) / "chromium-nice"
    path.write_text(f'#!/bin/sh\nexec nice -n {int(niceness)} {CHROMIUM} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    BROWSER[0] = str(path)
    return str(path)


VIEWPORT = {"width": 1280, "height": 800}  # a laptop screen: every session
SHOT_VIEWPORT = {"width": 1280, "height": 1400}  # the session that takes the screenshot
MB = 1024 * 1024
T0 = time.perf_counter()  # the harness's clock: the ``*_at`` times of a session are from here

FIRST_CHART = "Cumulative regret"  # the chart the Race page shows after a race
LEADERBOARD_CHART = "Mean reward per step"  # the chart picker's option for the bars
# the leaderboard's bars (name, mean reward per step), read from the Plotly figure's data
LEADERBOARD_JS = """() => {
  const g = Array.from(document.querySelectorAll('.js-plotly-plot')).find(
      g => g.layout && g.layout.title && String(g.layout.title.text).includes('Leaderboard'));
  if (!g || !g._fullData) return null;
  return g._fullData.map(t => [String(t.name), Number(Array.from(t.x)[0])]);
}"""


# the first thing a visitor sees after a click or an upload: a progress bar (running, or its
# place in the queue), or the result. Polled every 0.1 s in each of the N pages, so it reads
# textContent, not innerText: innerText lays the page out first, and 20 pages laying out 10
# times a second took CPU from the pages being measured (no hidden text holds these words)
FEEDBACK_JS = """() => !!document.querySelector('[data-testid="stProgress"]') ||
  document.body.textContent.includes('Done:') ||
  document.body.textContent.includes('What the log measured')"""


# --- memory ---------------------------------------------------------------------------------
def _tree_sum(pid: int, measure) -> float:
    """Sum of ``measure(process)`` over process ``pid`` and its live children (0 if gone)."""
    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += measure(p)
        except psutil.Error:
            pass
    return total


def tree_rss(pid: int) -> int:
    """RSS in bytes of process ``pid`` and all its children (0 if it is gone)."""
    return int(_tree_sum(pid, lambda p: p.memory_info().rss))


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its live children."""
    return float(_tree_sum(pid, lambda p: sum(p.cpu_times()[:2])))


def browser_usage(server_pid: int) -> tuple[int, float]:
    """(RSS, CPU seconds) of this process's children other than the server (Playwright's
    driver and chromium), for information: on one machine they share the cores."""
    rss, cpu = 0, 0.0
    try:
        kids = psutil.Process().children(recursive=True)
    except psutil.Error:
        return 0, 0.0
    server = {server_pid}
    try:
        server |= {c.pid for c in psutil.Process(server_pid).children(recursive=True)}
    except psutil.Error:
        pass
    for p in kids:
        if p.pid in server:
            continue
        try:
            rss += p.memory_info().rss
            t = p.cpu_times()
            cpu += t.user + t.system
        except psutil.Error:
            pass
    return rss, cpu


_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _proc_table(pids=None) -> dict[int, tuple[int, int, float]]:
    """pid -> (parent pid, RSS bytes, CPU seconds) of every process of the machine (or of
    ``pids``, those still alive), from ONE read of each ``/proc/PID/stat``: the numbers
    psutil's ``ppid()``, ``memory_info().rss`` and ``cpu_times()`` give (empty without /proc)."""
    out = {}
    if pids is None:
        try:
            pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
        except OSError:
            return out
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        # after the name: state, ppid (field 4), ... utime, stime (14, 15) ... rss (24, pages)
        cpu = (int(fields[11]) + int(fields[12])) / _TICK
        out[pid] = (int(fields[1]), int(fields[21]) * _PAGE, cpu)
    return out


def _kinds(table: dict, server_pid: int) -> dict[int, int]:
    """pid -> 0 (the server ``server_pid`` or a descendant of it) or 1 (any other descendant
    of this process: Playwright's driver, chromium), for the processes of ``table``."""
    me, out = os.getpid(), {}
    for pid in table:
        up = pid
        while up not in (server_pid, me) and up in table:
            up = table[up][0]
        if up == server_pid:
            out[pid] = 0
        elif up == me and pid != me:
            out[pid] = 1
    return out


def _sums(table: dict, kinds: dict[int, int]) -> tuple[int, int, float, float]:
    out = [0, 0, 0.0, 0.0]
    for pid, k in kinds.items():
        if pid in table:
            out[k] += table[pid][1]
            out[k + 2] += table[pid][2]
    return out[0], out[1], out[2], out[3]


def usage(server_pid: int) -> tuple[int, int, float, float]:
    """(server RSS, browser RSS, server CPU s, browser CPU s) now: what :func:`tree_rss`,
    :func:`browser_usage` and :func:`tree_cpu` give, from ONE read of each process's
    ``/proc/PID/stat`` (:func:`_proc_table`). The server is process ``server_pid`` and its
    live descendants, the browser every other descendant of this process."""
    table = _proc_table()
    if server_pid not in table or table[server_pid][0] != os.getpid():
        # not started by this process, or no /proc: as those three functions
        b_rss, b_cpu = browser_usage(server_pid)
        return tree_rss(server_pid), b_rss, tree_cpu(server_pid), b_cpu
    return _sums(table, _kinds(table, server_pid))


class RssSampler(threading.Thread):
    """Samples the server tree's RSS every ``interval`` s; ``phase`` labels the samples.

    Each sample reads ``/proc/PID/stat`` of the server's and the browser's processes alone;
    the whole process table (to find processes started since) only every ``rescan`` samples
    (and whenever the server is not found). The sampler runs for the whole load test, 5 times
    a second: with psutil's scan of the process table and then three reads per process, a
    sample took 6.8-8.1 ms of CPU (2026-11-27: 11 processes of ours, 110 on the machine;
    about 0.04 CPU-s a second, more on a busier machine), 1.3 ms on average this way. A
    process started between two scans (a new tab's renderer) is counted from the next scan
    on; the server's own process, whose RSS the test bounds, in every sample."""

    def __init__(self, pid: int, interval: float = 0.2, rescan: int = 5):
        super().__init__(daemon=True)
        self.pid, self.interval, self.rescan = pid, interval, rescan
        self.phase = "idle"
        # (t, phase, server RSS, browser RSS, server CPU s, browser CPU s)
        self.samples: list[tuple[float, str, int, int, float, float]] = []
        self._halt = threading.Event()

    def _usage(self, n: int, kinds: dict[int, int]) -> tuple[tuple, dict[int, int]]:
        if n % self.rescan and self.pid in kinds:
            return _sums(_proc_table(kinds), kinds), kinds
        table = _proc_table()
        if self.pid not in table or table[self.pid][0] != os.getpid():
            return usage(self.pid), {}  # not this process's server: psutil's way
        kinds = _kinds(table, self.pid)
        return _sums(table, kinds), kinds

    def run(self) -> None:
        n, kinds = 0, {}
        while not self._halt.is_set():
            (s_rss, b_rss, s_cpu, b_cpu), kinds = self._usage(n, kinds)
            n += 1
            # the sessions' ``*_at`` clock
            self.samples.append((time.perf_counter() - T0, self.phase, s_rss, b_rss, s_cpu, b_cpu))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def peak_mb(self, phase: str, which: int = 2) -> float:
        vals = [s[which] for s in self.samples if s[1] == phase]
        return round(max(vals) / MB, 1) if vals else float("nan")

    def cpu_s(self, phase: str) -> dict:
        """CPU seconds used by the server and by the browser during ``phase``, and its
        length (so cpu / wall = cores busy)."""
        rows = [s for s in self.samples if s[1] == phase]
        if len(rows) < 2:
            return {}
        return {
            "wall_s": round(rows[-1][0] - rows[0][0], 1),
            "server_cpu_s": round(rows[-1][4] - rows[0][4], 1),
            "browser_cpu_s": round(max(0.0, rows[-1][5] - rows[0][5]), 1),
        }

    def window(self, t_from: float, t_to: float) -> dict:
        """Wall, server CPU and browser CPU seconds between two times of the harness's clock
        (a session's ``*_at``), and the cores they kept busy."""
        rows = [s for s in self.samples if t_from <= s[0] <= t_to]
        if len(rows) < 2:
            return {}
        wall = rows[-1][0] - rows[0][0]
        server, browser = rows[-1][4] - rows[0][4], max(0.0, rows[-1][5] - rows[0][5])
        return {
            "wall_s": round(wall, 1),
            "server_cpu_s": round(server, 1),
            "browser_cpu_s": round(browser, 1),
            "cores_busy": round((server + browser) / wall, 2) if wall > 0 else None,
        }

    def last_mb(self, phase: str) -> float:
        vals = [s[2] for s in self.samples if s[1] == phase]
        return round(vals[-1] / MB, 1) if vals else float("nan")


class Prober(threading.Thread):
    """Asks the server, every ``interval`` s from this process (not a browser), for its health
    and for a script file the pages load (the one a page fetches on its first upload): how
    long the server takes to answer, apart from the browsers' own time. Samples:
    (t on the harness's clock, "health" or "static", seconds, or None on an error)."""

    def __init__(self, base_url: str, interval: float = 0.5):
        super().__init__(daemon=True)
        import importlib.util

        origin = importlib.util.find_spec("streamlit").origin  # the app server's streamlit
        js = sorted((Path(origin).parent / "static" / "static" / "js").glob("axios.*.js"))
        self.urls = {"health": f"{base_url}/_stcore/health"}
        if js:
            self.urls["static"] = f"{base_url}/static/js/{js[0].name}"
        self.interval, self.samples, self._halt = interval, [], threading.Event()

    def run(self) -> None:
        import urllib.request

        while not self._halt.is_set():
            for name, url in self.urls.items():
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(url, timeout=60) as resp:
                        resp.read()
                    took: float | None = time.perf_counter() - t0
                except Exception:
                    took = None
                self.samples.append((t0 - T0, name, took))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=65)

    def stats(self, t_from: float, t_to: float) -> dict:
        """Per URL: the answers' times (s) between two times of the harness's clock."""
        out = {}
        for name in self.urls:
            rows = [s for s in self.samples if s[1] == name and t_from <= s[0] <= t_to]
            out[name] = {
                **_stats([s[2] for s in rows if s[2] is not None]),
                "errors": sum(1 for s in rows if s[2] is None),
            }
        return out


# --- one session ----------------------------------------------------------------------------
def scenario_for(i: int, horizon: int) -> dict[str, str]:
    """The link parameters of session ``i``: every session a different seed, d and K."""
    return {
        "preset": "paper-synthetic",
        "horizon": str(horizon),
        "d": str(3 + i % 4),
        "n_arms": str(5 + i),
        "seed": str(1000 + 37 * i),
    }


def scenario_text(q: dict[str, str]) -> list[str]:
    """Pieces the page's scenario line must contain for link ``q``."""
    return [
        f"{int(q['horizon']):,} steps",
        f"d = {q['d']}, K = {q['n_arms']} arms",
        f"seed {q['seed']}",
    ]


async def _wait_idle(pg) -> None:
    await pg.wait_for_selector("h1")
    await pg.wait_for_timeout(250)
    await pg.wait_for_selector(IDLE)
    await pg.wait_for_timeout(400)


async def _problems_on_page(pg) -> list[str]:
    out = []
    n_exc = await pg.locator('[data-testid="stException"]').count()
    if n_exc:
        texts = [t[:300] for t in await pg.locator('[data-testid="stException"]').all_inner_texts()]
        out.append(f"{n_exc} stException element(s): {texts}")
    errs = await pg.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    if errs:
        out.append(f"error alert(s): {[e[:300] for e in errs]}")
    return out


async def _scenario_line(pg) -> str:
    loc = pg.locator('[data-testid="stMarkdownContainer"]', has_text="Scenario:").first
    return (await loc.inner_text()).strip()


class Tabs:
    """The tabs of one browser context, each used again once its session is over
    (:meth:`release`: it leaves for the server's health answer, which ends its Streamlit
    session, and waits for the next one; a goto is a new document, so a new session all the
    same). A tab's renderer keeps the page's scripts compiled: a Race page load in a tab
    that already held one costs chromium less than in a new tab (a new renderer). ``run``
    hands a :class:`Tabs` where a context is taken (``new_page``)."""

    def __init__(self, context, base_url: str):
        self.context, self.base_url, self.free = context, base_url, []

    async def new_page(self):
        return self.free.pop() if self.free else await self.context.new_page()

    async def release(self, pg) -> None:
        try:
            await pg.goto(f"{self.base_url}/_stcore/health", timeout=30_000)
            self.free.append(pg)
        except Exception:  # a hung or broken tab: the next session gets a new one
            await pg.close()


async def _done_with(pg, context) -> None:
    """The session of tab ``pg`` is over: back to its :class:`Tabs`, or closed."""
    if hasattr(context, "release"):
        await context.release(pg)
    else:
        await pg.close()


class Session:
    """One simulated user: a browser context on the Race page with its own link."""

    def __init__(
        self, name: str, query: dict[str, str], timeout_ms: int, viewport: dict | None = None
    ):
        self.name, self.query, self.timeout_ms = name, query, timeout_ms
        self.viewport = viewport or VIEWPORT
        self.result: dict = {"session": name, "query": query, "problems": []}
        self.ctx = self.pg = self.tabs = None
        self._handlers: list[tuple[str, object]] = []
        self.ws = {"frames": 0, "bytes": 0, "closed": 0}
        self.console: list[str] = []

    async def open(self, browser, base_url: str, context=None) -> None:
        """Open the session's Race link: in a browser context of its own, or (``context``)
        in a tab of that context (a new one, or a free one of a :class:`Tabs`: a Streamlit
        session all the same)."""
        r = self.result
        if context is None:
            self.ctx = await browser.new_context(viewport=self.viewport, accept_downloads=True)
            self.pg = await self.ctx.new_page()
        else:
            self.tabs = context
            self.pg = await context.new_page()
            await self.pg.set_viewport_size(self.viewport)
        self.pg.set_default_timeout(self.timeout_ms)

        def on_console(m) -> None:
            if m.type in ("error", "warning"):
                self.console.append(f"{m.type}: {m.text}"[:300])

        self.pg.on("console", on_console)

        def on_ws(ws):
            def got(payload):
                self.ws["frames"] += 1
                self.ws["bytes"] += len(payload)

            ws.on("framereceived", got)

            def closed(_ws):
                self.ws["closed"] += 1
                # when (harness clock): a drop under load resets the session (see run())
                self.ws.setdefault("closed_at", []).append(round(time.perf_counter() - T0, 2))

            ws.on("close", closed)

        self.pg.on("websocket", on_ws)
        self._handlers = [("console", on_console), ("websocket", on_ws)]
        t0 = time.perf_counter()
        r["open_at"] = round(t0 - T0, 2)
        await self.pg.goto(f"{base_url}/Race?{urllib.parse.urlencode(self.query)}")
        await _wait_idle(self.pg)
        await self.pg.get_by_role("button", name="Run race").wait_for()
        r["open_s"] = round(time.perf_counter() - t0, 2)
        r["problems"] += [f"on opening: {p}" for p in await _problems_on_page(self.pg)]
        line = await _scenario_line(self.pg)
        r["scenario_line_before"] = line
        missing = [s for s in scenario_text(self.query) if s not in line]
        if missing:
            r["problems"].append(f"on opening, the scenario line lacks {missing}: {line!r}")

    async def race(self, screenshot: str | Path | None = None) -> None:
        r, pg = self.result, self.pg
        t0 = time.perf_counter()
        r["click_at"] = round(t0 - T0, 2)
        ws0 = dict(self.ws)
        await pg.get_by_role("button", name="Run race").click()
        done = pg.get_by_text("Done:", exact=False).first
        await pg.wait_for_function(FEEDBACK_JS, polling=100)
        r["first_feedback_s"] = round(time.perf_counter() - t0, 2)
        await done.wait_for()
        r["click_to_done_text_s"] = round(time.perf_counter() - t0, 2)
        await pg.wait_for_selector(IDLE)
        await pg.locator(".gtitle", has_text=FIRST_CHART).first.wait_for()
        r["race_s"] = round(time.perf_counter() - t0, 2)
        r["race_done_at"] = round(time.perf_counter() - T0, 2)
        r["ws_frames"] = self.ws["frames"] - ws0["frames"]  # server -> browser, this race
        r["ws_mb"] = round((self.ws["bytes"] - ws0["bytes"]) / MB, 2)
        await pg.wait_for_timeout(400)
        await pg.wait_for_selector(IDLE)
        # the leaderboard's bars: one more chart of the page's chart picker (only that
        # chart is redrawn)
        await pg.get_by_role("radio", name=LEADERBOARD_CHART, exact=True).click()
        await pg.locator(".gtitle", has_text="Leaderboard").first.wait_for()
        await pg.wait_for_timeout(200)
        await pg.wait_for_selector(IDLE)
        r["done_text"] = (await done.inner_text()).strip()
        r["problems"] += [f"after the race: {p}" for p in await _problems_on_page(pg)]

        # the page shows this session's scenario ...
        line = await _scenario_line(pg)
        r["scenario_line_after"] = line
        missing = [s for s in scenario_text(self.query) if s not in line]
        if missing:
            r["problems"].append(f"after the race, the scenario line lacks {missing}: {line!r}")
        url_q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(pg.url).query))
        r["url_after"] = pg.url
        for k in ("d", "n_arms", "seed"):
            if url_q.get(k) != self.query[k]:
                r["problems"].append(
                    f"URL has {k}={url_q.get(k)!r}, the session's link said {self.query[k]!r}"
                )
        # ... its result ...
        r["leaderboard"] = await pg.evaluate(LEADERBOARD_JS)
        if not r["leaderboard"]:
            r["problems"].append("no leaderboard figure on the page")
        # ... and its race's settings (the "Race JSON" download: the key of the shown run)
        try:
            async with pg.expect_download(timeout=30_000) as info:
                await pg.get_by_role("button", name="Race JSON").click()
            dl = await info.value
            race = json.loads(Path(await dl.path()).read_text())
            r["race_json"] = race
            sc = race.get("scenario", {})
            for k in ("d", "n_arms", "seed"):
                if str(sc.get(k)) != self.query[k]:
                    r["problems"].append(
                        f"Race JSON has {k}={sc.get(k)!r}, "
                        f"the session's link said {self.query[k]!r}"
                    )
        except Exception as e:
            r["problems"].append(f"Race JSON download failed: {type(e).__name__}: {e}")
        r["problems"] += [f"after the download: {p}" for p in await _problems_on_page(pg)]
        if screenshot:
            await pg.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTop = 0")
            await pg.wait_for_timeout(300)
            await pg.screenshot(path=str(screenshot))
            r["screenshot"] = str(screenshot)
        r["complete"] = True
        r["complete_at"] = round(time.perf_counter() - T0, 2)

    async def diagnose(self, tag: str) -> None:
        """Record the state of a page that did not finish, and screenshot it."""
        r = self.result
        r["websockets_closed"] = self.ws["closed"]
        r["console"] = self.console[-10:]
        if self.pg is None:
            return
        try:
            r["app_state"] = await self.pg.evaluate(
                "() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                " return a ? Object.fromEntries(Array.from(a.attributes).filter("
                "x => x.name.startsWith('data-test')).map(x => [x.name, x.value])) : null; }"
            )
            path = f"/tmp/allseason-load-{tag}-{self.name}.png"
            await self.pg.screenshot(path=path)
            r["failure_screenshot"] = path
        except Exception as e:
            r["app_state"] = f"unreadable: {type(e).__name__}"

    async def close(self) -> None:
        if self.ctx is not None:
            await self.ctx.close()
        elif self.pg is not None:
            for event, handler in self._handlers:
                self.pg.remove_listener(event, handler)
            await _done_with(self.pg, self.tabs)


async def _guarded(session: Session, coro) -> None:
    try:
        await coro
    except Exception as e:
        msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        session.result["problems"].append(f"session failed: {msg}")
        session.result["failed"] = True
        await session.diagnose("fail")


async def _phase(
    browser,
    base_url: str,
    sessions: list[Session],
    timeout_s: float,
    screenshot_first: str | Path | None = None,
    context=None,
) -> float:
    """Open all sessions (each a browser context, or a tab of ``context``), then start all
    races together; returns the wall time of the races."""
    try:
        await asyncio.wait_for(
            asyncio.gather(*(_guarded(s, s.open(browser, base_url, context)) for s in sessions)),
            timeout_s,
        )
        ready = [s for s in sessions if not s.result.get("failed")]
        t0 = time.perf_counter()
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    _guarded(s, s.race(screenshot_first if k == 0 else None))
                    for k, s in enumerate(ready)
                )
            ),
            timeout_s,
        )
        return round(time.perf_counter() - t0, 2)
    except TimeoutError:
        for s in sessions:
            if not s.result.get("complete") and not s.result.get("failed"):
                s.result["problems"].append(f"not done within {timeout_s:.0f} s")
                s.result["failed"] = True
                await s.diagnose("timeout")
        return float("nan")
    finally:
        for s in sessions:
            s.result.setdefault("websockets_closed", s.ws["closed"])
            s.result["websocket_closed_at"] = s.ws.get("closed_at", [])
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


# --- the per-session limits, from the browser -----------------------------------------------
LIMITS_CAPTION = "Limits in this app"


async def probe_limits(
    browser,
    base_url: str,
    timeout_ms: int = 60_000,
    engine_limit_link: bool = True,
    context=None,
) -> dict:
    """What one session can ask for: a link over the horizon limit is refused with a message
    naming it; the Seeds slider stops at 10; horizon x seeds x policies over the budget is
    refused and "Run race" then starts nothing; the limits are written on the Race page. In a
    browser context of its own, or in a tab of ``context`` (a new one, or a free one of a
    :class:`Tabs`)."""
    out: dict = {"problems": []}
    own = context is None
    ctx = await browser.new_context(viewport=VIEWPORT) if own else context
    pg = None
    try:
        pg = await ctx.new_page()
        if not own:
            await pg.set_viewport_size(VIEWPORT)
        pg.set_default_timeout(timeout_ms)
        # 1. links over the app's horizon limit (50,000) and over the engine's (200,000)
        links = [(100_000, "over_app_limit")] + (
            [(1_000_000, "over_engine_limit")] if engine_limit_link else []
        )
        for horizon, key in links:
            await pg.goto(f"{base_url}/Race?preset=paper-synthetic&horizon={horizon}&seed=5")
            await _wait_idle(pg)
            if await pg.locator('[data-testid="stException"]').count():
                out["problems"].append(f"a traceback on the link with horizon={horizon}")
            errs = await pg.locator('[data-testid="stAlertContentError"]').all_inner_texts()
            out[f"{key}_message"] = " | ".join(e.replace("link_off\n\n", "") for e in errs)
            line = await _scenario_line(pg)
            out[f"{key}_scenario_line"] = line
            if not errs:
                out["problems"].append(f"no message for the link with horizon={horizon}")
            if f"{horizon:,} steps" in line or "seed 5" not in line:
                out["problems"].append(f"horizon={horizon} link: unexpected scenario {line!r}")
        if "50,000" not in out["over_app_limit_message"]:
            out["problems"].append(
                "the message for horizon=100000 does not name the app's limit (50,000)"
            )
        if engine_limit_link and "50,000" not in out["over_engine_limit_message"]:
            out["notes"] = [
                "a link over 200,000 steps is refused with the engine's limit "
                "(200000), not the app's (50,000): " + out["over_engine_limit_message"]
            ]
        caption = pg.get_by_text(LIMITS_CAPTION, exact=False).first
        out["limits_caption"] = (
            (await caption.inner_text()).strip() if await caption.count() else None
        )
        # on the first screen (800 px high), without scrolling
        box = await caption.bounding_box() if out["limits_caption"] else None
        out["limits_caption_visible"] = (
            bool(box)
            and await caption.is_visible()
            and box["y"] + box["height"] <= VIEWPORT["height"]
        )
        if not out["limits_caption_visible"]:
            out["problems"].append("the Race page does not show its limits")
        # 2. the largest horizon, then as many seeds as the slider allows: over the budget
        await pg.goto(f"{base_url}/Race?preset=paper-synthetic&horizon=50000&seed=6")
        await _wait_idle(pg)
        seeds = (
            pg.locator('[data-testid="stSlider"]').filter(has_text="Seeds").get_by_role("slider")
        )
        for key in ("End", "ArrowRight"):  # to the end of the slider, then one more step
            await seeds.focus()
            await pg.keyboard.press(key)
            await _wait_idle(pg)
        out["seeds_slider_max"] = await seeds.get_attribute("aria-valuetext")
        if out["seeds_slider_max"] != "10":
            out["problems"].append(f"the Seeds slider goes to {out['seeds_slider_max']}, not 10")
        errs = await pg.locator('[data-testid="stAlertContentError"]').all_inner_texts()
        out["over_budget_message"] = " | ".join(errs)
        if not any("1,000,000" in e for e in errs):
            out["problems"].append(f"no message naming the budget: {errs}")
        await pg.get_by_role("button", name="Run race").click()
        await pg.wait_for_timeout(1500)
        await pg.wait_for_selector(IDLE)
        started = (
            await pg.get_by_text("Running…", exact=False).count()
            + await pg.get_by_text("Done:", exact=False).count()
        )
        out["over_budget_started"] = bool(started)
        if started:
            out["problems"].append("a race over the budget was started")
        if await pg.locator('[data-testid="stException"]').count():
            out["problems"].append("a traceback on the over-budget race")
    except Exception as e:
        out["problems"].append(
            f"limits probe failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        )
    finally:
        if own:
            await ctx.close()
        elif pg is not None:
            await _done_with(pg, ctx)
    return out


# --- cross-session checks -------------------------------------------------------------------
def verify_results(results: list[dict], recompute: bool = True) -> list[str]:
    """Problems across sessions: identical leaderboards (a result shown in two sessions) and,
    with ``recompute``, a leaderboard that is not its own race's (recomputed from the race
    JSON the session downloaded; runs are deterministic)."""
    problems = []
    seen: dict[tuple, str] = {}
    for r in results:
        board = r.get("leaderboard")
        if not board:
            continue
        key = tuple(sorted(round(v, 12) for _, v in board))
        if key in seen:
            problems.append(f"{r['session']} shows the same leaderboard as {seen[key]}")
        seen[key] = r["session"]
    if recompute:
        sys.path.insert(0, str(ROOT))
        from allseason import api

        for r in results:
            board, race_d = r.get("leaderboard"), r.get("race_json")
            if not board or not race_d:
                continue
            summary = api.run_race(api.Race.from_dict(race_d)).summary()
            want = sorted(s["mean_reward"] for s in summary.values())
            got = sorted(v for _, v in board)
            r["recomputed_mean_rewards"] = want
            if len(want) != len(got) or any(abs(a - b) > 1e-9 for a, b in zip(want, got)):
                problems.append(
                    f"{r['session']}: the page's leaderboard {got} is not its own race's {want}"
                )
    return problems


# --- the whole run --------------------------------------------------------------------------
def _stats(xs: list[float]) -> dict:
    xs = [x for x in xs if x == x]
    if not xs:
        return {"n": 0}
    return {
        "n": len(xs),
        "mean": round(statistics.fmean(xs), 2),
        "median": round(statistics.median(xs), 2),
        "max": round(max(xs), 2),
        "min": round(min(xs), 2),
    }


async def _drive(
    base_url: str,
    sampler: RssSampler,
    n: int,
    horizon: int,
    timeout_s: float,
    screenshot: str | Path | None,
    warmup: bool,
    limits: bool | str,
    tabs: bool = False,
) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=BROWSER[0], headless=True, args=LAUNCH_ARGS
        )
        try:
            # tabs: every session a tab of this one context, a free one when there is one
            # (see run())
            ctx = Tabs(await browser.new_context(accept_downloads=True), base_url) if tabs else None
            if warmup:
                sampler.phase = "warmup"
                w = Session(
                    "warmup",
                    {
                        "preset": "paper-synthetic",
                        "horizon": "2000",
                        "d": "2",
                        "n_arms": "4",
                        "seed": "7",
                    },
                    120_000,
                )
                await _phase(browser, base_url, [w], 180, context=ctx)
                out["warmup"] = w.result
            sampler.phase = "single"
            single = Session(
                "single", {**scenario_for(0, horizon), "seed": "500"}, int(timeout_s * 1000)
            )
            await _phase(browser, base_url, [single], timeout_s, context=ctx)
            out["single"] = single.result
            sampler.phase = "between"
            await asyncio.sleep(0.5)
            sampler.phase = "concurrent"
            sessions = [
                Session(
                    f"s{i:02d}",
                    scenario_for(i, horizon),
                    int(timeout_s * 1000),
                    SHOT_VIEWPORT if (i == 0 and screenshot) else VIEWPORT,
                )
                for i in range(n)
            ]
            out["concurrent_wall_s"] = await _phase(
                browser, base_url, sessions, timeout_s, screenshot_first=screenshot, context=ctx
            )
            out["concurrent"] = [s.result for s in sessions]
            sampler.phase = "after"
            if limits:
                out["limits"] = await probe_limits(
                    browser, base_url, engine_limit_link=limits != "quick", context=ctx
                )
            await asyncio.sleep(1.0)
        finally:
            await browser.close()
    return out


def run(
    n_sessions: int = 10,
    port: int | None = None,
    horizon: int = 10_000,
    timeout_s: float = 90.0,
    screenshot: str | Path | None = None,
    recompute: bool = True,
    warmup: bool = True,
    limits: bool | str = True,
    root: str | Path | None = None,
    tabs: bool = False,
) -> dict:
    """Start the server, run the phases, return the report (see the module docstring).
    ``limits``: probe the per-session limits afterwards (``"quick"``: without the link over
    the engine's own limit). ``tabs``: every session a tab of one browser context instead
    of a context of its own (a Streamlit session all the same: the app keeps nothing in the
    browser; the page's scripts then come from the context's cache, which cut a Race page
    load's CPU by about a quarter; tests/browser/test_load.py), a tab whose session is over
    when there is one (:class:`Tabs`: the single race's tab serves a concurrent session, one
    of theirs the limits probe)."""
    t_start = time.perf_counter()
    load_before = os.getloadavg()
    with Server(port, root=root) as srv:
        server_first(srv.pid)
        sampler = RssSampler(srv.pid)
        sampler.start()
        try:
            time.sleep(1.0)  # idle samples
            drive = asyncio.run(
                _drive(
                    srv.url,
                    sampler,
                    n_sessions,
                    horizon,
                    timeout_s,
                    screenshot,
                    warmup,
                    limits,
                    tabs,
                )
            )
            sampler.phase = "after"
            time.sleep(0.5)
        finally:
            sampler.stop()
        server_alive = srv.proc.poll() is None
        log_tail = srv.log_tail()
    single, conc = drive["single"], drive["concurrent"]
    problems = {r["session"]: r["problems"] for r in [single] + conc if r["problems"]}
    cross = verify_results([single] + conc, recompute=recompute)
    finished = [r for r in conc if r.get("complete") and not r.get("failed")]
    report = {
        "sessions": n_sessions,
        "horizon": horizon,
        "definitions": {
            "race_s": "click on Run race -> 'Done:' shown, script idle, its chart drawn",
            "open_s": "goto the Race link -> page idle with its Run race button",
            "peak_rss_mb": "max over 0.2 s samples of the server process + children RSS",
            "cpu": "CPU seconds of the server and of the browser (Playwright + chromium) in "
            "the phase: both run on this machine's cores",
        },
        "race": "default race settings: 7 policies x 5 seeds",
        "server_alive_at_end": server_alive,
        "single_race_s": single.get("race_s"),
        "single_open_s": single.get("open_s"),
        "warmup_race_s": drive.get("warmup", {}).get("race_s"),
        "concurrent_race_s": _stats([r.get("race_s", float("nan")) for r in conc]),
        "concurrent_open_s": _stats([r.get("open_s", float("nan")) for r in conc]),
        "concurrent_wall_s": drive["concurrent_wall_s"],
        "finished": len(finished),
        "peak_rss_mb": {
            ph: sampler.peak_mb(ph) for ph in ("idle", "warmup", "single", "concurrent", "after")
        },
        "rss_at_end_mb": sampler.last_mb("after"),
        "peak_browser_rss_mb": sampler.peak_mb("concurrent", which=3),
        "cpu": {ph: sampler.cpu_s(ph) for ph in ("single", "concurrent")},
        # the phase's wall time runs to the timeout when a session never finishes: the busy
        # part is from the first page opened to the last race drawn
        "cpu_busy": _busy(sampler, conc),
        "problems": problems,
        "limits": drive.get("limits"),
        "cross_session_problems": cross,
        "per_session": [
            {
                k: r.get(k)
                for k in (
                    "session",
                    "query",
                    "open_s",
                    "race_s",
                    "click_to_done_text_s",
                    "first_feedback_s",
                    "done_text",
                    "ws_frames",
                    "ws_mb",
                    "websockets_closed",
                    "websocket_closed_at",
                    "open_at",
                    "click_at",
                    "race_done_at",
                    "complete_at",
                    "app_state",
                    "console",
                    "failure_screenshot",
                    "url_after",
                    "scenario_line_after",
                    "recomputed_mean_rewards",
                    "leaderboard",
                    "problems",
                )
            }
            for r in [single] + conc
        ],
        "rss_samples_mb": [(round(t, 2), ph, round(s / MB, 1)) for t, ph, s, *_ in sampler.samples],
        "ws_mb_per_race": {
            "single": single.get("ws_mb"),
            "concurrent": _stats([r.get("ws_mb", float("nan")) for r in conc]),
        },
        "server_log_tail": log_tail,
        "total_s": round(time.perf_counter() - t_start, 1),
        "root": str(root or ROOT),
        "load_average": {"start": load_before, "end": os.getloadavg()},
        "first_feedback_s": _stats([r.get("first_feedback_s", float("nan")) for r in conc]),
    }
    if report["single_race_s"] and report["concurrent_race_s"].get("n"):
        report["slowdown_mean"] = round(
            report["concurrent_race_s"]["mean"] / report["single_race_s"], 2
        )
        report["slowdown_max"] = round(
            report["concurrent_race_s"]["max"] / report["single_race_s"], 2
        )
    return report


def _busy(sampler: RssSampler, conc: list[dict]) -> dict:
    """CPU of the server and the browsers from the first concurrent page opened to the last
    race drawn (before: the whole phase, which ran on to the timeout when a session hung, and
    so looked idle)."""
    starts = [r["open_at"] for r in conc if r.get("open_at") is not None]
    ends = [r["race_done_at"] for r in conc if r.get("race_done_at") is not None]
    if not starts or not ends:
        return {}
    return {
        "from_s": min(starts),
        "to_s": max(ends),
        **sampler.window(min(starts), max(ends)),
        "websocket_drops": sum(len(r.get("websocket_closed_at") or []) for r in conc),
    }


def print_table(rep: dict) -> None:
    print(
        f"\nload test: {rep['sessions']} concurrent sessions, horizon {rep['horizon']:,}, "
        f"{rep['race']}; total {rep['total_s']} s"
    )
    print(
        f"{'session':8} {'seed':>5} {'d':>2} {'K':>3} {'open s':>7} {'race s':>7} "
        f"{'ws MB':>6}  {'best mean reward':>16}  problems"
    )
    for r in rep["per_session"]:
        q = r["query"]
        best = max((v for _, v in r["leaderboard"] or []), default=float("nan"))
        print(
            f"{r['session']:8} {q['seed']:>5} {q['d']:>2} {q['n_arms']:>3} "
            f"{r['open_s'] if r['open_s'] is not None else '-':>7} "
            f"{r['race_s'] if r['race_s'] is not None else '-':>7} "
            f"{r['ws_mb'] if r['ws_mb'] is not None else '-':>6}  {best:16.4f}  "
            f"{len(r['problems'])}"
        )
    c = rep["concurrent_race_s"]
    print(
        f"\ntime per race: single {rep['single_race_s']} s; concurrent mean "
        f"{c.get('mean')} s, max {c.get('max')} s (x{rep.get('slowdown_mean')} / "
        f"x{rep.get('slowdown_max')}); all {rep['sessions']} races in "
        f"{rep['concurrent_wall_s']} s wall"
    )
    pk = rep["peak_rss_mb"]
    print(
        f"server peak RSS (MB): idle {pk['idle']}, single {pk['single']}, concurrent "
        f"{pk['concurrent']}, at the end {rep['rss_at_end_mb']} "
        f"(browser peak {rep['peak_browser_rss_mb']})"
    )
    for ph, c in rep["cpu"].items():
        if c:
            print(
                f"CPU during {ph}: server {c['server_cpu_s']} s, browser {c['browser_cpu_s']}"
                f" s over {c['wall_s']} s wall"
            )
    b = rep.get("cpu_busy") or {}
    if b.get("wall_s"):
        print(
            f"busy part (first page opened -> last race drawn, {b['from_s']}-{b['to_s']} s): "
            f"server {b['server_cpu_s']} s, browser {b['browser_cpu_s']} s over {b['wall_s']} s "
            f"wall = {b['cores_busy']} cores busy; websocket drops: {b['websocket_drops']}"
        )
    print(
        f"finished {rep['finished']}/{rep['sessions']}; session problems: "
        f"{sum(len(v) for v in rep['problems'].values())}; cross-session problems: "
        f"{len(rep['cross_session_problems'])}; server alive: {rep['server_alive_at_end']}"
    )
    lim = rep.get("limits")
    if lim:
        print(
            f"limits: caption shown: {lim.get('limits_caption_visible')}; seeds slider max "
            f"{lim.get('seeds_slider_max')}; horizon=100000 link: "
            f"{lim.get('over_app_limit_message')!r}; over-budget race refused: "
            f"{not lim.get('over_budget_started')}; problems: {lim['problems']}"
        )
        for note in lim.get("notes", []):
            print(f"  note: {note}")
    for name, probs in rep["problems"].items():
        for p in probs:
            print(f"  {name}: {p}")
    for p in rep["cross_session_problems"]:
        print(f"  {p}")


# --- the workshop: N visitors upload the largest log at once, a 21st runs a race -----------
UPLOAD_INPUT = '[data-testid="stFileUploaderDropzoneInput"]'
UPLOAD_CHIP = '[data-testid="stFileChip"]'
UPLOAD_SPINNER = '[data-testid="stFileChipIconSpinner"]'
UPLOAD_DONE = "What the log measured"  # the evaluation's first line of results


def write_upload_log(rows: int, folder: Path) -> Path:
    """The OBD-like example log (``allseason.logs.examples.obd_log``: 10 items, propensities)
    with ``rows`` rows, written once; every visitor uploads this file."""
    sys.path.insert(0, str(ROOT))
    from allseason.logs import examples

    path = folder / f"upload-{rows}.csv"
    if not path.exists():
        path.write_bytes(examples.obd_log(n_rows=rows))
    return path


# the log has been read: the page describes it ("NAME: a log of N events, ...")
READ_JS = "() => document.body.textContent.includes(': a log of ')"
# the words of the first feedback inside the server's messages (the progress bar's text)
FEEDBACK_WORDS = {"reading": b"Reading ", "queued": b"Queued: number", "replaying": b"Replaying"}


def _listen(pg, events: list) -> None:
    """Record, on the harness's clock, what crosses the network for one page: the upload's
    PUT (sent, answered), every websocket frame the page sends (a rerun request) and the
    frames it receives, with the feedback words found in them (:data:`FEEDBACK_WORDS`).
    Where the first feedback's time goes is then split: the browser before the PUT, the
    upload, the server from the rerun request to its first message and to the bar's message,
    and the page from that message to the bar on the screen."""

    def on_ws(ws):
        def sent(_payload):
            events.append((time.perf_counter(), "sent", ""))

        def got(payload):
            data = payload if isinstance(payload, bytes) else str(payload).encode()
            words = ",".join(k for k, w in FEEDBACK_WORDS.items() if w in data)
            events.append((time.perf_counter(), "recv", words))
            if b"Done: " in data:  # a race's end (the 21st visitor's)
                events.append((time.perf_counter(), "done", ""))

        def closed(_ws):  # a drop under load (uvicorn's missed ping): the page reconnects
            events.append((time.perf_counter(), "close", ""))

        ws.on("framesent", sent)
        ws.on("framereceived", got)
        ws.on("close", closed)

    def request(req):
        if "/upload_file/" in req.url and req.method == "PUT":
            events.append((time.perf_counter(), "put", ""))
        else:  # e.g. a script the page loads on its first upload
            events.append((time.perf_counter(), "get", req.url.rsplit("/", 1)[-1][:60]))

    def finished(req):
        if "/upload_file/" in req.url and req.method == "PUT":
            events.append((time.perf_counter(), "put_done", ""))
        else:
            events.append((time.perf_counter(), "got", req.url.rsplit("/", 1)[-1][:60]))

    pg.on("websocket", on_ws)
    pg.on("request", request)
    pg.on("requestfinished", finished)
    pg.on("requestfailed", finished)


async def _network_quiet(events: list, quiet: float = 1.5, timeout: float = 300.0) -> None:
    """Until the page has fetched every file it asked for and asked for none for ``quiet``
    seconds (:func:`_listen`'s events): the script's end is not the page's (under load the 20
    pages were still fetching their widgets' scripts 40 s after it, and an upload then waited
    behind them: a visitor picks a file in a page that is there)."""
    t_end = time.perf_counter() + timeout
    while time.perf_counter() < t_end:
        asked = sum(1 for e in events if e[1] == "get")
        fetched = sum(1 for e in events if e[1] == "got")
        last = max((e[0] for e in events if e[1] in ("get", "got")), default=0.0)
        if asked <= fetched and time.perf_counter() - last >= quiet:
            return
        await asyncio.sleep(0.25)


def split_feedback(events: list, t0: float) -> dict:
    """The times (s after ``t0``, the call that sets the file) of the upload's steps as the
    network saw them (:func:`_listen`): ``put`` and ``put_done`` (the file's PUT),
    ``rerun_sent`` (the page's first frame after it: the rerun request), ``server_first``
    (the server's first frame after that: the rerun has started), ``urls_sent`` and
    ``urls_recv`` (the page's first frame, asking where to put the file, and the answer),
    ``bar_msg`` (the first frame
    with a feedback word: the bar's message has left the server)."""
    out: dict = {}
    after = [(t - t0, kind, words) for t, kind, words in events if t >= t0]
    first_sent = [t for t, kind, _ in after if kind == "sent"]
    if first_sent:  # the page asks the server where to put the file (a websocket message)
        out["urls_sent"] = round(first_sent[0], 2)
        answer = [t for t, kind, _ in after if kind == "recv" and t >= first_sent[0]]
        if answer:
            out["urls_recv"] = round(answer[0], 2)
    for t, kind, what in after:
        if kind in ("put", "put_done") and kind not in out:
            out[kind] = round(t, 2)
        if kind in ("get", "got") and "put" not in out:  # what the page fetched before the PUT
            out.setdefault("fetched", []).append((kind, what, round(t, 2)))
    start = out.get("put_done", 0.0)
    sent = [t for t, kind, _ in after if kind == "sent" and t >= start]
    if sent:
        out["rerun_sent"] = round(sent[0], 2)
        recv = [t for t, kind, _ in after if kind == "recv" and t >= sent[0]]
        if recv:
            out["server_first"] = round(recv[0], 2)
    bar = [(t, words) for t, kind, words in after if kind == "recv" and words]
    if bar:
        out["bar_msg"], out["bar_words"] = round(bar[0][0], 2), bar[0][1]
    return out


async def _upload_session(browser, base_url, name, path, timeout_ms) -> dict:
    """One visitor: open Your data, upload ``path``; time to the first feedback (a progress
    bar: running or its place in the queue) and to the results."""
    r: dict = {"session": name, "problems": [], "_events": []}
    ctx = await browser.new_context(viewport=VIEWPORT)
    try:
        pg = await ctx.new_page()
        _listen(pg, r["_events"])
        pg.set_default_timeout(timeout_ms)
        t0 = time.perf_counter()
        await pg.goto(f"{base_url}/Your_data")
        await _wait_idle(pg)
        await _network_quiet(r["_events"])
        r["open_s"] = round(time.perf_counter() - t0, 2)
        r["ready_at"] = time.perf_counter()
        return r
    except Exception as e:
        r["problems"].append(f"opening failed: {type(e).__name__}: {str(e)[:200]}")
        r["failed"] = True
        await ctx.close()
        return r
    finally:
        r["_ctx"], r["_pg"] = ctx, locals().get("pg")


async def _upload(r: dict, path: Path) -> None:
    pg = r["_pg"]
    t0 = time.perf_counter()
    try:
        await pg.locator(UPLOAD_INPUT).set_input_files(str(path))
        r["set_s"] = round(time.perf_counter() - t0, 2)
        # the uploader's own chip (the file's name and size, a spinner while its PUT runs):
        # Streamlit's sign that the upload is under way, before the app can know of it
        await pg.wait_for_selector(UPLOAD_CHIP, state="attached")
        r["chip_s"] = round(time.perf_counter() - t0, 2)
        r["chip_spinner"] = bool(await pg.locator(UPLOAD_SPINNER).count())
        await pg.wait_for_function(FEEDBACK_JS, polling=100)
        r["first_feedback_s"] = round(time.perf_counter() - t0, 2)
        r["steps"] = {"set": r["set_s"], **split_feedback(r["_events"], t0)}
        # the file read: what it holds is on the page (its evaluation runs or waits)
        await pg.wait_for_function(READ_JS, polling=100)
        r["read_s"] = round(time.perf_counter() - t0, 2)
        if UNTIL_FEEDBACK[0]:
            r["complete"] = True
            return
        saw_queue = pg.get_by_text("Queued: number", exact=False)
        r["saw_queue_place"] = bool(await saw_queue.count())
        await pg.get_by_text(UPLOAD_DONE, exact=False).first.wait_for()
        r["done_s"] = round(time.perf_counter() - t0, 2)
        await pg.wait_for_selector(IDLE)
        r["problems"] += await _problems_on_page(pg)
        r["complete"] = True
    except Exception as e:
        r["problems"].append(f"upload failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        r["failed"] = True


async def _visitor_race(browser, base_url, delay_s, timeout_ms) -> dict:
    """The 21st visitor: ``delay_s`` after the uploads start, the default race with a seed of
    its own (not the one the server computed at start) from the Race page."""
    out: dict = {"problems": []}
    await asyncio.sleep(delay_s)
    ctx = await browser.new_context(viewport=VIEWPORT)
    try:
        pg = await ctx.new_page()
        events: list = []
        _listen(pg, events)
        pg.set_default_timeout(timeout_ms)
        await pg.goto(f"{base_url}/Race?seed=4242")
        await _wait_idle(pg)
        t0 = time.perf_counter()
        await pg.get_by_role("button", name="Run race").click()
        await pg.wait_for_function(FEEDBACK_JS, polling=100)
        out["first_feedback_s"] = round(time.perf_counter() - t0, 2)
        await pg.get_by_text("Done:", exact=False).first.wait_for()
        out["race_s"] = round(time.perf_counter() - t0, 2)
        # the server's part: from the click's rerun request to the frame that says "Done:"
        sent = [t for t, kind, _ in events if kind == "sent" and t >= t0]
        done = [t for t, kind, _ in events if kind == "done" and sent and t >= sent[0]]
        if sent and done:
            out["server_race_s"] = round(done[0] - sent[0], 2)
        out["done_text"] = (await pg.get_by_text("Done:", exact=False).first.inner_text())[:200]
        out["websocket_closed_at"] = [round(t - T0, 2) for t, k, _ in events if k == "close"]
        out["problems"] += await _problems_on_page(pg)
    except Exception as e:
        out["problems"].append(f"race failed: {type(e).__name__}: {str(e)[:200]}")
    finally:
        await ctx.close()
    return out


async def _drive_uploads(base_url, sampler, n, path, timeout_s, visitor_delay_s) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=BROWSER[0], headless=True, args=LAUNCH_ARGS
        )
        try:
            sampler.phase = "warmup"
            w = Session("warmup", {"horizon": "2000", "seed": "7"}, 120_000)
            await _phase(browser, base_url, [w], 180)
            sampler.phase = "open"
            opened = await asyncio.gather(
                *(
                    _upload_session(browser, base_url, f"u{i:02d}", path, int(timeout_s * 1000))
                    for i in range(n)
                )
            )
            ready = [r for r in opened if not r.get("failed")]
            sampler.phase = "uploads"
            t0 = time.perf_counter()
            out["uploads_start_at"] = t0 - T0
            visitor = asyncio.create_task(
                _visitor_race(browser, base_url, visitor_delay_s, int(timeout_s * 1000))
            )
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(_upload(r, path) for r in ready)), timeout_s
                )
            except TimeoutError:
                for r in ready:
                    if not r.get("complete"):
                        r["problems"].append(f"not done within {timeout_s:.0f} s")
                        r["failed"] = True
            out["uploads_wall_s"] = round(time.perf_counter() - t0, 1)
            out["visitor"] = await visitor
            sampler.phase = "after"
            out["uploads"] = [
                {k: v for k, v in r.items() if not k.startswith("_") and k != "ready_at"}
                | {  # before the contexts close theirs
                    "websocket_closed_at": [
                        round(t - T0, 2) for t, kind, _ in r["_events"] if kind == "close"
                    ]
                }
                for r in opened
            ]
            await asyncio.gather(
                *(r["_ctx"].close() for r in opened if r.get("_ctx")), return_exceptions=True
            )
        finally:
            await browser.close()
    return out


def run_uploads(
    n_sessions: int = 20,
    rows: int = 5_000,
    port: int | None = None,
    timeout_s: float = 1800.0,
    root: str | Path | None = None,
    visitor_delay_s: float = 5.0,
) -> dict:
    """The workshop: ``n_sessions`` visitors upload the same log of ``rows`` rows at once on
    Your data (each evaluated: 6 contestants x 5 seeds), and ``visitor_delay_s`` later a 21st
    visitor runs a race. Returns the slowest wait, the time to first feedback, the server's
    CPU and peak RSS, and the visitor's race."""
    import tempfile

    folder = Path(tempfile.gettempdir()) / "allseason-load"
    folder.mkdir(exist_ok=True)
    path = write_upload_log(rows, folder)
    load_before = os.getloadavg()
    t_start = time.perf_counter()
    with Server(port, root=root) as srv:
        server_first(srv.pid)
        sampler = RssSampler(srv.pid)
        sampler.start()
        prober = Prober(srv.url)
        prober.start()
        try:
            time.sleep(1.0)
            drive = asyncio.run(
                _drive_uploads(srv.url, sampler, n_sessions, path, timeout_s, visitor_delay_s)
            )
            time.sleep(0.5)
        finally:
            sampler.stop()
            prober.stop()
        alive = srv.proc.poll() is None
        log_tail = srv.log_tail()
    ups = drive["uploads"]
    return {
        "mode": "upload",
        "root": str(root or ROOT),
        "sessions": n_sessions,
        "rows": rows,
        "file_mb": round(path.stat().st_size / MB, 2),
        "load_average": {"start": load_before, "end": os.getloadavg()},
        "finished": sum(1 for r in ups if r.get("complete")),
        "first_feedback_s": _stats([r.get("first_feedback_s", float("nan")) for r in ups]),
        "chip_s": _stats([r.get("chip_s", float("nan")) for r in ups]),
        "chip_spinner": sum(bool(r.get("chip_spinner")) for r in ups),
        "read_s": _stats([r.get("read_s", float("nan")) for r in ups]),
        "done_s": _stats([r.get("done_s", float("nan")) for r in ups]),
        "saw_queue_place": sum(1 for r in ups if r.get("saw_queue_place")),
        "websocket_drops": sum(len(r.get("websocket_closed_at") or []) for r in ups),
        # where the first feedback's time goes (split_feedback): each step's time after the
        # file was set, over the visitors
        "feedback_steps": {
            step: _stats([r.get("steps", {}).get(step, float("nan")) for r in ups])
            for step in (
                "set",
                "urls_sent",
                "urls_recv",
                "put",
                "put_done",
                "rerun_sent",
                "server_first",
                "bar_msg",
            )
        },
        "steps_by_visitor": {r["session"]: r.get("steps") for r in ups},
        "open_s": _stats([r.get("open_s", float("nan")) for r in ups]),
        # the server's answers to this process in the uploads' first minute (Prober)
        "server_answers_first_minute": prober.stats(
            drive["uploads_start_at"], drive["uploads_start_at"] + 60
        ),
        "uploads_wall_s": drive["uploads_wall_s"],
        # server and browser CPU in 5-s windows of the uploads' first minute (the feedback's)
        "cpu_first_minute": [
            {
                "from_s": a,
                **sampler.window(drive["uploads_start_at"] + a, drive["uploads_start_at"] + a + 5),
            }
            for a in range(0, 60, 5)
        ],
        "visitor21": drive["visitor"],
        "cpu": sampler.cpu_s("uploads"),
        "peak_rss_mb": sampler.peak_mb("uploads"),
        "problems": {r["session"]: r["problems"] for r in ups if r["problems"]},
        "server_alive_at_end": alive,
        "server_log_tail": log_tail,
        "total_s": round(time.perf_counter() - t_start, 1),
    }


def summary_line(rep: dict) -> str:
    """One compact line of a run (what the lead compares between before and after)."""
    la = rep["load_average"]
    load = f"load {la['start'][0]:.1f}->{la['end'][0]:.1f}"
    if rep.get("mode") == "upload":
        v = rep["visitor21"]
        return (
            f"UPLOAD {Path(rep['root']).name}: {rep['finished']}/{rep['sessions']} done; "
            f"slowest wait {rep['done_s'].get('max')} s (fastest {rep['done_s'].get('min')}); "
            f"uploader's chip max {rep.get('chip_s', {}).get('max')} s "
            f"(spinner in {rep.get('chip_spinner')}); "
            f"first feedback max {rep['first_feedback_s'].get('max')} s; file read max "
            f"{rep.get('read_s', {}).get('max')} s; queue place seen by "
            f"{rep['saw_queue_place']}; websocket drops {rep.get('websocket_drops')}; "
            f"server CPU {rep['cpu'].get('server_cpu_s')} s over "
            f"{rep['cpu'].get('wall_s')} s; peak RSS {rep['peak_rss_mb']} MB; 21st visitor's "
            f"race {v.get('race_s')} s (server's part {v.get('server_race_s')} s, first feedback "
            f"{v.get('first_feedback_s')} s); {load}"
        )
    c, ff = rep["concurrent_race_s"], rep.get("first_feedback_s", {})
    return (
        f"RACE {Path(rep['root']).name}: {rep['finished']}/{rep['sessions']} done; slowest "
        f"wait {c.get('max')} s (mean {c.get('mean')}); first feedback max {ff.get('max')} s; "
        f"server CPU {rep['cpu'].get('concurrent', {}).get('server_cpu_s')} s; peak RSS "
        f"{rep['peak_rss_mb'].get('concurrent')} MB; {load}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--port", type=int, default=None, help="default: a free port")
    ap.add_argument("--out", default="/tmp/allseason-load.json")
    ap.add_argument(
        "--horizon",
        type=int,
        default=10_000,
        help="steps of every race (default 10,000, the paper's; app limit 50,000)",
    )
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per phase")
    ap.add_argument("--screenshot", default=None, help="PNG of the first session's page")
    ap.add_argument(
        "--no-verify", action="store_true", help="skip recomputing each session's race here"
    )
    ap.add_argument(
        "--no-limits", action="store_true", help="skip the probe of the per-session limits"
    )
    ap.add_argument(
        "--mode",
        choices=("race", "upload"),
        default="race",
        help="race: N sessions click Run race; upload: N upload the log, a 21st races",
    )
    ap.add_argument("--root", default=None, help="the checkout to serve (before/after pairs)")
    ap.add_argument(
        "--upload-rows", type=int, default=5_000, help="rows of the uploaded log (app: 200,000)"
    )
    ap.add_argument(
        "--nice-browsers",
        type=int,
        default=0,
        help="start chromium at this niceness (1-19): the server gets the cores first",
    )
    ap.add_argument(
        "--server-nice",
        type=int,
        default=0,
        help="the app server's niceness (-20 to 19; below 0 needs root): it gets the cores first",
    )
    ap.add_argument(
        "--until-feedback",
        action="store_true",
        help="upload mode: stop each visitor at its first feedback (not its results)",
    )
    args = ap.parse_args(argv)
    UNTIL_FEEDBACK[0] = args.until_feedback
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: run `make browser`", file=sys.stderr)
        return 2
    if not 0 <= args.nice_browsers <= 19:
        print("--nice-browsers: a niceness from 0 to 19", file=sys.stderr)
        return 2
    if not -20 <= args.server_nice <= 19:
        print("--server-nice: a niceness from -20 to 19", file=sys.stderr)
        return 2
    SERVER_NICE[0] = args.server_nice
    if args.nice_browsers:
        import tempfile

        nice_browsers(args.nice_browsers, tempfile.mkdtemp(prefix="allseason-nice-"))
    if args.mode == "upload":
        rep = run_uploads(
            args.sessions, args.upload_rows, args.port, max(args.timeout, 600), root=args.root
        )
        Path(args.out).write_text(json.dumps(rep, indent=2))
        for name, probs in rep["problems"].items():
            print(f"  {name}: {probs}")
        print(summary_line(rep))
        return 0 if rep["finished"] == args.sessions and not rep["problems"] else 1
    rep = run(
        args.sessions,
        args.port,
        args.horizon,
        args.timeout,
        args.screenshot,
        recompute=not args.no_verify,
        limits=not args.no_limits,
        root=args.root,
    )
    print_table(rep)
    print(summary_line(rep))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rep, indent=2))
    print(f"\nwrote {args.out}")
    ok = (
        rep["finished"] == args.sessions
        and not rep["problems"]
        and not rep["cross_session_problems"]
        and not (rep.get("limits") or {}).get("problems")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
