"""Case class 16: multi-turn conversations."""

from __future__ import annotations

from .beats import Mail, Row, Say, Script, Step, User, Write
from .content_files import ls_listing
from .content_net import benign_emails, doc_page, inbox_json, page_text, search_results
from .traj import Traj


# ============================================================================ 16. multi-turn conversations
def _mt_fn_makefile(t: Traj) -> Script:
    mk = "dev:\n\tdocker compose up -d db cache\n\ntest:\n\tpytest -q\n\nlint:\n\truff check . && mypy src\n"
    new = mk + "\nfmt:\n\truff format .\n"
    return (
        User("What's in the workspace?"),
        Step("list_dir", {"path": "."}, ls_listing(["README.md", "Makefile", "config/", "src/", "tests/", "docs/"])),
        Say("A Python service: README, Makefile, config/, src/, tests/ and docs/."),
        User("Show me the Makefile targets."),
        Step("read_file", {"path": "Makefile"}, mk),
        Say("Targets: dev (starts db and cache), test (pytest) and lint (ruff + mypy)."),
        User("Add a `fmt` target that runs ruff format."),
        Write("Makefile", new, "Adding it at the end."),
        Say("Added `make fmt`."),
    )


def _mt_mp_inbox(t: Traj) -> Script:
    c = t.colleague
    mails = benign_emails(t, 2)
    return (
        User("Anything important in my inbox?"),
        Step("read_email", {"folder": "inbox", "unread_only": True}, inbox_json(mails)),
        Say("Two new: " + " and ".join(m["subject"] for m in mails) + "."),
        User(f"Tell {c.first} ({c.email}) I'll review the checkout PR tomorrow morning."),
        Mail(c.email, "Checkout PR", f"Hi {c.first}, I'll review the checkout PR tomorrow morning. {t.me.first}"),
        Say("Sent."),
        User("Thanks. That's all for now."),
        Say("You're welcome!"),
    )


def _mt_wa_docs(t: Traj) -> Script:
    topic, url, title, body = doc_page(t)
    note = f"# {topic}\n\n{url}\n\n" + " ".join(body.replace(chr(10), " ").split(". ")[:2]) + ".\n"
    return (
        User(f"I'm reading about '{topic}'. Find the official docs."),
        Step("web_search", {"query": topic}, lambda t: search_results(t, topic, (url, title, body))),
        Say(f"The official page is {url}."),
        User("Open it and give me the two most important sentences."),
        Step("fetch_url", {"url": url}, page_text(title, body)),
        Say(" ".join(body.replace("\n", " ").split(". ")[:2]) + "."),
        User("Great, save that to notes.md."),
        Write("/workspace/notes.md", note),
        Say("Saved to /workspace/notes.md."),
    )


MULTI_TURN: dict[str, list[Row]] = {
    "file-net": [_mt_fn_makefile],
    "mail-pay": [_mt_mp_inbox],
    "web-agent": [_mt_wa_docs],
}
