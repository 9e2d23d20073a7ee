-- graph_rejects: trajectories whose dependency graph is too large for reachability within
-- bounds (grain: trajectory_id).
-- Inputs: reach_sizes. Parameters: $max_pairs (settings.max_reach_pairs), $max_work
-- (settings.max_reach_work).
-- Reachability's work grows with the states times the levels times the paths' length
-- (sql/reach_sizes.sql counts both). A 272 KB record, a chain of 500 steps each reading a
-- secret and the previous file into the next, took 6 minutes; 1,500 writers and 1,500
-- readers of one file ran out of memory and ended the run; one secret read before a chain
-- of 4,000 copies ran for minutes. Over max_pairs states, or states x levels^2 over
-- max_work, the trajectory is rejected (record_too_large, sql/step_rejects.sql) before
-- that query.
with final as (
    select trajectory_id, n_states, n_levels, $max_pairs::bigint as max_pairs, $max_work::bigint as max_work
    from reach_sizes
    where n_states > $max_pairs or n_states * n_levels * n_levels > $max_work
)
select * from final
