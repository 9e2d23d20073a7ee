-- error_texts: the error of each answered call (grain: trajectory_id, step_idx):
-- its structured type and the status that type maps to, and the text the rules read
-- (error message, error string, or a content that opens like an error).
-- Inputs: events, content_error_hits, policy_error_types, policy_tools. Parameters: none.
with answered as (
    select e.trajectory_id, e.step_idx, e.result_step_idx, e.err_type,
        left(coalesce(e.err_message,
                      case when ce.step_idx is not null then e.result_content end), 4096) as err_text,
        -- the only error evidence is the output itself (which an attacker may write)
        e.err_type is null and e.err_message is null and ce.step_idx is not null as from_content,
        coalesce(t.shell_arg is not null or t.code_arg is not null, false) as is_program,
        coalesce(t.source_integ, 0) > 0 as untrusted_output,
        e.args_ok
    from events e
    left join (select distinct trajectory_id, step_idx from content_error_hits) ce using (trajectory_id, step_idx)
    left join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call' and e.result_step_idx is not null
),
final as (
    select a.*, t.status as type_status
    from answered a left join policy_error_types t on t.error_type = lower(a.err_type)
)
select * from final
