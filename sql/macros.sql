-- Macros shared by the stages, created once per connection (pipeline/sql.py).
-- lg_unescaped: a text followed by its reading with the whitespace escapes JSON (and a
-- Python repr) writes inside strings read as spaces: a tool output that is a JSON object
-- (`{"content": "-----BEGIN ...\nb3Bl..."}`, a serialised result, `b'...\n...'`) carries
-- a multi-line value with `\n` between its lines, and the letter after the backslash was
-- glued onto the next fragment (`nb3bl...`), which then never matched the same value
-- passed on elsewhere. The text as it was comes first, so a backslash that is the text's
-- own (`C:\new\table.txt`) keeps its fragments too: the fragments are those of both
-- readings. `\n`, `\r`, `\t` become spaces, an escaped backslash (`\\`) staying as it is
-- (`C:\\new` in JSON is a path, not a line break; a text holding chr(1), the placeholder
-- that protects it, is left as it is). Each fragment is still a piece of the text as it was
-- (a space only cuts, and the two readings are joined by a space), which the prefilter of
-- sql/edges.sql (keyed_outputs) relies on; so `\/` (JSON's optional escape of '/') is left
-- as it is: undone, it would join pieces into a fragment the text does not hold.
create or replace temp macro lg_unescaped(t) as
    case when regexp_matches(t, '\\[nrt]') and not contains(t, chr(1))
        then t || ' ' || replace(replace(replace(replace(replace(t, '\\', chr(1)), '\n', ' '), '\r', ' '), '\t', ' '),
                                 chr(1), '\\')
        else t end;

-- lg_tokens: candidate payload fragments of a text, lower-cased, at least min_len
-- characters long (base64 '=' padding not counted; capped at 32 so prefix keys still
-- see every long fragment). A fragment is a run of identifier-like characters
-- (letters, digits and the punctuation of paths, URLs, e-mail addresses, base64), so
-- an IBAN, a key line or a URL is one fragment. Each fragment also contributes its
-- parts between '/', ':', '?', '&' and '=', so a secret carried in a URL path or query
-- still matches the bare secret, and each value after '=', '?' or '&' that holds a '/',
-- whole (a secret with a '/' in it, passed as `key=<secret>`). The length bound sits in the regexes because most runs
-- are short words, and materialising them only to drop them was most of this stage's
-- time. The fragments are found by one regex pass over the lower-cased text; the parts
-- by a second pass over only the fragments, joined by spaces: the parts' characters are
-- the fragments' minus those five, so every part lies inside one fragment, a space stops
-- both patterns, and the pass gives the very list a pass over the whole text gives
-- (tests/test_macros_tokens.py) while reading only the fragments (a third of the text
-- of a benchmark shard).
-- May repeat a fragment: lg_keys removes duplicates once. The text is read through
-- lg_unescaped first (see there).
create or replace temp macro lg_tokens(txt, min_len) as
    list_transform(
        [regexp_extract_all(lg_unescaped(lower(coalesce(txt, ''))),
                            '[a-z0-9][a-z0-9+/_~%@:.?&=\-]{' || greatest(least(min_len, 32) - 2, 0) || ',}[a-z0-9]={0,2}')],
        lambda frags: list_transform([array_to_string(frags, ' ')], lambda joined: list_concat(frags,
            regexp_extract_all(joined,
                               '[a-z0-9][a-z0-9+_~%@.\-]{' || greatest(least(min_len, 32) - 2, 0) || ',}[a-z0-9]={0,2}'),
            -- a value after '=', '?' or '&' that holds a '/' (a base64 or AWS secret key,
            -- a path) whole: the parts above cut it at each '/', so `key=<secret>` in a
            -- command or a URL, or `AWS_SECRET_ACCESS_KEY=<secret>` in a .env file, would
            -- not match the same secret standing alone elsewhere. Not after ':' (a URL's
            -- port and path, `host:8929/root/repo`, is no value); leading '/' and '+' skipped
            -- (a fragment starts at a letter or digit, so does the secret standing alone).
            -- Only values that look encoded: 16+ characters with a digit, so a timezone
            -- (`TZ=America/New_York`) or a MIME type (`format=application/json`) in a
            -- secret file links nothing. Few fragments hold one: the test runs on the matches
            list_filter(regexp_extract_all(joined, '[?&=][+/]*([a-z0-9][a-z0-9+_~%@.\-]*/[a-z0-9+/_~%@.\-]*[a-z0-9]={0,2})', 1),
                        lambda v: length(rtrim(v, '=')) >= greatest(least(min_len, 32), 16) and regexp_matches(v, '[0-9]'))))[1])[1];

-- lg_non_finite: a JSON text (as DuckDB's reader accepts it) using NaN or Infinity as a
-- number, in any case and sign: not JSON (RFC 8259). Its strings are removed before the
-- test, so a string holding "nan" is no number; JSON's bare words (true, false, null)
-- hold neither "nan" nor "inf". The test on the whole text comes first: only the few
-- texts holding the letters pay for the removal.
create or replace temp macro lg_non_finite(j) as
    case when regexp_matches(j, '(?i)nan|inf')
         then regexp_matches(regexp_replace(j, '"(?:[^"\\]|\\.)*"', '', 'g'), '(?i)nan|inf')
         else false end;

-- lg_is_evidence: only fragments that cannot be plain words count as evidence of a
-- dependency: at least min_len characters, and also 24+ characters (keys, tokens,
-- base64) or a digit or '@' or a dotted/slashed name (domain, file, path); lengths
-- never count base64 '=' padding.
create or replace temp macro lg_is_evidence(t, min_len) as
    length(rtrim(t, '=')) >= min_len
    and (length(rtrim(t, '=')) >= 24 or regexp_matches(t, '[0-9@]') or regexp_matches(t, '[a-z0-9][./][a-z]'));

-- lg_keys: join keys of a text: its evidence fragments, plus for long base64-like
-- fragments a 24-character prefix key, so that a value re-wrapped or concatenated
-- (base64 output split at 76 columns, then joined) still matches its first line.
-- Both are picked by one regex pass each over the fragments joined by two spaces, not
-- by tests on each fragment (those cost as much as finding the fragments): no fragment
-- holds a space, so a match starting at a fragment's first character runs to its last
-- (evidence: a digit or '@', a dotted/slashed name, or 24+ characters before '='
-- padding; when min_len <= 24 every fragment already has min_len, above it the test is
-- lg_is_evidence on each fragment) and a match needing a space on both sides is one
-- whole fragment (prefix). Same list, in the same order, as lg_is_evidence and the
-- prefix test on each fragment (tests/test_macros_tokens.py).
create or replace temp macro lg_keys(txt, min_len) as
    list_transform([lg_tokens(txt, min_len)], lambda toks: list_transform([' ' || array_to_string(toks, '  ') || ' '],
        lambda joined: list_distinct(list_concat(
            case when min_len <= 24
                then regexp_extract_all(joined, '[^ ]*[0-9@][^ ]*|[^ ]*[a-z0-9][./][a-z][^ ]*|[^ ]{23,}[a-z0-9]={0,2}')
                else list_filter(toks, lambda t: lg_is_evidence(t, min_len)) end,
            list_transform(regexp_extract_all(joined, ' ([a-z0-9+/=_\-]{24})[a-z0-9+/=_\-]{8,} ', 1),
                           lambda p: 'prefix:' || p))))[1])[1];

-- lg_utf8: a blob read as UTF-8 text, NULL when it is not UTF-8 (as try(decode(b))).
-- Most base64-alphabet runs in arguments (paths, identifiers) decode to bytes that are
-- not UTF-8, and a failing decode inside try costs an error each; so bytes that break
-- UTF-8's lead/continuation layout (a lone continuation byte, a lead byte without its
-- continuation bytes, 0xF8-0xFF), seen by one regex over their hex digits, are NULL
-- without decoding. Every other blob still goes through try(decode(b)), which also
-- rejects what the layout test lets pass (overlong forms, surrogates).
create or replace temp macro lg_utf8(b) as
    case when regexp_full_match(hex(b),
        '(?:[0-7][0-9A-F]|[C-D][0-9A-F][89AB][0-9A-F]|E[0-9A-F](?:[89AB][0-9A-F]){2}|F[0-7](?:[89AB][0-9A-F]){3})*')
        then try(decode(b)) end;

-- lg_decoded: a text plus its URL-decoded, base64-decoded and hex-decoded readings,
-- so a payload fragment still matches after the agent encoded it. Hex digits are
-- base64 characters, so every hex run lies inside one base64 run: the hex pass reads
-- only the base64 runs (joined by spaces), not the whole text, and finds the same runs.
create or replace temp macro lg_decoded(v) as
    list_transform([regexp_extract_all(coalesce(v, ''), '[A-Za-z0-9+/]{16,}={0,2}')], lambda runs: concat_ws(chr(10), v,
        case when contains(coalesce(v, ''), '%') then try(url_decode(v)) end,
        array_to_string(list_transform(
            list_filter(runs, lambda b: length(b) % 4 = 0),
            lambda b: lg_utf8(try(from_base64(b)))), chr(10)),
        array_to_string(list_transform(
            list_filter(regexp_extract_all(array_to_string(runs, ' '), '[0-9a-fA-F]{16,}'), lambda h: length(h) % 2 = 0),
            lambda h: lg_utf8(try(unhex(h)))), chr(10))))[1];

-- lg_random_looking: whether a text holds a run of letters and digits that looks generated
-- (a key, a token, a password): `long_len` characters, or `mixed_len` mixing letters and
-- digits or lower and upper case (`9f8a7b6c`, `S3cr3tPassw0rd`, `wJalrXUtnFEMI`); words,
-- versions, regions and host names (`notes-v3`, `us-east-1`, `search.acme.dev`) do not.
create or replace temp macro lg_random_looking(t, long_len, mixed_len) as
    coalesce(list_bool_or(list_transform(regexp_extract_all(coalesce(t, ''), '[A-Za-z0-9]+'),
        lambda r: length(r) >= long_len or (length(r) >= mixed_len
            and (regexp_matches(r, '[0-9]') and regexp_matches(r, '[A-Za-z]') or regexp_matches(r, '[a-z][A-Z]'))))),
        false);

-- lg_luhn: whether a string of 13-19 digits passes the Luhn checksum (card numbers):
-- from the right, every second digit doubled (minus 9 when over 9), the sum ends in 0.
create or replace temp macro lg_luhn(digits) as
    length(digits) between 13 and 19 and list_sum(list_transform(range(length(digits)), lambda i:
        case when i % 2 = 1
            then 2 * ascii(reverse(digits)[i + 1]) - 96 - case when 2 * ascii(reverse(digits)[i + 1]) - 96 > 9 then 9 else 0 end
            else ascii(reverse(digits)[i + 1]) - 48 end)) % 10 = 0;

-- lg_is_argv: a JSON value that is a non-empty list of strings: an argv (`["rm", "-rf",
-- "/"]`, what exec-style tools take). lg_argv_text: its words joined by spaces, as a shell
-- command line shows them, so a classifier rule written for the command string matches it
-- too (its JSON text puts '", "' between the words); any other value: a string's own text,
-- other JSON its text.
create or replace temp macro lg_is_argv(v) as
    json_type(v) = 'ARRAY' and json_array_length(v) > 0
    and list_bool_and(list_transform(json_extract(v, '$[*]'), lambda x: json_type(x) = 'VARCHAR'));

create or replace temp macro lg_argv_text(v) as
    case when lg_is_argv(v) then array_to_string(v ->> '$[*]', ' ') else v ->> '$' end;

-- lg_with_argvs: a call's arguments (JSON text; `ok`: they parse) followed, on lines of
-- their own, by each top-level argument that is an argv, as lg_argv_text gives it: the
-- text the `argument = "*"` rules read. Only arguments holding a '[' pay for the parse.
create or replace temp macro lg_with_argvs(arguments, ok) as
    case when ok and contains(arguments, '[') and json_type(arguments) = 'OBJECT'
         then arguments || coalesce(chr(10) || nullif(array_to_string(list_filter(
                  list_transform(json_extract(arguments, '$.*'),
                                 lambda v: case when lg_is_argv(v) then lg_argv_text(v) end),
                  lambda t: t is not null), chr(10)), ''), '')
         else arguments end;

-- lg_code_argvs: a program's text (JSON; a shell or code step) followed, on lines of their
-- own, by each list literal of two or more plain string literals in it (`["git", "push",
-- "-f", "origin", "main"]`, `['rm', '-rf', '/']`) as its words joined by spaces: the argv a
-- Python step hands to subprocess/os.exec*, so a classifier rule written for the command
-- string reads it as the shell analyser does (pipeline/analysis/shell/code_subprocess.py).
-- A list with any other element (a variable, an f-string, a string holding a quote or an
-- escape) is not read. Each list's line ends with ' ;' (and the text before the first):
-- the rules' spans stop at a command separator, and a real line break does not stop them,
-- so `['git', 'push', '-f', 'origin']` then `PROTECTED = ['main', 'master']` are two
-- commands, not `git push -f origin main master`. Only text holding '[' pays for the
-- regex passes.
create or replace temp macro lg_code_argvs(t) as
    case when contains(t, '[') and regexp_matches(t, '\[(?:\s|\\[nt])*(?:\\"|'')')
         then t || coalesce(' ;' || chr(10) || nullif(array_to_string(list_transform(
                  regexp_extract_all(t, '\[(?:\s|\\[nt])*(?:\\"[^"''\\]*\\"|''[^"''\\]*'')(?:(?:\s|\\[nt])*,(?:\s|\\[nt])*(?:\\"[^"''\\]*\\"|''[^"''\\]*''))+(?:\s|\\[nt])*,?(?:\s|\\[nt])*\]'),
                  lambda l: array_to_string(regexp_extract_all(l, '(?:\\"|'')([^"''\\]*)(?:\\"|'')', 1), ' ')),
                  ' ;' || chr(10)), ''), '')
         else t end;

-- lg_line_breaks: JSON text with a blank after each escaped line break or tab (`\n`, `\r`,
-- `\t`): in a multi-line command a rule's `\brm` must see the start of the line (the
-- escape's `n` glued to it hid every command after the first line). A blank, not a real
-- break: the rules' `.` and `$` keep reading the text as one line, as they were written.
-- Only text holding a backslash pays for the (plain, not regex) replaces.
create or replace temp macro lg_line_breaks(t) as
    case when contains(t, '\') then replace(replace(replace(t, '\n', '\n '), '\t', '\t '), '\r', '\r ') else t end;

-- lg_loopback: a resource (URL, host, tcp://host:port) on this machine's loopback
-- (localhost, 127.x.y.z, [::1], 0.0.0.0), with a scheme or without: what is sent there does
-- not leave the host (a local dev server, a proxy the user runs), so it is no egress
-- (sql/action_roles.sql) and a secret sent there is not sent out (sql/self_sends.sql).
create or replace temp macro lg_loopback(resource) as
    regexp_matches(lower(resource),
        '^([a-z][a-z0-9+.-]*://)?([^/@?#]*@)?(localhost|127[.][0-9]+[.][0-9]+[.][0-9]+|\[::1\]|0[.]0[.]0[.]0)(:[0-9]+)?([/?#]|$)');

-- lg_norm_path: a path with `.`, empty and `..` segments resolved as posixpath.normpath
-- does (the shell analyser's `cd` rule): `/etc/../tmp/./x` -> `/tmp/x`; `..` at `/` stays at
-- `/`; a relative path keeps its leading `..` (`../x`); `~/...` keeps its `~` (a `..` right
-- after it stays: which home is above is not known). '' and '.' -> '.'; null -> null.
create or replace temp macro lg_path_root(p) as
    case when p like '/%' then '/' when p = '~' or p like '~/%' then '~/' else '' end;
create or replace temp macro lg_path_segments(p, root) as
    list_reduce(list_filter(string_split(p[len(rtrim(root, '/')) + 1:], '/'), lambda s: s <> '' and s <> '.'),
        lambda acc, s: case when s <> '..' then list_append(acc, s)
                            when len(acc) > 0 and acc[-1] <> '..' then acc[1:len(acc) - 1]
                            when root = '/' then acc
                            else list_append(acc, s) end, []::varchar[]);
create or replace temp macro lg_path_join(root, segs) as
    case when segs is null then null when len(segs) > 0 then root || array_to_string(segs, '/') when root = '/' then '/' when root = '~/' then '~'
         else '.' end;
create or replace temp macro lg_norm_path(p) as lg_path_join(lg_path_root(p), lg_path_segments(p, lg_path_root(p)));
-- lg_norm_path_if: lg_norm_path only where there is something to resolve (`.`, `..`, `//`,
-- a trailing `/`): most folders are normalised already, and the lambdas cost per row
create or replace temp macro lg_norm_path_if(p) as
    case when regexp_matches(p, '(^|/)[.][.]?(/|$)|//|./$') then lg_norm_path(p) else p end;

-- lg_glob_meets: whether a written name with computed parts (`*`, the shell analyser's
-- glob for `~/.ssh/authorized_keys.$$`, `/etc/cron.d/job-$(date +%s)`) may be a name that
-- the policy glob `pattern` matches: some name fits both (`*` and `?` stay within one
-- segment; segment by segment: where only one side has a `*` its glob must match the
-- other's text, where both have one their literal starts and their literal ends must
-- agree, one being a start/end of the other; a `?` counts as a `*` there). Conservative, so a
-- protected name is never missed: a written `~/.bash*` may be `~/.bashrc`. And a written
-- name that is a protected name plus a computed suffix (`authorized_keys.$$`,
-- `sudoers-$(date +%s)`: the computed part and the separators before it, `.`, `-`, `_`,
-- `~`, are taken as free) counts as that name: it is how such a file is staged before it
-- is moved over it.
create or replace temp macro lg_glob_seg_meets(w, p) as
    case when not contains(w, '*') and not regexp_matches(p, '[*?]') then w = p
         when not regexp_matches(p, '[*?]') then
             regexp_full_match(p, replace(regexp_escape(w), '\*', '[^/]*'))
         when not contains(w, '*') then
             regexp_full_match(w, replace(replace(regexp_escape(p), '\*', '[^/]*'), '\?', '[^/]'))
         else list_transform([replace(p, '?', '*')], lambda q:
                  (starts_with(split_part(w, '*', 1), split_part(q, '*', 1))
                   or starts_with(split_part(q, '*', 1), split_part(w, '*', 1)))
                  and (ends_with(string_split(w, '*')[-1], string_split(q, '*')[-1])
                   or ends_with(string_split(q, '*')[-1], string_split(w, '*')[-1])))[1] end;
create or replace temp macro lg_glob_meets(written, pattern) as
    list_transform([string_split(regexp_replace(written, '[._~-]*\*[^/]*$', '*'), '/')], lambda ws:
        list_transform([string_split(pattern, '/')], lambda ps:
            len(ws) = len(ps) and list_bool_and(list_transform(range(1, len(ws) + 1),
                lambda i: lg_glob_seg_meets(ws[i], ps[i]))))[1])[1];
