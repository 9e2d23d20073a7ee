-- arg_resources: resources named by catalog arguments (grain: trajectory_id,
-- step_idx, access, resource; one row per distinct triple).
-- Inputs: steps, policy_tools. Parameters: none.
-- Shell and code steps are analysed in Python (pipeline/analysis/resources.py) and appended.
with calls as (
    select s.trajectory_id, s.step_idx, s.arguments, t.reads, t.writes, t.executes, t.deletes, t.sends
    from steps s
    join policy_tools t on t.tool_key = lower(s.tool_name)
    where s.kind = 'tool_call' and s.args_ok
),
roles as (
    select trajectory_id, step_idx, arguments, 'read' as access, unnest(reads) as arg from calls
    union all
    select trajectory_id, step_idx, arguments, 'write', unnest(writes) from calls
    union all
    select trajectory_id, step_idx, arguments, 'execute', unnest(executes) from calls
    union all
    select trajectory_id, step_idx, arguments, 'delete', unnest(deletes) from calls
    union all
    select trajectory_id, step_idx, arguments, 'send', unnest(sends) from calls
),
arg_values as (
    select trajectory_id, step_idx, access, arguments -> ('$."' || arg || '"') as value
    from roles
),
flat as (
    -- an argument may hold one resource or a list of them (recipients, files)
    select trajectory_id, step_idx, access,
        case when json_type(value) = 'ARRAY' then json_extract_string(value, '$[*]')
             else [value ->> '$'] end as names
    from arg_values
    where value is not null and json_type(value) <> 'NULL'
),
final as (
    select distinct trajectory_id, step_idx, access, trim(name) as resource
    from (select trajectory_id, step_idx, access, unnest(names) as name from flat)
    where name is not null and trim(name) <> ''
)
select * from final
