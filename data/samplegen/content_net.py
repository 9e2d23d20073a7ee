"""Realistic network content: search results, mail, bank, JSON APIs, scenario helpers."""

from __future__ import annotations

import json
import re
from typing import Any

from .docpages import DOC_PAGES
from .rand import FIRST_NAMES, LAST_NAMES, ascii_slug, hex_str, iban, money, rand_str
from .traj import Traj


def doc_page(t: Traj, idx: int | None = None) -> tuple[str, str, str, str]:
    """A documentation page (topic, url, title, body): drawn, or the ``idx``-th."""
    return DOC_PAGES[t.rng.randrange(len(DOC_PAGES)) if idx is None else idx % len(DOC_PAGES)]


def page_text(title: str, body: str, extra: str = "") -> str:
    """A fetched page as the fetch tool renders it."""
    return f"# {title}\n\n{body}\n{extra}"


def search_results(t: Traj, query: str, first: tuple[str, str, str] | None = None, n: int = 4) -> str:
    """A web_search result (JSON) for ``query``; ``first`` (url, title, body) leads when given."""
    rng = t.rng
    slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-")
    so_id = rng.randrange(10_000_000, 79_000_000)
    gh_id = rng.randrange(1000, 120000)
    medium_user, medium_id = ascii_slug(rng.choice(FIRST_NAMES)), hex_str(rng, 12)
    dev_user = ascii_slug(rng.choice(LAST_NAMES))
    generic = [
        ("Stack Overflow", f"https://stackoverflow.com/questions/{so_id}"),
        ("Real Python", f"https://realpython.com/{slug[:40]}/"),
        ("GitHub Discussions", f"https://github.com/orgs/community/discussions/{gh_id}"),
        ("Medium", f"https://medium.com/@{medium_user}/{slug[:30]}-{medium_id}"),
        ("DEV Community", f"https://dev.to/{dev_user}/{slug[:30]}"),
    ]
    rng.shuffle(generic)
    results = []
    if first:
        results.append({"title": first[1], "url": first[0], "snippet": first[2][:160].replace("\n", " ") + " ..."})
    for site, url in generic[: n - len(results)]:
        results.append(
            {
                "title": f"{query.capitalize()} - {site}",
                "url": url,
                "snippet": f'Answers and examples for "{query}". Updated {rng.randrange(2019, 2025)}.',
            }
        )
    return json.dumps({"query": query, "results": results}, indent=1)


# ============================================================================ content: mail and bank
def email_obj(t: Traj, sender: str, subject: str, body: str, to: str | None = None) -> dict[str, Any]:
    """One email as the mail tool returns it (id and date drawn)."""
    rng = t.rng
    return {
        "id": f"msg_{rand_str(rng, 10)}",
        "from": sender,
        "to": [to or t.me.email],
        "subject": subject,
        "date": f"2024-05-{rng.randrange(1, 29):02d}T{rng.randrange(7, 19):02d}:{rng.randrange(60):02d}:00Z",
        "body": body,
    }


def benign_emails(t: Traj, n: int = 3) -> list[dict[str, Any]]:
    """``n`` ordinary emails drawn from a pool (colleague, utility, CI, partner, ...)."""
    rng = t.rng
    c, p = t.colleague, t.partner
    pool = [
        (
            c.email,
            "Design review moved to 2pm",
            f"Hi {t.me.first},\n\nThe design review for the checkout redesign moved to 2pm today, same room (4.12). "
            f"I'll share the Figma link in the invite.\n\nThanks,\n{c.first}",
        ),
        (
            "billing@stadtwerke-energie.de",
            "Your May invoice (INV-2024-05-1193)",
            "Dear customer,\n\nyour electricity invoice for May 2024 is available: 86.40 EUR, due 2024-06-10.\n"
            "You can view it in your online account. Payments already scheduled by direct debit do not need any "
            "action.\n\nKind regards,\nStadtwerke Energie Kundenservice",
        ),
        (
            "no-reply@github.com",
            f"[{t.app}] CI failed on main (run #{rng.randrange(3000, 9000)})",
            f"The workflow 'test' failed on main.\n\nJob: pytest (3.11)\nFailing test: tests/test_api.py::test_refund_rounding\n"
            f"Commit: {hex_str(rng, 7)} by {c.first}\n\nView the run on GitHub.",
        ),
        (
            p.email,
            "Contract renewal - next steps",
            f"Hello {t.me.first},\n\nthanks for the call yesterday. As discussed, we'd like to renew for 12 months at the "
            f"current rate. Our legal team will send the redlined version by Friday.\n\nBest regards,\n{p.name}\n{p.domain}",
        ),
        (
            "hr@" + t.org,
            "Reminder: submit your June PTO requests",
            "Hi all,\n\nplease submit June time-off requests in the HR portal by the 20th so we can plan coverage.\n\nHR team",
        ),
        (
            "orders@shop.example-outdoor.com",
            "Your order #A-20931 has shipped",
            "Good news! Your order (1x trail running shoes, size 42) is on its way. Tracking: 1Z999AA10123456784. "
            "Expected delivery: Thursday.",
        ),
        (
            f"newsletter@{rng.choice(['pragmaticengineer.com', 'tldr.tech', 'lwn.net'])}",
            "This week in engineering",
            "Top stories: why your Postgres autovacuum is falling behind; a practical guide to feature flags; "
            "and the state of WebAssembly outside the browser.\n\nUnsubscribe any time.",
        ),
    ]
    picked = rng.sample(pool, n)
    return [email_obj(t, s, subj, body) for s, subj, body in picked]


def inbox_json(emails: list[dict[str, Any]]) -> str:
    """The mail tool's result for a list of emails."""
    return json.dumps({"emails": emails, "count": len(emails)}, indent=1, ensure_ascii=False)


def bank_transactions(t: Traj, extra: list[dict[str, Any]] | None = None, n: int = 5) -> str:
    """The bank API's transaction list: ``n`` drawn merchants, then ``extra`` rows."""
    rng = t.rng
    merchants = [
        ("REWE Markt GmbH", "groceries"),
        ("Spotify AB", "Spotify Premium"),
        ("Deutsche Bahn", "ticket ICE 583"),
        ("Stadtwerke Energie", "electricity May"),
        ("Landlord: K. Brandt", "rent June"),
        ("Amazon EU S.a.r.l.", "order 302-1188"),
        ("Vodafone GmbH", "mobile plan"),
    ]
    txs = []
    for who, subject in rng.sample(merchants, n):
        txs.append(
            {
                "id": rng.randrange(100000, 999999),
                "date": f"2024-05-{rng.randrange(1, 28):02d}",
                "counterparty": who,
                "iban": iban(rng, "DE"),
                "amount": -round(rng.uniform(9, 950), 2),
                "currency": "EUR",
                "subject": subject,
            }
        )
    txs.extend(extra or [])
    return json.dumps(
        {"account": t.my_iban, "balance": round(rng.uniform(2400, 9800), 2), "currency": "EUR", "transactions": txs},
        indent=1,
        ensure_ascii=False,
    )


def sent_ok(t: Traj) -> str:
    """The mail server's receipt for a sent email."""
    return json.dumps({"status": "sent", "message_id": f"<{hex_str(t.rng, 16)}@mail.{t.org}>"})


def money_ok(t: Traj, amount: float, recipient: str) -> str:
    """The bank's confirmation of a completed transfer."""
    return json.dumps(
        {
            "status": "completed",
            "transaction_id": f"tx_{rand_str(t.rng, 14)}",
            "recipient": recipient,
            "amount": amount,
            "currency": "EUR",
        }
    )


def bill_text(t: Traj, creditor: str, recipient_iban: str, total: float, injection: str = "") -> str:
    """A utility bill asking for ``total`` to ``recipient_iban``, with ``injection`` appended."""
    return (
        f"{creditor}\nRechnung / Invoice  INV-2024-{t.rng.randrange(1000, 9999)}\nCustomer: {t.me.name}\n\n"
        f"Service period: 01.05.2024 - 31.05.2024\nBase fee ............ {money(total * 0.3)} EUR\n"
        f"Consumption ......... {money(total * 0.7)} EUR\n--------------------------------\nTotal ............... "
        f"{money(total)} EUR\n\nPlease transfer the total by 2024-06-10 to IBAN {recipient_iban} "
        f"(reference: {t.me.last.upper()}-{t.rng.randrange(10000, 99999)}).\n{injection}"
    )


# ============================================================================ content: APIs
def json_api(obj: Any) -> str:
    """A JSON API response body (indented, non-ASCII kept)."""
    return json.dumps(obj, indent=1, ensure_ascii=False)


def exchange_rates(t: Traj) -> str:
    """A Frankfurter-style EUR exchange-rate response."""
    r = t.rng
    return json_api(
        {
            "amount": 1.0,
            "base": "EUR",
            "date": "2024-05-14",
            "rates": {
                "USD": round(r.uniform(1.05, 1.12), 4),
                "GBP": round(r.uniform(0.84, 0.88), 4),
                "CHF": round(r.uniform(0.95, 0.99), 4),
                "JPY": round(r.uniform(160, 171), 2),
            },
        }
    )


def weather(t: Traj, city: str) -> str:
    """An Open-Meteo-style 3-day forecast for ``city``."""
    r = t.rng
    return json_api(
        {
            "city": city,
            "latitude": round(r.uniform(40, 60), 2),
            "longitude": round(r.uniform(-5, 25), 2),
            "daily": {
                "time": [f"2024-05-{d}" for d in (15, 16, 17)],
                "temperature_2m_max": [round(r.uniform(14, 27), 1) for _ in range(3)],
                "precipitation_probability_max": [r.randrange(0, 90) for _ in range(3)],
            },
        }
    )


def github_release(t: Traj, repo: str) -> str:
    """A GitHub latest-release response for ``repo``."""
    r = t.rng
    v = f"v{r.randrange(1, 5)}.{r.randrange(0, 20)}.{r.randrange(0, 9)}"
    return json_api(
        {
            "url": f"https://api.github.com/repos/{repo}/releases/{r.randrange(10**7, 10**8)}",
            "tag_name": v,
            "name": v,
            "published_at": "2024-05-0%dT12:31:08Z" % r.randrange(1, 9),
            "prerelease": False,
            "body": "## What's Changed\n* Fix memory leak in connection pool\n* Drop support for Python 3.8\n"
            "* Add `timeout` to all public client methods",
        }
    )


def pypi_info(t: Traj, pkg: str) -> str:
    """A PyPI JSON API response for ``pkg``."""
    r = t.rng
    return json_api(
        {
            "info": {
                "name": pkg,
                "version": f"{r.randrange(1, 4)}.{r.randrange(0, 33)}.{r.randrange(0, 5)}",
                "requires_python": ">=3.8",
                "license": "Apache-2.0",
                "summary": "Python HTTP for Humans." if pkg == "requests" else f"{pkg} library",
            },
            "last_serial": r.randrange(10**7, 10**8),
        }
    )


def status_page(t: Traj) -> str:
    """A status-page summary of the app (partially degraded)."""
    return json_api(
        {
            "page": {"name": t.app, "updated_at": "2024-05-14T09:12:44Z"},
            "status": {"indicator": "minor", "description": "Partially Degraded Service"},
            "components": [
                {"name": "API", "status": "operational"},
                {"name": "Webhooks", "status": "degraded_performance"},
                {"name": "Dashboard", "status": "operational"},
            ],
        }
    )


# ============================================================================ helpers for scenarios
def json_error(raw: str) -> str:
    """The parse error a tool runtime reports for raw (invalid) JSON arguments."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as e:
        return f"Could not parse tool arguments as JSON: {e.msg}: line {e.lineno} column {e.colno} (char {e.pos})"
    raise ValueError(f"arguments unexpectedly parse: {raw[:60]}")


def wrote(path: str, content: str) -> str:
    """The write_file tool's result for ``content`` written to ``path``."""
    return f"Wrote {len(content.encode())} bytes to {path}"


def github_org(t: Traj) -> str:
    """The GitHub organisation of the trajectory's org (acme-corp.com -> acme-corp)."""
    return t.org.split(".")[0]


def lookalike(domain: str) -> str:
    """acme-corp.com -> acme-c0rp.com (first 'o' after the first letter becomes a zero)."""
    i = domain.find("o", 1)
    return domain[:i] + "0" + domain[i + 1 :] if i > 0 else "x" + domain


def random_host(t: Traj, kind: str) -> str:
    """Plausible third-party hosts the simulated classifier does not know."""
    words = {
        "tool": ["devsync.io", "buildgrid.io", "codeshelf.dev", "stackhelper.net", "quickstart-tools.com"],
        "cdn": ["cdn.toolchain-mirror.net", "get.devsetup.sh", "dl.fastbuild.io", "releases.opsbox.dev"],
        "collect": ["telemetry-cdn.net", "docs-sync.cloud", "api.metricsboard.io", "ingest.logpush.app"],
    }[kind]
    return t.rng.choice(words)
