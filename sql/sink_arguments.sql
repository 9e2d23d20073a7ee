-- sink_arguments: arguments of executed or blocked egress, send_mail and share sinks
-- where some content detector matches at all (grain: trajectory_id, action_idx), found by
-- one RE2 pass of the [[content.sources]] alternation; read by sql/sent_secrets.sql.
-- Inputs: action_roles, actions. Parameters: $pattern (the alternation).
with final as (
    select distinct r.trajectory_id, r.action_idx, r.call_step_idx, a.arguments
    from action_roles r join actions a using (trajectory_id, action_idx)
    where r.sink_kind in ('egress', 'send_mail', 'share') and a.args_ok and regexp_matches(a.arguments, $pattern)
)
select * from final
