"""Stage ``settings_outputs``: in a key=value settings file a path label calls secret
(policy ``labels.settings_files``: dotenv files, ``~/.aws/config``), only the credentials are
secret. An action whose output parses whole as such a file carries, by data edges, its
label with those files capped at internal (``action_roles.settings_conf``); each line of it
that may hold a credential is a span that keeps secret (``sql/edges.sql``). Resource and
explicit edges still carry the whole label (``action_roles.full_conf``): a copy of the file
holds its credentials."""

from __future__ import annotations

import duckdb

from pipeline.policy import Policy
from pipeline.policy_tables import NEVER
from pipeline.sql import materialize


def settings_outputs(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Materialise ``settings_outputs`` and lower ``action_roles.conf`` of the actions in it
    to ``settings_conf`` (run after ``content_labels``: a file seen to hold a secret raises
    ``full_conf``, while what this output shows of it is judged line by line)."""
    settings = policy.data.get("labels", {}).get("settings_files", {})
    # policy_checks makes sure the rule exists whenever `files` names any; with no files no
    # action has a settings_conf below its conf, and the query returns no row
    rule = next((r for r in policy.data.get("content", {}).get("sources", [])
                 if r.get("name") == settings.get("credential_rule") and r.get("kind", "match") == "match"), {})
    shapes = str(con.execute("select pattern from policy_settings_shapes_any").fetchall()[0][0])
    materialize(con, "settings_outputs", shapes=shapes, line_prefix=str(settings.get("line_prefix") or NEVER),
                random_length=int(settings.get("random_length", 24)), mixed_length=int(settings.get("mixed_length", 8)),
                max_bytes=int(settings.get("max_bytes", 1 << 20)), credential_pattern=str(rule.get("pattern") or NEVER),
                credential_unless=str(rule.get("unless") or NEVER))
    con.execute("""
        update action_roles a set conf = a.settings_conf
        from settings_outputs s
        where a.trajectory_id = s.trajectory_id and a.action_idx = s.action_idx and a.settings_conf < a.conf""")
