"""The Live page's keys, paced in the browser (issue 27's key storm).

At speed 400, keys from ``N123456789P`` pressed as fast as a keyboard repeats them turned
the page white ("Bad delta path index 1 (should be between [0, 0])", Streamlit 1.67's
front end): each key is a click on a button inside the stage fragment, so each one starts a
fragment rerun while the previous one -- or the fragment's own ``run_every`` rerun -- is
still sending its elements, and the front end applied a delta to a block it had just
emptied. The cause is in Streamlit's front end; this is the workaround: a key for a stage
button is taken from Streamlit's own shortcut handler and kept (only the last one) until no
script run is in progress, then that button is clicked; at most one click every
:data:`GAP_MS`, and a key waits at most :data:`MAX_WAIT_MS` for an idle moment (so a slow
server cannot make the keys dead). Typing in an input is never touched.
"""

from __future__ import annotations

import streamlit as st

GAP_MS = 150  # at most one key-click this often
MAX_WAIT_MS = 1000  # a kept key is clicked after this long even if a run is in progress

_SCRIPT = """
<script>
(function () {
  if (window.__allseasonKeyGate) return;
  window.__allseasonKeyGate = true;
  const BUTTONS = {
    n: '[class*="st-key-live_new_"] button',
    p: ".st-key-live_pause button, .st-key-live_resume button",
  };
  for (let k = 1; k <= 9; k++) BUTTONS[String(k)] = ".st-key-live_season_" + k + " button";
  let pending = null, since = 0, last = 0;
  const running = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.dataset.testScriptState === "running";
  };
  window.addEventListener("keydown", (e) => {
    if (!document.querySelector(".st-key-live_buttons")) return;  // not the Live page
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const key = (e.key || "").toLowerCase();
    if (!(key in BUTTONS)) return;
    e.preventDefault();
    e.stopImmediatePropagation();  // Streamlit's shortcut handler does not see it
    if (pending === null) since = Date.now();
    pending = key;  // a storm keeps only its last key
  }, true);
  setInterval(() => {
    if (pending === null) return;
    const now = Date.now();
    if (now - last < GAP_MS) return;
    if (running() && now - since < MAX_WAIT_MS) return;
    const button = document.querySelector(BUTTONS[pending]);
    pending = null;
    if (button && !button.disabled) {
      last = now;
      button.click();
    }
  }, 40);
})();
</script>
"""


def install() -> None:
    """Put the key gate into the page (once per browser tab; later calls do nothing there)."""
    script = _SCRIPT.replace("GAP_MS", str(GAP_MS)).replace("MAX_WAIT_MS", str(MAX_WAIT_MS))
    st.html(script, unsafe_allow_javascript=True)


__all__ = ["install", "GAP_MS", "MAX_WAIT_MS"]
