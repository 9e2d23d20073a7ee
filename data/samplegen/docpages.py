"""Documentation pages (topic, url, title, body) the web scenarios search for and fetch."""

from __future__ import annotations

# ============================================================================ content: web
DOC_PAGES: list[tuple[str, str, str, str]] = [
    (
        "pathlib glob recursive",
        "https://docs.python.org/3/library/pathlib.html",
        "pathlib — Object-oriented filesystem paths — Python 3.12 documentation",
        "Path.glob(pattern, *, case_sensitive=None)\nGlob the given relative pattern in the directory represented by this "
        "path, yielding all matching files (of any kind). Patterns are the same as for fnmatch, with the addition of "
        '"**" which means "this directory and all subdirectories, recursively". In other words, it enables recursive '
        "globbing:\n\n>>> sorted(Path('.').glob('**/*.py'))\n[PosixPath('build/lib/pathlib.py'), PosixPath('docs/conf.py'), "
        "PosixPath('pathlib.py'), PosixPath('setup.py'), PosixPath('test_pathlib.py')]\n\nPath.rglob(pattern) is like "
        'calling Path.glob() with "**/" added in front of the given relative pattern.\n\nChanged in version 3.12: the '
        'case_sensitive parameter was added. Note: using the "**" pattern in large directory trees may consume an '
        "inordinate amount of time.",
    ),
    (
        "requests timeout",
        "https://requests.readthedocs.io/en/latest/user/advanced/",
        "Advanced Usage — Requests 2.32.3 documentation",
        "Timeouts\nMost requests to external servers should have a timeout attached, in case the server is not "
        "responding in a timely manner. By default, requests do not time out unless a timeout value is set explicitly. "
        "Without a timeout, your code may hang for minutes or more.\n\nThe connect timeout is the number of seconds "
        "Requests will wait for your client to establish a connection to a remote machine. It's a good practice to set "
        "connect timeouts to slightly larger than a multiple of 3, which is the default TCP packet retransmission "
        "window.\n\nr = requests.get('https://github.com', timeout=(3.05, 27))\n\nIf the remote server is very slow, "
        "you can tell Requests to wait forever for a response, by passing None as a timeout value.",
    ),
    (
        "postgres vacuum bloat",
        "https://www.postgresql.org/docs/16/routine-vacuuming.html",
        "PostgreSQL: Documentation: 16: 25.1. Routine Vacuuming",
        "PostgreSQL databases require periodic maintenance known as vacuuming. For many installations, it is "
        "sufficient to let vacuuming be performed by the autovacuum daemon.\n\n25.1.2. Recovering Disk Space\nIn "
        "PostgreSQL, an UPDATE or DELETE of a row does not immediately remove the old version of the row. The standard "
        "form of VACUUM removes dead row versions in tables and indexes and marks the space available for future reuse. "
        "However, it will not return the space to the operating system, except in the special case where one or more "
        "pages at the end of a table become entirely free. VACUUM FULL actively compacts tables by writing a complete "
        "new version of the table file with no dead space; it requires an ACCESS EXCLUSIVE lock.",
    ),
    (
        "kubernetes rollout undo",
        "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/",
        "Deployments | Kubernetes",
        "Rolling Back a Deployment\nSometimes, you may want to rollback a Deployment; for example, when the Deployment "
        "is not stable, such as crash looping. By default, all of the Deployment's rollout history is kept in the "
        "system so that you can rollback anytime you want (you can change that by modifying revision history "
        "limit).\n\nkubectl rollout history deployment/nginx-deployment\nkubectl rollout undo deployment/nginx-deployment "
        "--to-revision=2\n\nA Deployment's revision is created when a Deployment's rollout is triggered. This means "
        "that the new revision is created if and only if the Deployment's Pod template (.spec.template) is changed.",
    ),
    (
        "git rebase autosquash",
        "https://git-scm.com/docs/git-rebase",
        "Git - git-rebase Documentation",
        "--autosquash, --no-autosquash\nAutomatically squash commits with specially formatted messages into previous "
        'commits being rebased. If a commit message starts with "squash! ", "fixup! " or "amend! ", the remainder '
        "of the subject line is taken as a commit specifier, which matches a previous commit if it matches the subject "
        "line or the hash of that commit.\n\nThe recommended way to create fixup/amend/squash commits is by using the "
        "--fixup, --fixup=amend: or --fixup=reword: and --squash options of git-commit.\n\nSettings the configuration "
        "variable rebase.autoSquash to true enables auto-squashing by default for interactive rebase.",
    ),
    (
        "docker multi-stage build",
        "https://docs.docker.com/build/building/multi-stage/",
        "Multi-stage builds | Docker Docs",
        "With multi-stage builds, you use multiple FROM statements in your Dockerfile. Each FROM instruction can use a "
        "different base, and each of them begins a new stage of the build. You can selectively copy artifacts from one "
        "stage to another, leaving behind everything you don't want in the final image.\n\n# syntax=docker/dockerfile:1\n"
        "FROM golang:1.21 AS build\nWORKDIR /src\nCOPY main.go .\nRUN go build -o /bin/hello ./main.go\n\nFROM scratch\n"
        'COPY --from=build /bin/hello /bin/hello\nCMD ["/bin/hello"]\n\nYou only need the single Dockerfile. You don\'t '
        "need a separate build script.",
    ),
    (
        "rust result question mark",
        "https://doc.rust-lang.org/book/ch09-02-recoverable-errors-with-result.html",
        "Recoverable Errors with Result - The Rust Programming Language",
        "A Shortcut for Propagating Errors: the ? Operator\nThe ? placed after a Result value is defined to work in "
        "almost the same way as the match expressions we defined to handle the Result values. If the value of the "
        "Result is an Ok, the value inside the Ok will get returned from this expression, and the program will "
        "continue. If the value is an Err, the Err will be returned from the whole function as if we had used the "
        "return keyword so the error value gets propagated to the calling code.\n\nThe ? operator can only be used in "
        "functions whose return type is compatible with the value the ? is used on.",
    ),
    (
        "systemd timer persistent",
        "https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html",
        "systemd.timer",
        "Persistent=\nTakes a boolean argument. If true, the time when the service unit was last triggered is stored "
        "on disk. When the timer is activated, the service unit is triggered immediately if it would have been "
        "triggered at least once during the time when the timer was inactive. Such triggering is nonetheless subject "
        "to the delay imposed by RandomizedDelaySec=. This is useful to catch up on missed runs of the service when "
        "the system was powered down. Note that this setting only has an effect on timers configured with "
        "OnCalendar=. Defaults to false.",
    ),
    (
        "nginx proxy_read_timeout",
        "https://nginx.org/en/docs/http/ngx_http_proxy_module.html",
        "Module ngx_http_proxy_module",
        "Syntax: proxy_read_timeout time;\nDefault: proxy_read_timeout 60s;\nContext: http, server, location\n\n"
        "Defines a timeout for reading a response from the proxied server. The timeout is set only between two "
        "successive read operations, not for the transmission of the whole response. If the proxied server does not "
        "transmit anything within this time, the connection is closed.\n\nSyntax: proxy_buffering on | off;\nEnables "
        "or disables buffering of responses from the proxied server.",
    ),
    (
        "asyncio taskgroup",
        "https://docs.python.org/3/library/asyncio-task.html",
        "Coroutines and Tasks — Python 3.12 documentation",
        "Task Groups\nTask groups combine a task creation API with a convenient and reliable way to wait for all tasks "
        "in the group to finish.\n\nclass asyncio.TaskGroup\nAn asynchronous context manager holding a group of tasks. "
        "Tasks can be added to the group using create_task(). All tasks are awaited when the context manager exits.\n\n"
        "async def main():\n    async with asyncio.TaskGroup() as tg:\n        task1 = tg.create_task(some_coro(...))\n"
        '        task2 = tg.create_task(another_coro(...))\n    print(f"Both tasks have completed now: {task1.result()}, '
        '{task2.result()}")\n\nThe first time any of the tasks belonging to the group fails with an exception other '
        "than asyncio.CancelledError, the remaining tasks in the group are cancelled.",
    ),
    (
        "certbot renew hook",
        "https://eff-certbot.readthedocs.io/en/stable/using.html",
        "User Guide — Certbot 2.10.0 documentation",
        "Renewing certificates\nCertbot automatically renews certificates that are within 30 days of expiry. You can "
        "test automatic renewal for your certificates by running this command:\n\nsudo certbot renew --dry-run\n\n"
        "--deploy-hook: a command to be run in a shell once for each successfully issued certificate. For this command, "
        "the shell variable $RENEWED_LINEAGE will point to the config live subdirectory containing the new "
        'certificates and keys. Use it to reload your web server, e.g. --deploy-hook "systemctl reload nginx".',
    ),
]
