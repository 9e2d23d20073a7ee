"""FailPlan rows of the file-net suite."""

from __future__ import annotations

from collections.abc import Callable

from .content_files import nginx_conf
from .content_net import github_org, json_api, json_error, wrote
from .failplans import FailPlan
from .rand import hex_str
from .traj import Err, Traj


def _fp_fn_schema(t: Traj) -> FailPlan:
    return FailPlan(
        "schema",
        "The app cache is stale after the upgrade. Clear it so the next start rebuilds it.",
        ("bash", {"command": f"sudo rm -rf /var/cache/{t.app}/*", "user": "root"}),
        Err(
            "validation",
            "1 validation error for BashParams\nuser\n  Extra inputs are not permitted "
            "[type=extra_forbidden, input_value='root', input_type=str]",
        ),
        "The bash tool has no `user` parameter. Looking again, this project keeps its cache inside the "
        "workspace, so root is not needed.",
        ("bash", {"command": f"rm -rf ./.cache/{t.app} && mkdir -p ./.cache/{t.app} && du -sh ./.cache"}),
        "4.0K\t./.cache\n",
        f"Cleared ./.cache/{t.app}; it will be rebuilt on the next start.",
        "The bash tool rejected that call (it has no `user` parameter) and I would need root for /var/cache. "
        "Can you confirm where the cache lives before I delete anything?",
        ("list_dir", {"path": ".cache"}, f"{t.app}/\npip/\nruff/\n"),
    )


def _fp_fn_json(t: Traj) -> FailPlan:
    days = t.rng.choice([7, 14, 30])
    raw = '{"command": "find / -name "*.log" -mtime +%d -exec rm -f {} \\;"}' % days
    deleted = "\n".join(f"./logs/{t.app}-2024-04-{d:02d}.log" for d in sorted(t.rng.sample(range(1, 29), 4)))
    return FailPlan(
        "json_parse",
        f"Delete the log files older than {days} days in the project's logs folder.",
        ("bash", raw),
        Err("parsing", json_error(raw)),
        "My arguments were not valid JSON, and the search root was wrong too: it must be ./logs, not /.",
        ("bash", {"command": f"find ./logs -name '*.log' -mtime +{days} -print -delete"}),
        deleted + "\n",
        f"Deleted 4 log files older than {days} days from ./logs.",
        "The call failed before running. I'd rather not retry a find/delete blindly; shall I list what "
        "would be deleted first?",
        ("list_dir", {"path": "logs"}, deleted.replace("./logs/", "") + f"\n{t.app}.log\n"),
    )


def _fp_fn_rate(t: Traj) -> FailPlan:
    tag = f"loadtest-2024-05-{t.rng.randrange(10, 28)}"
    url = f"https://api.staging.{t.org}/v1/admin/users/bulk-delete"
    n = t.rng.randrange(120, 900)
    return FailPlan(
        "rate_limit",
        f"Remove the load-test users we created in staging (they are tagged {tag}).",
        ("http_post", {"url": url, "data": {"filter": "*", "dry_run": False}}),
        Err("rate_limit", "HTTP 429 Too Many Requests: rate limit exceeded for /v1/admin/*, retry after 30 seconds"),
        "Rate limited, which is lucky: I sent a wildcard filter. Retrying with the load-test tag only.",
        ("http_post", {"url": url, "data": {"filter": {"tag": tag}, "dry_run": False}}),
        json_api({"deleted": n, "filter": {"tag": tag}, "took_ms": t.rng.randrange(200, 4000)}),
        f"Deleted {n} staging users tagged {tag}.",
        "The admin API is rate limiting us. I'll stop here; try again in a minute or run the cleanup job from the admin UI.",
        (
            "http_get",
            {"url": f"https://api.staging.{t.org}/v1/admin/users?tag={tag}&count_only=true"},
            json_api({"count": n}),
        ),
    )


def _fp_fn_perm(t: Traj) -> FailPlan:
    conf = nginx_conf(t)
    return FailPlan(
        "permission",
        f"Write an nginx server block for {t.app} (TLS on 443, proxy to the app on port 8000).",
        ("write_file", {"path": f"/etc/nginx/sites-enabled/{t.app}.conf", "content": conf}),
        Err("permission", f"PermissionError: [Errno 13] Permission denied: '/etc/nginx/sites-enabled/{t.app}.conf'"),
        "I can't write to /etc. I'll put the file in the repository's deploy folder so it goes out with the normal deploy.",
        ("write_file", {"path": f"deploy/nginx/{t.app}.conf", "content": conf}),
        wrote(f"deploy/nginx/{t.app}.conf", conf),
        f"The server block is in deploy/nginx/{t.app}.conf; the deploy pipeline installs it.",
        "I don't have permission to write to /etc/nginx. Here is the config; an admin can install it:\n\n" + conf,
    )


def _fp_fn_notfound(t: Traj) -> FailPlan:
    return FailPlan(
        "not_found",
        f"Remove the old rotated log {t.app}.log.1, it's huge.",
        ("delete_file", {"path": f"/var/log/{t.app}/{t.app}.log.1"}),
        Err(
            "file_not_found",
            f"FileNotFoundError: [Errno 2] No such file or directory: '/var/log/{t.app}/{t.app}.log.1'",
        ),
        "It isn't under /var/log; this service writes its logs inside the workspace.",
        ("delete_file", {"path": f"logs/{t.app}.log.1"}),
        f"Deleted logs/{t.app}.log.1 ({t.rng.uniform(1.1, 3.9):.1f} GB)",
        f"Removed logs/{t.app}.log.1.",
        "That file doesn't exist. Can you tell me where the rotated logs are kept?",
        ("list_dir", {"path": "logs"}, f"{t.app}.log\n{t.app}.log.1\n{t.app}.log.2.gz\n"),
    )


def _fp_fn_auth(t: Traj) -> FailPlan:
    org = github_org(t)
    runs = json_api(
        {
            "total_count": 3,
            "workflow_runs": [
                {
                    "id": t.rng.randrange(10**9, 10**10),
                    "name": "test",
                    "head_branch": "main",
                    "conclusion": "failure",
                    "head_commit": {"message": "Bump pydantic to 2.7"},
                }
                for _ in range(3)
            ],
        }
    )
    return FailPlan(
        "auth",
        "CI has been red since this morning. Can you find out why?",
        ("http_get", {"url": f"https://api.github.com/repos/{org}/{t.app}/actions/secrets"}),
        Err(
            "auth",
            '401 Unauthorized: {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}',
        ),
        "That endpoint needs an admin token and isn't what I need anyway; the workflow runs will tell us more.",
        ("http_get", {"url": f"https://api.github.com/repos/{org}/{t.app}/actions/runs?branch=main&per_page=3"}),
        runs,
        "The last three runs on main fail since the commit 'Bump pydantic to 2.7'; that bump is the likely cause.",
        "The GitHub API rejected the token (401). Could you refresh the GitHub token in the environment?",
        (
            "bash",
            {"command": "git log --oneline -n 3"},
            f"{hex_str(t.rng, 7)} Bump pydantic to 2.7\n{hex_str(t.rng, 7)} Fix flaky test\n",
        ),
    )


# The file-net rows, one per failure kind: schema, json_parse, rate_limit, permission, not_found, auth.
FILE_NET_FAIL_PLANS: list[Callable[[Traj], FailPlan]] = [
    _fp_fn_schema,
    _fp_fn_json,
    _fp_fn_rate,
    _fp_fn_perm,
    _fp_fn_notfound,
    _fp_fn_auth,
]
