-- inference_arg_values: the distinct string values each argument of an uncatalogued tool
-- is passed in the shard (grain: tool_key, arg, value).
-- Inputs: events, policy_tools. Parameters: $max_chars (longer values are not scanned:
-- no address is that long, and it bounds the regex work per call).
-- Read by pipeline/analysis/inference_values.py, which runs each [[inference.values]]
-- rule over it (sql/inference_value_matches.sql).
with calls as (
    select lower(e.tool_name) as tool_key, e.arguments,
        -- arguments over 16 KB are read as two lists, one read each (json_keys and
        -- json_extract '$.*', in document order): a row per key carrying the whole arguments
        -- and a json_extract per key parse it once per key, so memory and time grew with
        -- keys x size (10,000 keys ran out of the memory limit)
        strlen(e.arguments::varchar) > 16384 as wide
    from events e
    anti join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call' and e.args_ok and e.tool_name is not null and json_type(e.arguments) = 'OBJECT'
),
args as (
    -- the argument name is data: names with a quote or backslash are skipped, so a JSON path
    -- stays one quoted key, and so is the empty name (DuckDB refuses the path '$.""': it
    -- ended the run); a wide call's names are skipped alike, for the same rows either way
    select tool_key, arg, v
    from (select tool_key, unnest(json_keys(arguments)) as arg, unnest(json_extract(arguments, '$.*')) as v
          from calls where wide)
    where arg <> '' and arg not like '%"%' and arg not like '%\%'
    union all
    select tool_key, k.arg, json_extract(arguments, '$."' || k.arg || '"') as v
    from calls, unnest(json_keys(arguments)) as k(arg)
    where not wide and k.arg <> '' and k.arg not like '%"%' and k.arg not like '%\%'
),
strings as (
    -- a string value, or each string of a list value (recipients, attachments)
    select tool_key, arg, unnest(case json_type(v) when 'VARCHAR' then [v ->> '$']
                                               when 'ARRAY' then v ->> '$[*]' else [] end) as value
    from args
),
final as (
    select distinct tool_key, arg, value from strings
    where value is not null and length(value) between 1 and $max_chars
)
select * from final
