-- outputs: the result text of every executed logical action (grain: trajectory_id,
-- action_idx). Inputs: action_roles, steps. Parameters: none.
with nodes as (
    select distinct trajectory_id, action_idx, result_step_idx
    from action_roles where executed
),
final as (
    select n.trajectory_id, n.action_idx, n.result_step_idx, s.content,
        hash(s.content) as content_hash  -- identical outputs count once as sources
    from nodes n join steps s on s.trajectory_id = n.trajectory_id and s.step_idx = n.result_step_idx
    where s.content is not null
)
select * from final
