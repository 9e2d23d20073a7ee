-- Macros shared by the stages, created once per connection (pipeline/sql.py).
-- lg_tokens: candidate payload fragments of a text, lower-cased, at least min_len
-- characters long (base64 '=' padding not counted; capped at 32 so prefix keys still
-- see every long fragment). A fragment is a run of identifier-like characters
-- (letters, digits and the punctuation of paths, URLs, e-mail addresses, base64), so
-- an IBAN, a key line or a URL is one fragment. Each fragment also contributes its
-- parts between '/', ':', '?', '&' and '=', so a secret carried in a URL path or query
-- still matches the bare secret. Both are found by one regex pass each over the
-- lower-cased text; the length bound sits in the regex because most runs are short
-- words, and materialising them only to drop them was most of this stage's time.
-- May repeat a fragment: lg_keys removes duplicates once.
create or replace temp macro lg_tokens(txt, min_len) as
    list_transform([lower(coalesce(txt, ''))], lambda low: list_concat(
        regexp_extract_all(low, '[a-z0-9][a-z0-9+/_~%@:.?&=\-]{' || greatest(least(min_len, 32) - 2, 0) || ',}[a-z0-9]={0,2}'),
        regexp_extract_all(low, '[a-z0-9][a-z0-9+_~%@.\-]{' || greatest(least(min_len, 32) - 2, 0) || ',}[a-z0-9]={0,2}')))[1];

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
create or replace temp macro lg_keys(txt, min_len) as
    list_transform([lg_tokens(txt, min_len)], lambda toks: list_distinct(list_concat(
        list_filter(toks, lambda t: lg_is_evidence(t, min_len)),
        list_transform(
            list_filter(toks, lambda t: length(t) >= 32 and regexp_full_match(t, '[a-z0-9+/=_\-]{32,}')),
            lambda t: 'prefix:' || left(t, 24)))))[1];

-- lg_decoded: a text plus its URL-decoded, base64-decoded and hex-decoded readings,
-- so a payload fragment still matches after the agent encoded it.
create or replace temp macro lg_decoded(v) as
    concat_ws(chr(10), v,
        case when contains(coalesce(v, ''), '%') then try(url_decode(v)) end,
        array_to_string(list_transform(
            list_filter(regexp_extract_all(coalesce(v, ''), '[A-Za-z0-9+/]{16,}={0,2}'), lambda b: length(b) % 4 = 0),
            lambda b: try(decode(from_base64(b)))), chr(10)),
        array_to_string(list_transform(
            list_filter(regexp_extract_all(coalesce(v, ''), '[0-9a-fA-F]{16,}'), lambda h: length(h) % 2 = 0),
            lambda h: try(decode(unhex(h)))), chr(10)));

-- lg_luhn: whether a string of 13-19 digits passes the Luhn checksum (card numbers):
-- from the right, every second digit doubled (minus 9 when over 9), the sum ends in 0.
create or replace temp macro lg_luhn(digits) as
    length(digits) between 13 and 19 and list_sum(list_transform(range(length(digits)), lambda i:
        case when i % 2 = 1
            then 2 * ascii(reverse(digits)[i + 1]) - 96 - case when 2 * ascii(reverse(digits)[i + 1]) - 96 > 9 then 9 else 0 end
            else ascii(reverse(digits)[i + 1]) - 48 end)) % 10 = 0;
