"""The results tests/logs shares with other folders, made once per session
(``tests/shared_results.py``)."""

from ..shared_results import shared_deployment_example, shared_obd_runs  # noqa: F401
