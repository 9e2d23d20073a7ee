"""Options that take a value, per command (or ``command subcommand``) whose handler parses
its own arguments: (one-letter options, long option names without ``--``). Grammar as data,
re-exported by :mod:`pipeline.analysis.shell.tables` (whose docstring says how it is read).
"""

from __future__ import annotations

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
    # (-j and -l take an optional number: flags here, a number left is no goal)
    "make": ("fCIoW", ("file", "makefile", "directory", "include-dir", "old-file", "assume-old", "what-if",
                       "new-file", "assume-new")),
    # pytest's options that take a value (and pytest-xdist's -n, pytest-cov's --cov*)
    "pytest": ("kmpcroWn", (
        "config-file", "rootdir", "basetemp", "confcutdir", "deselect", "ignore", "ignore-glob", "junitxml",
        "junit-prefix", "log-file", "log-level", "log-cli-level", "log-format", "maxfail", "override-ini",
        "tb", "capture", "durations", "import-mode", "cov", "cov-report", "cov-config", "numprocesses",
        "dist", "reruns", "timeout", "html", "result-log", "cache-dir", "color", "code-highlight",
        "show-capture", "log-file-level", "doctest-glob", "randomly-seed", "count", "workers")),
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
