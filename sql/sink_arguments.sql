-- sink_arguments: arguments of executed or blocked egress, send_mail and share sinks
-- where some content detector matches at all (grain: trajectory_id, action_idx), found by
-- one RE2 pass of the [[content.sources]] alternation; read by sql/sent_secrets.sql.
-- Inputs: action_roles, actions. Parameters: $pattern (the alternation).
with sent as (
    -- arguments are JSON text: a line break or tab arrives as the escape `\n`, whose `n` is
    -- glued to the next line's first word, so a detector's leading `\b` (`\bAKIA`, `\beyJ`,
    -- a card or SSN at the start of a line) never matched there; lg_line_breaks puts a blank
    -- after each escape, as the classifier's rules read a command
    select r.trajectory_id, r.action_idx, r.call_step_idx, lg_line_breaks(a.arguments) as arguments
    from action_roles r join actions a using (trajectory_id, action_idx)
    where r.sink_kind in ('egress', 'send_mail', 'share') and a.args_ok
),
final as (
    select distinct trajectory_id, action_idx, call_step_idx, arguments
    from sent
    where regexp_matches(arguments, $pattern)
)
select * from final
