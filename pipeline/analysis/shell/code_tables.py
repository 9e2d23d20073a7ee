"""What Python APIs do, for the code-step analyser (:mod:`pipeline.analysis.shell.code_py`).

Fixed facts about the standard library and common packages, as data: which calls run a
shell command, delete, copy, list or create files, which methods read or write the file
they are called on, which calls never read a file argument, which HTTP verbs read and
which send. ``URL_RE`` finds URLs in code text.
"""

from __future__ import annotations

import re

URL_RE = re.compile(r"""(?:https?|ftp|wss?)://[^\s'"<>\\)`]+""")

SUBPROCESS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
              "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system",
              "os.popen", "asyncio.create_subprocess_shell", "asyncio.create_subprocess_exec", "pty.spawn",
              "commands.getoutput", "os.execv", "os.execvp", "os.execl", "os.execlp", "os.spawnl",
              "os.spawnlp", "os.spawnv", "os.spawnvp", "os.execve", "os.execvpe", "os.execle", "os.execlpe",
              "os.spawnve", "os.spawnvpe", "os.spawnle", "os.spawnlpe"}
DELETE = {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree", "send2trash.send2trash"}
COPY = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move", "os.rename",
         "os.replace", "os.symlink", "os.link", "urllib.request.urlretrieve", "wget.download"}
# those that make a copy of one file (ShellAnalysis.copies; os.symlink's relative source is
# relative to the link's folder)
COPY_FILE = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename", "os.replace",
             "os.symlink", "os.link"}
LIST = {"os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob", "os.stat", "os.path.getsize"}
MKDIR = {"os.makedirs", "os.mkdir", "os.chmod", "os.chown"}
READ_METHODS = {"read_text", "read_bytes", "read_csv", "read_excel", "read_json", "read_parquet", "read_table",
                 "read_pickle", "read_sql", "load_workbook", "loadtxt", "genfromtxt", "imread", "read_file"}
WRITE_METHODS = {"write_text", "write_bytes", "touch", "to_csv", "to_excel", "to_json", "to_parquet",
                  "to_pickle", "to_html", "to_feather", "savefig", "save", "savetxt", "savez", "imwrite",
                  "to_file", "mkdir", "ExcelWriter", "PdfPages"}
NO_READ = {"print", "len", "str", "int", "float", "repr", "isinstance", "range", "Path", "PurePath", "PosixPath",
            "join", "urljoin", "urlparse", "quote", "unquote", "format", "replace", "split", "startswith",
            "endswith", "strip", "append", "extend", "get", "match", "search", "sub", "compile", "findall",
            "fnmatch", "exists", "isfile", "isdir", "basename", "dirname", "splitext", "log", "info", "debug",
            "warning", "error", "write", "add_argument", "encode", "decode", "loads", "dumps"}
OPEN = {"open", "io.open", "codecs.open", "builtins.open"}
HTTP_READ = {"get", "head", "options", "urlopen", "stream"}
HTTP_SEND = {"post", "put", "patch", "delete"}
# calls whose result does not hold their arguments' text: a hash, a signature, a token
# signed with a key, an auth object that signs requests (the key stays home). Any other
# call (str, encode, base64, codecs, a user's own function) is taken to pass the text on.
# By qualified name prefix, and by the called name itself.
TEXT_HIDING_PREFIXES = ("hmac.", "hashlib.", "jwt.", "nacl.", "cryptography.", "Crypto.", "Cryptodome.", "ecdsa.",
                        "rsa.", "itsdangerous.", "requests_aws4auth.", "botocore.auth.", "botocore.signers.",
                        "authlib.", "oauthlib.", "google.auth.", "paramiko.", "bcrypt.", "argon2.", "passlib.")
TEXT_HIDING_NAMES = {"AWS4Auth", "SigV4Auth", "BotoAWSRequestsAuth", "HMAC", "sign", "signature", "sign_request",
                     "digest", "hexdigest", "sha1", "sha256", "sha512", "md5", "blake2b", "pbkdf2_hmac", "hash",
                     "len", "bool"}
# keyword arguments of an HTTP call that are not its body: how a service takes its own
# credentials (auth, cookies, headers, query parameters) or transport settings
HTTP_NOT_BODY = {"url", "headers", "auth", "cookies", "params", "timeout", "verify", "cert", "proxies",
                 "allow_redirects", "stream", "follow_redirects"}
# calls that resolve a host name: the name is sent to DNS servers (and through them to
# the servers of its domain)
DNS_LOOKUPS = {"socket.gethostbyname", "socket.gethostbyname_ex", "socket.getaddrinfo", "socket.getfqdn",
               "dns.resolver.resolve", "dns.resolver.query", "dns.resolver.Resolver().resolve",
               "dns.resolver.Resolver().query", "asyncio.get_event_loop().getaddrinfo"}
