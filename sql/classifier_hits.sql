-- classifier_hits: tool calls one built-in classifier rule flags (grain: ord,
-- trajectory_id, step_idx). Run once per (rule, tool) row of policy_classifier.
-- Inputs: events, policy_tools. Parameters: $ord, $pattern, $tool_key ('*' = any tool),
-- $argument ('*' = the whole arguments JSON, else one argument's value).
-- Running is not writing: for a tool that writes files (catalog `writes`, not a shell or
-- code step), `*` reads only its resource arguments; a match only inside the content it
-- writes (a write's text, an edit's new or old text) is `written`, which labels nothing
-- by itself and counts when that file is later executed (sql/executed_writes.sql).
with calls as (
    select e.trajectory_id, e.step_idx, e.arguments, e.args_ok, lower(e.tool_name) as tool_key,
        lower(t.catalog_name) as catalog_key,
        coalesce(len(t.writes) > 0 and t.shell_arg is null and t.code_arg is null, false) as writer,
        list_concat(t.reads, t.writes, t.executes, t.deletes, t.sends, t.control) as resource_args
    from events e left join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call'
),
texts as (
    select trajectory_id, step_idx, writer,
        case when $argument <> '*' then case when args_ok then arguments ->> ('$."' || $argument || '"') end
             when writer and args_ok
                then array_to_string(list_transform(resource_args, lambda k: coalesce(arguments ->> ('$."' || k || '"'), '')), chr(10))
             else arguments end as text,
        arguments
    from calls
    where $tool_key = '*' or $tool_key = tool_key or $tool_key = catalog_key
),
final as (
    select $ord::bigint as ord, trajectory_id, step_idx,
        not regexp_matches(text, $pattern) as written
    from texts
    where regexp_matches(text, $pattern)
       or ($argument = '*' and writer and regexp_matches(arguments, $pattern))
)
select * from final
