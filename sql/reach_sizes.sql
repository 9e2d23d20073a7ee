-- reach_sizes: how large each trajectory's reachability (sql/flows.sql) would be
-- (grain: trajectory_id; only trajectories with a source from which a sink is reachable).
-- Inputs: action_roles, edges, sink_reachers. Parameters: none.
-- Reachability explores (source, action, label) states level by level, each state
-- carrying its witness path, and compares each level with all earlier ones: its work
-- grows with the states times the levels times the paths' length, its memory with the
-- states times the paths' length. Counted among the actions from which a sink is
-- reachable (the others take no part):
-- - n_states: every source once, plus each source with a hop out x the actions with a hop
--   in (the most actions it can reach), an upper bound on the states without their labels;
-- - n_levels: 1 + the most hops from an action to a sink (sql/sink_reachers.sql).
-- sql/graph_rejects.sql rejects the trajectories over the policy's bounds; the others are
-- explored in batches whose summed n_states x n_levels fits the connection's memory
-- (pipeline/stages/flow_batches.py).
with nodes as (
    select r.trajectory_id, r.action_idx, max(r.conf) as conf, max(r.integ) as integ
    from action_roles r
    semi join sink_reachers s on s.trajectory_id = r.trajectory_id and s.node = r.action_idx
    group by all
),
hops as (
    -- edges into an action that reaches a sink (what flows.sql follows)
    select e.* from edges e
    semi join sink_reachers s on s.trajectory_id = e.trajectory_id and s.node = e.dst_action_idx
),
labelled_out as (
    -- an action whose output carries labelled fragments is a source too (flows.sql seeds)
    select distinct trajectory_id, src_action_idx as action_idx from edges
    where conf > 0 or integ > 0 or (control and control_integ > 0)
),
with_out as (
    select distinct trajectory_id, src_action_idx as action_idx from hops
),
sources as (
    select n.trajectory_id, n.action_idx, w.action_idx is not null as has_out
    from nodes n
    left join with_out w using (trajectory_id, action_idx)
    where n.conf > 0 or n.integ > 0
       or exists (select 1 from labelled_out l where l.trajectory_id = n.trajectory_id and l.action_idx = n.action_idx)
),
in_counts as (
    select trajectory_id, count(distinct dst_action_idx) as n_in from hops group by all
),
depths as (
    select trajectory_id, max(level) as depth from sink_reachers group by all
),
sizes as (
    select s.trajectory_id,
        count(*) + count(*) filter (where s.has_out) * any_value(coalesce(i.n_in, 0)) as n_states,
        1 + any_value(d.depth) as n_levels
    from sources s
    left join in_counts i using (trajectory_id)
    left join depths d using (trajectory_id)
    group by s.trajectory_id
),
final as (
    select trajectory_id, n_states, n_levels from sizes
)
select * from final
