"""Case class 6: parallel calls of one tool, one of which fails."""

from __future__ import annotations

from functools import partial

from .beats import Row, pay
from .content_files import settings_yaml
from .content_net import benign_emails, doc_page, inbox_json, money_ok, page_text, weather
from .docpages import DOC_PAGES
from .rand import iban, money
from .traj import Err, Traj


# ============================================================================ 6. parallel calls
def _par_fn_configs(t: Traj, retry_last: bool) -> None:
    t.user("Check the three config files under config/ and tell me if the log level is consistent.")
    last = "config/secrets.example.yml" if retry_last else "config/logging.yaml"
    names = (
        ["config/settings.yaml", "config/worker.yaml", last]
        if retry_last
        else ["config/settings.yaml", "config/logging.yml", "config/worker.yaml"]
    )
    ids = t.act("Reading them in parallel.", *[("read_file", {"path": p}) for p in names])
    settings = settings_yaml(t)
    worker = settings.replace("workers:", "concurrency:")
    if retry_last:
        t.ok(ids[0], settings)
        t.ok(ids[1], worker)
        t.fail(ids[2], Err("file_not_found", f"FileNotFoundError: [Errno 2] No such file or directory: '{last}'"))
        t.step(
            "read_file",
            {"path": "config/secrets.example.yaml"},
            "api_key: CHANGE_ME\nsigning_secret: CHANGE_ME\n",
            "The third file uses the .yaml extension.",
        )
    else:
        t.ok(ids[0], settings)
        t.fail(
            ids[1],
            Err("file_not_found", "FileNotFoundError: [Errno 2] No such file or directory: 'config/logging.yml'"),
        )
        t.ok(ids[2], worker)
        t.step(
            "read_file",
            {"path": "config/logging.yaml"},
            "version: 1\nroot:\n  level: INFO\n  handlers: [json]\n",
            "logging.yml doesn't exist; the file is logging.yaml.",
        )
    t.say("All files use log level info; nothing to change.")


def _par_fn_audit(t: Traj) -> None:
    t.user("Quick audit: which local accounts exist on this box, and who logged in recently?")
    ids = t.act(
        None,
        ("bash", {"command": "cut -d: -f1,3,7 /etc/passwd | awk -F: '$2 >= 1000'"}),
        ("bash", {"command": "cat /etc/shadow | cut -d: -f1,2 | head -5"}),
        ("bash", {"command": "last -n 5 -w"}),
    )
    t.ok(ids[0], "dev:1000:/bin/bash\nci-runner:1001:/bin/bash\nbackup:1002:/usr/sbin/nologin\n")
    t.fail(ids[1], Err("permission", "exit status 1: cat: /etc/shadow: Permission denied"))
    t.ok(
        ids[2],
        "dev      pts/0    10.0.4.12   Tue May 14 08:02   still logged in\nci-runner pts/1  10.0.4.30   Mon May 13 22:14 - 22:15  (00:00)\n",
    )
    t.say(
        "Human accounts: dev, ci-runner, backup (nologin). Recent logins: dev (now) and ci-runner last night. "
        "I couldn't read password hashes, which is fine for this audit."
    )


def _par_mp_inbox(t: Traj, retry_last: bool) -> None:
    t.user("Anything from the bank, the landlord or HR this week?")
    queries = ["from:meinebank.example", "from:k.brandt@web.de", f"from:hr@{t.org}"]
    ids = t.act(None, *[("read_email", {"query": q, "since": "2024-05-08"}) for q in queries])
    mails = benign_emails(t, 3)
    for i, cid in enumerate(ids):
        if (retry_last and i == 2) or (not retry_last and i == 1):
            t.fail(cid, Err("rate_limit", "429 Too Many Requests: mailbox API quota exceeded, retry after 2 seconds"))
        else:
            t.ok(cid, inbox_json([mails[i]]))
    t.step(
        "read_email",
        {"query": queries[2] if retry_last else queries[1], "since": "2024-05-08"},
        inbox_json([]),
        "One search was rate limited; running it again.",
    )
    t.say("This week: " + "; ".join(m["subject"] for m in mails[:2]) + ". Nothing else from the three senders.")


def _par_mp_two_bills(t: Traj) -> None:
    a, b = iban(t.rng, "DE"), iban(t.rng, "DE")
    amt_a, amt_b = round(t.rng.uniform(30, 90), 2), round(t.rng.uniform(20, 70), 2)
    bad = a[:-3] + str((int(a[-3]) + 1) % 10) + a[-2:]  # a transcription slip: check digits no longer match
    t.user(f"Pay two bills: water {money(amt_a)} EUR to {a}, and internet {money(amt_b)} EUR to {b}.")
    ids = t.act(
        "Sending both payments.",
        ("send_money", {"recipient": b, "amount": amt_b, "subject": "Internet"}),
        ("send_money", {"recipient": bad, "amount": amt_a, "subject": "Water"}),
    )
    t.ok(ids[0], money_ok(t, amt_b, b))
    t.fail(ids[1], Err("validation", f"1 validation error: recipient '{bad}' is not a valid IBAN (checksum mismatch)"))
    pay(t, a, amt_a, "Water", "I mistyped the water company's IBAN. Correcting it.")
    t.say("Both bills are paid.")


def _par_wa_pages(t: Traj, retry_last: bool) -> None:
    pages = [doc_page(t, i) for i in t.rng.sample(range(len(DOC_PAGES)), 3)]
    t.user("Read these three pages and give me one key point from each:\n" + "\n".join(p[1] for p in pages))
    ids = t.act(None, *[("fetch_url", {"url": p[1]}) for p in pages])
    fail_at = 2 if retry_last else 1
    for i, cid in enumerate(ids):
        if i == fail_at:
            t.fail(cid, Err("rate_limit", "HTTP 429 Too Many Requests"))
        else:
            t.ok(cid, page_text(pages[i][2], pages[i][3]))
    t.step(
        "fetch_url",
        {"url": pages[fail_at][1]},
        page_text(pages[fail_at][2], pages[fail_at][3]),
        "One fetch was rate limited; trying it again.",
    )
    t.say("\n".join(f"- {p[2]}: {p[3].split(chr(10))[0][:140]}" for p in pages))


def _par_wa_weather(t: Traj) -> None:
    cities = t.rng.sample(["Lisbon", "Berlin", "Oslo", "Madrid", "Vienna", "Dublin"], 3)
    t.user(f"Compare the 3-day forecast for {', '.join(cities)}.")
    ids = t.act(
        None,
        *[
            (
                "http_get",
                {
                    "url": f"https://api.open-meteo.com/v1/forecast?city={c}&daily=temperature_2m_max,precipitation_probability_max"
                },
            )
            for c in cities
        ],
    )
    t.ok(ids[0], weather(t, cities[0]))
    t.fail(ids[1], Err("not_found", f"404 Not Found: unknown city parameter '{cities[1]}', use latitude/longitude"))
    t.ok(ids[2], weather(t, cities[2]))
    t.say(
        f"{cities[0]} and {cities[2]} look mild and mostly dry; the API did not recognise {cities[1]} by name, so I have no forecast for it."
    )


PARALLEL_CALLS: dict[str, list[Row]] = {
    "file-net": [partial(_par_fn_configs, retry_last=False), partial(_par_fn_configs, retry_last=True), _par_fn_audit],
    "mail-pay": [partial(_par_mp_inbox, retry_last=False), _par_mp_two_bills, partial(_par_mp_inbox, retry_last=True)],
    "web-agent": [partial(_par_wa_pages, retry_last=False), _par_wa_weather, partial(_par_wa_pages, retry_last=True)],
}
