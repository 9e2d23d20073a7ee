-- graph_rejects: trajectories whose dependency graph is too large for reachability within
-- bounds (grain: trajectory_id).
-- Inputs: action_roles, edges, sink_reachers. Parameters: $max_pairs
-- (settings.max_reach_pairs), $max_work (settings.max_reach_work).
-- Reachability (sql/flows.sql) explores (source, action, label) states level by level, each
-- state carrying its witness path, and compares each level with all earlier ones: its
-- work grows with the states times the levels times the paths' length. A 272 KB record, a
-- chain of 500 steps each reading a secret and the previous file into the next, took 6
-- minutes; 1,500 writers and 1,500 readers of one file ran out of memory and ended the run;
-- one secret read before a chain of 4,000 copies ran for minutes. Counted here, among the
-- actions from which a sink is reachable (the others take no part):
-- - states: every source once, plus each source with a hop out x the actions with a hop in
--   (the most actions it can reach), an upper bound on the states without their labels;
-- - levels: 1 + the most hops from an action to a sink (sql/sink_reachers.sql).
-- Over max_pairs states, or states x levels^2 over max_work, the trajectory is rejected
-- (record_too_large, sql/step_rejects.sql) before that query.
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
    select trajectory_id, n_states, n_levels, $max_pairs::bigint as max_pairs, $max_work::bigint as max_work
    from sizes
    where n_states > $max_pairs or n_states * n_levels * n_levels > $max_work
)
select * from final
