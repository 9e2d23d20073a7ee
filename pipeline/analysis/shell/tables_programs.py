"""What some programs do, as data: serving a folder, publishing a package, setting up a shell.

Fixed facts about programs (split from :mod:`pipeline.analysis.shell.tables`, which
re-exports every name): the folder servers and how they name folder and address
(``FOLDER_SERVERS``), where secrets are known to lie in a home folder or ``/``
(``HOME_SECRETS``, ``KNOWN_CONTENTS``), the package managers' publishing subcommands
(``PUBLISH``), the proxy variables, and the programs whose output is shell set-up code
(``SHELL_SETUP``).
"""

from __future__ import annotations

from typing import NamedTuple

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

# package managers' publishing subcommands: (subcommand, registry, what is published when
# no file is named: the package folder, or the built distributions); the registry can be
# replaced by an option (PUBLISH_REGISTRY_OPTS)
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
