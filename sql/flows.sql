-- flows: (source action, sink action) pairs with the sink reachable from the source
-- (grain: trajectory_id, source_action_idx, sink_action_idx).
-- Inputs: action_roles, edges, sink_reachers, graph_rejects and edge_rejects (trajectories
-- too large to explore or to build: none of their actions or edges take part). Parameters: $injected_control (policy
-- injection.control_is_violation: injection-span text reaching a control argument is a
-- violation at any sink); $first, $until: the batch of trajectory ids explored, from
-- $first up to but not including $until (null: no bound), so that a shard of large graphs
-- is explored a batch at a time (pipeline/stages/flow_batches.py).
-- Reachability is a recursive CTE over states (source, node, label), the label joined
-- (max per component) along the path. USING KEY with an anti-join on `recurring`
-- admits each state once, at its BFS level: the query terminates on cyclic graphs and
-- keeps the shortest length with a witness path. Only nodes from which a sink is
-- reachable take part (to_sink); whether the last hop landed in an argument that
-- chooses the sink's effect (`ctl`), and whether that hop's fragment lay inside an
-- injection span (`inj`: an injection-driven action), are rebuilt at the sinks from that hop. Measured in
-- bench/reachability.py: same rows, 52 s -> 23 s on 1M trajectories.
with recursive
rejected as (
    select trajectory_id from graph_rejects union select trajectory_id from edge_rejects
),
roles_in as (
    select * from action_roles anti join rejected using (trajectory_id)
    where ($first::varchar is null or trajectory_id >= $first) and ($until::varchar is null or trajectory_id < $until)
),
edges_in as (
    select * from edges anti join rejected using (trajectory_id)
    where ($first::varchar is null or trajectory_id >= $first) and ($until::varchar is null or trajectory_id < $until)
),
nodes as (
    select distinct trajectory_id, action_idx, conf, integ from roles_in
),
to_sink as (
    -- nodes from which some sink is reachable (sql/sink_reachers.sql)
    select * from sink_reachers anti join rejected using (trajectory_id)
    where ($first::varchar is null or trajectory_id >= $first) and ($until::varchar is null or trajectory_id < $until)
),
all_hops as (
    -- every edge as a payload hop, and as a control hop when it reaches a control argument
    select trajectory_id, src_action_idx as src, dst_action_idx as dst, conf, integ, false as ctl, false as inj
    from edges_in
    union all
    select trajectory_id, src_action_idx, dst_action_idx, conf, control_integ, true, control_injected
    from edges_in where control
),
hops as (
    -- a hop into a node that reaches no sink cannot lie on a source -> sink path
    select h.* from all_hops h semi join to_sink t on t.trajectory_id = h.trajectory_id and t.node = h.dst
),
seeds as (
    -- a source brings labelled data in: its own label, or labelled fragments on its edges
    select n.trajectory_id, n.action_idx, n.conf, n.integ
    from nodes n
    where (n.conf > 0 or n.integ > 0
       or exists (select 1 from all_hops h where h.trajectory_id = n.trajectory_id and h.src = n.action_idx
                  and (h.conf > 0 or h.integ > 0)))
      and exists (select 1 from to_sink t where t.trajectory_id = n.trajectory_id and t.node = n.action_idx)
),
reach(trajectory_id, source, node, conf, integ, length, path)
    using key (trajectory_id, source, node, conf, integ) as (
    select trajectory_id, action_idx, action_idx, conf, integ, 1, [action_idx]
    from seeds
    union
    (select r.trajectory_id, r.source, h.dst,
        greatest(r.conf, h.conf), greatest(r.integ, h.integ),
        min(r.length) + 1,
        min(list_append(r.path, h.dst))  -- smallest witness: deterministic
    from reach r
    join hops h on h.trajectory_id = r.trajectory_id and h.src = r.node
    where not exists (
        select 1 from recurring.reach x
        where x.trajectory_id = r.trajectory_id and x.source = r.source and x.node = h.dst
          and x.conf = greatest(r.conf, h.conf) and x.integ = greatest(r.integ, h.integ))
    group by r.trajectory_id, r.source, h.dst, greatest(r.conf, h.conf), greatest(r.integ, h.integ))
),
sinks as (
    select * from roles_in where sink_kind is not null
),
sink_states as (
    -- states (source, sink, label, ctl) at their BFS level with the smallest witness: the seed of
    -- a source that is a sink itself, or one hop from a reached state into the sink
    select trajectory_id, source, node, conf, integ, ctl, inj, lp.length as length, lp.path as path
    from (
        select trajectory_id, source, node, conf, integ, ctl, inj, min({'length': length, 'path': path}) as lp
        from (
            select r.trajectory_id, r.source, r.node, r.conf, r.integ, false as ctl, false as inj, r.length, r.path
            from reach r
            where r.length = 1 and exists (select 1 from sinks s where s.trajectory_id = r.trajectory_id
                                                                    and s.action_idx = r.node)
            union all
            select r.trajectory_id, r.source, h.dst, greatest(r.conf, h.conf), greatest(r.integ, h.integ), h.ctl,
                h.inj, r.length + 1, list_append(r.path, h.dst)
            from reach r
            join hops h on h.trajectory_id = r.trajectory_id and h.src = r.node
            where exists (select 1 from sinks s where s.trajectory_id = h.trajectory_id and s.action_idx = h.dst)
        )
        group by all
    )
),
at_sinks as (
    select r.*, s.sink_kind, s.blocked,
        -- a violation: the joined label exceeds what the sink accepts through that hop, or
        -- text inside an injection span chose the sink's effect (whatever it accepts)
        (r.conf > s.accepts_conf or r.integ > s.accepts_integ
            or (r.ctl and (r.conf > s.control_conf or r.integ > s.control_integ)) or (r.inj and $injected_control))
            as violation
    from sink_states r
    join sinks s on s.trajectory_id = r.trajectory_id and s.action_idx = r.node
),
best as (
    -- one row per (source, sink): a violating state first, then the shortest, then labels
    select *, row_number() over (
        partition by trajectory_id, source, node
        order by violation desc, length, conf desc, integ desc, ctl desc, sink_kind, path) as rank_no
    from at_sinks
),
final as (
    select trajectory_id, source as source_action_idx, node as sink_action_idx,
        length::bigint as length,
        ['public', 'internal', 'secret'][conf + 1] || '/' || ['trusted', 'untrusted'][integ + 1] as label,
        sink_kind, violation, blocked as sink_blocked, path::bigint[] as path, ctl as via_control
    from best where rank_no = 1
)
select * from final
