-- written_later_runs: the runs of the files written programs wrote new known texts into
-- (grain: trajectory_id, step_idx, name), for `written_programs`
-- (pipeline/analysis/written.py `_added`), which follows them again from those texts.
-- Inputs: written_in (trajectory_id, step_idx, program_id, k, name: the new texts, as
--         inserted into shell_texts), resources, shell_copies.
-- Parameters: none.
-- A file's runs from the first step that wrote it a new text on, and the runs of the copies
-- made of it since (`bash setup.sh`, which writes deploy.sh, then `cp deploy.sh d2.sh &&
-- bash d2.sh`). One row per file and trajectory meets its runs: a text written again at
-- every step is not joined with every later run (500 files written at each of 200 steps
-- ran out of memory when each text row met each run).
with texts as (
    select trajectory_id, lg_norm_path_if(name) as name, min(step_idx) as since
    from written_in group by all
),
copied as (
    select c.trajectory_id, c.copy as name, min(c.step_idx) as since
    from shell_copies c join texts t on t.trajectory_id = c.trajectory_id and t.name = c.original
    where c.step_idx >= t.since
    group by all
),
targets as (
    select * from texts
    union all
    select * from copied
),
final as (
    select distinct r.trajectory_id, r.step_idx, lg_norm_path_if(r.resource) as name
    from resources r
    join targets g on g.trajectory_id = r.trajectory_id and g.name = lg_norm_path_if(r.resource)
    where r.access = 'execute' and r.step_idx >= g.since
)
select * from final
