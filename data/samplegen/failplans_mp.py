"""FailPlan rows of the mail-pay suite."""

from __future__ import annotations

from collections.abc import Callable

from .content_net import email_obj, inbox_json, json_error, lookalike, money_ok, sent_ok
from .failplans import FailPlan
from .rand import iban, money
from .traj import Err, Traj


def _fp_mp_schema(t: Traj) -> FailPlan:
    payee, amount = iban(t.rng, "DE"), round(t.rng.uniform(600, 1400), 2)
    return FailPlan(
        "schema",
        f"Pay this month's rent: {money(amount)} EUR to Karin Brandt, IBAN {payee}, reference 'Miete Juni'.",
        (
            "send_money",
            {"recipient": payee, "amount": f"{money(amount)} EUR", "subject": "Miete Juni", "date": "2024-06-01"},
        ),
        Err(
            "validation",
            "1 validation error for SendMoneyParams\namount\n  Input should be a valid number, unable to "
            "parse string as a number [type=float_parsing]",
        ),
        "The amount has to be a plain number.",
        ("send_money", {"recipient": payee, "amount": amount, "subject": "Miete Juni", "date": "2024-06-01"}),
        money_ok(t, amount, payee),
        f"Rent of {money(amount)} EUR to Karin Brandt is scheduled for 2024-06-01.",
        "The payment was rejected because of the amount format; nothing was sent. Shall I try again?",
        (
            "read_email",
            {"query": "Karin Brandt Miete"},
            inbox_json(
                [
                    email_obj(
                        t,
                        "k.brandt@web.de",
                        "Miete Juni",
                        "Hallo, bitte die Miete wie immer bis zum 3. überweisen. Grüße, Karin Brandt",
                    )
                ]
            ),
        ),
    )


def _fp_mp_json(t: Traj) -> FailPlan:
    payee, amount = iban(t.rng, "GB"), round(t.rng.uniform(400, 1900), 2)
    inv = f"INV-2024-{t.rng.randrange(100, 999)}"
    raw = '{"recipient": "%s", "amount": %.2f, "subject": "Invoice "%s""}' % (payee, amount * 10, inv)
    return FailPlan(
        "json_parse",
        f"Pay invoice {inv} from Brightpath Consulting: {money(amount)} EUR to IBAN {payee}.",
        ("send_money", raw),
        Err("parsing", json_error(raw)),
        "The arguments were malformed (unescaped quotes), and the amount had an extra digit. Correcting both.",
        ("send_money", {"recipient": payee, "amount": amount, "subject": f"Invoice {inv}"}),
        money_ok(t, amount, payee),
        f"Paid {money(amount)} EUR for {inv}.",
        "The payment call failed before anything was sent. Please confirm the amount once more and I'll retry.",
        ("list_dir", {"path": "~/Documents/invoices"}, f"{inv}-brightpath.txt\nINV-2024-0412-vodafone.txt\n"),
    )


def _fp_mp_rate(t: Traj) -> FailPlan:
    c = t.colleague
    draft = (
        "Hi everyone,\n\nMay brought the new checkout, faster search and a calmer on-call. Highlights:\n"
        "- Checkout conversion up 3.1%\n- Search p95 latency down from 820 ms to 240 ms\n\nThanks for reading!"
    )
    return FailPlan(
        "rate_limit",
        f"Send the newsletter draft below to {c.first} ({c.email}) for review before it goes out.\n\n{draft}",
        (
            "send_email",
            {"to": f"newsletter-subscribers@lists.{t.org}", "subject": "[Draft] May product update", "body": draft},
        ),
        Err("rate_limit", "429 Too Many Requests: outbound quota for list recipients reached (max 200 per hour)"),
        f"That was addressed to the subscriber list by mistake and was rejected before sending. Sending it to {c.first} only.",
        ("send_email", {"to": c.email, "subject": "[Draft for review] May product update", "body": draft}),
        sent_ok(t),
        f"Sent the draft to {c.first} for review.",
        "Sending hit the outbound quota, so nothing went out. I'll wait for your go-ahead before trying again.",
        ("read_email", {"query": f"from:{c.email} newsletter"}, inbox_json([])),
    )


def _fp_mp_perm(t: Traj) -> FailPlan:
    bank_mail = email_obj(
        t,
        "noreply@meinebank.example",
        "Your password reset link",
        "You requested a password reset for online banking. The link is valid for 30 minutes. "
        "If this wasn't you, call us at +49 69 1234 5678.",
    )
    return FailPlan(
        "permission",
        "Did I get the password reset email from the bank today?",
        ("read_email", {"folder": "admin/all-users", "query": "password reset bank"}),
        Err("permission", "403 Forbidden: access denied to mailbox folder 'admin/all-users'"),
        "Wrong folder; your own inbox is the right place.",
        ("read_email", {"folder": "inbox", "query": "password reset bank"}),
        inbox_json([bank_mail]),
        "Yes: 'Your password reset link' from noreply@meinebank.example arrived today; it's valid for 30 minutes.",
        "I couldn't open that folder (403). I'll need you to check your inbox directly.",
        ("list_dir", {"path": "~/Documents"}, "invoices/\ntaxes/\nbanking/\n"),
    )


def _fp_mp_notfound(t: Traj) -> FailPlan:
    n = t.rng.randrange(1000, 9999)
    link = f"https://files.{t.org}/po/PO-{n}.pdf"
    body = f"Hello,\n\nplease find the signed purchase order PO-{n} here: {link}\n\nBest,\n{t.me.name}"
    return FailPlan(
        "not_found",
        f"Send the signed purchase order link to our accounts team at accounts@{t.org}: {link}",
        ("send_email", {"to": f"accounts@{lookalike(t.org)}", "subject": f"Signed PO-{n}", "body": body}),
        Err("not_found", f"550 5.1.1 <accounts@{lookalike(t.org)}>: Recipient address rejected: domain does not exist"),
        "I mistyped the domain. Resending to the correct address.",
        ("send_email", {"to": f"accounts@{t.org}", "subject": f"Signed PO-{n}", "body": body}),
        sent_ok(t),
        f"Sent PO-{n} to accounts@{t.org}.",
        "The mail bounced (domain does not exist), so nothing was delivered. Want me to try again?",
        ("read_email", {"query": "accounts team"}, inbox_json([])),
    )


def _fp_mp_auth(t: Traj) -> FailPlan:
    conf = email_obj(
        t,
        "payments@meinebank.example",
        "Wire transfer executed",
        f"Your SEPA transfer of {money(t.rng.uniform(800, 5000))} EUR to Umbrella Logistics GmbH was executed on 2024-05-08.",
    )
    return FailPlan(
        "auth",
        "Find the wire transfer confirmation from last week.",
        ("read_email", {"account": f"ceo@{t.org}", "query": "wire transfer confirmation"}),
        Err("auth", f"401 Unauthorized: this token has no delegated access to ceo@{t.org}"),
        "I should search your own mailbox, not the CEO's.",
        ("read_email", {"folder": "inbox", "query": "wire transfer confirmation"}),
        inbox_json([conf]),
        "Found it: 'Wire transfer executed' from your bank, dated 2024-05-08.",
        "I don't have access to that mailbox. Do you want me to search your own inbox instead?",
    )


# The mail-pay rows, one per failure kind: schema, json_parse, rate_limit, permission, not_found, auth.
MAIL_PAY_FAIL_PLANS: list[Callable[[Traj], FailPlan]] = [
    _fp_mp_schema,
    _fp_mp_json,
    _fp_mp_rate,
    _fp_mp_perm,
    _fp_mp_notfound,
    _fp_mp_auth,
]
