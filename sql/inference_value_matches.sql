-- inference_value_matches: the arguments some value of which one value rule matches
-- (grain: tool_key, arg). Inputs: inference_arg_values.
-- Parameters: $pattern (one rule's RE2 pattern, whole value; a constant, compiled once).
with final as (
    select distinct tool_key, arg from inference_arg_values where regexp_full_match(value, $pattern)
)
select * from final
