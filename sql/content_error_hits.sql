-- content_error_hits: call rows whose result has no error field but whose content opens
-- like an error text (grain: ord, trajectory_id, step_idx). Run once per pattern of
-- policy [exec_status] content_error_patterns, so each regex is compiled once.
-- Inputs: events. Parameters: $ord, $pattern.
with candidates as (
    select trajectory_id, step_idx, result_content
    from events
    where kind = 'tool_call' and result_step_idx is not null and err_type is null and err_message is null
),
final as (
    select $ord::bigint as ord, trajectory_id, step_idx
    from candidates
    where regexp_matches(result_content, $pattern)
)
select * from final
