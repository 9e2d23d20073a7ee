-- actions: one row per logical action (grain: trajectory_id, action_idx).
-- Inputs: steps, policy_tools (catalog plus inferred entries). Parameters: none.
-- Gaps and islands over each trajectory's tool calls (SPEC section 2): a call starts a
-- new logical action unless it retries the previous call, i.e. the previous call is of
-- the same tool, `failed`, issued in an earlier assistant message, answered before this
-- call was issued, with no user/system message in between, and neither is `blocked`.
with calls as (
    select
        trajectory_id, step_idx, message_idx, tool_name, call_id, arguments, args_ok,
        exec_status, error_type, result_step_idx, n_user_before, label, score, depends_on
    from steps
    where kind = 'tool_call'
),
neighbours as (
    select
        *,
        lag(tool_name) over w as prev_tool,
        lag(exec_status) over w as prev_status,
        lag(message_idx) over w as prev_message_idx,
        lag(result_step_idx) over w as prev_result_step_idx,
        lag(n_user_before) over w as prev_n_user
    from calls
    window w as (partition by trajectory_id order by step_idx)
),
starts as (
    select
        *,
        case
            when prev_tool is not null
                and tool_name is not distinct from prev_tool
                and prev_status = 'failed'
                and exec_status <> 'blocked'              -- a blocked attempt stands alone
                and message_idx > prev_message_idx        -- parallel calls are never retries
                and prev_result_step_idx < step_idx       -- retried after seeing the failure
                and n_user_before = prev_n_user           -- no user/system message between
            then 0 else 1
        end as is_start
    from neighbours
),
islands as (
    select
        *,
        (sum(is_start) over (partition by trajectory_id order by step_idx rows unbounded preceding) - 1)::bigint as action_idx
    from starts
),
ranked as (
    select *, row_number() over (partition by trajectory_id, action_idx order by step_idx desc) as rev_no
    from islands
),
grouped as (
    select
        trajectory_id, action_idx,
        any_value(tool_name) as tool_name,
        min(step_idx) as first_step_idx,
        max(coalesce(result_step_idx, step_idx)) as last_step_idx,
        count(*)::bigint as attempts,
        list(call_id order by step_idx) as collapsed_call_ids,
        list(exec_status order by step_idx) as attempt_statuses,
        -- the last attempt decides what the action did
        any_value(step_idx) filter (where rev_no = 1) as call_step_idx,
        any_value(result_step_idx) filter (where rev_no = 1) as result_step_idx,
        any_value(exec_status) filter (where rev_no = 1) as exec_status,
        any_value(error_type) filter (where rev_no = 1) as error_type,
        any_value(arguments) filter (where rev_no = 1) as arguments,
        any_value(args_ok) filter (where rev_no = 1) as args_ok,
        any_value(label) filter (where rev_no = 1) as label,
        any_value(score) filter (where rev_no = 1) as score,
        flatten(list(depends_on) filter (where depends_on is not null)) as depends_on
    from ranked
    group by trajectory_id, action_idx
),
final as (
    select
        g.*,
        g.exec_status in ('executed', 'unknown') as executed,  -- unknown fails closed
        g.exec_status = 'blocked' as blocked,
        -- where the tool's roles come from, and the roles it gave (so a user sees what was guessed)
        -- a tool inference placed only by a resource argument (`by_arguments`) is placed for
        -- the calls that pass one: decided per call, never by what else shares the shard
        case
            when t.role_source = 'by_arguments' then case
                when g.args_ok and json_type(g.arguments) = 'OBJECT' and list_has_any(
                    list_concat(t.reads, t.writes, t.executes, t.deletes, t.sends), json_keys(g.arguments))
                then 'inferred' else 'none' end
            else coalesce(t.role_source, 'none')
        end as role_source,
        case when t.source_conf + t.source_integ > 0
            then ['public', 'internal', 'secret'][t.source_conf + 1] || '/' || ['trusted', 'untrusted'][t.source_integ + 1]
        end as source_label,
        t.sink_kind,
        coalesce(t.control, []) as control_args
    from grouped g
    left join policy_tools t on t.tool_key = lower(g.tool_name)
),
placed as (
    -- a call an argument-placed tool does not place shows no roles (action_roles agrees)
    select * replace (case when role_source <> 'none' then source_label end as source_label,
                      case when role_source <> 'none' then sink_kind end as sink_kind,
                      case when role_source <> 'none' then control_args else [] end as control_args)
    from final
)
select * from placed
