-- uncatalogued_tools: the tools of a shard that the catalog lacks, with every argument
-- name seen with them (grain: tool_key, tool_name: each spelling of a name).
-- Inputs: events, policy_tools. Parameters: none.
-- Read by pipeline/analysis/inference.py, which infers one entry per distinct name.
with call_args as (
    select trajectory_id, step_idx, unnest(json_keys(arguments)) as arg
    from events where kind = 'tool_call' and args_ok
),
final as (
    select lower(e.tool_name) as tool_key, e.tool_name,
        -- names only (sorted, distinct): an inferred entry never depends on call order
        coalesce(list(distinct k.arg order by k.arg) filter (where k.arg is not null), []) as args
    from events e
    left join call_args k using (trajectory_id, step_idx)
    anti join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call' and e.tool_name is not null
    group by all
)
select * from final
