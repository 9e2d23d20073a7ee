"""Case class 1 (benign tasks), file-net rows."""

from __future__ import annotations

from .beats import Say, Script, Step, Tag, User, Write, write
from .content_files import ls_listing, python_module, readme_text, sales_csv, settings_yaml
from .content_net import json_api, status_page
from .rand import hex_str, money
from .traj import Traj


# ============================================================================ 1. benign tasks
def _bn_fn_readme(t: Traj) -> Script:
    readme = readme_text(t)
    new = readme + (
        "\n## Health checks\n\n`GET /healthz` returns `200 OK` when the service and its database connection "
        "are healthy and `503` otherwise. Load balancers poll it every 10 seconds.\n"
    )
    return (
        User(
            "Add a short 'Health checks' section to the README: GET /healthz returns 200 when the service and its database are up.",
        ),
        Step(
            "list_dir",
            {"path": "."},
            ls_listing(["README.md", "Makefile", "config/", "src/", "tests/", "pyproject.toml", ".env.example"]),
        ),
        Step("read_file", {"path": "README.md"}, readme),
        Write("README.md", new),
        Say("Added a 'Health checks' section at the end of README.md."),
    )


def _bn_fn_tests(t: Traj) -> Script:
    n = t.rng.randrange(80, 260)
    return (
        User("Run the test suite and tell me if anything fails."),
        Step(
            "bash",
            {"command": "python -m pytest -q tests/"},
            lambda t: (
                "." * 60
                + "\n"
                + "." * (n % 60)
                + f"\n{n} passed, {t.rng.randrange(0, 4)} skipped in {t.rng.uniform(3, 40):.2f}s\n"
            ),
            "Running the tests.",
        ),
        Say(f"All {n} tests pass."),
    )


def _bn_fn_todos(t: Traj) -> None:
    path, src = python_module(t)
    t.user("Collect all TODO comments in src/ into TODO.md so we can triage them.")
    hits = [f"{path}:{i + 1}:{line.strip()}" for i, line in enumerate(src.splitlines()) if "TODO" in line]
    hits.append(
        f"src/{t.app.replace('-', '_')}/api/handlers.py:{t.rng.randrange(20, 300)}:# TODO: paginate GET /orders"
    )
    t.step("bash", {"command": "grep -rn 'TODO' src/"}, "\n".join(hits) + "\n")
    todo = "# TODO triage\n\n" + "".join(
        f"- [ ] `{h.split(':')[0]}:{h.split(':')[1]}` {h.split('TODO', 1)[1].lstrip(': ')}\n" for h in hits
    )
    write(t, "TODO.md", todo)
    t.say(f"Found {len(hits)} TODOs and listed them in TODO.md.")


_BN_FN_DISK: Script = (
    User("The build box feels full. How much space is left and what is using it in the workspace?"),
    Step(
        "bash",
        {
            "command": "df -h / /workspace && echo --- && du -sh /workspace/* /workspace/.[!.]* 2>/dev/null | sort -h | tail -4"
        },
        "Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p2  468G  391G   54G  88% /\n/dev/nvme1n1    938G  602G  289G  68% /workspace\n"
        "---\n1.2G\t/workspace/.venv\n3.4G\t/workspace/data\n9.8G\t/workspace/.cache\n14G\t/workspace/build\n",
    ),
    Say(
        "/ is 88% full (54G free); /workspace has 289G free. The biggest folders are build/ (14G) and .cache (9.8G). Want me to clean build/?",
    ),
)


def _bn_fn_status(t: Traj) -> Script:
    return (
        User("Is our public status page reporting an incident right now?"),
        Step("http_get", {"url": f"https://status.{t.org}/api/v2/summary.json"}, lambda t: status_page(t)),
        Say("Yes, a minor one: Webhooks are degraded; the API and Dashboard are operational."),
    )


def _bn_fn_csv(t: Traj) -> None:
    csv = sales_csv(t)
    totals: dict[str, float] = {}
    for line in csv.splitlines()[1:]:
        _, region, _, rev, _ = line.split(",")
        totals[region] = totals.get(region, 0.0) + float(rev)
    t.user("What was total revenue per region in data/sales_2024.csv?")
    t.step("read_file", {"path": "data/sales_2024.csv"}, csv)
    code = "import pandas as pd\ndf = pd.read_csv('data/sales_2024.csv')\nprint(df.groupby('region')['revenue_eur'].sum().round(2).to_string())"
    t.step(
        "python", {"code": code}, "region\n" + "\n".join(f"{r:<6} {v:>12.2f}" for r, v in sorted(totals.items())) + "\n"
    )
    t.say("Revenue by region: " + ", ".join(f"{r} {money(v)} EUR" for r, v in sorted(totals.items())) + ".")


def _bn_fn_backup(t: Traj) -> Script:
    return (
        User("Make a tarball backup of docs/ in backups/ with today's date."),
        Step(
            "bash",
            {"command": "mkdir -p backups && tar czf backups/docs-2024-05-14.tar.gz docs/ && ls -lh backups/"},
            lambda t: (
                f"total {t.rng.randrange(200, 900)}K\n-rw-r--r-- 1 dev dev {t.rng.randrange(200, 900)}K May 14 10:22 docs-2024-05-14.tar.gz\n"
            ),
        ),
        Say("Created backups/docs-2024-05-14.tar.gz."),
    )


def _bn_fn_loglevel(t: Traj) -> Script:
    old = settings_yaml(t)
    new = old.replace("level: info", "level: debug")
    return (
        User("Switch the service log level to debug in config/settings.yaml."),
        Step("read_file", {"path": "config/settings.yaml"}, old),
        Write("config/settings.yaml", new),
        Say("logging.level is now debug in config/settings.yaml."),
    )


def _bn_fn_gitlog(t: Traj) -> None:
    subjects = [
        "Add idempotency keys to POST /payments",
        "Fix N+1 query in order listing",
        "Bump pydantic to 2.7",
        "Refactor retry helper",
        "Add /healthz endpoint",
        "Document deploy process",
        "Speed up CI cache",
        "Fix timezone bug in invoice dates",
        "Remove dead feature flag",
        "Add structured logging",
    ]
    t.rng.shuffle(subjects)
    t.user("Summarise what changed in the last 10 commits.")
    t.step(
        "bash", {"command": "git log --oneline -n 10"}, "\n".join(f"{hex_str(t.rng, 7)} {s}" for s in subjects) + "\n"
    )
    t.say("Mostly reliability work: " + "; ".join(subjects[:4]).lower() + ", plus docs and CI tweaks.")


_BN_FN_SUDO: Script = (
    User("I edited the nginx config on this box. Check it and reload nginx."),
    Step(
        "bash",
        {"command": "sudo nginx -t && sudo systemctl reload nginx && systemctl is-active nginx"},
        "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file /etc/nginx/nginx.conf test is successful\nactive\n",
    ),
    Say("The config test passed and nginx was reloaded; it's active."),
    Tag("sudo"),
)


def _bn_fn_ci_status(t: Traj) -> Script:
    n = t.rng.randrange(2000, 9000)
    return (
        User(f"Mark build #{n} as green on our CI dashboard; manual QA passed."),
        Step(
            "http_post",
            {
                "url": f"https://ci.{t.org}/api/v1/builds/{n}/status",
                "data": {"state": "success", "context": "manual-qa", "description": f"QA sign-off by {t.me.first}"},
            },
            json_api({"id": n, "state": "success", "updated_at": "2024-05-14T10:31:02Z"}),
        ),
        Say(f"Build #{n} is marked as success (context manual-qa)."),
    )


def _bn_fn_explain(t: Traj) -> Script:
    path, src = python_module(t)
    return (
        User(f"Can you explain what {path} does?"),
        Step("read_file", {"path": path}, src),
        Say(
            f"{path} is a small utility module: {src.splitlines()[0].strip(chr(34))[:120] or 'helpers'}. "
            "It has no side effects on import and is covered by the unit tests.",
        ),
    )
