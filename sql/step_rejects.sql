-- step_rejects: the first step-level reject reason of each trajectory that has one
-- (grain: trajectory_id).
-- Inputs: trajectories, steps, policy_tools (catalog plus inferred entries), opaque_steps,
--         edge_rejects (dependency graphs too large to build), graph_rejects (too large
--         to explore).
-- Parameters: $reject_unknown (settings.unknown_tools = "reject": a tool that neither
-- the catalog nor role inference places is a reject; otherwise it is a neutral action).
-- SPEC section 3 order after the record-level reasons (sql/trajectories.sql, which also
-- rejects malformed messages): empty_trajectory (messages that yield no step),
-- orphan_tool_result, unparseable_arguments, unknown_tool, opaque_step,
-- missing_tool_result; then record_too_large for a dependency graph past
-- settings.max_edge_pairs (sql/edges.sql, checked first: such a trajectory has no edges)
-- or settings.max_reach_pairs / max_reach_work (sql/graph_rejects.sql).
with orphans as (
    select trajectory_id, 'orphan_tool_result' as reason, step_idx as pos,
        'tool result at step ' || step_idx || ' answers call id ' || coalesce(call_id, '(none)')
            || ', which no earlier unanswered call has' as detail
    from steps where kind = 'tool_result' and not answered
),
unparseable as (
    -- a call whose failure shows it never ran is a non-event, whatever its arguments
    select trajectory_id, 'unparseable_arguments', step_idx,
        tool_name || ' call at step ' || step_idx || ' has arguments that are not a JSON object'
    from steps where kind = 'tool_call' and not args_ok and exec_status <> 'failed'
),
unknown_tools as (
    select s.trajectory_id, 'unknown_tool', s.step_idx,
        'tool ' || s.tool_name || ' (step ' || s.step_idx || ') is neither in the policy catalog nor placed by inference'
    from steps s
    anti join policy_tools t on t.tool_key = lower(s.tool_name)
        -- placed only by a resource argument: placed for the calls that pass one (sql/actions.sql),
        -- unless the lexicon knows the name itself (`named`: a verb, as `fetch`; then no call is unknown)
        and (t.role_source <> 'by_arguments' or t.named or coalesce(s.args_ok and json_type(s.arguments) = 'OBJECT'
            and list_has_any(list_concat(t.reads, t.writes, t.executes, t.deletes, t.sends),
                             json_keys(s.arguments)), false))
    where $reject_unknown and s.kind = 'tool_call' and s.tool_name is not null and s.exec_status <> 'failed'
),
opaque as (
    select s.trajectory_id, 'opaque_step', s.step_idx,
        s.tool_name || ' step ' || s.step_idx || ' cannot be analysed: ' || o.opaque_reason
    from opaque_steps o
    join steps s using (trajectory_id, step_idx)
    where s.exec_status <> 'failed'
),
stepless as (
    -- an accepted record whose messages yield no step at all (blank assistant text,
    -- empty tool_calls): nothing to score, and it must not vanish
    select t.trajectory_id, 'empty_trajectory', 0::bigint, 'messages yield no steps'
    from trajectories t anti join steps s using (trajectory_id)
    where t.reject_reason is null
),
last_steps as (
    select trajectory_id, max(step_idx) as last_step_idx from steps group by all
),
missing_results as (
    -- a call nobody answered, with steps after it: what depends on it is unknowable
    select s.trajectory_id, 'missing_tool_result', s.step_idx,
        s.tool_name || ' call at step ' || s.step_idx || ' has no result but later steps follow'
    from steps s join last_steps l using (trajectory_id)
    where s.kind = 'tool_call' and s.error_type = 'no_result' and s.step_idx < l.last_step_idx
),
edges_too_many as (
    select trajectory_id, 'record_too_large', -1::bigint,
        'dependency graph too large to build: its edge joins would make ' || n_rows
            || ' over settings.max_edge_pairs ' || max_pairs
            || ' (writes x later reads of one resource, outputs x later arguments carrying one fragment, '
            || 'depends_on entries x calls with that id)'
    from edge_rejects
),
graph_too_large as (
    select trajectory_id, 'record_too_large', 0::bigint,
        'dependency graph too large to score: up to ' || n_states || ' reachability states over '
            || n_levels || ' levels (settings.max_reach_pairs ' || max_pairs || ', max_reach_work '
            || max_work || ': states x levels^2)'
    from graph_rejects
),
all_problems as (
    select * from orphans
    union all select * from unparseable
    union all select * from unknown_tools
    union all select * from opaque
    union all select * from missing_results
    union all select * from stepless
    union all select * from edges_too_many
    union all select * from graph_too_large
),
ranked as (
    select *, row_number() over (
        partition by trajectory_id
        order by list_position(['empty_trajectory', 'orphan_tool_result', 'unparseable_arguments',
                                'unknown_tool', 'opaque_step', 'missing_tool_result', 'record_too_large'], reason),
                 pos) as rank_no
    from all_problems
),
final as (
    select trajectory_id, reason, detail from ranked where rank_no = 1
)
select * from final
