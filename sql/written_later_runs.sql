-- written_later_runs: the runs of the files written programs wrote new known texts into, or
-- copied, in a pass (grain: trajectory_id, step_idx, name), for `written_programs`
-- (pipeline/analysis/written.py `_added`), which follows them again from those texts.
-- Inputs: written_in (trajectory_id, step_idx, program_id, k, name: the new texts, as
--         inserted into shell_texts), copies_in (trajectory_id, step_idx, name, value: the
--         new copies and their originals, as inserted into shell_copies), resources,
--         shell_copies.
-- Parameters: none.
-- A file's runs from the first step that wrote it a new text (or made it a new copy) on, and
-- the runs of the copies made of it since, transitively (`bash setup.sh`, which writes
-- deploy.sh, then `cp deploy.sh d2.sh && cp d2.sh d3.sh && bash d3.sh`). One row per file
-- and trajectory meets its runs: a text written again at every step is not joined with every
-- later run (500 files written at each of 200 steps ran out of memory when each text row met
-- each run).
with recursive new_files as (
    select trajectory_id, lg_norm_path_if(name) as name, step_idx as since from written_in
    union all
    select trajectory_id, lg_norm_path_if(name), step_idx from copies_in
),
targets(trajectory_id, name, since) as (
    select trajectory_id, name, min(since) from new_files group by all
    union
    -- the copies made of a target since (union: a copy back, `cp a b; cp b a`, ends)
    select c.trajectory_id, c.copy, c.step_idx
    from targets g join shell_copies c on c.trajectory_id = g.trajectory_id and c.original = g.name
    where c.step_idx >= g.since
),
firsts as (
    select trajectory_id, name, min(since) as since from targets group by all
),
final as (
    select distinct r.trajectory_id, r.step_idx, lg_norm_path_if(r.resource) as name
    from resources r
    join firsts g on g.trajectory_id = r.trajectory_id and g.name = lg_norm_path_if(r.resource)
    where r.access = 'execute' and r.step_idx >= g.since
)
select * from final
