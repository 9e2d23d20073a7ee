-- settings_outputs: the executed actions whose output parses whole as a key=value settings
-- file, with the lines of it that keep secret (grain: trajectory_id, action_idx).
-- Inputs: action_roles (settings_conf: its label with each labels.settings_files file capped
-- at internal), outputs, policy_settings_shapes_any (passed as $shapes).
-- Parameters: $shapes (the alternation of labels.settings_files.shapes), $line_prefix,
-- $random_length, $mixed_length, $max_bytes, $credential_pattern and $credential_unless
-- (the pattern and `unless` of the content rule labels.settings_files.credential_rule).
-- Only an action a settings file made secret (settings_conf below conf) is read. Its output
-- parses when each line (less a read tool's line number, $line_prefix) is blank, a comment
-- (`#`, `;`), a `[section]`, or `[export ]KEY=value` with KEY an identifier (`[A-Za-z_]`
-- then letters, digits, `_`, `.`, `-`) and the value bare, or quoted whole on its line
-- ("..." with backslash escapes, '...'); a quote opened and not closed on its line is a
-- multi-line value: the output does not parse, and the action keeps its whole label
-- (fail closed), as does an output over $max_bytes, one with no KEY=value line and one with
-- a random-looking key. A line keeps secret (a span, see sql/edges.sql) when it is a comment,
-- a random-looking section name, or a KEY=value whose key names a credential (the credential
-- rule matches `PART=<filler>` for some part of the key cut at `_`, `-` or `.`: the
-- content rule's own lexicon, not a second one), whose value has a random-looking run of
-- letters and digits ($random_length long, or $mixed_length long mixing letters and digits
-- or lower and upper case), or whose value (or an item of it, split at commas) fits no shape.
with candidates as (
    select distinct o.trajectory_id, o.action_idx, o.content
    from outputs o
    join action_roles r using (trajectory_id, action_idx)
    where r.executed and r.settings_conf < r.conf and strlen(o.content) <= $max_bytes
),
lines as (
    select trajectory_id, action_idx,
        trim(regexp_replace(replace(line, chr(13), ''), $line_prefix, ''), ' ' || chr(9)) as line
    from (select trajectory_id, action_idx, unnest(string_split(content, chr(10))) as line from candidates)
),
parsed as (
    select *,
        regexp_extract(line, '^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]{0,127})\s*=\s*(.*)$', ['key', 'raw']) as kv
    from lines
),
valued as (
    select trajectory_id, action_idx, line,
        case when line = '' then 'blank'
             when starts_with(line, '#') or starts_with(line, ';') then 'comment'
             when regexp_full_match(line, '\[[^\[\]]{1,256}\]') then 'section'
             when kv.key <> '' then 'pair'
             else 'other' end as kind,
        nullif(kv.key, '') as key,
        -- the key's parts with the separators before them (`DB`, `_PASSWORD`, `_FILE`)
        regexp_extract_all(kv.key, '[_.-]*[^_.-]+') as parts,
        case when regexp_full_match(kv.raw, '"((?:[^"\\]|\\.)*)"') then regexp_extract(kv.raw, '^"(.*)"$', 1)
             when regexp_full_match(kv.raw, '''([^'']*)''') then regexp_extract(kv.raw, '^''(.*)''$', 1)
             -- a quote opened and not closed here: a multi-line value (the output does not parse)
             when starts_with(kv.raw, '"') or starts_with(kv.raw, '''') then null
             else kv.raw end as value
    from parsed
),
judged as (
    select trajectory_id, action_idx, line, kind, key, value,
        lg_random_looking(case kind when 'pair' then value else line end, $random_length, $mixed_length) as random,
        lg_random_looking(key, $random_length, $mixed_length) as random_key,
        -- each leading part of the key (`DB`, `DB_PASSWORD`, `DB_PASSWORD_FILE`) given a value
        -- the credential rule takes (`DB_PASSWORD=k7Qz9xW2pL4m`): the rule's lexicon decides
        kind = 'pair' and len(list_filter(
            regexp_extract_all(array_to_string(list_transform(parts,
                lambda p, i: array_to_string(parts[1:i], '') || '=k7Qz9xW2pL4m'), ' '), $credential_pattern),
            lambda m: not regexp_matches(m, $credential_unless))) > 0 as credential_key,
        coalesce(list_bool_and(list_transform(string_split(value, ','), lambda v: regexp_matches(trim(v), $shapes))),
                 false) as shaped
    from valued
),
files as (
    select trajectory_id, action_idx,
        list({'line': line, 'key': key}) filter (
            where kind = 'comment' or (kind = 'section' and random)
               or (kind = 'pair' and (credential_key or random or not shaped))) as spans
    from judged
    group by all
    -- every line parsed (no multi-line value, no random-looking key) and some KEY=value among them
    having bool_and(kind <> 'other' and not (kind = 'pair' and (value is null or random_key)))
       and bool_or(kind = 'pair')
),
final as (
    select trajectory_id, action_idx, coalesce(spans, []) as spans
    from files
)
select * from final
