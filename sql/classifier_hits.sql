-- classifier_hits: tool calls one built-in classifier rule flags (grain: ord,
-- trajectory_id, step_idx). Run once per (rule, tool) row of policy_classifier.
-- Inputs: classifier_calls. Parameters: $ord, $pattern, $tool_key ('*' = any tool),
-- $argument ('*' = the whole arguments JSON, or for a file-writing tool its resource
-- arguments; else one argument's value).
-- `written`: the rule matched only inside the content a file-writing tool writes, or only
-- in the parts of a shell command that are data (`masked`: sql/classifier_calls.sql): it
-- labels nothing by itself and counts when a file the step wrote is later executed
-- (sql/executed_writes.sql).
with texts as (
    select trajectory_id, step_idx, writer, masked, arguments_text,
        case when $argument = '*' then command_text
             -- an argv (["rm", "-rf", "/"]) as its command line (sql/macros.sql lg_argv_text)
             when args_ok then lg_argv_text(arguments -> ('$."' || $argument || '"')) end as text
    from classifier_calls
    where ($tool_key = '*' or $tool_key = tool_key or $tool_key = catalog_key)
      and ($argument <> '*' or candidate)
),
final as (
    select $ord::bigint as ord, trajectory_id, step_idx,
        not coalesce(regexp_matches(text, $pattern), false) as written
    from texts
    where regexp_matches(text, $pattern)
       or ($argument = '*' and (writer or masked) and regexp_matches(arguments_text, $pattern))
)
select * from final
