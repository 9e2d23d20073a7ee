-- sink_reachers: the actions from which some sink is reachable through dependency edges,
-- with the fewest hops to one (grain: trajectory_id, node).
-- Inputs: action_roles, edges. Parameters: none.
-- Breadth-first backwards from the sinks: USING KEY with an anti-join on `recurring`
-- admits each node once, at its level (terminates on cycles). Only these actions can lie
-- on a source -> sink path: sql/flows.sql explores only them, and sql/graph_rejects.sql
-- sizes a trajectory's reachability by them and by their levels (how deep it goes).
with recursive
to_sink(trajectory_id, node, level) using key (trajectory_id, node) as (
    select distinct trajectory_id, action_idx, 0 from action_roles where sink_kind is not null
    union
    (select e.trajectory_id, e.src_action_idx, min(t.level) + 1
    from to_sink t
    join edges e on e.trajectory_id = t.trajectory_id and e.dst_action_idx = t.node
    where not exists (
        select 1 from recurring.to_sink x where x.trajectory_id = e.trajectory_id and x.node = e.src_action_idx)
    group by e.trajectory_id, e.src_action_idx)
),
final as (
    select trajectory_id, node, level from to_sink
)
select * from final
