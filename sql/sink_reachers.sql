-- sink_reachers: the actions from which some sink is reachable through dependency edges
-- (grain: trajectory_id, node).
-- Inputs: action_roles, edges. Parameters: none.
-- Plain reachability backwards from the sinks (set UNION: terminates on cycles, each
-- node once). Only these actions can lie on a source -> sink path: sql/graph_rejects.sql
-- sizes a trajectory's reachability by them, sql/flows.sql explores only them.
with recursive
to_sink(trajectory_id, node) as (
    select trajectory_id, action_idx from action_roles where sink_kind is not null
    union
    select e.trajectory_id, e.src_action_idx
    from to_sink t join edges e on e.trajectory_id = t.trajectory_id and e.dst_action_idx = t.node
),
final as (
    select trajectory_id, node from to_sink
)
select * from final
