-- unknown_tools: tools absent from the policy catalog, with how often they are called
-- and which argument names they take (grain: tool_name).
-- Inputs: steps, policy_tools (only its catalog rows count). Parameters: none.
with calls as (
    select s.tool_name, s.trajectory_id, s.exec_status, s.arguments, s.args_ok
    from steps s
    anti join (select tool_key from policy_tools where role_source = 'catalog') t on t.tool_key = lower(s.tool_name)
    where s.kind = 'tool_call' and s.tool_name is not null
),
arg_names as (
    select tool_name, unnest(json_keys(arguments)) as arg
    from calls where args_ok
),
final as (
    select c.tool_name,
        count(*)::bigint as n_calls,
        count(distinct c.trajectory_id)::bigint as n_trajectories,
        count(*) filter (where c.exec_status <> 'failed')::bigint as n_not_failed,
        coalesce((select list(distinct a.arg order by a.arg) from arg_names a where a.tool_name = c.tool_name), [])
            as arg_names
    from calls c
    group by c.tool_name
    order by n_calls desc, c.tool_name
)
select * from final
