-- content_resources: per executed or blocked action, the strongest content label of the
-- resources it reads, executes or sends, where some tool output in the trajectory showed
-- that resource's content holding a detected secret (grain: trajectory_id, action_idx).
-- A file once seen to hold a key is a secret file, like a path rule would say, so an
-- upload of it (`curl -F file=@notes.txt`) carries the label without a data edge.
-- Inputs: content_spans, policy_content, action_roles, resources. Parameters: none.
with labelled_outputs as (
    select cs.trajectory_id, cs.action_idx, max(p.conf) as conf, max(p.integ) as integ,
        arg_min(p.name, -(p.conf * 2 + p.integ) * 1000 + p.ord) as rule
    from content_spans cs join policy_content p using (ord)
    -- a match or a table's credential column: the file holds the secret; a marking says the
    -- document is confidential, not every file it names; a rule with `files = false` labels
    -- data only (password hashes: seed files and factories ship hashes of `password`)
    where p.kind <> 'document' and p.files
    group by all
),
nodes as (
    select distinct trajectory_id, action_idx, call_step_idx from action_roles
),
secret_files as (
    -- the resources an action read, whose output showed detected content
    select r.trajectory_id, regexp_replace(r.resource, '^\./', '') as resource,
        max(lo.conf) as conf, max(lo.integ) as integ, min(lo.rule) as rule
    from labelled_outputs lo
    join nodes n using (trajectory_id, action_idx)
    join resources r on r.trajectory_id = n.trajectory_id and r.step_idx = n.call_step_idx and r.access = 'read'
    group by all
),
final as (
    select n.trajectory_id, n.action_idx, max(sf.conf) as conf, max(sf.integ) as integ,
        min(sf.resource || ' (' || sf.rule || ' by content)') as why
    from nodes n
    join resources r on r.trajectory_id = n.trajectory_id and r.step_idx = n.call_step_idx
        and r.access in ('read', 'execute', 'send')
    join secret_files sf on sf.trajectory_id = r.trajectory_id and sf.resource = regexp_replace(r.resource, '^\./', '')
    group by all
)
select * from final
