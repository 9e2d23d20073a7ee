-- graph_rejects: trajectories whose dependency graph is too large for reachability within
-- bounds (grain: trajectory_id).
-- Inputs: action_roles, edges, sink_reachers. Parameters: $max_pairs (settings.max_reach_pairs).
-- Reachability (sql/flows.sql) explores (source, action, label) states, each carrying its
-- witness path, so its work grows with sources x actions x path length: a 272 KB record,
-- a chain of 500 steps each reading a secret and writing the next file, took 6 minutes;
-- 1,500 writers and 1,500 readers of one file ran out of memory and ended the run. A
-- trajectory whose possible sources x actions, counting only the actions from which a sink
-- is reachable (sql/sink_reachers.sql: the others take no part), exceed the bound is
-- rejected (record_too_large, sql/step_rejects.sql) before that query.
with nodes as (
    select trajectory_id, action_idx, max(conf) as conf, max(integ) as integ
    from action_roles semi join sink_reachers s
        on s.trajectory_id = action_roles.trajectory_id and s.node = action_roles.action_idx
    group by all
),
labelled_out as (
    -- an action whose output carries labelled fragments is a source too (sql/flows.sql seeds)
    select distinct trajectory_id, src_action_idx as action_idx from edges
    where conf > 0 or integ > 0 or (control and control_integ > 0)
),
sizes as (
    select n.trajectory_id, count(*) as n_actions,
        count(*) filter (where n.conf > 0 or n.integ > 0 or l.action_idx is not null) as n_sources
    from nodes n left join labelled_out l using (trajectory_id, action_idx)
    group by all
),
final as (
    select trajectory_id, n_sources, n_actions, $max_pairs::bigint as max_pairs
    from sizes where n_sources * n_actions > $max_pairs
)
select * from final
