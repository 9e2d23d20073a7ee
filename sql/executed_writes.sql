-- executed_writes: executed (or blocked) actions that run a file whose written content a
-- built-in classifier rule flags (grain: trajectory_id, action_idx): the command written
-- into the file counts once the file runs. Inputs: written_hits, policy_classifier,
-- actions, resources, edges. Parameters: none.
with written as (
    select h.trajectory_id, h.step_idx, arg_min(c.name, c.ord) as rule_name
    from written_hits h join (select distinct ord, name from policy_classifier) c on c.ord = h.ord
    group by all
),
writers as (
    select a.trajectory_id, a.action_idx, w.rule_name, regexp_replace(r.resource, '^\./', '') as resource
    from written w
    join actions a on a.trajectory_id = w.trajectory_id and a.call_step_idx = w.step_idx
    join resources r on r.trajectory_id = w.trajectory_id and r.step_idx = w.step_idx and r.access = 'write'
    where a.executed
),
final as (
    -- the resource edge writer -> runner already exists; the runner must execute that file
    select d.trajectory_id, d.action_idx, d.call_step_idx,
        min(wr.rule_name || ' (written to ' || wr.resource || ', run here)') as rule_name
    from edges e
    join writers wr on wr.trajectory_id = e.trajectory_id and wr.action_idx = e.src_action_idx
    join actions d on d.trajectory_id = e.trajectory_id and d.action_idx = e.dst_action_idx
    join resources x on x.trajectory_id = d.trajectory_id and x.step_idx = d.call_step_idx
        and x.access = 'execute' and regexp_replace(x.resource, '^\./', '') = wr.resource
    where e.kind = 'resource' and (d.executed or d.blocked)
    group by all
)
select * from final
