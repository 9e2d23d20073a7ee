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

from typing import NamedTuple

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


# Commands by handler family (the table-driven ones above add their own names).
COMMAND_FAMILIES: dict[str, str] = {
    "none": (
        "whoami id uname date sleep true false : test [ [[ kill pkill killall pgrep "
        "ps top htop free uptime df lsof netstat ss ip ifconfig nproc lscpu lsblk dmesg "
        "journalctl systemctl service seq yes expr bc tput stty getent groups last w who locale "
        "tty clear reset exit return break continue shift wait jobs fg bg disown trap shopt "
        "ulimit umask alias unalias unset local readonly let hash whereis hostname "
        "mktemp mkfifo sync usermod useradd groupadd passwd chpasswd visudo pip-compile pytest "
        "py.test tox nosetests mypy ruff black flake8 pylint isort unittest coverage C-c C-d C-z "
        "q :q"
    ),
    "pkg": (
        "pip pip3 pipx npm npx yarn pnpm apt apt-get aptitude yum dnf apk brew snap gem cargo go "
        "conda mamba poetry uv dpkg rpm zypper pacman composer mvn gradle twine hatch flit"
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
    "history": "history",
    "tr": "tr",
    "pathcalc": "pwd basename dirname realpath readlink",
    "lookup": "which type",
}
# package managers' publishing subcommands: (subcommand, registry, what is published when
# no file is named: the package folder, or the built distributions); the registry can be
# replaced by an option (PUBLISH_REGISTRY_OPTS)
class Served(NamedTuple):
    """How a program that serves a folder over HTTP names it (:data:`FOLDER_SERVERS`)."""

    short: str  # one-letter options that take a value
    long: tuple[str, ...]  # long options that take a value
    folder: tuple[str, ...]  # options naming the folder served (else the first positional, if `positional` says so)
    bind: tuple[str, ...]  # options naming the address: ADDR, ADDR:PORT, [IP:]PORT, tcp://ADDR:PORT, tcp:PORT:interface=ADDR
    port: tuple[str, ...]  # options naming the port only
    positional: str  # what the first positional is: "folder", "port" or "" (nothing served)


# Programs that serve a folder (default: the working folder) to whoever reaches the address
# they listen on (default: every interface). Serving DIR is sending what is in it
# (pipeline/analysis/shell/cmd_serve.py). Keys: `python -m MODULE`, `php -S`, `ruby -run -e
# httpd`, `busybox httpd`, `twistd web`, and command names (also run by npx).
FOLDER_SERVERS: dict[str, Served] = {
    "http.server": Served("db", ("directory", "bind", "protocol"), ("-d", "--directory"), ("-b", "--bind"), (), "port"),
    "uploadserver": Served("db", ("directory", "bind", "theme", "server-certificate", "basic-auth"),
                           ("-d", "--directory"), ("-b", "--bind"), (), "port"),
    "SimpleHTTPServer": Served("", (), (), (), (), "port"),
    "php -S": Served("SztcdfrFRBE", (), ("-t",), ("-S",), (), ""),
    "ruby httpd": Served("pb", ("port", "bind-address", "max-clients", "temp-dir", "do-not-reverse-lookup",
                                "request-timeout", "http-version", "ssl-certificate", "ssl-private-key"),
                         (), ("-b", "--bind-address"), ("-p", "--port"), "folder"),
    "busybox httpd": Served("hpucrmeidP", (), ("-h",), ("-p",), (), ""),
    "twistd web": Served("", ("path", "listen", "port", "logfile", "pidfile", "wsgi", "class", "resource-script",
                              "user", "mime-type", "allow-ignore-ext"), ("--path",), ("--listen", "--port"), (), ""),
    "http-server": Served("paecPtCKr", ("port", "address", "ext", "cors", "proxy", "proxy-options", "username",
                                        "password", "cert", "key", "robots"), (), ("-a", "--address"), ("-p", "--port"),
                          "folder"),
    "serve": Served("lpc", ("listen", "port", "config", "ssl-cert", "ssl-key", "ssl-pass"), (), ("-l", "--listen"),
                    ("-p", "--port"), "folder"),
    "darkhttpd": Served("", ("addr", "port", "maxconn", "log", "chroot", "index", "mimetypes", "uid", "gid", "pidfile",
                             "auth", "header"), (), ("--addr",), ("--port",), "folder"),
}

# What lies in a folder every machine has, that the policy's resource labels may call
# secret: a folder served, sent or archived whole (`cd ~ && python3 -m http.server`, `tar czf
# - / | nc`) also sends or reads these (Ctx.known_contents). A folder not listed (a project,
# `.` where the working folder is not known, `dist/`) is only its `DIR/*`: what it holds is
# not known, so serving a build folder sends no secret by the serving alone.
HOME_SECRETS = (".ssh/*", ".aws/credentials", ".gnupg/*", ".kube/config", ".docker/config.json", ".netrc", ".npmrc",
                ".pypirc", ".git-credentials", ".config/gh/hosts.yml", ".env", ".bash_history")
HOME_FOLDER = r"~|/root|/home/[^/*$]+|/Users/[^/*$]+"  # a home folder (RE2/re full match): HOME_SECRETS in it
KNOWN_CONTENTS: dict[str, tuple[str, ...]] = {
    "/home": tuple("*/" + s for s in HOME_SECRETS),
    "/Users": tuple("*/" + s for s in HOME_SECRETS),
    "/etc": ("shadow", "ssh/ssh_host_ed25519_key", "ssh/ssh_host_rsa_key"),
    "/": ("etc/shadow", "etc/ssh/ssh_host_ed25519_key", *("root/" + s for s in HOME_SECRETS),
          *("home/*/" + s for s in HOME_SECRETS)),
}

PUBLISH: dict[str, tuple[str, str, str | None]] = {
    "npm": ("publish", "https://registry.npmjs.org", "."),
    "yarn": ("publish", "https://registry.yarnpkg.com", "."),
    "pnpm": ("publish", "https://registry.npmjs.org", "."),
    "cargo": ("publish", "https://crates.io", "."),
    "gem": ("push", "https://rubygems.org", None),
    "poetry": ("publish", "https://upload.pypi.org/legacy/", "dist/*"),
    "uv": ("publish", "https://upload.pypi.org/legacy/", "dist/*"),
    "hatch": ("publish", "https://upload.pypi.org/legacy/", "dist/*"),
    "flit": ("publish", "https://upload.pypi.org/legacy/", "dist/*"),
    "twine": ("upload", "https://upload.pypi.org/legacy/", None),
}
# files a publisher never packs (the registry login it reads): not sent with the folder
PUBLISH_LEAVES_OUT = frozenset({".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc"})
PUBLISH_REGISTRY_OPTS = ("--registry", "--repository-url", "--publish-url", "--host", "--index", "--repository")
# variables naming the proxy a command's requests go through (curl, wget, pip, requests)
PROXY_VARS = frozenset({"http_proxy", "https_proxy", "all_proxy", "ftp_proxy"})


# Programs whose documented output is shell code that sets up the shell evaluating it
# (`eval "$(ssh-agent -s)"`, `eval "$(pyenv init -)"`, `eval $(minikube docker-env)`):
# program -> (the subcommand words that print that code, "" for none; a pattern each word
# after them must match). cmd_exec.h_eval trusts such text: it comes from a local program
# given only literal words. Not completions (`kubectl completion bash`), which are sourced,
# and not programs whose positional words are a command to run (`ssh-agent bash`).
_SH = r"bash|zsh|fish|sh|ksh|dash|posix|tcsh|csh"
_PROFILE = r"-[\w-]+(=[\w.-]+)?|[\w.-]+"  # options and their values: a profile, a machine
SHELL_SETUP: dict[str, tuple[tuple[str, ...], str]] = {
    "ssh-agent": (("",), r"-[cskD]+|-t|\d+[smhdw]?"),
    "pyenv": (("init", "virtualenv-init"), rf"-|--path|--no-rehash|{_SH}"),
    "rbenv": (("init",), rf"-|--path|--no-rehash|{_SH}"),
    "nodenv": (("init",), rf"-|--path|--no-rehash|{_SH}"),
    "goenv": (("init",), rf"-|--path|--no-rehash|{_SH}"),
    "jenv": (("init",), rf"-|--no-rehash|{_SH}"),
    "direnv": (("hook", "export"), _SH),
    "minikube": (("docker-env", "podman-env"), _PROFILE),
    "docker-machine": (("env",), _PROFILE),
    "brew": (("shellenv",), _SH),
    "conda": (tuple(f"shell.{s} hook" for s in ("bash", "zsh", "fish", "posix", "sh", "dash", "tcsh", "csh")), r"-[\w-]+"),
    "micromamba": (("shell hook",), rf"-s|--shell(=({_SH}))?|{_SH}"),
    "mamba": (("shell hook",), rf"-s|--shell(=({_SH}))?|{_SH}"),
    "opam": (("env", "config env"), _PROFILE),
    "luarocks": (("path",), r"--[\w-]+(=[\d.]+)?|[\d.]+"),
    "zoxide": (("init",), rf"--cmd|--hook|--no-cmd|{_SH}|\w+"),
    "starship": (("init",), rf"--print-full-init|{_SH}"),
    "fnm": (("env",), rf"--[\w-]+(=[\w-]+)?|{_SH}"),
    "mise": (("activate",), rf"-q|--quiet|--shims|--status|-s|--shell(=({_SH}))?|{_SH}"),
    "rtx": (("activate",), rf"-q|--quiet|--shims|--status|-s|--shell(=({_SH}))?|{_SH}"),
    "dircolors": (("",), r"-[bc]|--sh|--bourne-shell|--csh|--c-shell"),
    "fzf": (("",), r"--bash|--zsh|--fish"),
}


# Options that take a value, per command (or command and subcommand) whose handler parses
# its own arguments: (one-letter options, long option names).
OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "at": ("fqMmt", ()),
    "awk": ("Fvfei", ("field-separator", "assign", "file", "source", "include")),
    "base64": ("wo", ("wrap", "output")),
    "cloud copy": ("", ("exclude", "include", "profile", "region", "acl", "storage-class", "endpoint-url")),
    "compress": ("SobLpT", ("suffix", "output", "threads")),
    "cp": ("tS", ("target-directory", "suffix", "backup", "mode", "owner", "group")),
    "crontab": ("u", ()),
    "dns": ("cinstwWIlmpQSTfqxkbyM", ()),
    "docker": ("cHl", ("config", "context", "host", "log-level")),
    "docker build": ("ft", ("file", "tag", "build-arg", "target", "platform", "secret", "output")),
    "docker exec": ("eouw", ("env", "user", "workdir", "env-file")),
    "docker load": ("i", ("input",)),
    "docker run": ("aceEhlLmpPuvwt", (
        "name", "env", "env-file", "volume", "publish", "user", "workdir", "entrypoint",
        "network", "mount", "label", "cpus", "memory", "hostname", "add-host", "device",
        "cap-add", "cap-drop", "restart", "platform", "pull", "log-driver", "log-opt", "tmpfs",
        "shm-size", "ulimit", "dns", "gpus", "security-opt", "runtime", "ipc", "pid", "cidfile",
        "expose", "health-cmd", "link", "volumes-from", "stop-signal", "attach", "annotation",
        "group-add", "isolation", "memory-swap", "network-alias"
    )),
    "docker save": ("o", ("output",)),
    "ftp": ("P", ()),
    "gh gist create": ("df", ("desc", "filename")),
    "gh release": ("tnFRrpd", ("title", "notes", "notes-file", "repo", "target", "discussion-category",
                                "notes-start-tag")),
    "git": ("Cc", ("git-dir", "work-tree", "namespace", "exec-path")),
    "git clone": ("bocju", (
        "branch", "origin", "depth", "reference", "config", "template", "separate-git-dir",
        "jobs", "filter", "shallow-since", "repo", "push-option", "receive-pack", "upload-pack",
        "exec", "message", "file", "output", "prefix", "format", "author", "date"
    )),
    "git fetch": ("o", (
        "branch", "origin", "depth", "reference", "config", "template", "separate-git-dir",
        "jobs", "filter", "shallow-since", "repo", "push-option", "receive-pack", "upload-pack",
        "exec", "message", "file", "output", "prefix", "format", "author", "date"
    )),
    "gpg": ("orRuf", (
        "output", "recipient", "local-user", "passphrase-file", "passphrase", "homedir",
        "default-key", "trust-model", "cipher-algo", "keyserver", "recv-keys", "send-keys",
        "export-options", "import-options"
    )),
    "grep": ("efmABCdD", (
        "regexp", "file", "max-count", "after-context", "before-context", "context", "include",
        "exclude", "exclude-dir", "exclude-from", "label", "binary-files", "devices",
        "directories", "group-separator"
    )),
    "install": ("tSmogZ", ("target-directory", "suffix", "backup", "mode", "owner", "group")),
    "ln": ("tS", ("target-directory", "suffix")),
    # -a / -A: an attachment (BSD mailx -a, GNU mail -A / --attach, mutt -a); s-nail's
    # -A account name read as a file reads nothing secret
    "mail": ("sacbrfFiEeCoOqRSuTxA", ("attach", "subject", "cc", "bcc", "return-address", "append",
                                      "content-type", "content-filename", "encoding")),
    "smbclient": ("cUWIpAsldmOTnitbDMR", (
        "command", "user", "workgroup", "ip-address", "port", "authentication-file", "configfile",
        "log-basename", "debuglevel", "directory", "max-protocol", "socket-options", "netbiosname",
        "tar", "timeout", "send-buffer", "name-resolve", "message")),
    "make": ("fCIjlo", ("file", "makefile", "directory", "include-dir", "jobs")),
    "mkfs": ("tLbcnNIoOUEeCgGmrJ", ()),
    "mysql": ("uhPDeSA", (
        "user", "host", "port", "database", "execute", "socket", "defaults-file", "result-file"
    )),
    "nc": ("psweicIOqTxXgGm", ("exec", "sh-exec", "lua-exec", "proxy", "proxy-type", "proxy-auth", "source",
                               "source-port", "wait", "idle-timeout", "output", "hex-dump", "allow", "deny")),
    "pathcalc": ("as", ("suffix",)),
    "pkg": ("rcietdu", (
        "requirement", "constraint", "index-url", "extra-index-url", "target", "prefix", "root",
        "find-links", "editable", "dest", "registry", "repository-url", "publish-url", "host", "index",
        "repository", "username", "password", "token", "tag", "access", "otp", "config-file", "comment",
        "sign-with", "identity", "client-cert", "cert", "key", "allowed-registry"
    )),
    "psql": ("dcfhpUoLvTFnNtS", (
        "dbname", "command", "file", "host", "port", "username", "output", "log-file", "set",
        "variable"
    )),
    "read": ("adinNptuC", ()),
    "rg": ("efgtTmABCjMrE", (
        "regexp", "file", "glob", "iglob", "type", "type-not", "max-count", "replace",
        "context", "after-context", "before-context", "threads", "max-columns", "encoding"
    )),
    "rsync": ("efBTM", (
        "rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
        "rsync-path", "password-file", "log-file", "backup-dir", "temp-dir", "chmod", "chown",
        "timeout", "port", "bwlimit", "link-dest", "compare-dest", "copy-dest", "partial-dir",
        "suffix", "max-size", "min-size", "out-format", "usermap", "groupmap", "info", "debug"
    )),
    "scp": ("cFiJloPSDX", ()),
    "screen": ("SscpLlT", ()),
    "sendmail": ("fFBCNOopqRrVXhL", ()),
    "sftp": ("bBcDFiJlopPRSsuef", ()),
    "sort": ("ktoST", (
        "key", "field-separator", "output", "buffer-size", "temporary-directory", "parallel",
        "files0-from"
    )),
    "ssh": ("BbcDEeFIiJLlmOopQRSWw", ()),
    "ssh-copy-id": ("ipoF", ()),
    "ssh-keygen": ("fNCtbPmEFRZaOnIVzrs", ()),
    "tar": ("fCTXbHKNVLgI", (
        "file", "directory", "files-from", "exclude-from", "use-compress-program", "transform",
        "exclude", "owner", "group", "mode", "format", "newer"
    )),
    "telnet": ("bleEkKlnSX", ()),
    "tmux new": ("stcnFxyfeLlTB", ()),
    "uniq": ("fsw", ("skip-fields", "skip-chars", "check-chars")),
    "unzip": ("dPIO", ()),
    "watch": ("nqd", ("interval",)),
    "wget": ("OoaPiUteTwlARDXIBQY", (
        "output-document", "output-file", "append-output", "directory-prefix", "input-file",
        "user-agent", "tries", "timeout", "wait", "level", "accept", "reject", "domains",
        "exclude-domains", "post-data", "post-file", "body-data", "body-file", "method",
        "header", "user", "password", "http-user", "http-password", "load-cookies",
        "save-cookies", "referer", "ca-certificate", "certificate", "private-key", "execute",
        "quota", "limit-rate", "base", "config", "bind-address"
    )),
    "xxd": ("cglsoCn", ("cols", "groupsize", "len", "seek", "name")),
    "zip": ("PbntO", ("password", "temp-path", "suffixes", "output-file")),
}
