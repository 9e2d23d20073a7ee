"""Per-command grammar of the shell analyser, as data.

Fixed facts about commands, not judgement: which words are shell keywords, which options
of a command take a value (so its positional arguments can be told from option values),
which commands behave alike. ``COMMAND_FAMILIES`` maps each handler family of
:mod:`pipeline.analysis.shell.commands` to the command names it serves; the reader, wrapper,
interpreter and compressor families take their names from the option tables below
(``READERS``, ``WRAPPERS``, ``CODE_FLAGS``, ``COMPRESS_SUFFIX``/``DECOMPRESSORS``), and a
name belongs to one family only (``tests/test_shell_tables.py``).

Option tables: a string lists the one-letter options that take a value; a tuple lists long
option names (without ``--``) that take one. ``OPTIONS`` holds that grammar for every
command (or ``command subcommand``) whose handler parses its own arguments; ``READERS``,
``WRAPPERS``, ``OPENSSL_ARG`` and the curl tables are the same facts for their families.
"""

from __future__ import annotations

import re


from pipeline.analysis.shell.tables_programs import (  # noqa: F401 - re-exported
    FOLDER_SERVERS, HOME_FOLDER, HOME_SECRETS, KNOWN_CONTENTS, PROXY_VARS, PUBLISH, PUBLISH_LEAVES_OUT,
    PUBLISH_REGISTRY_OPTS, SHELL_SETUP, Served)
from pipeline.analysis.shell.tables_options import OPTIONS  # noqa: F401 - re-exported

KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for",
                      "case", "esac", "{", "}", "!", "function", "select", "coproc"})

EXTENSIONS = frozenset((
    "txt csv tsv json jsonl yaml yml toml xml html htm md rst py sh bash zsh js mjs ts php rb pl "
    "c h cc cpp hpp go rs java kt sql db sqlite sqlite3 log conf cfg ini env pem key crt cer pub "
    "p12 pfx gpg asc zip tar gz tgz bz2 xz zst 7z rar pdf doc docx xls xlsx ppt pptx odt ods png "
    "jpg jpeg gif svg webp bmp ico mp3 mp4 avi mpeg m4v mov wav bin exe so dll whl deb rpm iso "
    "img bak old orig tmp out lock cookie cookies kdbx ovpn service desktop plist ipynb parquet "
    "pkl pickle npy h5 crx apk jar war").split())

SEND_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

# An OAuth 2.0 token request (RFC 6749 sections 2.3.1, 4.3, 6; RFC 7523; RFC 7636) carries
# the client's own credentials in its body beside a `grant_type`: the value of one of these
# fields is how the token endpoint takes them, as a header's is elsewhere - when the
# variable's name says it is that credential (`client_secret=$CRM_CLIENT_SECRET`;
# `password=$OPENAI_API_KEY` is a key sent, not a password)
OAUTH_CREDENTIAL_FIELDS: dict[str, tuple[str, ...]] = {
    "client_secret": ("SECRET",), "password": ("PASSWORD", "PASSWD", "PASS", "PWD"),
    "refresh_token": ("REFRESH",), "client_assertion": ("ASSERTION", "JWT"),
    "assertion": ("ASSERTION", "JWT", "SAML"), "code_verifier": ("VERIFIER",)}


def own_credential(field: str, variable: str) -> bool:
    """Whether ``variable``'s name (``CRM_CLIENT_SECRET``, ``env:CRM_CLIENT_SECRET``) says it
    is the OAuth credential ``field`` takes (:data:`OAUTH_CREDENTIAL_FIELDS`)."""
    return any(word in variable.upper() for word in OAUTH_CREDENTIAL_FIELDS.get(field, ()))

READERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cat": ("", ()), "tac": ("s", ()), "nl": ("bdfhilnsvw", ()), "head": ("nc", ("lines", "bytes")),
    "tail": ("ncs", ("lines", "bytes", "pid", "sleep-interval")), "less": ("bhjkoOpPtTxyz", ()),
    "more": ("n", ()), "wc": ("", ()), "md5sum": ("", ()), "sha1sum": ("", ()), "sha256sum": ("", ()),
    "sha512sum": ("", ()), "shasum": ("a", ()), "cksum": ("", ()), "b2sum": ("l", ()), "sum": ("", ()),
    "strings": ("nt", ()), "od": ("AjNtw", ()), "hexdump": ("nsef", ()), "hd": ("nsef", ()),
    "file": ("mfFeP", ()), "stat": ("c", ("format", "printf")), "du": ("dBt", ("max-depth", "exclude", "block-size")),
    "ls": ("ITw", ("ignore", "hide", "width", "time-style", "format", "sort", "color", "block-size")),
    "tree": ("LPIo", ()), "column": ("tscoNRlEHW", ()), "fold": ("w", ()), "fmt": ("w", ()),
    "paste": ("d", ()), "join": ("jto12ae", ()), "comm": ("", ()), "cmp": ("inI", ()),
    "diff": ("CUxXILF", ("label", "exclude", "exclude-from", "ignore-matching-lines", "context", "unified")),
    "zcat": ("", ()), "bzcat": ("", ()), "xzcat": ("", ()), "zless": ("", ()), "expand": ("t", ()),
    "unexpand": ("t", ()), "rev": ("", ()), "cut": ("dfcb", ("delimiter", "fields", "characters", "bytes")),
    "pr": ("hlwNo", ()), "identify": ("", ()), "exiftool": ("", ()), "pdftotext": ("fl", ()),
    "pdfinfo": ("", ()), "readelf": ("", ()), "objdump": ("jM", ()), "nm": ("", ()), "ldd": ("", ()),
    "xmllint": ("", ("xpath", "output")), "yamllint": ("cdf", ()), "json_pp": ("", ()), "lsattr": ("", ()),
    "getfacl": ("", ()), "look": ("t", ()), "iconv": ("ftc", ("from-code", "to-code")), "dos2unix": ("", ()),
    "unix2dos": ("", ()), "csvlook": ("", ()), "bat": ("lm", ()), "view": ("", ()), "vi": ("", ()),
    "vim": ("", ()), "nano": ("", ()), "emacs": ("", ()), "gdb": ("", ()), "source-highlight": ("", ()),
}

# readers whose output describes files (names, sizes, types, counts, digests), not what they
# hold: piped on, they send no content (`ls ~/.ssh | nc h p` sends key names, not keys)
METADATA_READERS = frozenset({"ls", "tree", "du", "stat", "file", "wc", "md5sum", "sha1sum", "sha256sum",
                              "sha512sum", "shasum", "cksum", "b2sum", "sum", "cmp", "lsattr"})
TRANSFORMERS = {"rev", "tr", "awk", "gawk", "mawk", "sed", "perl", "iconv", "uudecode"}

COMPRESS_SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst", "lz4": ".lz4",
                   "compress": ".Z", "pigz": ".gz", "lzma": ".lzma"}

DECOMPRESSORS = {"gunzip": "gzip", "bunzip2": "bzip2", "unxz": "xz", "unzstd": "zstd", "unlzma": "lzma"}

OPENSSL_ARG = {"in", "out", "inkey", "key", "keyfile", "keyout", "pass", "passin", "passout", "CAfile",
               "CApath", "cert", "certfile", "signkey", "subj", "days", "newkey", "config", "extensions",
               "name", "connect", "servername", "md", "iter", "salt", "S", "K", "iv", "sigfile", "signature",
               "k", "kfile", "recip", "from", "to", "subject", "nameopt", "set_serial", "CA", "CAkey",
               "CAserial", "extfile", "reqexts", "outform", "inform", "keyform", "num", "rand", "peerkey"}

CURL_ARG_SHORT = "bcCdDeEFHKmoPQrtTuUwxXyYzA"

CURL_ARG_LONG = ("data", "data-raw", "data-binary", "data-ascii", "data-urlencode", "json", "form",
                 "form-string", "upload-file", "output", "header", "user", "request", "url", "config", "cookie",
                 "cookie-jar", "user-agent", "referer", "cert", "key", "cacert", "capath", "max-time",
                 "connect-timeout", "retry", "retry-delay", "retry-max-time", "proxy", "proxy-user", "range",
                 "write-out", "dump-header", "trace", "trace-ascii", "output-dir", "interface", "resolve",
                 "limit-rate", "max-filesize", "speed-limit", "speed-time", "time-cond", "oauth2-bearer",
                 "variable", "continue-at", "quote", "telnet-option", "stderr", "netrc-file", "pass",
                 "key-type", "cert-type", "ciphers", "connect-to", "dns-servers", "local-port", "max-redirs",
                 "mail-from", "mail-rcpt", "aws-sigv4", "hostpubmd5", "pubkey", "socks5", "socks5-hostname", "socks4",
                 "socks4a", "preproxy",
                 "unix-socket", "abstract-unix-socket", "expect100-timeout", "happy-eyeballs-timeout-ms")

CURL_DATA = ("-d", "--data", "--data-binary", "--data-ascii", "--json")

GIT_COMMITS = "git-commits:"  # pseudo resource: the local commits a push sends

PY_ARG = "WXQ"

CODE_FLAGS = {"node": ("-e", "--eval", "-p", "--print"), "perl": ("-e", "-E"), "ruby": ("-e",),
              "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",), "osascript": ("-e",), "deno": ("eval",),
              "bun": ("-e", "--eval"), "tsx": ("-e", "--eval"), "ts-node": ("-e", "--eval")}

WRAPPERS = {"sudo": "ugpCUrtThDR", "doas": "uC", "nohup": "", "time": "fo", "nice": "n", "ionice": "cnp",
            "stdbuf": "ioe", "timeout": "sk", "setsid": "", "unbuffer": "", "command": "", "builtin": "",
            "exec": "a", "chroot": "", "taskset": "", "strace": "oepsuSEaI", "ltrace": "oepsuSEaIn",
            "xargs": "adEeIiLlnPs", "env": "uCS", "su": "cgGsw", "runuser": "ugcGw", "flock": "cwEn",
            "caffeinate": "tw", "proxychains": "f", "proxychains4": "f", "torsocks": "aPu", "firejail": "",
            "valgrind": "", "catchsegv": "", "systemd-run": "upEM", "doppler": "", "dotenv": "e",
            "sg": "", "chronic": "", "ts": "", "faketime": "f", "nsenter": "tSGw", "unshare": "S"}

# Package managers that run a command in a project's environment (`uv run python x.py`,
# `poetry run pytest`, `conda run -n ENV python x.py`, `uvx TOOL`, `pipx run APP`): the
# command is analysed as one of its own. Per program: the words naming the subcommand
# (`()`: the program itself runs it), then the one-letter and long options taking a value,
# before or after them.
_UV_VALUES = ("with", "with-editable", "with-requirements", "python", "package", "extra", "group", "only-group",
              "no-group", "env-file", "directory", "project", "index", "default-index", "index-url",
              "extra-index-url", "find-links", "index-strategy", "resolution", "prerelease", "exclude-newer",
              "link-mode", "config-setting", "refresh-package", "reinstall-package", "upgrade-package",
              "python-platform", "color", "cache-dir", "config-file", "from", "allow-insecure-host",
              "keyring-provider", "no-extra", "fork-strategy", "no-build-package", "no-binary-package",
              "python-preference", "exclude-newer-package", "torch-backend", "only-binary")
_CONDA_RUN = ((("run",),), "np", ("name", "prefix", "cwd"))
ENV_RUNNERS: dict[str, tuple[tuple[tuple[str, ...], ...], str, tuple[str, ...]]] = {
    # uv: -p python, -i index URL, -f find-links, -C config setting, -P upgrade package, -w with
    "uv": ((("run",), ("tool", "run")), "pifCPw", _UV_VALUES), "uvx": (((),), "pifCPw", _UV_VALUES),
    "poetry": ((("run",),), "CP", ("directory", "project")), "pipenv": ((("run",),), "", ("python",)),
    "pdm": ((("run",),), "p", ("project", "venv")), "rye": ((("run",),), "", ("pyproject",)),
    "hatch": ((("run",),), "ep", ("env", "project", "data-dir", "cache-dir", "config")),
    "conda": _CONDA_RUN, "mamba": _CONDA_RUN,
    "micromamba": ((("run",),), "npaer", ("name", "prefix", "cwd", "attach", "env", "root-prefix", "label")),
    "pipx": ((("run",),), "", ("spec", "python", "pip-args", "index-url")),
}


SYSTEM_BIN = re.compile(r"/(?:usr/(?:local/)?)?s?bin|/opt/homebrew/bin|/snap/bin")
"""Folders whose programs are the system's own: one named like a known command is that command."""


# Commands by handler family (the table-driven ones above add their own names).
COMMAND_FAMILIES: dict[str, str] = {
    "none": (
        "whoami id uname date sleep true false : test [ [[ kill pkill killall pgrep "
        "ps top htop free uptime df lsof netstat ss ip ifconfig nproc lscpu lsblk dmesg "
        "journalctl systemctl service seq yes expr bc tput stty getent groups last w who locale "
        "tty clear reset exit return break continue shift wait jobs fg bg disown trap shopt "
        "ulimit umask alias unalias unset local readonly let hash whereis hostname "
        "mktemp mkfifo sync usermod useradd groupadd passwd chpasswd visudo pip-compile "
        "tox nosetests mypy ruff black flake8 pylint isort unittest coverage C-c C-d C-z "
        "q :q"
    ),
    "pkg": (
        "pip pip3 pipx npm npx yarn pnpm apt apt-get aptitude yum dnf apk brew snap gem cargo go "
        "conda mamba poetry uv dpkg rpm zypper pacman composer mvn gradle twine hatch flit "
        "uvx pipenv pdm micromamba rye"
    ),
    "dns": "ping ping6 dig host nslookup traceroute tracepath whois mtr",
    "cd": "cd pushd popd",
    "serve": "http-server serve darkhttpd busybox twistd",
    "sort": "sort",
    "uniq": "uniq",
    "grep": "grep egrep fgrep zgrep rg ag",
    "sed": "sed gsed",
    "awk": "awk gawk mawk",
    "jq": "jq yq",
    "copy": "cp mv install",
    "ln": "ln",
    "write_all": "tee touch mkdir",
    "delete": "rm rmdir shred unlink truncate wipe srm",
    "dd": "dd",
    "mkfs": "mkfs mke2fs mkswap wipefs",
    "chmod": "chmod chown chgrp chattr setfacl",
    "find": "find",
    "tar": "tar",
    "zip": "zip 7z 7za 7zr",
    "unzip": "unzip",
    "base64": "base64 base32 basenc xxd uudecode",
    "openssl": "openssl",
    "gpg": "gpg gpg2",
    "curl": "curl",
    "wget": "wget",
    "httpie": "http https xh xhs",
    "scp": "scp rsync",
    "ssh": "ssh",
    "ssh_copy_id": "ssh-copy-id",
    "ssh_keygen": "ssh-keygen",
    "nc": "nc ncat netcat telnet",
    "socat": "socat",
    "ftp": "ftp sftp lftp",
    "mail": "mail mailx mutt sendmail",
    "git": "git",
    "cloud_copy": "aws gsutil gcloud azcopy rclone",
    "smb": "smbclient",
    "gh": "gh",
    "publish": "az",
    "shell": "bash sh zsh dash ksh fish ash",
    "python": "python",
    "interp": "java",
    "source": "source .",
    "watch": "watch",
    "tmux": "tmux screen",
    "eval": "eval",
    "env_dump": "printenv export declare typeset set",
    "echo": "echo printf",
    "read": "read mapfile readarray",
    "crontab": "crontab",
    "at": "at batch",
    "db": "mysql mariadb psql pg_dump sqlite3",
    "docker": "docker podman",
    "compiler": "gcc cc g++ clang clang++ rustc tcc",
    "make": "make",
    "pytest": "pytest py.test",
    "history": "history",
    "tr": "tr",
    "pathcalc": "pwd basename dirname realpath readlink",
    "lookup": "which type",
}
