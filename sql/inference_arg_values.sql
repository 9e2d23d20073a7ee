-- inference_arg_values: the distinct string values each argument of an uncatalogued tool
-- is passed in the shard (grain: tool_key, arg, value).
-- Inputs: events, policy_tools. Parameters: $max_chars (longer values are not scanned:
-- no address is that long, and it bounds the regex work per call).
-- Read by pipeline/analysis/inference_values.py, which runs each [[inference.values]]
-- rule over it (sql/inference_value_matches.sql).
with args as (
    select lower(e.tool_name) as tool_key, k.arg,
        -- the argument name is data: names with a quote or backslash are skipped below,
        -- so the JSON path stays one quoted key
        json_extract(e.arguments, '$."' || k.arg || '"') as v
    from events e, unnest(json_keys(e.arguments)) as k(arg)
    anti join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call' and e.args_ok and e.tool_name is not null and json_type(e.arguments) = 'OBJECT'
        and k.arg not like '%"%' and k.arg not like '%\%'
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
