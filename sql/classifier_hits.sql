-- classifier_hits: tool calls one built-in classifier rule flags (grain: ord,
-- trajectory_id, step_idx). Run once per (rule, tool) row of policy_classifier.
-- Inputs: events, policy_tools. Parameters: $ord, $pattern, $tool_key ('*' = any tool),
-- $argument ('*' = the whole arguments JSON, else one argument's value).
with calls as (
    select e.trajectory_id, e.step_idx, e.arguments, e.args_ok, lower(e.tool_name) as tool_key,
        lower(t.catalog_name) as catalog_key
    from events e left join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call'
),
final as (
    select $ord::bigint as ord, trajectory_id, step_idx
    from calls
    where ($tool_key = '*' or $tool_key = tool_key or $tool_key = catalog_key)
      and regexp_matches(
            case when $argument = '*' then arguments
                 when args_ok then arguments ->> ('$."' || $argument || '"') end,
            $pattern)
)
select * from final
