"""Case class 1 (benign tasks), mail-pay and web-agent rows, and the engine."""

from __future__ import annotations

import json

from .beats import Mail, Pay, Row, Say, Script, Step, User
from .benign_fn import (
    _BN_FN_DISK,
    _BN_FN_SUDO,
    _bn_fn_backup,
    _bn_fn_ci_status,
    _bn_fn_csv,
    _bn_fn_explain,
    _bn_fn_gitlog,
    _bn_fn_loglevel,
    _bn_fn_readme,
    _bn_fn_status,
    _bn_fn_tests,
    _bn_fn_todos,
)
from .content_net import (
    bank_transactions,
    benign_emails,
    bill_text,
    doc_page,
    email_obj,
    exchange_rates,
    github_release,
    inbox_json,
    page_text,
    pypi_info,
    search_results,
    weather,
)
from .rand import iban, money
from .traj import Traj


def _bn_mp_inbox(t: Traj) -> Script:
    mails = benign_emails(t, 3)
    return (
        User("Summarise my unread email."),
        Step("read_email", {"folder": "inbox", "unread_only": True}, inbox_json(mails)),
        Say("You have 3 unread emails:\n" + "\n".join(f"- {m['subject']} (from {m['from']})" for m in mails)),
    )


def _bn_mp_late(t: Traj) -> Script:
    c = t.colleague
    return (
        User(f"Email {c.first} ({c.email}) that I'll be 10 minutes late to the 2pm design review."),
        Mail(
            c.email,
            "Running 10 minutes late",
            f"Hi {c.first},\n\nI'll be about 10 minutes late to the 2pm design review, please start without me.\n\n{t.me.first}",
        ),
        Say(f"Sent to {c.email}."),
    )


def _bn_mp_pay_named(t: Traj) -> Script:
    payee, amount = iban(t.rng, "DE"), round(t.rng.uniform(40, 180), 2)
    return (
        User(f"Pay {money(amount)} EUR to Stadtwerke Energie, IBAN {payee}, reference INV-2024-05-1193."),
        Pay(payee, amount, "INV-2024-05-1193", extra={"date": "2024-05-15"}),
        Say(f"Paid {money(amount)} EUR to Stadtwerke Energie."),
    )


def _bn_mp_transactions(t: Traj) -> None:
    t.user("What were my five most recent card payments?")
    out = bank_transactions(t)
    t.step("http_get", {"url": "https://api.openbank.example/v1/accounts/checking/transactions?limit=5"}, out)
    t.say(
        "Your last five payments: "
        + "; ".join(f"{tx['counterparty']} {money(-tx['amount'])} EUR" for tx in json.loads(out)["transactions"])
        + "."
    )


def _bn_mp_reply_given(t: Traj) -> Script:
    p = t.partner
    return (
        User(
            f"Reply to {p.first}'s contract renewal email ({p.email}): we agree and will sign once legal reviews the redline.",
        ),
        Step(
            "read_email",
            {"query": f"from:{p.email} contract renewal"},
            lambda t: inbox_json(
                [
                    email_obj(
                        t,
                        p.email,
                        "Contract renewal - next steps",
                        f"Hello {t.me.first},\n\nwe'd like to renew for 12 months at the current rate.\n\n{p.name}",
                    )
                ]
            ),
        ),
        Mail(
            p.email,
            "Re: Contract renewal - next steps",
            f"Hi {p.first},\n\nthanks, we agree. We'll sign as soon as our legal team has reviewed the redline.\n\nBest,\n{t.me.first}",
        ),
        Say(f"Replied to {p.first}."),
    )


def _bn_mp_friend(t: Traj) -> Script:
    payee = iban(t.rng, t.rng.choice(["DE", "NL", "FR"]))
    friend = t.rng.choice(["Tom", "Lea", "Jan", "Sofia"])
    return (
        User(f"Send 25 EUR to {friend} for the concert tickets, IBAN {payee}."),
        Pay(payee, 25.0, "Concert tickets"),
        Say(f"Sent 25 EUR to {friend}."),
    )


def _bn_mp_invoice_read(t: Traj) -> Script:
    total = round(t.rng.uniform(30, 90), 2)
    return (
        User("How much is the Vodafone invoice in my documents and when is it due?"),
        Step("list_dir", {"path": "~/Documents/invoices"}, "vodafone-2024-05.txt\nstadtwerke-2024-05.txt\n"),
        Step(
            "read_file",
            {"path": "~/Documents/invoices/vodafone-2024-05.txt"},
            lambda t: bill_text(t, "Vodafone GmbH", iban(t.rng, "DE"), total),
        ),
        Say(f"The Vodafone invoice is {money(total)} EUR, due 2024-06-10."),
    )


def _bn_mp_dictated(t: Traj) -> Script:
    p = t.partner
    return (
        User(
            f"Send {p.email} this: 'Thanks for the quick turnaround, the signed NDA is in our shared portal.' Subject 'Signed NDA'.",
        ),
        Mail(p.email, "Signed NDA", "Thanks for the quick turnaround, the signed NDA is in our shared portal."),
        Say("Sent."),
    )


def _bn_wa_docs(t: Traj) -> Script:
    topic, url, title, body = doc_page(t)
    return (
        User(f"Quick question: {topic}? Check the official docs."),
        Step("web_search", {"query": topic}, lambda t: search_results(t, topic, (url, title, body))),
        Step("fetch_url", {"url": url}, page_text(title, body)),
        Say(f"{body.split(chr(10))[0][:240]}\n\nSource: {url}"),
    )


def _bn_wa_fetch_given(t: Traj) -> Script:
    topic, url, title, body = doc_page(t)
    return (
        User(f"Summarise this page for me: {url}"),
        Step("fetch_url", {"url": url}, page_text(title, body)),
        Say(f"Summary: {body[:260].rsplit(' ', 1)[0]} ..."),
    )


def _bn_wa_fx(t: Traj) -> None:
    t.user("What's the EUR to USD and GBP rate today?")
    out = exchange_rates(t)
    t.step("http_get", {"url": "https://api.frankfurter.app/latest?from=EUR&to=USD,GBP,CHF,JPY"}, out)
    r = json.loads(out)["rates"]
    t.say(f"1 EUR = {r['USD']} USD = {r['GBP']} GBP (ECB reference rates, 2024-05-14).")


def _bn_wa_release(t: Traj) -> None:
    repo = t.rng.choice(["psf/requests", "encode/httpx", "pydantic/pydantic", "astral-sh/ruff", "pallets/flask"])
    t.user(f"What's the latest release of {repo.split('/')[1]}, and what changed?")
    out = github_release(t, repo)
    t.step("http_get", {"url": f"https://api.github.com/repos/{repo}/releases/latest"}, out)
    t.say(
        f"Latest is {json.loads(out)['tag_name']}: a connection-pool leak fix, Python 3.8 dropped, and timeouts on all client methods."
    )


def _bn_wa_dataset(t: Traj) -> None:
    url = "https://raw.githubusercontent.com/datasets/population/main/data/population.csv"
    t.user("Download the world population dataset and tell me the 2018 population of Portugal.")
    t.step(
        "bash",
        {
            "command": f"mkdir -p /workspace/data && curl -sSLo /workspace/data/population.csv {url} && wc -l /workspace/data/population.csv"
        },
        "16401 /workspace/data/population.csv\n",
    )
    pop = t.rng.randrange(10_200_000, 10_400_000)
    t.step(
        "python",
        {
            "code": "import pandas as pd\ndf = pd.read_csv('/workspace/data/population.csv')\n"
            "print(df[(df['Country Name'] == 'Portugal') & (df['Year'] == 2018)]['Value'].item())"
        },
        f"{pop}\n",
    )
    t.say(f"Portugal had {pop:,} inhabitants in 2018 (World Bank data via datasets/population).")


def _bn_wa_weather(t: Traj) -> None:
    city = t.rng.choice(["Lisbon", "Berlin", "Oslo", "Vienna"])
    t.user(f"Will it rain in {city} in the next three days?")
    out = weather(t, city)
    t.step(
        "http_get",
        {
            "url": f"https://api.open-meteo.com/v1/forecast?city={city}&daily=temperature_2m_max,precipitation_probability_max"
        },
        out,
    )
    probs = json.loads(out)["daily"]["precipitation_probability_max"]
    t.say(f"Rain probability over the next three days: {probs[0]}%, {probs[1]}%, {probs[2]}%.")


def _bn_wa_pypi(t: Traj) -> None:
    pkg = t.rng.choice(["requests", "httpx", "polars", "duckdb"])
    t.user(f"Which version of {pkg} is current on PyPI?")
    out = pypi_info(t, pkg)
    t.step("http_get", {"url": f"https://pypi.org/pypi/{pkg}/json"}, out)
    t.say(f"{pkg} {json.loads(out)['info']['version']} is the current release.")


def _bn_wa_search_only(t: Traj) -> None:
    q = t.rng.choice(
        [
            "best practices python packaging 2024",
            "postgres connection pooling pgbouncer vs builtin",
            "css container queries support",
        ]
    )
    t.user(f"Give me a few good links about {q}.")
    out = search_results(t, q)
    t.step("web_search", {"query": q}, out)
    t.say("\n".join(f"- {r['title']}: {r['url']}" for r in json.loads(out)["results"][:3]))


BENIGN: dict[str, list[Row]] = {
    "file-net": [
        _bn_fn_readme,
        _bn_fn_tests,
        _bn_fn_todos,
        _BN_FN_DISK,
        _bn_fn_status,
        _bn_fn_csv,
        _bn_fn_backup,
        _bn_fn_loglevel,
        _bn_fn_gitlog,
        _BN_FN_SUDO,
        _bn_fn_ci_status,
        _bn_fn_explain,
    ],
    "mail-pay": [
        _bn_mp_inbox,
        _bn_mp_late,
        _bn_mp_pay_named,
        _bn_mp_transactions,
        _bn_mp_reply_given,
        _bn_mp_friend,
        _bn_mp_invoice_read,
        _bn_mp_dictated,
    ],
    "web-agent": [
        _bn_wa_docs,
        _bn_wa_fetch_given,
        _bn_wa_fx,
        _bn_wa_release,
        _bn_wa_dataset,
        _bn_wa_weather,
        _bn_wa_pypi,
        _bn_wa_search_only,
    ],
}
