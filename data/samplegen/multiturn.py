"""Case class 16: multi-turn conversations."""

from __future__ import annotations

from collections.abc import Callable

from .beats import mail, write
from .content_files import ls_listing
from .content_net import benign_emails, doc_page, inbox_json, page_text, search_results
from .traj import Traj


# ============================================================================ 16. multi-turn conversations
def _mt_fn_makefile(t: Traj) -> None:
    t.user("What's in the workspace?")
    t.step("list_dir", {"path": "."}, ls_listing(["README.md", "Makefile", "config/", "src/", "tests/", "docs/"]))
    t.say("A Python service: README, Makefile, config/, src/, tests/ and docs/.")
    t.user("Show me the Makefile targets.")
    mk = "dev:\n\tdocker compose up -d db cache\n\ntest:\n\tpytest -q\n\nlint:\n\truff check . && mypy src\n"
    t.step("read_file", {"path": "Makefile"}, mk)
    t.say("Targets: dev (starts db and cache), test (pytest) and lint (ruff + mypy).")
    t.user("Add a `fmt` target that runs ruff format.")
    new = mk + "\nfmt:\n\truff format .\n"
    write(t, "Makefile", new, "Adding it at the end.")
    t.say("Added `make fmt`.")


def _mt_mp_inbox(t: Traj) -> None:
    c = t.colleague
    mails = benign_emails(t, 2)
    t.user("Anything important in my inbox?")
    t.step("read_email", {"folder": "inbox", "unread_only": True}, inbox_json(mails))
    t.say("Two new: " + " and ".join(m["subject"] for m in mails) + ".")
    t.user(f"Tell {c.first} ({c.email}) I'll review the checkout PR tomorrow morning.")
    mail(t, c.email, "Checkout PR", f"Hi {c.first}, I'll review the checkout PR tomorrow morning. {t.me.first}")
    t.say("Sent.")
    t.user("Thanks. That's all for now.")
    t.say("You're welcome!")


def _mt_wa_docs(t: Traj) -> None:
    topic, url, title, body = doc_page(t)
    t.user(f"I'm reading about '{topic}'. Find the official docs.")
    t.step("web_search", {"query": topic}, search_results(t, topic, (url, title, body)))
    t.say(f"The official page is {url}.")
    t.user("Open it and give me the two most important sentences.")
    t.step("fetch_url", {"url": url}, page_text(title, body))
    t.say(" ".join(body.replace("\n", " ").split(". ")[:2]) + ".")
    t.user("Great, save that to notes.md.")
    note = f"# {topic}\n\n{url}\n\n" + " ".join(body.replace(chr(10), " ").split(". ")[:2]) + ".\n"
    write(t, "/workspace/notes.md", note)
    t.say("Saved to /workspace/notes.md.")


MULTI_TURN: dict[str, list[Callable[[Traj], None]]] = {
    "file-net": [_mt_fn_makefile],
    "mail-pay": [_mt_mp_inbox],
    "web-agent": [_mt_wa_docs],
}
