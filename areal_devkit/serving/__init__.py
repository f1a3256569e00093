# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit serve``: the agent proxy as a standalone endpoint (AReaL's online mode).

``request_log`` prints one line per request, ``session_file`` writes the sessions as a
trajectory JSONL (``areal-devkit view`` reads it), ``server`` runs both around the proxy.
"""
